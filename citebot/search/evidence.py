"""Absolute evidence of a chunk for a question, and the floor a chunk must
clear to be shown: pure functions, the same whatever index holds the chunks.

Ranks say which chunk is best, not whether any is good.  A chunk counts as
evidence when its meaning is close (dense cosine), when it holds most of the
question's rare terms (idf coverage: the share of the question's idf mass
that the chunk holds), or when it holds an identifier the question names
(E4032, RD2-24) — a precise term found verbatim is evidence on its own,
however many other words the question has.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from citebot.index.store import TermStat
from citebot.schema import Evidence
from citebot.search.analyzer import is_identifier


def coverage(terms: Sequence[str], held: frozenset[str], stats: Mapping[str, TermStat]) -> float:
    """Share of the idf mass of the distinct ``terms`` that a chunk holding
    ``held`` contains (0..1)."""
    uniq = list(dict.fromkeys(terms))
    total = sum(stats[t].idf for t in uniq)
    return sum(stats[t].idf for t in uniq if t in held) / total if total else 0.0


def evidence(terms: Sequence[str], held: frozenset[str], stats: Mapping[str, TermStat],
             cosine: float | None) -> Evidence:
    return Evidence(coverage=coverage(terms, held, stats),
                    identifier=any(is_identifier(t) for t in held if t in terms), cosine=cosine)


def is_evidence(ev: Evidence | None, min_cosine: float, min_coverage: float) -> bool:
    if ev is None:
        return False
    return ((ev.cosine is not None and ev.cosine >= min_cosine) or ev.coverage >= min_coverage
            or ev.identifier)

"""Reciprocal rank fusion, one language per page, and the rerank reorder:
pure functions over hits.

RRF uses ranks only: score(d) = sum over lists of w / (k + rank), ranks from
1, where w is the weight of the list's channel (1 unless given: "bm25"
covers "bm25@2" ...), summed as exact fractions so equal sums are real ties;
ties go to the better best single rank, then the smaller chunk id.  Neither function
changes its input hits: each returns new ones that keep every earlier list's
rank and raw score and add their own ("rrf", "rerank").
"""
from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from citebot.index.documents import translation
from citebot.schema import Hit


def rrf_exact(lists: list[list[str]], k: int = 60, weights: list[float] | None = None) -> dict[str, Fraction]:
    """The fused scores as exact fractions (what ``rrf`` orders by);
    ``weights[i]`` weighs list i (default 1)."""
    out: dict[str, Fraction] = {}
    for i, ids in enumerate(lists):
        w = Fraction(str(weights[i])) if weights else Fraction(1)
        for pos, d in enumerate(ids, 1):
            out[d] = out.get(d, Fraction(0)) + w / (k + pos)
    return out


def rrf(lists: list[tuple[str, list[Hit]]], k: int = 60, weights: Mapping[str, float] | None = None) -> list[Hit]:
    """Fuse named ranked lists by reciprocal rank.  A hit's rank in its list
    is its position there (1-based); ``weights`` maps a list's name, or its
    channel (the name before "@"), to its weight."""
    merged: dict[str, Hit] = {}
    for name, hits in lists:
        for pos, h in enumerate(hits, 1):
            base = merged.get(h.id) or Hit(h.chunk)
            merged[h.id] = base.placed(name, pos, h.score)
    weights = weights or {}
    w = [weights.get(name, weights.get(name.split("@")[0], 1.0)) for name, _ in lists]
    total = rrf_exact([[h.id for h in hits] for _, hits in lists], k, w)
    order = sorted(merged.values(), key=lambda h: (-total[h.id], h.best_rank(), h.id))
    return [h.placed("rrf", i, float(total[h.id])) for i, h in enumerate(order, 1)]


def rerank(hits: list[Hit], scores: list[float], keep: int) -> list[Hit]:
    """``hits`` ordered by cross-encoder ``scores`` (ties by their rank in
    the list they come from), the best ``keep``."""
    paired = sorted(zip(hits, scores), key=lambda p: (-p[1], p[0].rank))
    return [h.placed("rerank", i, float(s)) for i, (h, s) in enumerate(paired[:keep], 1)]


def one_language_per_page(hits: list[Hit], prefer: str | None = None) -> list[Hit]:
    """Translations of one page (paths that differ only by a language
    folder: ``en/a.md``, ``zh/a.md``) shown as one page: the chunks of one
    language, in the places the page's chunks held.  The language is
    ``prefer`` (the question's, when its script names one) if that
    translation was found, else one of the same base language (``zh`` for
    ``zh-hant`` and the other way round), else
    the language of the page's best-ranked chunk.  Pages without a language
    folder pass through unchanged.  Adds the list "pages"."""
    pages = [translation(h.chunk.source) for h in hits]  # (page, language) or None, once per hit
    by_page: dict[str, list[tuple[Hit, str]]] = {}
    for h, page in zip(hits, pages):
        if page is not None:
            by_page.setdefault(page[0], []).append((h, page[1]))
    keep: dict[str, list[Hit]] = {}
    for key, group in by_page.items():
        langs = [lg for _, lg in group]
        chosen = next((lg for lg in langs if lg == prefer), None) or next(
            (lg for lg in langs if prefer and lg.split("-")[0] == prefer.split("-")[0]), None) or langs[0]
        keep[key] = [h for h, lg in group if lg == chosen]
    out: list[Hit] = []
    for h, page in zip(hits, pages):
        if page is None:
            out.append(h)
        elif keep[page[0]]:
            out.append(keep[page[0]].pop(0))  # the chosen language takes the page's next place
    return [h.placed("pages", i, h.score) for i, h in enumerate(out, 1)]

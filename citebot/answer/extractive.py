"""The offline answerer: quote the sentences of the shown chunks that best
match the question, each with its ``[n]``, or refuse.

    lexical = idf-weighted share of a query's terms found in the sentence (a
              term in the chunk's title/heading path counts half, so a table
              row under "Size L" matches "size L"); the best over every
              searched query (typed turn, follow-up form, expansions).
              A sentence of the question's answer type adds ``TYPE_BONUS``.
    score   = 0.5 * lexical + 0.5 * cosine(question, sentence) for the
              ``embed_top`` lexically best sentences when an embedder is given
              (embedding every sentence would cost ~1 s on a laptop CPU).

Refuses when the best score is below ``min_score``, or when the question
names an identifier (E4099, RD9-99) that no document the asker may see
contains: a precise term nobody wrote about cannot be answered by a neighbour.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from citebot.answer.context import Context
from citebot.config import REFUSAL
from citebot.index.store import TermStat
from citebot.search import analyzer

_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])|(?<=[。！？।])|\n+")


def units(text: str) -> list[str]:
    """Sentences of a chunk; a table row reads as 'Header: value; ...'; a code
    block stays one unit."""
    out: list[str] = []
    header: list[str] | None = None
    in_code: list[str] | None = None
    for para in text.split("\n"):
        s = para.strip()
        if in_code is not None:
            in_code.append(para)
            if s.startswith(("```", "~~~")):
                out.append("\n".join(in_code))
                in_code = None
            continue
        if s.startswith(("```", "~~~")):
            in_code = [para]
            continue
        if s.startswith("|"):
            cells = [c.strip() for c in s.strip("|").split("|")]
            if all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
                continue
            if header is None:
                header = cells
                continue
            out.append("; ".join(f"{h}: {v}" if h else v for h, v in zip(header, cells)))
            continue
        header = None
        out.extend(x.strip() for x in _SENT.split(s) if x and x.strip())
    if in_code:
        out.append("\n".join(in_code))
    return [u for u in out if len(u) > 1]


@dataclass(frozen=True)
class Extract:
    text: str
    cited: list[int]
    scores: list[tuple[float, int, str]]  # (score, n, sentence), best first
    reason: str = ""

    @property
    def best(self) -> float:
        return self.scores[0][0] if self.scores else 0.0


# Answer types: a "how long" question is answered by a sentence with a
# duration, "how much" by an amount, "when" by a time or date.  A matching
# sentence gets a bonus, which is what a reader does when skimming.
_DURATION = (r"\d+(?:\s*(?:-|–|to)\s*\d+)?\s*(?:business |working )?(?:minutes?|hours?|days?|weeks?|months?|years?)\b"
             r"|\d+\s*(?:天|年|个月|小时|个工作日)|দিন")
ANSWER_TYPES = [
    (re.compile(r"\bhow long\b|\bhow many (?:days|weeks|months|years|hours)\b|\buntil when\b|多久|多长|কত দিন", re.I),
     re.compile(_DURATION, re.I)),
    (re.compile(r"\bhow much\b|\bcost\b|\bprice\b|\bfee\b|\bcharge\b|多少钱|费用|কত টাকা", re.I),
     re.compile(r"[$€£¥]\s?\d|\d+(?:\.\d+)?\s*(?:元|dollars?|usd|eur|%|টাকা)", re.I)),
    (re.compile(r"\bwhen\b|\bwhat time\b|\bopening hours\b|几点", re.I),
     re.compile(r"\d{1,2}(?::\d\d)?\s*(?:a\.m\.|p\.m\.|am\b|pm\b)|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day|"
                r"\b(?:january|february|march|april|may|june|july|august|september|october|november|december)\b", re.I)),
]
TYPE_BONUS = 0.15
CONTEXT_WEIGHT = 0.5


def type_bonus(question: str, sentence: str) -> float:
    return TYPE_BONUS if any(q.search(question) and a.search(sentence) for q, a in ANSWER_TYPES) else 0.0


def unknown_identifier(terms: Sequence[Sequence[str]], stats: Mapping[str, TermStat]) -> str | None:
    """An identifier the question names that no chunk in scope holds, when
    every searched query names one ("2FA" is unknown, but its expansion
    "two-factor authentication" is fine)."""
    unknown = [[t for t in ts if analyzer.is_identifier(t) and not stats[t].in_scope] for ts in terms]
    return unknown[0][0] if unknown and all(unknown) else None


def _candidates(question: str, variants: Sequence[Mapping[str, float]], ctx: Context,
                stats: Mapping[str, TermStat]) -> list[tuple[float, int, str]]:
    weighted = [(v, sum(stats[t].idf * w for t, w in v.items()) or 1.0) for v in variants if v]
    cands: list[tuple[float, int, str]] = []
    for n, h in enumerate(ctx.shown, 1):
        heading = set(analyzer.analyze(" ".join((h.chunk.title, *h.chunk.headings))))
        for s in units(h.chunk.text):
            words = set(analyzer.analyze(s))
            lex = max((sum(stats[t].idf * w * (1.0 if t in words else 0.5 if t in heading else 0.0)
                           for t, w in v.items()) / total for v, total in weighted), default=0.0)
            cands.append((lex + type_bonus(question, s), n, s))
    return cands


def variants(question: Sequence[str], context: Sequence[str], expansions: Sequence[Sequence[str]]
             ) -> list[dict[str, float]]:
    """Weighted term sets to match sentences against: the question's terms
    (weight 1) with the terms only the conversation adds at ``CONTEXT_WEIGHT``
    (they disambiguate, "and the deposit?" after an e-bike question, but must
    not pull the answer back to the last question), then each expansion."""
    base = dict.fromkeys(question, 1.0)
    for t in context:
        base.setdefault(t, CONTEXT_WEIGHT)
    out = [base]
    for ts in expansions:
        out.append({t: CONTEXT_WEIGHT if t in base and base[t] < 1 else 1.0 for t in ts})
    return out


def extractive(question: str, terms: Sequence[Sequence[str]], ctx: Context, stats: Mapping[str, TermStat],
               weighted: Sequence[Mapping[str, float]] | None = None,
               embed: Callable[[list[str]], np.ndarray] | None = None, question_vector: np.ndarray | None = None,
               min_score: float = 0.35, max_sentences: int = 2, embed_top: int = 10) -> Extract:
    """``terms``: each searched query's analyzed terms; ``weighted``: the
    term weights to score sentences by (default: each query alone, weight
    1); ``stats``: idf and whether the asker's scope holds each term
    (``Retrieval.stats``); ``question_vector``: the question's embedding
    when retrieval made one (else ``embed`` makes it)."""
    ident = unknown_identifier(terms, stats)
    if ident is not None:
        return Extract(REFUSAL, [], [], reason=f"the question names {ident!r}, which no document contains")
    weighted = weighted if weighted is not None else [dict.fromkeys(ts, 1.0) for ts in terms]
    cands = _candidates(question, weighted, ctx, stats)
    if not cands:
        return Extract(REFUSAL, [], [], reason="no sentences")
    # Best first; ties go to the stronger chunk (higher n), then reading order.
    order = sorted(range(len(cands)), key=lambda i: (-cands[i][0], -cands[i][1], i))
    if embed is not None:
        top = order[:embed_top]
        sentences = [cands[i][2] for i in top]
        if question_vector is None:
            vecs = embed([question] + sentences)
            question_vector, vecs = vecs[0], vecs[1:]
        else:
            vecs = embed(sentences)
        cos = vecs @ question_vector
        scored = [(0.5 * cands[i][0] + 0.5 * max(float(c), 0.0), cands[i][1], cands[i][2]) for i, c in zip(top, cos)]
        scored.sort(key=lambda x: (-x[0], -x[1]))
    else:
        scored = [cands[i] for i in order]
    best = scored[0][0]
    if best < min_score:
        return Extract(REFUSAL, [], scored,
                       reason=f"no sentence matches well enough (best {best:.2f} < min_answer_score {min_score})")
    chosen = [x for x in scored[:max_sentences] if x[0] >= 0.9 * best]
    parts, cited = [], []
    for _, n, s in chosen:
        parts.append(f"{s} [{n}]")
        if n not in cited:
            cited.append(n)
    return Extract("\n".join(parts) if any("\n" in p for p in parts) else " ".join(parts), cited, scored)

"""Retrieval and refusal metrics: pure functions over plain data, no I/O.

Conventions shared by every ranking metric:

* ``ranked`` is a list of document ids, best first.  A ranked list may hold the
  same id more than once (e.g. several chunks of one document mapped back to
  the document id); only the **first occurrence counts** and later copies are
  dropped *before* the cut-off, so duplicates neither earn gain twice nor use
  up a rank position (the usual "max passage" document ranking, as in BEIR).
* ``relevant`` maps a document id to its graded relevance (a qrels row).  Only
  grades > 0 count as relevant; ids with grade <= 0 are judged non-relevant.
* Ranks are 1-based.  ``k`` must be >= 1.

A query with no relevant document (an unanswerable question) has no defined
recall, reciprocal rank or nDCG; these functions return 0.0 for it, so the
caller must *skip* unanswerable queries when averaging retrieval metrics and
score them with :func:`refusal_scores` instead.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

__all__ = [
    "hit_at_k",
    "recall_at_k",
    "reciprocal_rank",
    "ndcg_at_k",
    "refusal_scores",
    "percentile",
    "mean",
]


def _check_k(k: int | None, *, allow_none: bool = False) -> None:
    if k is None:
        if allow_none:
            return
        raise ValueError("k must be an integer >= 1, got None")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")


def _dedup(ranked: Iterable[str], k: int | None = None) -> list[str]:
    """First occurrences of ``ranked`` in order, cut to the first ``k``."""
    seen: set[str] = set()
    out: list[str] = []
    for doc_id in ranked:
        if doc_id in seen:
            continue
        seen.add(doc_id)
        out.append(doc_id)
        if k is not None and len(out) >= k:
            break
    return out


def _positive(relevant: dict[str, int]) -> dict[str, int]:
    return {d: g for d, g in relevant.items() if g > 0}


def hit_at_k(ranked: Sequence[str], relevant: dict[str, int], k: int) -> float:
    """1.0 if any of the top-``k`` (deduplicated) ids has grade > 0, else 0.0."""
    _check_k(k)
    rel = _positive(relevant)
    return 1.0 if any(d in rel for d in _dedup(ranked, k)) else 0.0


def recall_at_k(ranked: Sequence[str], relevant: dict[str, int], k: int) -> float:
    """Share of the relevant (grade > 0) ids found in the top ``k``.

    Returns 0.0 when the query has no relevant id; the caller is expected to
    skip such (unanswerable) queries rather than average the 0.0 in.
    """
    _check_k(k)
    rel = _positive(relevant)
    if not rel:
        return 0.0
    found = sum(1 for d in _dedup(ranked, k) if d in rel)
    return found / len(rel)


def reciprocal_rank(
    ranked: Sequence[str], relevant: dict[str, int], k: int | None = None
) -> float:
    """1 / rank of the first relevant id within the top ``k`` (``None``: whole
    list); 0.0 if none is found.  The mean over queries is MRR@k."""
    _check_k(k, allow_none=True)
    rel = _positive(relevant)
    for rank, d in enumerate(_dedup(ranked, k), start=1):
        if d in rel:
            return 1.0 / rank
    return 0.0


def ndcg_at_k(
    ranked: Sequence[str],
    relevant: dict[str, int],
    k: int,
    gain: str = "exp",
) -> float:
    """Normalised discounted cumulative gain at ``k``.

    DCG@k = sum over ranks r = 1..k of gain(grade) / log2(1 + r), where
    gain(g) = 2**g - 1 (``gain="exp"``, the Burges et al. form, default) or
    gain(g) = g (``gain="linear"``, what pytrec_eval / the BEIR tables use).
    For binary qrels (grades 0/1) the two are identical.

    IDCG@k is the DCG of the ideal ranking: the grades of *all* relevant ids
    (not only the retrieved ones) sorted descending, cut to ``k``.
    Returns 0.0 when there is no relevant id (caller skips such queries).
    """
    _check_k(k)
    if gain == "exp":
        g = lambda grade: 2.0 ** grade - 1.0  # noqa: E731
    elif gain == "linear":
        g = lambda grade: float(grade)  # noqa: E731
    else:
        raise ValueError(f'gain must be "exp" or "linear", got {gain!r}')
    rel = _positive(relevant)
    if not rel:
        return 0.0
    dcg = sum(
        g(rel[d]) / math.log2(1 + rank)
        for rank, d in enumerate(_dedup(ranked, k), start=1)
        if d in rel
    )
    ideal = sorted(rel.values(), reverse=True)[:k]
    idcg = sum(g(grade) / math.log2(1 + rank) for rank, grade in enumerate(ideal, start=1))
    return dcg / idcg if idcg > 0 else 0.0


def refusal_scores(pairs: Iterable[tuple[bool, bool]]) -> dict:
    """Score refusals, treating "refuse" as the positive class.

    ``pairs`` holds one ``(should_refuse, did_refuse)`` per question.
    Returns ``tp`` (refused, should have), ``fp`` (refused an answerable
    question), ``fn`` (answered an unanswerable one), ``tn``, and
    ``refusal_precision`` = tp / (tp + fp), ``refusal_recall`` = tp / (tp + fn),
    ``refusal_accuracy`` = (tp + tn) / n.  A ratio whose denominator is 0 is
    ``None`` (undefined), never 0.0 or 1.0.
    """
    tp = fp = fn = tn = 0
    for should, did in pairs:
        should, did = bool(should), bool(did)
        if should and did:
            tp += 1
        elif did:
            fp += 1
        elif should:
            fn += 1
        else:
            tn += 1
    n = tp + fp + fn + tn
    return {
        "refusal_precision": tp / (tp + fp) if tp + fp else None,
        "refusal_recall": tp / (tp + fn) if tp + fn else None,
        "refusal_accuracy": (tp + tn) / n if n else None,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
    }


def percentile(values: Iterable[float], p: float) -> float | None:
    """The ``p``-th percentile (0..100) with linear interpolation between the
    closest ranks, as ``numpy.percentile``'s default method: position
    (n - 1) * p / 100 in the sorted values.  ``None`` for no values."""
    if not 0 <= p <= 100:
        raise ValueError(f"percentile p must be in [0, 100], got {p!r}")
    xs = sorted(float(v) for v in values)
    if not xs:
        return None
    pos = (len(xs) - 1) * p / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    frac = pos - lo
    return xs[lo] + (xs[hi] - xs[lo]) * frac


def mean(values: Iterable[float]) -> float | None:
    """Arithmetic mean, ``None`` for no values."""
    xs = [float(v) for v in values]
    if not xs:
        return None
    return math.fsum(xs) / len(xs)

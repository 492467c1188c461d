"""Do the documents hold the answer?  The refusal gate, decided before any
model call from signals citebot already has for the question:

  top       dense cosine of the first hit (no cosine measured, dense off or
            not for the question's language: top and cosine read as the
            fit's mean, neither for nor against)
  cosine    best dense cosine of a shown chunk
  coverage  best share of the question's idf mass a shown chunk holds
  unknown   share of the question's idf mass in terms that no chunk the asker
            may see holds at all ("Django", "sourdough" in FastAPI's docs)
  answer    the best unit score of the extractive scorer (lexical + cosine)
  kind      1 when the question asks for a kind of answer (a date for "when",
            a number for "how many") and no well-scored unit holds one
  margin    how far the best unit stands above the best unit of another chunk
  rerank    the cross-encoder's score of the first hit, when one reranked

A logistic model over these, fitted on tuning data only
(``python evaluate.py --refusal --fit``, see README), gives P(answerable);
below ``gate_threshold`` the bot gives the refusal sentence.  The fitted
weights live in ``gate.json`` beside this file, one fit per embedding model
and one per (embedding model, cross-encoder) pair fitted with that
cross-encoder on (cross-encoders score on scales of their own), each stamped
with what it was fitted on.  A cross-encoder without a fit of its own leaves
the gate on the embedding model's fit, which does not read ``rerank``.
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path

from citebot.answer.context import Context
from citebot.answer.extractive import Scored, answer_type, holds
from citebot.index.store import TermStat
from citebot.schema import Evidence

MODEL = Path(__file__).with_name("gate.json")
FEATURES = ("top", "cosine", "coverage", "unknown", "answer", "kind", "margin")
RERANK = "rerank"  # the extra feature of a fit made with a cross-encoder on


@dataclass(frozen=True)
class Signals:
    top: float
    cosine: float
    coverage: float
    unknown: float
    answer: float
    kind: float
    margin: float
    rerank: float | None = None  # None: no cross-encoder reranked this turn
    dense: bool = True  # False: no cosine was measured (dense off, or not for this language); top, cosine are 0

    def vector(self, features: Sequence[str] = FEATURES) -> list[float]:
        out = [getattr(self, f) for f in features]
        if None in out:
            raise ValueError(f"the gate's fit reads {[f for f, x in zip(features, out) if x is None]}, "
                             "which this turn did not measure")
        return out

    def as_dict(self) -> dict[str, float]:
        return {k: round(v, 4) for k, v in asdict(self).items() if v is not None and k != "dense"}


def unknown_mass(terms: Sequence[Sequence[str]], stats: Mapping[str, TermStat]) -> float:
    """The least, over the question's forms, share of idf mass in terms the
    scope holds nowhere (an expansion that names a known term rescues "2FA")."""
    shares = []
    for ts in terms:
        uniq = list(dict.fromkeys(ts))
        total = sum(stats[t].idf for t in uniq)
        if total:
            shares.append(sum(stats[t].idf for t in uniq if not stats[t].in_scope) / total)
    return min(shares) if shares else 1.0


def signals(question: str, terms: Sequence[Sequence[str]], ctx: Context, evidence: Mapping[str, Evidence],
            stats: Mapping[str, TermStat], scored: Sequence[Scored], first: str | None = None,
            rerank: float | None = None, core_first: str | None = None) -> Signals:
    """``terms``: the question's analyzed forms (typed turn, its expansions);
    ``scored``: the extractive scorer's units, best first; ``first``: the
    first hit's id; ``rerank``: its cross-encoder score (None: no rerank);
    ``core_first``: the first hit fused without the expansions (``top`` is
    the better of the two: an expansion adds evidence, never takes it away)."""
    ev = [evidence[h.id] for h in ctx.shown if h.id in evidence]
    tops = [evidence[i].cosine for i in (first, core_first) if i is not None and i in evidence]
    top = max((c for c in tops if c is not None), default=None)
    best = scored[0].score if scored else 0.0
    other = next((s.score for s in scored[1:] if s.unit.n != scored[0].unit.n), 0.0)
    pattern = answer_type(question)
    kind = 0.0
    if pattern is not None and not any(holds(pattern, s.unit.text) for s in scored[:10] if s.score >= 0.5 * best):
        kind = 1.0
    return Signals(top=top or 0.0, cosine=max((e.cosine or 0.0 for e in ev), default=0.0),
                   coverage=max((e.coverage for e in ev), default=0.0),
                   unknown=unknown_mass(terms, stats), answer=best, kind=kind, margin=best - other,
                   rerank=rerank, dense=any(e.cosine is not None for e in ev))


DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


@cache
def _fits() -> dict:
    return json.loads(MODEL.read_text(encoding="utf-8"))["models"]


def key(embed_model: str, rerank_model: str | None = None) -> str:
    """Where a fit lives in gate.json: the embedding model, plus the
    cross-encoder when the fit was made with one reranking."""
    return embed_model if rerank_model is None else f"{embed_model} + rerank {rerank_model}"


def model(embed_model: str | None = None, rerank_model: str | None = None) -> dict:
    """The fit for the embedding model that built the index (cosines differ
    by model) and the cross-encoder that reranked, if a fit was made with
    it; else the embedding model's own fit; a model no fit was made for gets
    the packaged model's."""
    fits = _fits()
    embed_model = embed_model or DEFAULT_MODEL
    if rerank_model is not None and key(embed_model, rerank_model) in fits:
        return fits[key(embed_model, rerank_model)]
    return fits.get(embed_model) or fits[DEFAULT_MODEL]


def probability(s: Signals, params: Mapping | None = None) -> float:
    """P(the documents hold the answer) under the fitted logistic model (it
    reads the features its fit names, in that order)."""
    p = params or model()
    names = p.get("features", FEATURES)
    x = s.vector(names)
    # Without a measured cosine the two cosine features read as the fit's mean (they
    # say nothing either way): read as 0, about 3.5 sd low, they refused every question.
    z = p["intercept"] + sum(w * (v - m) / sd for f, w, v, m, sd in zip(names, p["coef"], x, p["mean"], p["scale"])
                             if s.dense or f not in ("top", "cosine"))
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


def reason(s: Signals, p: float, threshold: float) -> str:
    """Why the gate refused, in the asker's terms (never naming a term outside the scope)."""
    weak = []
    if s.unknown >= 0.3:
        weak.append(f"{s.unknown:.0%} of the question's rare words are in no document")
    if s.kind:
        weak.append("no passage holds the kind of answer asked for")
    weak.append(f"best passage score {s.answer:.2f}" + (f", cosine {s.cosine:.2f}" if s.dense else "")
                + f", coverage {s.coverage:.2f}"
                + (f", rerank score {s.rerank:.2f}" if s.rerank is not None else ""))
    # as many digits as tell p from the threshold: "0.35 < 0.35" read as a refusal by mistake
    shown = next(f"{p:.{d}f}" for d in (2, 3, 4, 6) if d == 6 or float(f"{p:.{d}f}") < threshold)
    return f"the evidence is too weak (P(answerable) {shown} < gate_threshold {threshold}): " + "; ".join(weak)

"""Settings sweeps on tuning data: the bot as configured, once per
combination of the swept values, through the engine.

    python evaluate.py --golden golden.json --sweep rrf_k=10,30,60 --sweep weight_dense=0.5,1
    python evaluate.py --benchmark scifact --bench-split train --sweep rrf_k=10,30,60

Only tuning data belongs here (a golden set's ``tune`` half, SciFact's train
split), and ``evaluate.py`` runs nothing else: a value chosen on the
reporting half would flatter the numbers.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable

from citebot.config import FIELDS, Config, _coerce
from citebot.engine import Engine
from citebot.index.store import STAMPED_SETTINGS
from citebot.measurement import evaluate
from citebot.measurement.golden import Judge, load_golden
from citebot.measurement.report import columns, fmt


def parse(specs: list[str]) -> list[tuple[str, list]]:
    """``["rrf_k=10,60"]`` -> ``[("rrf_k", [10, 60])]``, each value read as the setting's type."""
    out = []
    for spec in specs:
        key, sep, values = spec.partition("=")
        key = key.strip()
        if not sep or key not in FIELDS:
            raise ValueError(f"--sweep needs KEY=V1,V2,... with a known key, got {spec!r}")
        vals = [_coerce(key, v.strip(), "--sweep") for v in values.split(",") if v.strip()]
        if not vals:  # "rrf_k=" printed an empty table
            raise ValueError(f"--sweep {key}= names no values; give KEY=V1,V2,...")
        out.append((key, vals))
    return out


def combos(axes: list[tuple[str, list]]) -> list[dict]:
    keys = [k for k, _ in axes]
    return [dict(zip(keys, vals)) for vals in itertools.product(*(v for _, v in axes))]


def golden(engine: Engine, path, axes, split: str | None, answers: bool = False,
           reopen: Callable[[Config], Engine | None] | None = None) -> list[tuple[dict, dict]]:
    """One row per combination.  A setting stamped into the index (BM25's k1
    and b, chunk size, model) needs an index built with it: ``reopen`` gives
    the engine over one (the golden file's own cache, rebuilt keeping the
    vectors); without it such a sweep is refused, as its rows would all be
    the one index's."""
    qs = load_golden(path).select(split)
    rows = []
    for changes in combos(axes):
        cfg = engine.cfg.replace(**changes)
        built = sorted(set(changes) & set(STAMPED_SETTINGS))
        e = engine.configured(cfg) if not built else reopen(cfg) if reopen else None
        if e is None:
            raise ValueError(f"--sweep {', '.join(built)} changes how the index is built, so it needs "
                             "the golden file's own index: drop --index")
        judge = Judge(e.index)
        m = evaluate.summarize(qs, {q.id: evaluate.run_question(e, q, judge) for q in qs})
        if answers:
            a = evaluate.summarize_answers(qs, evaluate.run_answers(e, qs, judge), "extractive" if e.llm is None else "llm")
            m.update({k: a[k] for k in ("answer_accuracy", "answer_precision")})
            m.update({f"answer_{k}": a[k] for k in ("refusal_precision", "refusal_recall")})
        rows.append((changes, m))
    return rows


def benchmark(name: str, cfg: Config, axes, split: str, limit, log, root=None) -> list[tuple[dict, dict]]:
    from citebot.measurement import beir
    from citebot.search.models import Models

    rows = []
    shared: dict[tuple[str, str], Models] = {}  # per pair of models: every combination asks the same queries
    for changes in combos(axes):
        ccfg = cfg.replace(**changes)
        res = beir.run(name, ccfg, [evaluate.DEFAULT], split=split, limit=limit, log=log, refusal=False, root=root,
                       models=shared.setdefault((ccfg.embed_model, ccfg.rerank_model), Models()))
        rows.append((changes, res["configs"][evaluate.DEFAULT]))
    return rows


def table(rows: list[tuple[dict, dict]], metrics: list[str]) -> str:
    keys = list(rows[0][0]) if rows else []
    body = [[", ".join(f"{k}={v}" for k, v in c.items())] + [fmt(m.get(x), 4) for x in metrics] for c, m in rows]
    best = max(range(len(rows)), key=lambda i: rows[i][1].get(metrics[0]) or 0) if rows else None
    out = columns(["setting (" + ", ".join(keys) + ")"] + metrics, body)
    if best is not None:
        out.append(f"best {metrics[0]}: {body[best][0]}")
    return "\n".join(out)

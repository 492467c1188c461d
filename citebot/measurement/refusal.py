"""The refusal gate: fitted on tuning data, reported on held-out data.

    python evaluate.py --refusal [--fit] [--plot FILE.png]

Sources, each split in halves that never mix (``tune`` fits, ``report`` only
reports):

* the golden sets: golden.json over examples/kb and golden_fastapi.json over
  ../shared/corpora/fastapi-docs (each question's ``split``);
* the SQuAD 2.0 sample (500 questions, 258 with no answer in their paragraph);
* MTRAG-UN tasks labelled ANSWERABLE or UNANSWERABLE over the pooled corpus,
  the earlier user turns as history.

Benchmark items go to a half by a hash of what they share: a SQuAD question
by its paragraph, an MTRAG-UN task by its conversation (questions over one
paragraph, turns of one conversation, never sit in both halves).  Each question runs
through ``Engine.ask`` with the gate off, which records the gate's signals;
questions the evidence floor or the unknown-identifier rule refuse anyway
count as refusals at every threshold.  The model is a logistic regression on
standardised signals, each source weighted equally and the two classes
balanced within it; when a cross-encoder reranked every case its score
of the first hit is a signal too, and the fit is kept under that
cross-encoder's name (``gate.key``).  The operating point is the threshold whose
precision and recall fall least short of the issue's targets on the tuning
halves (``TARGETS``, summed over sources), then the best mean refusal F1.
"""
from __future__ import annotations

import datetime
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from citebot.answer import gate
from citebot.config import ROOT, Config
from citebot.engine import Engine
from citebot.measurement import benchmarks, metrics
from citebot.measurement.golden import half, load_golden
from citebot.measurement.report import columns, fmt
from citebot.schema import Scope
from citebot.search.models import Models

THRESHOLDS = [round(x, 2) for x in np.arange(0.05, 0.96, 0.05)]
# source -> (refusal precision, refusal recall) the bot must reach on it
TARGETS = {"golden_fastapi": (0.8, 0.6), "squad2": (0.7, 0.5), "mtrag-un": (0.6, 0.6)}


@dataclass(frozen=True)
class Case:
    source: str
    qid: str
    split: str  # "tune" | "report"
    answerable: bool
    signals: gate.Signals | None  # None: refused before the gate (floor, unknown identifier)


def _case(engine: Engine, source: str, qid: str, split: str, answerable: bool, text: str,
          history: list[str], scope: Scope) -> Case:
    turn, _ = engine.assess(text, history, scope)  # the gate's signals; nothing is answered
    return Case(source, qid, split, answerable, turn.signals)


def golden_cases(engine: Engine, path: Path, source: str) -> list[Case]:
    gold = load_golden(path)
    return [_case(engine, source, q.id, q.half, q.answerable, q.text, q.history, q.scope)
            for q in gold.questions]


def _bench_engine(name: str, corpus: dict, cfg: Config, models: Models, log) -> Engine:
    """The engine over a benchmark's corpus, indexed (and cached) as ``--benchmark`` does."""
    from citebot.measurement.beir import CACHE_DIR, build_index

    return Engine.over(build_index(name, corpus, cfg, models.embedder(cfg), True, CACHE_DIR, log), cfg, models)


def squad_cases(cfg: Config, models: Models, log) -> list[Case]:
    bench = benchmarks.load("squad2")
    engine = _bench_engine("squad2", bench.corpus, cfg, models, log)
    gone, paragraph = bench.meta["unanswerable"], bench.meta.get("context_id", {})
    return [_case(engine, "squad2", q, squad_half(q, paragraph), q not in gone, t, [], Scope())
            for q, t in bench.queries.items()]


def squad_half(qid: str, paragraph: dict) -> str:
    """A SQuAD question's half: its paragraph's, so questions over one paragraph stay together."""
    return half(paragraph.get(qid) or qid)


def mtragun_cases(cfg: Config, models: Models, log) -> list[Case]:
    from citebot.measurement.beir import conversation_half

    engine = _bench_engine("mtrag", benchmarks.load("mtrag").corpus, cfg, models, log)
    out = []
    for t in benchmarks.load_mtragun_tasks():
        label = t["answerability"][0] if t["answerability"] else ""
        if label not in ("ANSWERABLE", "UNANSWERABLE"):
            continue  # UNDERSPECIFIED and PARTIAL ask for a clarification or a partial answer
        history = [h["text"] for h in t["history"] if h.get("speaker") == "user"]
        question = t["question"]["text"] if isinstance(t["question"], dict) else str(t["question"])
        out.append(_case(engine, "mtrag-un", str(t["task_id"]), conversation_half(t["task_id"]), label == "ANSWERABLE",
                         question, history, Scope()))
    return out


SOURCES = ("golden", "golden_fastapi", "squad2", "mtrag-un")


GOLDEN = (ROOT / "golden.json", ROOT / "golden_fastapi.json")


def missing_sources() -> dict[str, str]:
    """The sources the fit is made on that this machine lacks, each with what it needs."""
    from citebot.measurement.evaluate import corpus_folder

    out = {}
    for path in GOLDEN:
        folder = corpus_folder(path, load_golden(path).corpus)
        if folder is not None and not folder.is_dir():
            out[path.stem] = f"its documents, {folder}"
    for name, bench in (("squad2", "squad2"), ("mtrag-un", "mtrag")):
        if not benchmarks.available(bench):
            out[name] = str(benchmarks.bench_dir() / bench)
    return out


def collect(cfg: Config, models: Models, log, missing: Mapping[str, str] | None = None) -> list[Case]:
    """Every source this machine has (``missing``: those it lacks), asked with the gate off."""
    from citebot.measurement.evaluate import golden_engine

    missing = missing_sources() if missing is None else missing
    cfg = cfg.replace(use_gate=False)
    cases: list[Case] = []
    for path in (p for p in GOLDEN if p.stem not in missing):
        engine = golden_engine(cfg, path, models, log)
        if engine is not None:
            cases += golden_cases(engine, path, path.stem)
            log(f"refusal: {path.name}: {sum(c.source == path.stem for c in cases)} questions")
    if "squad2" not in missing:
        cases += squad_cases(cfg, models, log)
        log("refusal: squad2 asked")
    if "mtrag-un" not in missing:
        cases += mtragun_cases(cfg, models, log)
        log("refusal: mtrag-un asked")
    return cases


# --- the model ---------------------------------------------------------------
def fit(cases: list[Case], l2: float = 1.0, steps: int = 3000) -> dict:
    """Logistic regression (label: answerable) on standardised signals of the
    tune-half cases that reached the gate (a report-half case is never read,
    whatever the caller passes); each source and each class in it weighs the same."""
    rows = [c for c in cases if c.signals is not None and c.split == "tune"]
    # A cross-encoder's score joins when every case has one (a fit made with it on).
    features = list(gate.FEATURES) + ([gate.RERANK] if rows and all(
        c.signals is not None and c.signals.rerank is not None for c in rows) else [])
    x = np.array([c.signals.vector(features) for c in rows if c.signals is not None], dtype=np.float64)
    y = np.array([1.0 if c.answerable else 0.0 for c in rows])
    w = np.zeros(len(rows))
    for src in {c.source for c in rows}:
        for label in (0.0, 1.0):
            mask = np.array([c.source == src for c in rows]) & (y == label)
            if mask.any():
                w[mask] = 1.0 / mask.sum()
    w /= w.sum()
    mean, scale = x.mean(axis=0), x.std(axis=0)
    # A case with no cosine measured holds 0 for top and cosine, and probability()
    # reads those two at the fit's mean for it (z = 0): the fit reads them so too,
    # with the mean and spread of the cases that measured one.
    dense = np.array([c.signals is not None and c.signals.dense for c in rows])
    cosines = np.array([j for j, f in enumerate(features) if f in ("top", "cosine")], dtype=int)
    if dense.any():
        measured = x[np.ix_(dense, cosines)]
        mean[cosines], scale[cosines] = measured.mean(axis=0), measured.std(axis=0)
    scale[scale == 0] = 1.0
    z = (x - mean) / scale
    z[np.ix_(~dense, cosines)] = 0.0
    coef, b = np.zeros(z.shape[1]), 0.0
    for _ in range(steps):  # plain gradient descent: small, convex, deterministic
        p = 1.0 / (1.0 + np.exp(-(z @ coef + b)))
        g = w * (p - y)
        coef -= 0.5 * (z.T @ g + l2 * coef / len(rows))
        b -= 0.5 * g.sum()
    return {"features": features, "mean": mean.round(6).tolist(), "scale": scale.round(6).tolist(),
            "coef": coef.round(6).tolist(), "intercept": round(float(b), 6)}


def refuses(c: Case, params: dict, threshold: float) -> bool:
    return c.signals is None or gate.probability(c.signals, params) < threshold


def scores(cases: list[Case], params: dict, threshold: float) -> dict:
    m = metrics.refusal_scores((not c.answerable, refuses(c, params, threshold)) for c in cases)
    p, r = m["refusal_precision"], m["refusal_recall"]
    f1 = 2 * p * r / (p + r) if p and r else 0.0
    return {"precision": p, "recall": r, "f1": f1, "n": len(cases)}


def by_source(cases: list[Case], split: str) -> dict[str, list[Case]]:
    out: dict[str, list[Case]] = {}
    for c in cases:
        if c.split == split:
            out.setdefault(c.source, []).append(c)
    return out


def shortfall(s: dict, target: tuple[float, float]) -> float:
    """How far a source's refusal precision and recall fall below its target
    (0 when met): precision short plus recall short."""
    return max(0.0, target[0] - (s["precision"] or 0.0)) + max(0.0, target[1] - (s["recall"] or 0.0))


def choose(cases: list[Case], params: dict) -> float:
    """The threshold with the least total shortfall from the targets on the
    tuning halves, then the best mean refusal F1 there.  (Counting the targets
    met instead flipped between far-apart thresholds when one source crossed
    its target by 0.01; the shortfall moves smoothly.)"""
    tune = by_source(cases, "tune")

    def key(t: float):
        s = {src: scores(cs, params, t) for src, cs in tune.items()}
        return (-round(sum(shortfall(s[src], TARGETS[src]) for src in s if src in TARGETS), 6),
                sum(x["f1"] for x in s.values()) / len(s), -t)
    return max(THRESHOLDS, key=key)


def curves(cases: list[Case], params: dict) -> dict:
    """{split: {source: [(threshold, precision, recall)]}}."""
    def point(cs: list[Case], t: float) -> tuple[float, float | None, float | None]:
        s = scores(cs, params, t)
        return t, s["precision"], s["recall"]
    return {split: {src: [point(cs, t) for t in THRESHOLDS] for src, cs in sorted(by_source(cases, split).items())}
            for split in ("tune", "report")}


def plot(curve: dict, chosen: float, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6), sharey=True)
    for ax, split in zip(axes, ("tune", "report")):
        for src, pts in curve[split].items():
            rs = [r for _, p, r in pts if p is not None]
            ps = [p for _, p, r in pts if p is not None]
            line, = ax.plot(rs, ps, marker=".", label=src)
            at = next(((r, p) for t, p, r in pts if t == chosen and p is not None), None)
            if at:
                ax.plot(*at, marker="o", markersize=9, color=line.get_color())
        ax.set_title(f"refusal trade-off, {split} half (dot: threshold {chosen})")
        ax.set_xlabel("refusal recall")
        ax.set_xlim(0, 1.02)
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("refusal precision")
    axes[1].legend(loc="lower left")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def table(cases: list[Case], params: dict, chosen: float, curve: dict | None = None) -> str:
    """The chosen point per half and source, then the report half's trade-off
    (``curve``: what :func:`curves` gave, when the caller has it already)."""
    out = []
    for split in ("tune", "report"):
        rows = []
        for src, cs in sorted(by_source(cases, split).items()):
            s = scores(cs, params, chosen)
            unans = sum(not c.answerable for c in cs)
            rows.append([src, str(len(cs)), str(unans), fmt(s["precision"]), fmt(s["recall"]), fmt(s["f1"])])
        out += [f"{split} half, threshold {chosen}:"] + columns(
            ["source", "n", "unanswerable", "refusal P", "refusal R", "F1"], rows) + [""]
    out.append("trade-off (report half): threshold -> P/R per source")
    report = (curve or curves(cases, params))["report"]
    head = ["threshold"] + list(report)
    body = [[str(t)] + [f"{fmt(report[s][i][1], 2)}/{fmt(report[s][i][2], 2)}" for s in report]
            for i, t in enumerate(THRESHOLDS)]
    return "\n".join(out + columns(head, body))


# The settings that move the signals a fit reads (ranks, fused scores, floors):
# one given with --set is written into the fit's command, so a rerun repeats it.
SIGNAL_SETTINGS = ("chunk_tokens", "bm25_k1", "bm25_b", "sparse_k", "dense_k", "rrf_k", "weight_sparse",
                   "weight_dense", "weight_followup", "prf_beta", "prf_docs", "dense_langs", "one_language_per_page",
                   "min_cosine", "min_coverage",
                   "use_sparse", "use_dense", "use_expansion", "use_followups")


def fit_settings(cfg: Config) -> dict:
    """The signal-moving settings of ``cfg`` that differ from the defaults."""
    base = Config()
    return {k: getattr(cfg, k) for k in SIGNAL_SETTINGS if getattr(cfg, k) != getattr(base, k)}


def save(params: dict, threshold: float, cases: list[Case], embed_model: str, setting: float,
         spec: str, rerank_model: str | None = None, settings: Mapping | None = None) -> str:
    """Store the fit for ``embed_model`` (and ``rerank_model`` when the fit
    reads the cross-encoder's score) beside the other fits; returns its key.
    The intercept moves the chosen operating point onto ``setting`` (the
    gate_threshold default), so one setting serves every model."""
    tune = by_source(cases, "tune")
    if threshold != setting:
        params = dict(params, intercept=round(params["intercept"] + _logit(setting) - _logit(threshold), 6))
    rerank_model = rerank_model if gate.RERANK in params["features"] else None
    name = gate.key(embed_model, rerank_model)
    settings = dict(settings or {})
    command = "python evaluate.py --refusal --fit" + ("" if spec == Config().embed_model
                                                       else f" --set embed_model={spec}")
    command += "".join(f" --set {k}={_setting(v)}" for k, v in settings.items())
    params = dict(params, model=name, threshold=setting, settings=settings, fitted_on={
        src: f"{len(cs)} questions ({sum(not c.answerable for c in cs)} unanswerable), tune half"
        for src, cs in tune.items()}, fitted=datetime.date.today().isoformat(),
        command=command + (f" --set rerank_model={rerank_model}" if rerank_model else ""))
    fits = json.loads(gate.MODEL.read_text(encoding="utf-8"))["models"] if gate.MODEL.exists() else {}
    fits[name] = params
    gate.MODEL.write_text(json.dumps({"models": fits}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    gate._fits.cache_clear()
    return name


def _setting(v) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def _logit(p: float) -> float:
    return float(np.log(p / (1.0 - p)))


def summary(cases: list[Case], params: dict, chosen: float, curve: dict, name: str,
            plot_path: Path | None = None) -> dict:
    """What :func:`table` and the lines under it say, as data (``evaluate.py --refusal --json``)."""
    halves = {split: {src: {**scores(cs, params, chosen), "unanswerable": sum(not c.answerable for c in cs)}
                      for src, cs in sorted(by_source(cases, split).items())} for split in ("tune", "report")}
    return {"threshold": chosen, "fit": params.get("model", name), "halves": halves,
            "tradeoff": {split: {src: [{"threshold": t, "precision": p, "recall": r} for t, p, r in pts]
                                 for src, pts in by_src.items()} for split, by_src in curve.items()},
            "weights": dict(zip(params["features"], params["coef"])),
            "picture": str(plot_path) if plot_path else None}


def run(cfg: Config, refit: bool, plot_path: Path | None, log, as_json: bool = False) -> str | dict:
    from citebot.search.models import model_name

    missing = missing_sources()
    lacks = [f"{name} ({what})" for name, what in missing.items()]
    if refit and missing:  # a fit on what is left would replace the shipped one, made on all four
        raise ValueError(f"--fit needs all of {', '.join(SOURCES)}; this machine lacks {'; '.join(lacks)}. "
                         "The shipped fit is kept; run without --fit to report with it")
    for m in lacks:
        log(f"refusal: skipped {m}: not on this machine")
    models = Models()
    cases = collect(cfg, models, log, missing)
    name = model_name(cfg.embed_model)
    # The cross-encoder that reranked the cases, if one did (its score is then a signal).
    reranked = any(c.signals is not None and c.signals.rerank is not None for c in cases)
    rerank_model = cfg.rerank_model if reranked else None
    params = fit(cases) if refit else gate.model(name, rerank_model)
    chosen = choose(cases, params) if refit else cfg.gate_threshold
    if refit:
        fitted = save(params, chosen, cases, name, cfg.gate_threshold, cfg.embed_model, rerank_model,
                      fit_settings(cfg))
        params, chosen = gate._fits()[fitted], cfg.gate_threshold
    curve = curves(cases, params)
    if plot_path is not None:
        plot(curve, chosen, plot_path)
    if as_json:
        return summary(cases, params, chosen, curve, name, plot_path)
    tail = f"\nfit: {params.get('model', name)}\nweights (standardised signals): " + ", ".join(
        f"{f} {c:+.2f}" for f, c in zip(params["features"], params["coef"]))
    return table(cases, params, chosen, curve) + tail + (f"\npicture: {plot_path}" if plot_path else "")

"""Measure the bot on a golden set: which techniques earn their keep.

    python evaluate.py [--golden golden.json] [--split tune|report|all] [--answers] [--json]
    python evaluate.py --benchmark scifact|mtrag|squad2|rgb_zh [--limit N] [--json]

One ablation table (hit@k, recall@k, MRR, nDCG@10, refusal precision and
recall, leaks, latency), a per-tag breakdown, the questions each
configuration misses, and a diagnosis of the stage where each failed
question lost its evidence.  Every row runs through the engine the bot runs
(``Engine.search`` / ``Engine.ask``) with the settings given by flag, env,
file or default; ``default`` names the row that is the bot as configured.
Same input, same numbers (latency aside).
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from citebot import cli
from citebot.config import ROOT, Config
from citebot.engine import Engine
from citebot.measurement import diagnose, metrics
from citebot.measurement.golden import Judge, Question, load_golden, misspelt
from citebot.schema import Scope

# The ablation, cumulative; golden sets and benchmarks use the same names.  "+expansion" widens
# the question's words: synonym expansions and corrected misspellings (use_spelling follows use_expansion).
CONFIGS: dict[str, dict] = {name: dict(stages, use_spelling=stages["use_expansion"]) for name, stages in {
    "bm25": dict(use_sparse=True, use_dense=False, use_rerank=False, use_expansion=False, use_followups=False),
    "dense": dict(use_sparse=False, use_dense=True, use_rerank=False, use_expansion=False, use_followups=False),
    "hybrid": dict(use_sparse=True, use_dense=True, use_rerank=False, use_expansion=False, use_followups=False),
    "+rerank": dict(use_sparse=True, use_dense=True, use_rerank=True, use_expansion=False, use_followups=False),
    "+expansion": dict(use_sparse=True, use_dense=True, use_rerank=True, use_expansion=True, use_followups=False),
    "+followups": dict(use_sparse=True, use_dense=True, use_rerank=True, use_expansion=True, use_followups=True),
    "no-filters": dict(use_sparse=True, use_dense=True, use_rerank=True, use_expansion=True, use_followups=True),
}.items()}
UNFILTERED = {"no-filters"}
FLAGS = ("use_sparse", "use_dense", "use_rerank", "use_expansion", "use_spelling", "use_followups")


DEFAULT = "default"  # the row of the bot as configured, when no ablation row is it


def config_for(name: str, base: Config) -> Config:
    if name == DEFAULT:
        return base
    if name not in CONFIGS:
        raise ValueError(f"unknown configuration {name!r}; choose from {', '.join(CONFIGS)}")
    return base.replace(**CONFIGS[name])


def default_name(base: Config) -> str | None:
    """The filtered row whose stages are the ones ``base`` (the bot as
    configured) runs, or None when no row matches."""
    mine = {k: getattr(base, k) for k in FLAGS}
    return next((n for n, o in CONFIGS.items() if n not in UNFILTERED and o == mine), None)


@dataclass(frozen=True)
class RetrievalResult:
    """One question under one configuration."""
    qid: str
    ranked: list[str]  # chunk ids, best first: final hits, then the other fused candidates
    relevant: dict[str, int]  # chunk id -> grade (the judge's)
    refused: bool  # no chunk passed the evidence floor
    leak: bool  # a chunk the asker must not see is in the top final_k
    ms: float
    queries: list[str]
    trace: dict = field(default_factory=dict)  # diagnose.diagnose's input
    spelled: bool = False  # searched with its misspellings corrected too


@dataclass(frozen=True)
class AnswerResult:
    qid: str
    answer: str
    refused: bool
    correct: bool  # key words present, or refused when unanswerable
    unsupported: bool
    stripped: int
    cited_texts: list[str]
    ms: float
    model_calls: int
    score: float | None
    error: str | None
    precision: float | None = None  # share of quoted units (citation marks) from chunks holding gold evidence
    gated: bool = False  # refused by the refusal gate (P(answerable) below the threshold), before any answer

    @property
    def valid_citations(self) -> bool:
        return bool(self.cited_texts) and self.stripped == 0


def run_question(engine: Engine, q: Question, judge: Judge, unfiltered: bool = False) -> RetrievalResult:
    t0 = time.perf_counter()
    plan, r = engine.search(q.text, q.history, Scope.everything() if unfiltered else q.scope)
    ms = (time.perf_counter() - t0) * 1000
    from citebot.answer.context import select_context, word_overlap

    ctx = select_context(r.hits, r.evidence, engine.cfg)
    rel = judge.relevant(q)
    top = r.hits[:engine.cfg.final_k]
    shown = ctx.shown
    # Held only where this asker may not look (a staff page, another tenant's): no ranking could find it.
    in_scope = unfiltered or any(q.scope.allows(judge.chunks[cid]) for cid in rel)
    trace = {"missing_phrases": judge.missing_phrases(q) if q.answerable else [], "held": bool(rel),
             "in_scope": in_scope,
             "retrieved": [{"id": h.id, "grade": rel.get(h.id, 0), "stale": judge.stale(q, h.chunk)} for h in top],
             "shown": [h.id for h in shown], "dropped": [(h.id, why) for h, why in ctx.dropped],
             "duplicates": sum(1 for i, a in enumerate(shown) for b in shown[i + 1:]
                               if word_overlap(a.chunk.text, b.chunk.text) >= engine.cfg.dedup_overlap)}
    return RetrievalResult(q.id, [h.id for h in r.ranking()], rel, not shown,
                           any(judge.stale(q, h.chunk) for h in top), ms, list(plan.queries), trace,
                           plan.spelled is not None)


def run_config(engine: Engine, name: str, qs: list[Question], judge: Judge) -> dict[str, RetrievalResult]:
    e = engine.configured(config_for(name, engine.cfg))
    return {q.id: run_question(e, q, judge, name in UNFILTERED) for q in qs}


def summarize(qs: list[Question], res: dict[str, RetrievalResult]) -> dict:
    ans = [res[q.id] for q in qs if q.answerable]
    m: dict = {}

    def avg(f):
        v = metrics.mean([f(p) for p in ans])
        return None if v is None else round(v, 4)

    for k in (1, 3, 5):
        m[f"hit@{k}"] = avg(lambda p, k=k: metrics.hit_at_k(p.ranked, p.relevant, k))
    for k in (5, 20):
        m[f"recall@{k}"] = avg(lambda p, k=k: metrics.recall_at_k(p.ranked, p.relevant, k))
    m["mrr"] = avg(lambda p: metrics.reciprocal_rank(p.ranked, p.relevant))
    m["ndcg@10"] = avg(lambda p: metrics.ndcg_at_k(p.ranked, p.relevant, 10))
    ref = metrics.refusal_scores([(not q.answerable, res[q.id].refused) for q in qs])
    m["refusal_precision"], m["refusal_recall"] = ref["refusal_precision"], ref["refusal_recall"]
    m["leaks"] = sum(1 for q in qs if res[q.id].leak)
    m["spelled"] = sum(1 for q in qs if res[q.id].spelled)
    lat = [p.ms for p in res.values()]
    m["p50_ms"] = round(metrics.percentile(lat, 50) or 0, 1)
    m["p95_ms"] = round(metrics.percentile(lat, 95) or 0, 1)
    m["n"] = len(qs)
    return m


keywords_present = diagnose.keywords_present


def run_answers(engine: Engine, qs: list[Question], judge: Judge | None = None) -> dict[str, AnswerResult]:
    """Answer-level run through the offline answerer (or the configured LLM);
    with a judge, each answer's precision too."""
    out: dict[str, AnswerResult] = {}
    for q in qs:
        t0 = time.perf_counter()
        turn = engine.ask(q.text, q.history, q.scope)
        ms = (time.perf_counter() - t0) * 1000
        cited = {c["chunk_id"] for c in turn.citations}
        texts = [h.chunk.text for h in turn.context.shown if h.id in cited]
        correct = turn.refused if not q.answerable else (
            not turn.refused and turn.error is None and keywords_present(turn.answer, q.answer_keywords))
        precision = None
        if judge is not None and q.answerable and not turn.refused and turn.quoted:
            rel = judge.relevant(q)
            precision = sum(turn.context.shown[n - 1].id in rel for n in turn.quoted) / len(turn.quoted)
        out[q.id] = AnswerResult(q.id, turn.answer, turn.refused, correct, turn.unsupported, turn.stripped, texts,
                                 ms, turn.model_calls, turn.answer_score, turn.error, precision, turn.gated)
    return out


def summarize_answers(qs: list[Question], res: dict[str, AnswerResult], answerer: str) -> dict:
    n = len(qs)
    answered = [p for p in res.values() if not p.refused]
    ref = metrics.refusal_scores([(not q.answerable, res[q.id].refused) for q in qs])
    lat = [p.ms for p in res.values()]
    precision = [p.precision for p in res.values() if p.precision is not None]
    return {
        "answer_accuracy": round(sum(p.correct for p in res.values()) / n, 4) if n else None,
        "answer_precision": round(sum(precision) / len(precision), 4) if precision else None,
        "refusal_accuracy": ref["refusal_accuracy"], "refusal_precision": ref["refusal_precision"],
        "refusal_recall": ref["refusal_recall"],
        "all_citations_valid": round(sum(p.valid_citations for p in answered) / len(answered), 4) if answered else None,
        "stripped_citations": sum(p.stripped for p in res.values()),
        "unsupported_answers": sum(p.unsupported for p in answered),
        "model_calls": round(sum(p.model_calls for p in res.values()) / n, 3) if n else 0,
        "p50_ms": round(metrics.percentile(lat, 50) or 0, 1), "p95_ms": round(metrics.percentile(lat, 95) or 0, 1),
        "answerer": answerer, "n": n,
    }


def failed(q: Question, p: RetrievalResult, a: AnswerResult | None = None, k: int = 5) -> bool:
    if p.leak:
        return True
    if a is not None and not a.correct:
        return True
    if q.answerable:
        return not metrics.hit_at_k(p.ranked, p.relevant, k)
    return not (a.refused if a is not None else p.refused)


def per_tag(qs: list[Question], runs: dict[str, dict[str, RetrievalResult]],
            answers: dict[str, AnswerResult] | None = None) -> dict:
    """Share of questions not failed, per tag and configuration (hit@5 for
    answerable ones, refusal for the others); with answers, a last column:
    share answered correctly."""
    out: dict = {}
    for tag in sorted({t for q in qs for t in q.tags}):
        group = [q for q in qs if tag in q.tags]
        row: dict[str, float] = {"n": len(group)}
        for name, res in runs.items():
            row[name] = round(sum(not failed(q, res[q.id]) for q in group) / len(group), 3)
        if answers:
            row["answers"] = round(sum(answers[q.id].correct for q in group) / len(group), 3)
        out[tag] = row
    return out


def diagnosis(qs: list[Question], res: dict[str, RetrievalResult], answers: dict[str, AnswerResult] | None) -> dict:
    found: dict[str, list] = {}
    counts: dict[str, dict[str, int]] = {}
    for q in qs:
        p, a = res[q.id], (answers or {}).get(q.id)
        if not failed(q, p, a):
            continue
        t = dict(p.trace)
        if a is not None:
            t.update(answer=a.answer, refused=a.refused, gated=a.gated, cited_texts=a.cited_texts,
                     stripped=a.stripped)
        f = diagnose.diagnose(q, t)
        found[q.id] = [list(x) for x in f]
        for stage, label in f:
            counts.setdefault(stage, {}).setdefault(label, 0)
            counts[stage][label] += 1
    return {"questions": found, "counts": {s: counts[s] for s in diagnose.STAGES if s in counts}}


def _unreadable(cfg: Config) -> bool:
    """Whether a local index exists but cannot be read (an older format, damage)."""
    from citebot.index.local import LocalIndex
    from citebot.index.store import IndexError_

    if cfg.backend != "local" or not (Path(cfg.index) / "CURRENT").exists():
        return False
    try:
        LocalIndex.load(cfg.index)
    except IndexError_:
        return True
    return False


def index_label(cfg: Config) -> str:
    """Where the evaluated index lives, for the report's header."""
    if cfg.backend == "milvus":
        return f"Milvus collection {cfg.milvus_collection} at {cfg.milvus_uri}"
    return cfg.index


def corpus_folder(path, corpus: dict | None) -> Path | None:
    """The folder the golden file at ``path`` was written over (its ``corpus``
    root, relative to the file), or None when it names none."""
    return (Path(path).parent / corpus["root"]).resolve() if corpus else None


def golden_engine(cfg: Config, path, models=None, log=cli.warn, own_index: bool = True) -> Engine | None:
    """The engine over the documents a golden file names (its "corpus": a
    folder relative to the file, and the sub-folders to take), indexed into
    .cache/golden/<name>_<model> and kept up to date; None when that folder is absent.
    Without a "corpus", or with ``own_index`` false, the index the settings name."""
    from citebot.index.build import ingest
    from citebot.index.store import IndexError_, OtherDocuments, SettingsMismatch, open_index

    path = Path(path)
    corpus = load_golden(path).corpus
    root = corpus_folder(path, corpus)
    if root is None or not own_index:
        return Engine.over(open_index(cfg), cfg, models)
    if not root.is_dir():
        log(f"skipped {path.name}: its documents ({root}) are not on this machine")
        return None
    # One index per (golden set, embedding model): comparing models does not rebuild one over the other.
    name = re.sub(r"[^A-Za-z0-9_]+", "_", f"{path.stem}_{Path(cfg.embed_model).name}")
    icfg = (cfg.replace(milvus_collection=f"golden_{name}") if cfg.backend == "milvus"
            else cfg.replace(index=str(ROOT / ".cache" / "golden" / name)))
    def build(rebuild: bool = False) -> None:
        ingest(root, icfg, rebuild=rebuild, include=[f"{f}/*" for f in corpus.get("folders", [])],
               embedder=models.embedder(icfg) if models else None)
    try:
        build()
    except (SettingsMismatch, OtherDocuments):  # the cache is ours: rebuild it (vectors of unchanged text are kept)
        log(f"{name}: the cached index was built with other settings or folders; rebuilding it")
        build(rebuild=True)
    except IndexError_ as e:  # an older format or a damaged cache: also ours to replace
        if not _unreadable(icfg):
            raise  # not the cache (no documents left, a server down): say so, change nothing
        log(f"{name}: the cached index cannot be read ({str(e).split('. Rebuild')[0]}); rebuilding it")
        build(rebuild=True)
    return Engine.over(open_index(icfg), icfg, models)


def evaluate(cfg: Config, golden, answers: bool = False, split: str | None = None, limit: int | None = None,
             ids: list[str] | None = None, configs: list[str] | None = None, engine: Engine | None = None,
             typos: bool = False) -> dict:
    gold = load_golden(golden)
    qs = gold.select(split, ids, limit)
    if typos:  # each typed turn with one typing slip (golden.misspelt)
        qs = [misspelt(q) for q in qs]
    engine = engine or Engine.open(cfg)
    judge = Judge(engine.index)
    answerable = [q for q in qs if q.answerable]
    if answerable and not any(judge.relevant(q) for q in answerable):
        # Every row would read 0 and every miss "ingestion": the questions are about other documents.
        where = f" (it was written over {gold.corpus['root']})" if gold.corpus else ""
        cli.warn(f"no chunk of this index holds the evidence of any of {Path(gold.path).name}'s "
                 f"{len(answerable)} answerable questions{where}; give --golden FILE with questions "
                 "written over these documents")
    default = default_name(engine.cfg) or DEFAULT
    names = list(configs or CONFIGS)
    if default not in names and not configs:
        names.append(default)
    # The row diagnosed and answered from: never the leak check's unfiltered one,
    # whose answers would run under the question's scope beside an unfiltered trace.
    full = default if default in names else next((n for n in reversed(names) if n not in UNFILTERED), names[-1])
    if answers and full in UNFILTERED:  # said before any row runs
        raise ValueError("--answers needs a configuration with the scope filters on; "
                         f"add one to --configs (for example {default})")
    if engine.cfg.use_dense:
        engine.models.embedder(engine.cfg)  # loaded before any row is timed
    runs = {}
    for name in names:
        engine.models.forget_queries()  # each row's latency embeds its own questions
        runs[name] = run_config(engine, name, qs, judge)
    ans_res = ans = None
    if answers:
        e = engine.configured(config_for(full, engine.cfg))
        ans_res = run_answers(e, qs, judge)
        ans = summarize_answers(qs, ans_res, "llm" if e.llm else "extractive")
    rerank_on = engine.configured(engine.cfg.replace(use_rerank=True)).cross_encoder() is not None
    return {
        "golden": str(gold.path), "split": split or "all", "n": len(qs),
        "n_answerable": sum(q.answerable for q in qs), "index": index_label(engine.cfg), "default": default,
        "diagnosed": full, "rerank_available": rerank_on,
        "configs": {name: summarize(qs, res) for name, res in runs.items()},
        "per_tag": per_tag(qs, runs, ans_res),
        "misses": {name: [q.id for q in qs if failed(q, res[q.id])] for name, res in runs.items()},
        "answers": ans, "diagnosis": diagnosis(qs, runs[full], ans_res),
    }

"""Retrieval quality on the public BEIR-form benchmarks, against published numbers.

    python evaluate.py --benchmark scifact|mtrag|squad2|rgb_zh|cmrc [--limit N] [--json] [--configs bm25,hybrid]

The benchmark corpus becomes an in-memory ``LocalIndex``, one chunk per
document (``title + "\\n" + text`` is what BM25 and the embedder see, the
protocol of ``../shared/benchmarks/README.md``), and every query runs through
``Engine.search`` with the settings the bot runs (flag, ``CITEBOT_*``, file,
default) and the default scope, so the numbers are the bot's.  Rows are the
ablation configurations of ``evaluate.CONFIGS``; ``default`` names the bot's.
Metrics (metrics.py): nDCG@10 with linear gain (BEIR/pytrec_eval), Recall@100
and MRR@10 over the ranking the bot makes (final hits, then the other fused
candidates: at most ``sparse_k`` + ``dense_k`` per query), averaged over the
queries that have qrels, plus p50/p95 search latency.  Per benchmark:

* ``mtrag``  the history is each turn's earlier user turns, so the rows with
  follow-ups search what the bot searches; ``bm25/dense/hybrid`` also run
  with follow-ups (``+fu``) and on the human rewrite (``/gold``).
* ``squad2`` also refusal over all questions: retrieval-level (no final hit
  passes the evidence floor) and answer-level (``Engine.ask``, the bot's
  offline answerer and its refusal rules) for the bot's configuration, and
  answer-level over the report half alone (the gate is fitted on the other).
* ``rgb_zh`` Chinese news; ``cmrc`` Chinese Wikipedia (hit@5: the context
  the question was written against is in the top 5).

Corpus embeddings are cached under ``.cache/bench/`` (git-ignored), keyed by
the model name and the corpus ids and texts, so a rerun does not re-embed.
"""
from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import numpy as np

from citebot.config import ROOT, Config
from citebot.engine import Engine
from citebot.index.local import LocalIndex
from citebot.index.store import settings_stamp
from citebot.measurement import benchmarks, metrics
from citebot.measurement.evaluate import CONFIGS, DEFAULT, UNFILTERED, config_for, default_name
from citebot.measurement.report import columns, fmt, spelled_line
from citebot.schema import Chunk, Scope
from citebot.search.models import Models

CACHE_DIR = ROOT / ".cache" / "bench"
METRIC_KEYS = ("ndcg@10", "hit@5", "recall@100", "mrr@10", "p50_ms", "p95_ms")
EMBED_BATCH = 256  # corpus texts per encode call (one progress line each)
NO_HISTORY_SAME = {"+followups": "+expansion"}  # rows that equal another one when queries have no history


# --- the index ---------------------------------------------------------------
def corpus_chunks(corpus: dict[str, dict]) -> list[Chunk]:
    """One chunk per document, in corpus file order."""
    return [Chunk(id=_id, source=_id, title=doc.get("title") or "", headings=(), text=doc.get("text") or "",
                  start=1, end=1) for _id, doc in corpus.items()]


def cache_key(model_name: str, chunks: list[Chunk]) -> str:
    """sha1 over the model name and every (id, embedded text), in order."""
    h = hashlib.sha1()
    h.update(model_name.encode("utf-8") + b"\0")
    for c in chunks:
        h.update(c.id.encode("utf-8") + b"\0" + c.search_text.encode("utf-8") + b"\0")
    return h.hexdigest()[:12]


def embed_corpus(name: str, chunks: list[Chunk], embedder, cache_dir: Path, log) -> np.ndarray:
    """Corpus vectors [n, dim], from the cache when it holds them; otherwise
    embedded in batches (progress on stderr) and cached."""
    members = getattr(embedder, "members", None)
    if members:  # a composite: each model's vectors cached on their own (one model more costs only its own pass)
        return embedder.join([embed_corpus(name, chunks, m, cache_dir, log) for m in members])
    path = Path(cache_dir) / f"{name}-{cache_key(embedder.name, chunks)}.npy"
    if path.is_file():
        try:
            vectors = np.load(path)
            if vectors.shape == (len(chunks), embedder.dim):
                return vectors.astype(np.float32, copy=False)
        except (OSError, ValueError) as e:
            log(f"bench: ignoring unreadable embedding cache {path} ({e})")
    texts = [c.search_text for c in chunks]
    parts: list[np.ndarray] = []
    t0 = time.perf_counter()
    for i in range(0, len(texts), EMBED_BATCH):
        parts.append(np.asarray(embedder.encode(texts[i:i + EMBED_BATCH]), dtype=np.float32))
        done = min(i + EMBED_BATCH, len(texts))
        log(f"bench: {name}: embedded {done}/{len(texts)} ({time.perf_counter() - t0:.0f} s)")
    vectors = np.concatenate(parts) if parts else np.zeros((0, embedder.dim), dtype=np.float32)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        np.save(f, vectors)
    os.replace(tmp, path)
    return vectors


def build_index(name: str, corpus: dict, cfg: Config, embedder, need_vectors: bool, cache_dir, log) -> LocalIndex:
    """An in-memory LocalIndex over the corpus; without ``need_vectors`` the
    vectors are zeros and nothing is embedded."""
    chunks = corpus_chunks(corpus)
    vectors = (embed_corpus(name, chunks, embedder, cache_dir, log) if need_vectors
               else np.zeros((len(chunks), embedder.dim), dtype=np.float32))
    return LocalIndex(chunks, vectors, settings_stamp(cfg, embedder.name, embedder.dim))


def conversation_half(task_id: str) -> str:
    """An MTRAG turn's half: its conversation's ("<conversation><::><turn>"), so a conversation stays in one."""
    from citebot.measurement.golden import half

    return half(str(task_id).split("<::>")[0])


# --- evaluation --------------------------------------------------------------
def judged(rel: dict) -> bool:
    """Whether a query's qrels name a relevant document (all grade 0: nothing to score it by)."""
    return any(g > 0 for g in rel.values())


def score(engine: Engine, queries: dict[str, tuple[str, list[str]]], qrels: dict, on_result=None) -> dict:
    """Search every (typed turn, history); average the metrics over the
    queries with qrels.  ``on_result(qid, retrieval)`` sees each retrieval."""
    per_query: list[dict] = []
    latencies: list[float] = []
    spelled = 0
    for qid, (text, history) in queries.items():
        start = time.perf_counter()
        plan, r = engine.search(text, history, Scope())
        spelled += plan.spelled is not None
        latencies.append((time.perf_counter() - start) * 1000.0)
        ranked = [h.id for h in r.ranking()]
        rel = qrels.get(qid, {})
        if judged(rel):
            per_query.append({"ndcg@10": metrics.ndcg_at_k(ranked, rel, 10, gain="linear"),
                              "hit@5": metrics.hit_at_k(ranked, rel, 5),
                              "recall@100": metrics.recall_at_k(ranked, rel, 100),
                              "mrr@10": metrics.reciprocal_rank(ranked, rel, 10)})
        if on_result is not None:
            on_result(qid, r)
    return {"ndcg@10": metrics.mean(q["ndcg@10"] for q in per_query),
            "hit@5": metrics.mean(q["hit@5"] for q in per_query),
            "recall@100": metrics.mean(q["recall@100"] for q in per_query),
            "mrr@10": metrics.mean(q["mrr@10"] for q in per_query),
            "p50_ms": metrics.percentile(latencies, 50), "p95_ms": metrics.percentile(latencies, 95),
            "n": len(per_query), "spelled": spelled}


def _rows(name: str, wanted: list[str]) -> list[tuple[str, str, str]]:
    """(row key, config name, query form) to run; forms: "typed" (with
    history when the benchmark has it) or "gold" (mtrag's human rewrite)."""
    rows = [(c, c, "typed") for c in wanted]
    if name == "mtrag":
        for c in ("bm25", "dense", "hybrid"):
            if c in wanted:
                rows += [(f"{c}+fu", c, "typed"), (f"{c}/gold", c, "gold")]
    return rows


def _queries(bench, gold, ids: list[str], form: str) -> dict[str, tuple[str, list[str]]]:
    if form == "gold":
        return {q: (gold.queries.get(q, bench.queries[q]), []) for q in ids}
    turns = bench.meta.get("user_turns", {})
    return {q: (bench.queries[q], list(turns.get(q, [])[:-1])) for q in ids}


def _squad2_refusal(engine: Engine, queries, qrels, unanswerable, paragraph: dict) -> tuple[dict, dict, dict]:
    """Retrieval-level and answer-level refusal of the bot's configuration
    over every question, and answer-level over the report half alone (the
    refusal gate was fitted on the other half: refusal.squad_half)."""
    from citebot.answer.context import select_context
    from citebot.measurement.refusal import squad_half

    retrieval, answer, held_out = [], [], []

    def on_result(qid, r):
        retrieval.append((qid in unanswerable, not select_context(r.hits, r.evidence, engine.cfg).shown))

    score(engine, queries, qrels, on_result)
    for qid, (text, _) in queries.items():
        pair = (qid in unanswerable, engine.ask(text, [], Scope()).refused)
        answer.append(pair)
        if squad_half(qid, paragraph) == "report":
            held_out.append(pair)
    return metrics.refusal_scores(retrieval), metrics.refusal_scores(answer), metrics.refusal_scores(held_out)


def run(name: str, cfg: Config | None = None, configs=None, split: str = "test", limit: int | None = None,
        log=print, *, root=None, embedder=None, reranker=Models._UNSET, cache_dir=None, refusal: bool = True,
        models: Models | None = None, half: str | None = None) -> dict:
    """Evaluate the configurations on one benchmark; see the module docstring.
    ``refusal`` False skips SQuAD 2.0's answer-level refusal pass (a sweep
    reads only the ranking); ``models`` given (a sweep's) keeps its query
    embeddings from one run to the next; ``half`` ("tune" or "report", mtrag
    only): the turns of that half of the conversations, as the refusal
    gate's MTRAG-UN split halves them."""
    wall0 = time.perf_counter()
    cfg = cfg or Config()
    default = default_name(cfg) or DEFAULT
    wanted = list(configs or [c for c in CONFIGS if c not in UNFILTERED])
    if default not in wanted and not configs:
        wanted.append(default)
    for c in wanted:
        config_for(c, cfg)  # a typo fails before anything is loaded
    bench = benchmarks.load(name, split, "lastturn" if name == "mtrag" else None, root=root)
    gold = benchmarks.load("mtrag", split, "rewrite", root=root) if name == "mtrag" else None
    ids = list(bench.queries)
    if half is not None:
        if name != "mtrag":
            raise ValueError(f"--split {half} halves MTRAG's conversations; {name} has no halves")
        ids = [q for q in ids if conversation_half(q) == half]
    ids = ids[:limit] if limit else ids
    timed = models is None  # a sweep's shared models keep their query embeddings: its rows are not timed apart
    models = models or Models(embedder, reranker)
    need_vectors = any(config_for(c, cfg).use_dense for c in wanted)
    emb = models.embedder(cfg)
    t0 = time.perf_counter()
    index = build_index(name, bench.corpus, cfg, emb, need_vectors, cache_dir or CACHE_DIR, log)
    engine = Engine.over(index, cfg, models)
    result: dict = {"benchmark": name, "split": split if half is None else f"{split}, {half} half", "n_docs": len(bench.corpus), "default": default,
                    "n_queries": sum(1 for q in ids if judged(bench.qrels.get(q, {}))), "index_s": round(time.perf_counter() - t0, 1),
                    "configs": {}, "published": dict(benchmarks.PUBLISHED.get(name, {})), "notes": []}
    has_history = name == "mtrag"
    for key, c, form in _rows(name, wanted):
        ccfg = config_for(c, cfg)
        ccfg = ccfg.replace(use_followups=key.endswith("+fu") or ccfg.use_followups)
        e = engine.configured(ccfg)
        if not has_history and c in NO_HISTORY_SAME and NO_HISTORY_SAME[c] in result["configs"]:
            result["configs"][key] = dict(result["configs"][NO_HISTORY_SAME[c]], note="no history: same as "
                                          + NO_HISTORY_SAME[c])
            continue
        t1 = time.perf_counter()
        if timed:
            models.forget_queries()  # each row's latency embeds its own queries
        result["configs"][key] = score(e, _queries(bench, gold, ids, form), bench.qrels)
        if ccfg.use_rerank and e.cross_encoder() is None:
            result["configs"][key]["note"] = "no cross-encoder: fused order, as the bot runs"
        log(f"bench: {name} {key}: nDCG@10 {fmt(result['configs'][key]['ndcg@10'], 4)} "
            f"({time.perf_counter() - t1:.0f} s)")
    if any(r.get("note", "").startswith("no cross-encoder") for r in result["configs"].values()):
        result["notes"].append(f"cross-encoder {cfg.rerank_model!r} cannot be loaded offline; rows that "
                               "rerank keep the fused order, as the bot does")
    if name == "squad2" and refusal:
        unanswerable = bench.meta.get("unanswerable", set())
        queries: dict[str, tuple[str, list[str]]] = {q: (bench.queries[q], []) for q in ids}
        retrieval, answer, held_out = _squad2_refusal(engine, queries, bench.qrels, unanswerable,
                                                      bench.meta.get("context_id", {}))
        result.update(refusal=retrieval, answer_refusal=answer, answer_refusal_report=held_out, n_questions=len(ids),
                      n_unanswerable=sum(1 for q in ids if q in unanswerable))
    if limit is not None:
        result["notes"].append(f"limited to the first {len(ids)} queries")
    result["wall_s"] = round(time.perf_counter() - wall0, 1)
    return result


# --- output ------------------------------------------------------------------
def format_table(result: dict) -> str:
    out = [f"{result['benchmark']} ({result['split']}): {result['n_queries']} queries with qrels, "
           f"{result['n_docs']} docs; wall {result['wall_s']} s (index {result['index_s']} s); "
           f"* = the bot as configured", ""]
    rows = [[key + (" *" if key == result.get("default") else ""), fmt(m.get("ndcg@10"), 4),
             fmt(m.get("hit@5"), 4), fmt(m.get("recall@100"), 4), fmt(m.get("mrr@10"), 4), fmt(m.get("p50_ms"), 1),
             fmt(m.get("p95_ms"), 1), str(m.get("n", "")), m.get("note", "")]
            for key, m in result["configs"].items()]
    out += columns(["config", "nDCG@10", "hit@5", "R@100", "MRR@10", "p50 ms", "p95 ms", "n", "note"], rows, left=("note",))
    out += spelled_line(result["configs"], "queries")
    if result.get("refusal"):
        out += ["", f"refusal of the bot's configuration on {result['n_questions']} questions "
                    f"({result['n_unanswerable']} unanswerable; refuse = positive class)"]
        levels = [("retrieval", result["refusal"]), ("answer", result["answer_refusal"])]
        if result.get("answer_refusal_report"):
            levels.append(("answer, report half", result["answer_refusal_report"]))
        rrows = [[level] + [fmt(s[k], 3) for k in ("refusal_precision", "refusal_recall", "refusal_accuracy")]
                 + [str(s[k]) for k in ("tp", "fp", "fn", "tn")] for level, s in levels]
        out += columns(["level", "precision", "recall", "accuracy", "tp", "fp", "fn", "tn"], rrows)
        out.append("(the refusal gate was fitted on the other half of these questions; the report half is held out)")
    if result.get("published"):
        sources = benchmarks.PUBLISHED_SOURCES.get(result["benchmark"], {})
        out += ["", "published nDCG@10"]
        out += columns(["system", "nDCG@10", "source"], [[k, fmt(v, 3), sources.get(k, "")]
                                                          for k, v in result["published"].items()], left=("source",))
    out += [f"note: {n}" for n in result.get("notes", [])]
    return "\n".join(out)


def jsonable(obj):
    if isinstance(obj, dict):
        return {k: jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [jsonable(v) for v in obj]
    if isinstance(obj, set | frozenset):
        return sorted(obj)
    return obj

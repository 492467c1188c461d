"""Retrieval quality on the public BEIR-form benchmarks, against published numbers.

    python bench_beir.py scifact [--limit N] [--json] [--configs bm25,hybrid] [--split train]
    python bench_beir.py mtrag | squad2 | rgb_zh

The benchmark corpus becomes an in-memory ``store.LocalIndex``, one chunk per
document (``title + "\\n" + text`` is what BM25 and the embedder see, the
protocol of ``../shared/benchmarks/README.md``), and every query runs through
``retrieve.Retriever.search`` with the default scope, so the numbers measure
the code the bot uses.  Configurations:

* ``bm25``           sparse only
* ``dense``          dense only (all-MiniLM-L6-v2 unless ``embed_model`` says otherwise)
* ``hybrid``         both, fused by RRF (k = 60), no rerank
* ``hybrid+rerank``  the cross-encoder rescoring the top 100 fused; when it
  cannot be loaded offline the row is reported with no metrics

Each config has 100 candidates per channel and keeps 100, so Recall@100 is
defined.  Metrics (metrics.py): nDCG@10 with linear gain (BEIR/pytrec_eval),
Recall@100 and MRR@10, averaged over the queries that have qrels, plus p50/p95
search latency per query.  Per benchmark:

* ``mtrag``  every config on three query forms: the last user turn
  ("lastturn"), citebot's rule rewrite of it against the earlier user turns
  ("citebot-rewrite") and the human rewrite ("gold-rewrite"); rows are keyed
  "config/form".
* ``squad2`` retrieval metrics on the answerable questions, plus refusal
  precision/recall over all of them: retrieval-level (no hit among the top 5
  passes the evidence floor) and answer-level (the offline extractive answerer
  gives the refusal).
* ``rgb_zh`` Chinese; the English-only MiniLM makes dense weak.

Corpus embeddings are cached under ``.cache/bench/`` (git-ignored), keyed by
the model name and the corpus ids and texts, so a rerun does not re-embed.
Everything except the latencies is deterministic.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

import benchmarks
import config
import metrics
import models
import retrieve
import store
from schema import Chunk, Scope

ROOT = Path(__file__).resolve().parent
CACHE_DIR = ROOT / ".cache" / "bench"

CONFIG_NAMES = ("bm25", "dense", "hybrid", "hybrid+rerank")
MTRAG_FORMS = ("lastturn", "citebot-rewrite", "gold-rewrite")
METRIC_KEYS = ("ndcg@10", "recall@100", "mrr@10", "p50_ms", "p95_ms")
SCOPE = Scope(statuses=frozenset({"current"}), audiences=frozenset({"public"}))
REFUSAL_TOP = 5  # squad2: the evidence floor is checked on this many fused hits
EMBED_BATCH = 256  # corpus texts per encode call (one progress line each)


# --- configurations ----------------------------------------------------------
def base_config(**changes) -> config.Config:
    """The benchmark settings: no expansion or rewrite, 100 candidates per
    channel, keep 100 (Recall@100), RRF k = 60, rerank pool 100."""
    values = dict(use_expansion=False, use_rewrite=False, sparse_k=100, dense_k=100, final_k=100,
                  rerank_pool=100, rrf_k=60, use_rerank=False)
    values.update(changes)
    return config.Config(**values)


def config_for(name: str, base: config.Config | None = None) -> config.Config:
    base = base or base_config()
    if name == "bm25":
        return base.replace(use_sparse=True, use_dense=False, use_rerank=False)
    if name == "dense":
        return base.replace(use_sparse=False, use_dense=True, use_rerank=False)
    if name == "hybrid":
        return base.replace(use_sparse=True, use_dense=True, use_rerank=False)
    if name == "hybrid+rerank":
        return base.replace(use_sparse=True, use_dense=True, use_rerank=True)
    raise ValueError(f"unknown configuration {name!r}; expected one of {', '.join(CONFIG_NAMES)}")


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


def cache_path(name: str, model_name: str, chunks: list[Chunk], cache_dir: str | Path | None = None) -> Path:
    return Path(cache_dir or CACHE_DIR) / f"{name}-{cache_key(model_name, chunks)}.npy"


def _progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def embed_corpus(name: str, chunks: list[Chunk], embedder, cache_dir: str | Path | None = None,
                 log=print) -> np.ndarray:
    """Corpus vectors [n, dim], from the cache when it holds them; otherwise
    embedded in batches (progress on stderr) and cached."""
    path = cache_path(name, embedder.name, chunks, cache_dir)
    if path.is_file():
        try:
            vectors = np.load(path)
        except (OSError, ValueError) as e:
            log(f"bench: ignoring unreadable embedding cache {path} ({e})")
        else:
            if vectors.shape == (len(chunks), embedder.dim):
                log(f"bench: {name}: {len(chunks)} corpus embeddings from cache {path}")
                return vectors.astype(np.float32, copy=False)
            log(f"bench: ignoring embedding cache {path} with shape {vectors.shape}")
    texts = [c.search_text for c in chunks]
    parts: list[np.ndarray] = []
    t0 = time.perf_counter()
    _progress(f"bench: {name}: embedding {len(texts)} documents with {embedder.name} ...")
    for i in range(0, len(texts), EMBED_BATCH):
        parts.append(np.asarray(embedder.encode(texts[i:i + EMBED_BATCH]), dtype=np.float32))
        done = min(i + EMBED_BATCH, len(texts))
        el = time.perf_counter() - t0
        eta = el / done * (len(texts) - done)
        _progress(f"bench: {name}: embedded {done}/{len(texts)} ({el:.0f} s, ~{eta:.0f} s left)")
    vectors = np.concatenate(parts) if parts else np.zeros((0, embedder.dim), dtype=np.float32)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        np.save(f, vectors)
    os.replace(tmp, path)
    log(f"bench: {name}: cached corpus embeddings in {path}")
    return vectors


def build_index(name: str, corpus: dict[str, dict], cfg: config.Config, embedder, *, need_vectors: bool = True,
                cache_dir: str | Path | None = None, log=print) -> store.LocalIndex:
    """An in-memory LocalIndex over the corpus.  Without ``need_vectors`` (no
    dense channel asked for) the vectors are zeros and nothing is embedded."""
    chunks = corpus_chunks(corpus)
    if need_vectors:
        vectors = embed_corpus(name, chunks, embedder, cache_dir, log)
    else:
        vectors = np.zeros((len(chunks), embedder.dim), dtype=np.float32)
    manifest = store.settings_stamp(cfg, embedder.name, embedder.dim)
    return store.LocalIndex(chunks, vectors, manifest)


# --- evaluation --------------------------------------------------------------
def _row(per_query: list[dict], latencies: list[float]) -> dict:
    return {
        "ndcg@10": metrics.mean(q["ndcg@10"] for q in per_query),
        "recall@100": metrics.mean(q["recall@100"] for q in per_query),
        "mrr@10": metrics.mean(q["mrr@10"] for q in per_query),
        "p50_ms": metrics.percentile(latencies, 50),
        "p95_ms": metrics.percentile(latencies, 95),
        "n": len(per_query),
    }


def empty_row(n: int = 0, note: str | None = None) -> dict:
    row: dict = {k: None for k in METRIC_KEYS}
    row["n"] = n
    if note:
        row["note"] = note
    return row


def evaluate(retriever: retrieve.Retriever, cfg: config.Config, queries: dict[str, str],
             qrels: dict[str, dict[str, int]], on_result=None, log=print, label: str = "") -> dict:
    """Search every query; average the metrics over the queries with qrels.
    ``on_result(qid, retrieval)`` sees each retrieval (squad2 refusal)."""
    use_hits = cfg.use_rerank
    per_query: list[dict] = []
    latencies: list[float] = []
    t0 = time.perf_counter()
    for i, (qid, text) in enumerate(queries.items(), 1):
        start = time.perf_counter()
        r = retriever.search([text], SCOPE, cfg)
        latencies.append((time.perf_counter() - start) * 1000.0)
        ranked = [h.id for h in (r.hits if use_hits else r.fused)]
        rel = qrels.get(qid)
        if rel and any(g > 0 for g in rel.values()):
            per_query.append({
                "ndcg@10": metrics.ndcg_at_k(ranked, rel, 10, gain="linear"),
                "recall@100": metrics.recall_at_k(ranked, rel, 100),
                "mrr@10": metrics.reciprocal_rank(ranked, rel, 10),
            })
        if on_result is not None:
            on_result(qid, r)
        if i % 100 == 0 and i < len(queries):
            _progress(f"bench: {label}: {i}/{len(queries)} queries ({time.perf_counter() - t0:.0f} s)")
    return _row(per_query, latencies)


def _limit(ids: list[str], limit: int | None) -> list[str]:
    if limit is None:
        return ids
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit!r}")
    return ids[:limit]


def _resolve_reranker(cfg: config.Config, reranker, wanted: list[str]):
    if "hybrid+rerank" not in wanted:
        return None
    if reranker is not None:
        return reranker
    return models.reranker(cfg.rerank_model)


# --- per benchmark -----------------------------------------------------------
def run(name: str, configs=None, split: str = "test", limit: int | None = None, log=print, *,
        root: str | Path | None = None, embedder=None, reranker=None, cache_dir: str | Path | None = None,
        base: config.Config | None = None) -> dict:
    """Evaluate the configurations on one benchmark; see the module docstring.

    ``root`` overrides the benchmarks folder (benchmarks.load), ``embedder`` /
    ``reranker`` override the models (anything with the same methods),
    ``cache_dir`` the embedding cache, ``base`` the benchmark Config.
    """
    wall0 = time.perf_counter()
    wanted = list(CONFIG_NAMES if configs is None else configs)
    for c in wanted:
        config_for(c)  # a typo fails before anything is loaded
    base = base or base_config()
    notes: list[str] = []

    if name == "mtrag":
        bench = benchmarks.load("mtrag", split, "lastturn", root=root)
        gold = benchmarks.load("mtrag", split, "rewrite", root=root)
    else:
        bench = benchmarks.load(name, split, root=root)
        gold = None
    ids = _limit(list(bench.queries), limit)

    if embedder is None:
        embedder = models.embedder(base.embed_model)
    need_vectors = any(config_for(c, base).use_dense for c in wanted)
    t0 = time.perf_counter()
    index = build_index(name, bench.corpus, base, embedder, need_vectors=need_vectors,
                        cache_dir=cache_dir, log=log)
    index_s = time.perf_counter() - t0

    ce = _resolve_reranker(config_for("hybrid+rerank", base), reranker, wanted)
    if "hybrid+rerank" in wanted and ce is None:
        notes.append(f"reranker unavailable: cross-encoder {base.rerank_model!r} cannot be loaded offline; "
                     "the hybrid+rerank row has no metrics")
    retriever = retrieve.Retriever(index, base, embedder=embedder, reranker=ce)

    result: dict = {"benchmark": name, "split": split, "n_queries": 0, "n_docs": len(bench.corpus),
                    "configs": {}, "published": dict(benchmarks.PUBLISHED.get(name, {})), "notes": notes}

    if name == "mtrag":
        forms = _mtrag_forms(bench, gold, ids, notes)
        result["n_queries"] = sum(1 for q in ids if bench.qrels.get(q))
        result["forms"] = list(MTRAG_FORMS)
        result["rewritten"] = forms.pop("_rewritten")
        for c in wanted:
            for form in MTRAG_FORMS:
                key = f"{c}/{form}"
                result["configs"][key] = _run_config(retriever, c, base, ce, forms[form], bench.qrels,
                                                     log, label=f"{name} {key}")
        notes.append("pooled corpus (the shipped gold passages): scores are not comparable with the "
                     "paper's full-corpus numbers")
    elif name == "squad2":
        queries = {q: bench.queries[q] for q in ids}
        unanswerable = bench.meta.get("unanswerable", set())
        result["n_queries"] = sum(1 for q in ids if bench.qrels.get(q))
        result["n_questions"] = len(ids)
        result["n_unanswerable"] = sum(1 for q in ids if q in unanswerable)
        answer_mod, why = _answer_module()
        if answer_mod is None:
            notes.append(f"answer-level refusal skipped: answer.extractive is not importable ({why})")
        for c in wanted:
            result["configs"][c] = _run_squad2_config(retriever, index, embedder, c, base, ce, queries,
                                                      bench.qrels, unanswerable, answer_mod, log)
        notes.append(f"refusal: retrieval-level = no fused hit in the top {REFUSAL_TOP} passes "
                     f"is_evidence(min_cosine={base.min_cosine}, min_coverage={base.min_coverage}); "
                     f"answer-level = answer.extractive (min_answer_score={base.min_answer_score}) "
                     f"over select_context(hits[:{REFUSAL_TOP}]) gives the refusal")
    else:
        queries = {q: bench.queries[q] for q in ids}
        result["n_queries"] = sum(1 for q in ids if bench.qrels.get(q))
        for c in wanted:
            result["configs"][c] = _run_config(retriever, c, base, ce, queries, bench.qrels, log,
                                               label=f"{name} {c}")
        if name == "rgb_zh":
            notes.append("all-MiniLM-L6-v2 is English-only: dense and hybrid numbers on Chinese are expected "
                         "to be weak")
    if limit is not None:
        notes.append(f"limited to the first {len(ids)} queries")
    result["index_s"] = round(index_s, 1)
    result["wall_s"] = round(time.perf_counter() - wall0, 1)
    result["load_avg"] = _load_avg()  # latencies mean little on a busy machine
    return result


def _load_avg() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def _run_config(retriever, c, base, ce, queries, qrels, log, label) -> dict:
    cfg = config_for(c, base)
    if cfg.use_rerank and ce is None:
        return empty_row(sum(1 for q in queries if qrels.get(q)), "reranker unavailable")
    t0 = time.perf_counter()
    row = evaluate(retriever, cfg, queries, qrels, log=log, label=label)
    log(f"bench: {label}: nDCG@10 {_fmt(row['ndcg@10'])} ({time.perf_counter() - t0:.0f} s)")
    return row


def _mtrag_forms(bench, gold, ids: list[str], notes: list[str]) -> dict:
    """{form: {qid: query text}} plus "_rewritten": how many turns citebot changed."""
    import rewrite

    turns = bench.meta.get("user_turns", {})
    last = {q: bench.queries[q] for q in ids}
    mine: dict[str, str] = {}
    failed: list[str] = []
    first_error = None
    for q in ids:
        history = turns.get(q, [last[q]])
        turn, prev = (history[-1], history[:-1]) if history else (last[q], [])
        try:
            out = rewrite.rewrite_rules(turn, prev)
        except Exception as e:  # noqa: BLE001 - a rewriter bug must not hide the other forms
            failed.append(q)
            first_error = first_error or f"{q}: {type(e).__name__}: {e}"
            out = turn
        mine[q] = out if isinstance(out, str) and out.strip() else turn
    if failed:
        notes.append(f"rewrite.rewrite_rules raised on {len(failed)} turns (the last turn was searched "
                     f"instead); first: {first_error}")
    rewritten = sum(1 for q in ids if mine[q] != last[q])
    notes.append(f"citebot-rewrite changed {rewritten} of {len(ids)} last turns")
    return {"lastturn": last, "citebot-rewrite": mine,
            "gold-rewrite": {q: gold.queries.get(q, last[q]) for q in ids}, "_rewritten": rewritten}


def _answer_module():
    try:
        import answer

        for attr in ("extractive", "select_context", "Context"):
            getattr(answer, attr)
        return answer, None
    except Exception as e:  # noqa: BLE001 - optional part of the benchmark
        return None, f"{type(e).__name__}: {e}"


def _run_squad2_config(retriever, index, embedder, c, base, ce, queries, qrels, unanswerable, answer_mod,
                       log) -> dict:
    cfg = config_for(c, base)
    n = sum(1 for q in queries if qrels.get(q))
    if cfg.use_rerank and ce is None:
        row = empty_row(n, "reranker unavailable")
        row["refusal"] = None
        row["answer_refusal"] = None
        return row
    retrieval_pairs: list[tuple[bool, bool]] = []
    answer_pairs: list[tuple[bool, bool]] = []

    def on_result(qid, r):
        should = qid in unanswerable
        # Evidence scores are set on r.hits; with final_k = 100 the top fused
        # hits are those very objects (and, after a rerank, the top hits).
        top = (r.hits if cfg.use_rerank else r.fused)[:REFUSAL_TOP]
        has_evidence = any(retrieve.is_evidence(h, cfg.min_cosine, cfg.min_coverage) for h in top)
        retrieval_pairs.append((should, not has_evidence))
        if answer_mod is not None:
            ctx = answer_mod.select_context(r.hits[:REFUSAL_TOP], cfg)
            if ctx.shown:
                ext = answer_mod.extractive(queries[qid], ctx, index.bm25.term_idf, embed=embedder.encode,
                                            min_score=cfg.min_answer_score)
                refused = ext.text == config.REFUSAL
            else:
                refused = True  # the engine refuses without answering
            answer_pairs.append((should, refused))

    t0 = time.perf_counter()
    row = evaluate(retriever, cfg, queries, qrels, on_result=on_result, log=log, label=f"squad2 {c}")
    row["refusal"] = metrics.refusal_scores(retrieval_pairs)
    row["answer_refusal"] = metrics.refusal_scores(answer_pairs) if answer_mod is not None else None
    log(f"bench: squad2 {c}: nDCG@10 {_fmt(row['ndcg@10'])} ({time.perf_counter() - t0:.0f} s)")
    return row


# --- output ------------------------------------------------------------------
def _fmt(v, digits: int = 4) -> str:
    if v is None:
        return "-"
    if isinstance(v, tuple | list):
        return "–".join(_fmt(x, 3) for x in v)
    if isinstance(v, int):
        return str(v)
    return f"{v:.{digits}f}"


def _table(header: list[str], rows: list[list[str]], left: tuple[str, ...] = ("source", "level")) -> list[str]:
    """Plain-text columns: the first and the ``left`` ones left-aligned, numbers right."""
    widths = [max(len(header[i]), *(len(r[i]) for r in rows)) if rows else len(header[i])
              for i in range(len(header))]
    line = lambda cells: "  ".join(  # noqa: E731
        c.ljust(w) if i == 0 or header[i] in left else c.rjust(w)
        for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    return [line(header), line(["-" * w for w in widths])] + [line(r) for r in rows]


def format_table(result: dict) -> str:
    """The result as text: one row per configuration, refusal scores for
    squad2, then the published numbers and the notes."""
    out = [f"{result['benchmark']} ({result['split']}): {result['n_queries']} queries with qrels, "
           f"{result.get('n_docs', '?')} docs; wall {result.get('wall_s', '?')} s "
           f"(index {result.get('index_s', '?')} s); load avg {result.get('load_avg', '?')} on "
           f"{os.cpu_count()} CPUs", ""]
    rows = []
    for key, m in result["configs"].items():
        rows.append([key, _fmt(m.get("ndcg@10")), _fmt(m.get("recall@100")), _fmt(m.get("mrr@10")),
                     _fmt(m.get("p50_ms"), 1), _fmt(m.get("p95_ms"), 1), str(m.get("n", ""))])
    out += _table(["config", "nDCG@10", "R@100", "MRR@10", "p50 ms", "p95 ms", "n"], rows)
    if result["benchmark"] == "squad2":
        out += ["", f"refusal on {result.get('n_questions')} questions "
                    f"({result.get('n_unanswerable')} unanswerable; refuse = positive class)"]
        rrows = []
        for key, m in result["configs"].items():
            for level, label in (("refusal", "retrieval"), ("answer_refusal", "answer")):
                s = m.get(level)
                if not s:
                    rrows.append([key, label] + ["-"] * 7)
                    continue
                rrows.append([key, label,
                              _fmt(s["refusal_precision"]), _fmt(s["refusal_recall"]), _fmt(s["refusal_accuracy"]),
                              str(s["tp"]), str(s["fp"]), str(s["fn"]), str(s["tn"])])
        out += _table(["config", "level", "precision", "recall", "accuracy", "tp", "fp", "fn", "tn"], rrows)
    pub = result.get("published") or {}
    if pub:
        sources = benchmarks.PUBLISHED_SOURCES.get(result["benchmark"], {})
        out += ["", "published nDCG@10"]
        out += _table(["system", "nDCG@10", "source"],
                      [[k, _fmt(v, 3), sources.get(k, "")] for k, v in pub.items()])
    if result.get("notes"):
        out += [""] + [f"note: {n}" for n in result["notes"]]
    return "\n".join(out)


def _jsonable(obj):
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, set | frozenset):
        return sorted(obj)
    return obj


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench_beir.py", description="Retrieval metrics on a public benchmark.")
    p.add_argument("name", choices=benchmarks.NAMES)
    p.add_argument("--split", default="test", help="scifact: test (default) or train")
    p.add_argument("--limit", type=int, default=None, help="only the first N queries")
    p.add_argument("--configs", default=None,
                   help=f"comma-separated subset of {','.join(CONFIG_NAMES)} (default: all)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    args = p.parse_args(argv)
    configs = [c.strip() for c in args.configs.split(",") if c.strip()] if args.configs else None
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    try:
        result = run(args.name, configs, split=args.split, limit=args.limit, log=log)
    except (FileNotFoundError, ValueError, models.ModelUnavailable) as e:
        print(f"bench_beir.py: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(_jsonable(result), indent=2, ensure_ascii=False))
    else:
        print(format_table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

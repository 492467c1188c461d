"""The scale section of bench.py: citebot's local index at 1k-100k chunks,
each channel beside its reference measured in the same run (bm25s for BM25,
a bare numpy matmul for dense)."""
from __future__ import annotations

import random
import resource
import tempfile
import time
from pathlib import Path

import numpy as np

from citebot.config import ROOT, Config
from citebot.engine import Engine
from citebot.index.local import LocalIndex
from citebot.index.store import settings_stamp
from citebot.measurement import benchmarks
from citebot.measurement.bench import summary, timed
from citebot.schema import Chunk, Scope
from citebot.search import analyzer, bm25

DIM = 384


def passages() -> tuple[list[str], list[str]]:
    """Real text and real queries: SciFact, MTRAG's pool and SQuAD's
    paragraphs with SciFact's test queries, or the sample's when the
    benchmarks are absent."""
    texts, queries = [], []
    for name in ("scifact", "mtrag", "squad2"):
        if benchmarks.available(name):
            b = benchmarks.load(name)
            texts += [f"{d['title']}\n{d['text']}".strip() for d in b.corpus.values()]
            if name == "scifact":
                queries = list(b.queries.values())[:100]
    if not texts:
        from citebot.measurement.golden import load_golden

        texts = [p.read_text(encoding="utf-8", errors="replace") for p in sorted((ROOT / "examples" / "kb").rglob("*.md"))]
        queries = [q.text for q in load_golden(ROOT / "golden.json").questions][:100]
    return texts, queries


def recombine(texts: list[str], n: int, seed: int = 0) -> list[str]:
    """``n`` passages: the real ones first, then new ones made of the
    sentences of two random real passages (real words, real lengths)."""
    rng = random.Random(seed)
    out = list(texts[:n])
    sentences = [t.split(". ") for t in texts]
    while len(out) < n:
        a, b = rng.choice(sentences), rng.choice(sentences)
        out.append(". ".join(a[: max(1, len(a) // 2)] + b[len(b) // 2:]))
    return out


class StubQueries:
    """Random unit query vectors: hybrid latency without the model's own time."""
    name, dim = "bench/random", DIM

    def encode(self, texts, progress=False):
        v = np.random.default_rng(len(texts)).standard_normal((len(texts), DIM)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def one_size(n: int, texts: list[str], queries: list[str], tmp: Path) -> dict:
    import bm25s

    docs = recombine(texts, n)
    rng = np.random.default_rng(n)
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    chunks = [Chunk(id=f"c{i:06d}", source=f"doc{i // 10}.md", title="", headings=(), text=t, start=1, end=1)
              for i, t in enumerate(docs)]
    cfg = Config(index=str(tmp / f"idx-{n}"), use_rerank=False)
    t0 = time.perf_counter()
    LocalIndex(chunks, vectors, dict(settings_stamp(cfg, StubQueries.name, DIM), source_folder="bench",
                                     sources={})).save(cfg.index)
    build_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    index = LocalIndex.load(cfg.index)
    load_s = time.perf_counter() - t0
    terms = [analyzer.analyze(q) for q in queries]
    qv = StubQueries().encode(queries)
    t0 = time.perf_counter()
    index.sparse_search(terms[0], Scope(), 50)  # the first query also works out the BM25 weights
    first_ms = (time.perf_counter() - t0) * 1000
    out: dict = {"chunks": n, "build_s": round(build_s, 1), "load_s": round(load_s, 3),
                 "first_query_ms": round(first_ms, 1)}
    out["bm25"] = summary(timed(lambda ts: index.sparse_search(ts, Scope(), 50), terms))
    ref = bm25s.BM25(k1=1.2, b=0.75)
    ref.index(bm25s.tokenize(docs, stopwords="en", show_progress=False), show_progress=False)
    qtok = [bm25s.tokenize([q], stopwords="en", show_progress=False) for q in queries]
    out["bm25s"] = summary(timed(lambda q: ref.retrieve(q, k=50, show_progress=False), qtok))
    out["dense"] = summary(timed(lambda v: index.dense_search(v, Scope(), 50), qv))
    mat = np.ascontiguousarray(vectors)

    def floor(v):
        s = mat @ v
        top = np.argpartition(-s, 49)[:50]
        return top[np.argsort(-s[top])]
    out["matmul_floor"] = summary(timed(floor, qv))
    from citebot.search.models import Models
    engine = Engine(index, cfg.replace(use_expansion=False, use_followups=False), Models(StubQueries(), None))
    out["hybrid"] = summary(timed(lambda q: engine.search(q, [], Scope()), queries))
    out["rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    out["bm25_vs_bm25s"] = round(out["bm25"]["p50_ms"] / max(out["bm25s"]["p50_ms"], 1e-3), 2)
    out["dense_vs_floor"] = round(out["dense"]["p50_ms"] / max(out["matmul_floor"]["p50_ms"], 1e-3), 2)
    return out


def run(sizes, log) -> list[dict]:
    texts, queries = passages()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            rows.append(one_size(n, texts, queries, Path(tmp)))
            log(f"bench: {n} chunks: " + ", ".join(f"{k} {v}" for k, v in rows[-1].items() if not isinstance(v, dict)))
    return rows


def exactness(texts: list[str], queries: list[str], n: int = 2000) -> float:
    """The largest difference, over the queries, between citebot's BM25 and
    rank-bm25's on the same analysed text (the reference check at scale)."""
    docs = [analyzer.analyze(t) for t in recombine(texts, n)]
    from collections import Counter
    p = bm25.Postings.from_counts([Counter(d) for d in docs])
    worst = 0.0
    for q in queries[:20]:
        ts = analyzer.analyze(q)
        worst = max(worst, float(np.max(np.abs(bm25.scores(p, ts) - bm25.reference_scores(docs, ts, range(n))))))
    return worst

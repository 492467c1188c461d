"""The scale section of bench.py: citebot's local index at 1k-100k chunks,
each channel beside its reference measured in the same run (bm25s for BM25,
a bare numpy matmul for dense)."""
from __future__ import annotations

import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

from citebot.config import ROOT, Config
from citebot.engine import Engine
from citebot.index.local import LocalIndex
from citebot.index.store import SearchIndex, settings_stamp
from citebot.measurement import benchmarks, metrics
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


def _chunks(n: int, texts: list[str]) -> tuple[list[Chunk], np.ndarray]:
    docs = recombine(texts, n)
    rng = np.random.default_rng(n)
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    chunks = [Chunk(id=f"c{i:06d}", source=f"doc{i // 10}.md", title="", headings=(), text=t, start=1, end=1)
              for i, t in enumerate(docs)]
    return chunks, vectors


def _build(backend: str, chunks: list[Chunk], vectors: np.ndarray, tmp: Path):
    """Write the index the way ingest does (term analysis included, embedding
    not: the vectors are given) and open it as a fresh process would."""
    n = len(chunks)
    if backend == "milvus":
        from citebot.index import milvus

        cfg = Config(backend="milvus", milvus_uri=str(tmp / f"milvus-{n}.db"), milvus_collection="bench",
                     use_rerank=False)
    else:
        cfg = Config(index=str(tmp / f"idx-{n}"), use_rerank=False)
    manifest = dict(settings_stamp(cfg, StubQueries.name, DIM), source_folder="bench", sources={})
    t0 = time.perf_counter()
    if backend == "milvus":
        counts = [dict(Counter(analyzer.analyze(c.search_text))) for c in chunks]
        milvus.write(cfg, chunks, vectors, counts, manifest, None)
    else:
        LocalIndex(chunks, vectors, manifest).save(cfg.index)
    build_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    index: SearchIndex
    if backend == "milvus":
        index = milvus.MilvusIndex.open(cfg)  # (not open_index: the stub's vectors are not the configured model's)
    else:
        index = LocalIndex.load(cfg.index)
    return cfg, index, build_s, time.perf_counter() - t0


def one_size(n: int, backend: str, texts: list[str], queries: list[str], tmp: Path) -> dict:
    """One backend at one size (run in a process of its own, so the memory
    is this backend's): build, load, then each channel over the queries;
    on the local backend also the references (bm25s, a numpy matmul)."""
    chunks, vectors = _chunks(n, texts)
    base = _rss_mib()
    cfg, index, build_s, load_s = _build(backend, chunks, vectors, tmp)
    terms = [analyzer.analyze(q) for q in queries]
    qv = StubQueries().encode(queries)
    t0 = time.perf_counter()
    index.sparse_search(terms[0], Scope(), 50)  # the first query also works out the BM25 weights
    first_ms = (time.perf_counter() - t0) * 1000
    out: dict = {"chunks": n, "backend": backend, "build_s": round(build_s, 1), "load_s": round(load_s, 3),
                 "first_query_ms": round(first_ms, 1)}
    bm25_ms = timed(lambda ts: index.sparse_search(ts, Scope(), 50), terms)
    dense_ms = timed(lambda v: index.dense_search(v, Scope(), 50), qv)
    out["bm25"], out["dense"] = summary(bm25_ms), summary(dense_ms)
    from citebot.search.models import Models
    engine = Engine(index, cfg.replace(use_expansion=False, use_followups=False), Models(StubQueries(), None))
    out["hybrid"] = summary(timed(lambda q: engine.search(q, [], Scope()), queries))
    # What the backend holds: resident memory now, less what the process held before it
    # built the index (the passages and the chunks themselves).  Taken before the local
    # references are built: bm25s's index counted as the local backend's (38 MiB, not 17).
    out["index_mib"] = max(0, round(_rss_mib() - base))
    if backend == "local":
        import bm25s

        docs = [c.text for c in chunks]
        ref = bm25s.BM25(k1=1.2, b=0.75)
        ref.index(bm25s.tokenize(docs, stopwords="en", show_progress=False), show_progress=False)
        qtok = [bm25s.tokenize([q], stopwords="en", show_progress=False) for q in queries]
        mat = np.ascontiguousarray(vectors)

        def floor(v):
            s = mat @ v
            top = np.argpartition(-s, 49)[:50]
            return top[np.argsort(-s[top])]
        bm25s_ms = timed(lambda q: ref.retrieve(q, k=50, show_progress=False), qtok)
        floor_ms = timed(floor, qv)
        out["bm25s"], out["matmul_floor"] = summary(bm25s_ms), summary(floor_ms)
        # Ratios of the unrounded medians (the rounded ones moved a 1k-chunk ratio by 2-3%).
        out["bm25_vs_bm25s"] = round(_p50(bm25_ms) / max(_p50(bm25s_ms), 1e-6), 2)
        out["dense_vs_floor"] = round(_p50(dense_ms) / max(_p50(floor_ms), 1e-6), 2)
    out["rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return out


def _p50(ms: list[float]) -> float:
    return metrics.percentile(ms, 50) or 0.0


def _rss_mib() -> float:
    import gc

    gc.collect()
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def run(sizes, log, backends=("local",)) -> list[dict]:
    """Every (size, backend) in a fresh interpreter: peak memory is then that
    backend's alone, and one run's caches never help the next."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            for backend in backends:
                r = subprocess.run([sys.executable, "-m", "citebot.measurement.scale", str(n), backend, tmp],
                                   capture_output=True, text=True)
                if r.returncode != 0:
                    raise RuntimeError(f"bench at {n} chunks on {backend} failed:\n{r.stderr[-2000:]}")
                rows.append(json.loads(r.stdout))
                log(f"bench: {n} chunks on {backend}: "
                    + ", ".join(f"{k} {v}" for k, v in rows[-1].items() if not isinstance(v, dict)))
    return rows


def exactness(texts: list[str], queries: list[str], n: int = 2000) -> float:
    """The largest difference, over the queries, between citebot's BM25 and
    rank-bm25's on the same analysed text (the reference check at scale)."""
    docs = [analyzer.analyze(t) for t in recombine(texts, n)]
    p = bm25.Postings.from_counts([Counter(d) for d in docs])
    worst = 0.0
    for q in queries[:20]:
        ts = analyzer.analyze(q)
        worst = max(worst, float(np.max(np.abs(bm25.scores(p, ts) - bm25.reference_scores(docs, ts, range(n))))))
    return worst


if __name__ == "__main__":  # one (size, backend) measurement: run() starts these
    _texts, _queries = passages()
    print(json.dumps(one_size(int(sys.argv[1]), sys.argv[2], _texts, _queries, Path(sys.argv[3]))))

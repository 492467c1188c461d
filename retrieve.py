"""Hybrid retrieval: filtered BM25 + filtered dense, fused by RRF, reranked.

    python retrieve.py "question" [--json] [--index DIR] [--audience staff]
                       [--tenant T] [--lang zh] [--include-superseded]

Each channel ranks only the chunks the scope allows (the filter runs before
ranking, never after).  Fusion is reciprocal rank fusion over ranks only:
score(d) = sum over lists of 1 / (k + rank), k = 60, ranks from 1, summed as
exact fractions so equal sums are real ties; ties go to the better best
single rank, then the smaller chunk id.  A cross-encoder then rescores the top
``rerank_pool`` fused hits and keeps ``final_k``; when it cannot be loaded,
one warning is printed and the fused order stands.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from fractions import Fraction

import cli
import config
import models
import store
from schema import Hit, Scope


# --- pure functions ----------------------------------------------------------
def rrf(lists: list[tuple[str, list[Hit]]], k: int = 60) -> list[Hit]:
    """Fuse ranked lists by reciprocal rank.  Each input hit's rank in its list
    is its position (1-based); the fused hit keeps every list's rank and raw
    score under that list's name, plus ``rrf``."""
    fused: dict[str, Hit] = {}
    for name, hits in lists:
        for pos, h in enumerate(hits, 1):
            f = fused.get(h.id)
            if f is None:
                f = fused[h.id] = Hit(h.id, chunk=h.chunk)
            f.ranks[name] = pos
            f.scores[name] = h.score
    total = rrf_exact([[h.id for h in hits] for _, hits in lists], k)
    order = sorted(fused.values(), key=lambda h: (-total[h.id], h.best_rank(), h.id))
    for i, h in enumerate(order, 1):
        h.rank, h.score = i, float(total[h.id])
        h.ranks["rrf"], h.scores["rrf"] = i, h.score
    return order


def rrf_exact(lists: list[list[str]], k: int = 60) -> dict[str, Fraction]:
    """The fused scores as exact fractions (what ``rrf`` orders by)."""
    out: dict[str, Fraction] = {}
    for ids in lists:
        for pos, d in enumerate(ids, 1):
            out[d] = out.get(d, Fraction(0)) + Fraction(1, k + pos)
    return out


def rerank(hits: list[Hit], scores: list[float], keep: int) -> list[Hit]:
    """Order ``hits`` by cross-encoder ``scores`` (ties by fused rank), keep the
    best ``keep``; every earlier rank and score stays on the hit."""
    paired = sorted(zip(hits, scores), key=lambda p: (-p[1], p[0].rank))
    out = []
    for i, (h, s) in enumerate(paired[:keep], 1):
        h.ranks["rerank"], h.scores["rerank"] = i, float(s)
        h.rank, h.score = i, float(s)
        out.append(h)
    return out


def is_evidence(h: Hit, min_cosine: float, min_coverage: float) -> bool:
    """Absolute floor: a hit counts as evidence when its meaning is close
    (cosine), it holds most of the query's rare terms (idf coverage), or it
    holds an identifier the question names."""
    return (h.scores.get("cosine", 0.0) >= min_cosine or h.scores.get("coverage", 0.0) >= min_coverage
            or h.scores.get("identifier", 0.0) >= 1.0)


# --- the pipeline ------------------------------------------------------------
@dataclass
class Retrieval:
    queries: list[str]
    scope: Scope
    hits: list[Hit]  # final list, best first
    fused: list[Hit]  # every fused candidate, best first
    rerank_on: bool
    timings_ms: dict[str, float] = field(default_factory=dict)


class Retriever:
    """Runs the retrieval contract against any ``store.SearchIndex``."""

    def __init__(self, index: store.SearchIndex, cfg: config.Config, embedder=None, reranker=None):
        self.index, self.cfg = index, cfg
        self._embedder, self._reranker = embedder, reranker
        self._rerank_loaded = reranker is not None

    @property
    def embedder(self):
        if self._embedder is None:
            self._embedder = models.embedder(self.cfg.embed_model)
            dim = self.index.manifest.get("embed_dim")
            if dim is not None and dim != self._embedder.dim:
                raise store.IndexError_(
                    f"the index holds {dim}-dimensional vectors but {self._embedder.name} makes "
                    f"{self._embedder.dim}. Rebuild it: {store.rebuild_command(self.index.manifest, self.cfg.index)}")
        return self._embedder

    @property
    def reranker(self):
        if not self._rerank_loaded:
            self._reranker = models.reranker(self.cfg.rerank_model) if self.cfg.use_rerank else None
            self._rerank_loaded = True
        return self._reranker

    def search(self, queries: list[str], scope: Scope, cfg: config.Config | None = None) -> Retrieval:
        cfg = cfg or self.cfg
        t = time.perf_counter
        timings: dict[str, float] = {}
        lists: list[tuple[str, list[Hit]]] = []
        vectors = None
        t0 = t()
        if cfg.use_sparse:
            for i, q in enumerate(queries):
                lists.append((_name("bm25", i), self.index.sparse_search(q, scope, cfg.sparse_k)))
        timings["sparse"] = (t() - t0) * 1000
        t0 = t()
        dense_ok = [dense_speaks(q, cfg.dense_langs) for q in queries]
        if cfg.use_dense and any(dense_ok):
            vectors = self.embedder.encode(queries)
            for i, q in enumerate(queries):
                if dense_ok[i]:
                    lists.append((_name("dense", i), self.index.dense_search(vectors[i], scope, cfg.dense_k)))
        timings["dense"] = (t() - t0) * 1000
        t0 = t()
        fused = rrf(lists, cfg.rrf_k)
        timings["fuse"] = (t() - t0) * 1000
        t0 = t()
        ce = self.reranker if cfg.use_rerank else None
        pool = fused[:cfg.rerank_pool]
        if ce is not None and pool:
            scores = ce.predict([(queries[0], h.chunk.search_text) for h in pool], batch_size=32,
                                show_progress_bar=False)
            hits = rerank(pool, [float(s) for s in scores], cfg.final_k)
        else:
            hits = [h for h in fused[:cfg.final_k]]
        timings["rerank"] = (t() - t0) * 1000
        # Evidence against the best of the searched queries (an expansion may match better).
        # Cosine still counts as evidence for other languages: same-script text
        # scores high even in an English model, and without it bigram coverage
        # alone refuses most Chinese questions.
        ids = [h.id for h in hits]
        for i, q in enumerate(queries):
            found = self.index.evidence(q, None if vectors is None else vectors[i], ids) if ids else {}
            for h in hits:
                for key, v in found[h.id].items():
                    h.scores[key] = max(h.scores.get(key, v), v)
        timings["total"] = sum(timings.values())
        return Retrieval(list(queries), scope, hits, fused, ce is not None, timings)


def dense_speaks(query: str, langs: str) -> bool:
    """Whether the embedding model reads the query's language.  An
    English-only model (the packaged MiniLM) maps Chinese or Bengali text to
    noise, and fusing noise in costs rank: on RGB-zh, BM25 alone scores
    nDCG@10 0.668 and BM25 + English MiniLM fused only 0.428."""
    if langs.strip() == "*":
        return True
    from documents import guess_lang

    return guess_lang(query) in {l.strip() for l in langs.split(",")}


def _name(channel: str, i: int) -> str:
    return channel if i == 0 else f"{channel}@{i + 1}"


def open_index(cfg: config.Config) -> store.LocalIndex:
    index = store.LocalIndex.load(cfg.index)
    expected = models.model_name(cfg.embed_model)
    if index.manifest.get("embed_model") != expected:
        raise store.IndexError_(
            f"the index at {cfg.index} was built with embedding model {index.manifest.get('embed_model')!r}, "
            f"but the settings ask for {expected!r}. Rebuild it: {store.rebuild_command(index.manifest, cfg.index)}")
    return index


def queries_for(question: str, cfg: config.Config) -> list[str]:
    """The question plus its synonym expansions (when enabled)."""
    if not cfg.use_expansion:
        return [question]
    import rewrite

    rw = rewrite.rewrite(question, [], rewrite.load_synonyms(cfg.synonyms), use_rewrite=False)
    return rw.queries()


def hit_json(h: Hit) -> dict:
    c = h.chunk
    return {"id": h.id, "source": c.source, "lines": [c.start, c.end], "title": c.title,
            "headings": list(c.headings), "text": c.text, "rank": h.rank,
            "ranks": dict(h.ranks), "scores": {k: round(v, 6) for k, v in h.scores.items()}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="retrieve.py", description="Search a citebot index and show the ranked chunks.")
    p.add_argument("question")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    cli.add_config_flags(p)
    cli.add_scope_flags(p)
    args, cfg = cli.parse(p, argv)
    try:
        r = Retriever(open_index(cfg), cfg).search(queries_for(args.question, cfg), cli.scope_from(args))
    except (store.IndexError_, models.ModelUnavailable) as e:
        return cli.fail(str(e))
    if args.json:
        print(json.dumps({"query": args.question, "queries": r.queries, "scope": r.scope.describe(),
                          "rerank": r.rerank_on, "timings_ms": {k: round(v, 2) for k, v in r.timings_ms.items()},
                          "hits": [hit_json(h) for h in r.hits]}, ensure_ascii=False, indent=2))
        return cli.EXIT_OK
    if len(r.queries) > 1:
        print(cli.dim("searched: " + " | ".join(r.queries)))
    if not r.hits:
        print("no hits")
    for h in r.hits:
        c = h.chunk
        ranks = " ".join(f"{k}={v}" for k, v in h.ranks.items())
        scores = " ".join(f"{k}={v:.3f}" for k, v in h.scores.items())
        print(f"{h.rank}. {c.title} — {c.location}  [{h.id}]")
        print(cli.dim(f"   ranks: {ranks}\n   scores: {scores}"))
        print("   " + " ".join(c.text.split())[:200])
    print(cli.dim(f"rerank {'on' if r.rerank_on else 'off'}; {r.timings_ms['total']:.0f} ms; scope {r.scope.describe()}"))
    return cli.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())

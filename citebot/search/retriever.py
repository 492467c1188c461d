"""Hybrid retrieval over any ``SearchIndex``: BM25 and dense lists for every
query, fused by RRF, reranked by a cross-encoder when one is available, and
the absolute evidence of each final hit.

Each channel ranks only the chunks the scope allows (the filter runs before
ranking, never after).  Every query is analyzed once and embedded once.
"""
from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from citebot.index.documents import guess_lang, question_lang
from citebot.index.store import SearchIndex, TermStat
from citebot.schema import Evidence, Hit, Scope
from citebot.search import analyzer, fusion, models
from citebot.search.evidence import evidence


@dataclass(frozen=True)
class Retrieval:
    queries: list[str]
    scope: Scope
    hits: list[Hit]  # final list, best first
    fused: list[Hit]  # every fused candidate, best first
    evidence: dict[str, Evidence]  # per final hit: the best over the queries
    rerank_on: bool
    terms: list[list[str]] = field(default_factory=list)  # each query's analyzed terms
    stats: dict[str, TermStat] = field(default_factory=dict)  # every query term, within the scope
    vectors: np.ndarray | None = None  # each query's embedding (None: dense channel off)
    timings_ms: dict[str, float] = field(default_factory=dict)
    # The first hit fused without the synonym expansions' lists (None: no
    # expansion searched): the gate reads the better of its cosine and the
    # first hit's, so an expansion that puts a weaker chunk first cannot
    # lower the evidence the typed words found.
    core_first: str | None = None

    def ranking(self) -> list[Hit]:
        """Final hits, then the rest of the fused candidates: the order the
        evaluation scores at any depth."""
        seen = {h.id for h in self.hits}
        return list(self.hits) + [h for h in self.fused if h.id not in seen]


def dense_speaks(query: str, langs: str) -> bool:
    """Whether the embedding model reads the query's language.  An
    English-only model (the packaged MiniLM) maps Chinese or Bengali text to
    noise, and fusing noise in costs rank."""
    if langs.strip() == "*":
        return True
    return guess_lang(query) in {x.strip() for x in langs.split(",")}


def _name(channel: str, i: int) -> str:
    return channel if i == 0 else f"{channel}@{i + 1}"


def _index(name: str) -> int:
    """The query index a list's name (``_name``) carries."""
    return int(name.rsplit("@", 1)[1]) - 1 if "@" in name else 0


def retrieve(index: SearchIndex, queries: Sequence[str], scope: Scope, cfg,
             embed: Callable[[list[str]], np.ndarray] | None = None, cross_encoder=None,
             rerank_query: str | None = None, core: int | None = None) -> Retrieval:
    """Search every query on both channels, fuse, rerank, and measure the
    evidence of the final hits.  ``embed`` is None when the dense channel is
    off; ``cross_encoder`` None keeps the fused order; it reads the pool
    against ``rerank_query`` (default: the first query).  ``core``: how many
    leading queries are not synonym expansions (None: all)."""
    clock = time.perf_counter
    timings: dict[str, float] = {}
    queries = list(queries)
    terms = [analyzer.analyze(q) for q in queries]
    lists: list[tuple[str, list[Hit]]] = []
    t0 = clock()
    if cfg.use_sparse:
        for i, ts in enumerate(terms):
            lists.append((_name("bm25", i), index.sparse_search(ts, scope, cfg.sparse_k)))
    timings["sparse"] = (clock() - t0) * 1000
    t0 = clock()
    vectors = None
    speaks = [dense_speaks(q, cfg.dense_langs) for q in queries]
    if cfg.use_dense and embed is not None and any(speaks):
        vectors = embed(queries)
        lists += dense_lists(index, vectors, speaks, scope, cfg.dense_k)
    timings["dense"] = (clock() - t0) * 1000
    t0 = clock()
    weights = {"bm25": cfg.weight_sparse, "dense": cfg.weight_dense}
    if cfg.weight_followup != 1.0 and core is not None:  # the follow-up's context form: query 2 of the core
        weights |= {n: weights[n.split("@")[0]] * cfg.weight_followup for n, _ in lists if 0 < _index(n) < core}
    fused = fusion.rrf(lists, cfg.rrf_k, weights)
    if vectors is not None and cfg.prf_beta > 0 and fused:
        lists = feedback(index, lists, fused[:cfg.prf_docs], vectors, speaks, scope, cfg)
        fused = fusion.rrf(lists, cfg.rrf_k, weights)
    if cfg.one_language_per_page:
        asked = question_lang(queries[0]) if queries else "en"
        fused = fusion.one_language_per_page(fused, None if asked == "en" else asked)
    core_first = None
    if core is not None and 0 < core < len(queries):
        kept = [(n, hs) for n, hs in lists if _index(n) < core]
        first = fusion.rrf(kept, cfg.rrf_k, weights)
        if cfg.one_language_per_page:
            first = fusion.one_language_per_page(first, None if asked == "en" else asked)
        core_first = first[0] if first else None
    timings["fuse"] = (clock() - t0) * 1000
    t0 = clock()
    pool = fused[:cfg.rerank_pool]
    if cross_encoder is not None and pool:
        asked = rerank_query or queries[0]
        scores = cross_encoder.predict([(asked, h.chunk.search_text) for h in pool], batch_size=32,
                                       show_progress_bar=False)
        hits = fusion.rerank(pool, [float(s) for s in scores], cfg.final_k)
    else:
        hits = fused[:cfg.final_k]
    timings["rerank"] = (clock() - t0) * 1000
    t0 = clock()
    stats = index.term_stats([t for ts in terms for t in ts], scope)
    also = [core_first] if core_first is not None and core_first.id not in {h.id for h in hits} else []
    ev = measure(index, hits + also, terms, stats, vectors)
    timings["evidence"] = (clock() - t0) * 1000
    timings["total"] = sum(timings.values())
    return Retrieval(queries, scope, hits, fused, ev, cross_encoder is not None and bool(pool), terms, stats,
                     vectors, timings, core_first.id if core_first is not None else None)


def dense_lists(index: SearchIndex, vectors: np.ndarray, speaks: Sequence[bool], scope: Scope,
                k: int) -> list[tuple[str, list[Hit]]]:
    """One dense list per query the embedding model reads, named by query."""
    return [(_name("dense", i), index.dense_search(vectors[i], scope, k)) for i, ok in enumerate(speaks) if ok]


def feedback(index: SearchIndex, lists: list[tuple[str, list[Hit]]], top: list[Hit], vectors: np.ndarray,
             speaks: list[bool], scope: Scope, cfg) -> list[tuple[str, list[Hit]]]:
    """Rocchio feedback: every dense list searched again with its query
    vector moved towards the mean of the top fused chunks' vectors,
    ``q + prf_beta * mean``, normalized.  The BM25 lists stay; the typed
    query's own vector is still what evidence reads."""
    stored = index.vectors([h.id for h in top])
    if stored is None or not len(stored):
        return lists
    moved = vectors + cfg.prf_beta * np.asarray(stored, dtype=np.float32).mean(axis=0)
    moved = models.unit_rows(moved).astype(np.float32)
    return ([(n, hs) for n, hs in lists if not n.startswith("dense")]
            + dense_lists(index, moved, speaks, scope, cfg.dense_k))


def measure(index: SearchIndex, hits: list[Hit], terms: list[list[str]], stats: dict[str, TermStat],
            vectors: np.ndarray | None) -> dict[str, Evidence]:
    """Evidence of each hit: the best over the searched queries (an
    expansion or the follow-up form may match better than the typed turn),
    its cosine on the common scale (``models.cosine_scale``).
    Cosine counts for every language: same-script text scores high even in
    an English model, and without it bigram coverage alone refuses most
    Chinese questions."""
    ids = [h.id for h in hits]
    if not ids:
        return {}
    held = index.terms_held(ids, [t for ts in terms for t in ts])
    stored = index.vectors(ids) if vectors is not None else None
    scale = models.cosine_scale(index.manifest.get("embed_model"))
    out: dict[str, Evidence] = {}
    for j, cid in enumerate(ids):
        found = [evidence(ts, held[cid], stats,
                          models.on_scale(float(stored[j] @ vectors[i]), scale)
                          if stored is not None and vectors is not None else None)
                 for i, ts in enumerate(terms)]
        out[cid] = functools.reduce(Evidence.best, found)
    return out

"""BM25 over a term x chunk matrix built once at ingest: pure functions.

Score (Okapi BM25, as rank-bm25's ``BM25Okapi`` computes it, every query
term occurrence counted): sum over query terms t of
``idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))``, with
Lucene's idf ``log(1 + (N - n + 0.5) / (n + 0.5))``.  rank-bm25's own Okapi
idf is ``log((N - n + 0.5) / (n + 0.5))``: zero for a term in exactly half
the chunks and negative above that, so such a term would add nothing to a
match; Lucene's form is positive for every n, which also makes "score > 0"
mean "matches a term".  Defaults k1 = 1.2, b = 0.75 (Lucene's).

The matrix is stored in CSR form (per term: the rows holding it, ascending,
and the term's count in each), so a query costs the postings of its terms,
not a pass over every chunk.  rank-bm25 stays the reference:
``reference_scores`` computes the same scores with it, and the tests hold
the fast path to it.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from citebot.search import analyzer

VARIANT = "okapi-lucene-idf"


def idf(n_docs: int, df: int) -> float:
    return math.log(1 + (n_docs - df + 0.5) / (df + 0.5))


def tf_part(tf, dl, avgdl: float, k1: float, b: float):
    """BM25's term-frequency part, ``tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))``,
    for numbers or arrays (the local postings and Milvus's sparse vectors share it)."""
    norm = k1 * (1 - b + b * dl / avgdl) if avgdl else k1
    return tf * (k1 + 1) / (tf + norm)


@dataclass(frozen=True, eq=False)
class Postings:
    terms: list[str]  # term i
    term_id: dict[str, int]
    indptr: np.ndarray  # int64 [V + 1]: term i's postings are [indptr[i], indptr[i + 1])
    rows: np.ndarray  # int32 [nnz], ascending within a term
    tf: np.ndarray  # uint32 [nnz]
    dl: np.ndarray  # float64 [N]: each chunk's number of terms

    @property
    def n_docs(self) -> int:
        return len(self.dl)

    @property
    def avgdl(self) -> float:
        return float(self.dl.sum()) / len(self.dl) if len(self.dl) else 0.0

    def weights(self, k1: float, b: float) -> np.ndarray:
        """Each posting's ``tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))``,
        worked out once per (k1, b) and kept: a query then costs one
        multiply-add per posting."""
        cache = self.__dict__.setdefault("_weights", {})
        if (k1, b) not in cache:
            cache[(k1, b)] = tf_part(self.tf.astype(np.float64), self.dl[self.rows], self.avgdl, k1, b)
        return cache[(k1, b)]

    def rows_of(self, term: str) -> np.ndarray:
        i = self.term_id.get(term)
        return self.rows[self.indptr[i]:self.indptr[i + 1]] if i is not None else self.rows[:0]

    @classmethod
    def from_counts(cls, counts: Sequence[Mapping[str, int]]) -> Postings:
        """From each chunk's term counts, in row order."""
        vocab = sorted({t for c in counts for t in c})
        term_id = {t: i for i, t in enumerate(vocab)}
        nnz = sum(len(c) for c in counts)
        tids = np.empty(nnz, dtype=np.int64)
        rows = np.empty(nnz, dtype=np.int32)
        tf = np.empty(nnz, dtype=np.uint32)
        pos = 0
        for r, c in enumerate(counts):
            n = len(c)
            tids[pos:pos + n] = [term_id[t] for t in c]
            rows[pos:pos + n] = r
            tf[pos:pos + n] = list(c.values())
            pos += n
        order = np.argsort(tids, kind="stable")  # rows stay ascending within a term
        indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(np.bincount(tids, minlength=len(vocab)), out=indptr[1:])
        dl = np.array([sum(c.values()) for c in counts], dtype=np.float64)
        return cls(vocab, term_id, indptr, rows[order], tf[order], dl)

    @classmethod
    def build(cls, texts: Sequence[str]) -> Postings:
        return cls.from_counts([Counter(analyzer.analyze(t)) for t in texts])

    def counts(self) -> list[dict[str, int]]:
        """Each chunk's term counts (what ``from_counts`` was given)."""
        out: list[dict[str, int]] = [{} for _ in range(self.n_docs)]
        term_of = np.repeat(np.arange(len(self.terms)), np.diff(self.indptr))
        for t, r, f in zip(term_of.tolist(), self.rows.tolist(), self.tf.tolist()):
            out[r][self.terms[t]] = f
        return out

    def save(self, npz: Path, terms: Path) -> None:
        np.savez(npz, indptr=self.indptr, rows=self.rows, tf=self.tf, dl=self.dl)
        terms.write_text("\n".join(self.terms), encoding="utf-8")

    @classmethod
    def load(cls, npz: Path, terms: Path) -> Postings:
        with np.load(npz, allow_pickle=False) as z:
            indptr, rows, tf, dl = z["indptr"], z["rows"], z["tf"], z["dl"]
        text = terms.read_text(encoding="utf-8")
        vocab = text.split("\n") if text else []
        if len(indptr) != len(vocab) + 1 or indptr[-1] != len(rows) or len(tf) != len(rows) \
                or (len(rows) and (rows.min() < 0 or rows.max() >= len(dl))):
            raise ValueError("postings do not fit together")
        return cls(vocab, {t: i for i, t in enumerate(vocab)}, indptr, rows, tf, dl)


def scores(p: Postings, terms: Sequence[str], k1: float = 1.2, b: float = 0.75) -> np.ndarray:
    """BM25 of every chunk for the query ``terms`` (float64 [N])."""
    out = np.zeros(p.n_docs, dtype=np.float64)
    w = p.weights(k1, b) if p.n_docs else p.tf.astype(np.float64)
    for t in terms:  # every occurrence counts, as in rank-bm25
        i = p.term_id.get(t)
        if i is None:
            continue
        lo, hi = p.indptr[i], p.indptr[i + 1]
        out[p.rows[lo:hi]] += idf(p.n_docs, int(hi - lo)) * w[lo:hi]
    return out


def top_k(p: Postings, terms: Sequence[str], allowed: np.ndarray, k: int, k1: float = 1.2,
          b: float = 0.75, tie: np.ndarray | None = None) -> list[tuple[int, float]]:
    """Top-k (row, score) among the ``allowed`` rows with score > 0 (a zero
    score matched no query term: not a hit); ties as in ``best_k``."""
    if not terms or p.n_docs == 0:
        return []
    s = scores(p, terms, k1, b)
    rows = np.flatnonzero((s > 0) & allowed)
    rows, best = best_k(rows, s[rows], k, tie)
    return [(int(r), float(v)) for r, v in zip(rows, best)]


def best_k(rows: np.ndarray, s: np.ndarray, k: int, tie: np.ndarray | None = None
           ) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best (row, score) pairs, score descending, ties by
    ``tie[row]`` (the index passes each row's place in chunk-id order, the
    contract's rule), else by row.
    Every row tied with the k-th best is kept until the sort (argpartition
    alone picks an arbitrary one of them, so the cut depended on memory
    order, not on the rule)."""
    if len(rows) > k:
        kth = np.partition(-s, k - 1)[k - 1]
        keep = -s <= kth
        rows, s = rows[keep], s[keep]
    order = np.lexsort((rows if tie is None else tie[rows], -s))[:k]
    return rows[order], s[order]


def reference_scores(tokenized: Sequence[Sequence[str]], query: Sequence[str], rows: Sequence[int],
                     k1: float = 1.2, b: float = 0.75) -> np.ndarray:
    """The same scores from rank-bm25 (with Lucene's idf), for the tests and bench.py."""
    from rank_bm25 import BM25Okapi

    class LuceneBM25(BM25Okapi):
        def _calc_idf(self, nd):
            self.average_idf = 0.0
            for word, freq in nd.items():
                self.idf[word] = idf(self.corpus_size, freq)

    ref = LuceneBM25([list(t) for t in tokenized], k1=k1, b=b)
    return np.asarray(ref.get_batch_scores(list(query), list(rows)), dtype=np.float64)

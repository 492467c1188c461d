"""BM25 scoring: rank-bm25's ``BM25Okapi`` with Lucene's idf.

idf = ``log(1 + (N - n + 0.5) / (n + 0.5))``.  rank-bm25's own Okapi idf is
``log((N - n + 0.5) / (n + 0.5))``: zero for a term in exactly half the
chunks and negative above that (floored to ``epsilon * mean idf`` only when
negative), so such a term would add nothing to a match; Lucene's form is
positive for every n, which also makes "score > 0" mean "matches a term".
Defaults k1 = 1.2, b = 0.75 (Lucene's).
"""
from __future__ import annotations

import math

import numpy as np
from rank_bm25 import BM25Okapi

VARIANT = "okapi-lucene-idf"


class LuceneBM25(BM25Okapi):

    """BM25Okapi whose idf is positive for every document frequency."""

    def _calc_idf(self, nd):
        self.average_idf = 0.0
        for word, freq in nd.items():
            self.idf[word] = idf(self.corpus_size, freq)


def idf(n_docs: int, df: int) -> float:
    return math.log(1 + (n_docs - df + 0.5) / (df + 0.5))


class BM25Index:
    """BM25 statistics over every chunk; searches score only allowed rows."""

    def __init__(self, tokenized: list[list[str]], k1: float = 1.2, b: float = 0.75):
        self.k1, self.b = k1, b
        self.n = len(tokenized)
        self._bm25 = LuceneBM25(tokenized or [[]], k1=k1, b=b) if tokenized else None

    def stats(self) -> dict:
        """Plain, inspectable statistics (saved as bm25.json)."""
        if self._bm25 is None:
            return {"variant": VARIANT, "k1": self.k1, "b": self.b, "n": 0, "avgdl": 0, "df": {}}
        df = {t: sum(1 for d in self._bm25.doc_freqs if t in d) for t in sorted(self._bm25.idf)}
        return {"variant": VARIANT, "k1": self.k1, "b": self.b, "n": self.n,
                "avgdl": self._bm25.avgdl, "df": df}

    def term_idf(self, term: str) -> float:
        if self._bm25 is None:
            return 0.0
        return self._bm25.idf.get(term, idf(self.n, 0))

    def contains(self, row: int, term: str) -> bool:
        return self._bm25 is not None and term in self._bm25.doc_freqs[row]

    def rows_holding(self, term: str) -> list[int]:
        """Rows whose chunk holds this analyzed term."""
        if self._bm25 is None:
            return []
        return [i for i, d in enumerate(self._bm25.doc_freqs) if term in d]

    def search(self, terms: list[str], rows: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Top-k (row, score) among ``rows`` with score > 0; ties by row."""
        if self._bm25 is None or not terms or len(rows) == 0:
            return []
        scores = np.asarray(self._bm25.get_batch_scores(terms, rows.tolist()), dtype=float)
        keep = scores > 0  # a zero score matched no query term: not a hit
        rows, scores = rows[keep], scores[keep]
        order = np.lexsort((rows, -scores))[:k]
        return [(int(rows[i]), float(scores[i])) for i in order]

"""The BM25 analyzer and scorer.

Analyzer: NFKC + lowercase; identifiers that mix letters and digits keep
their hyphens and stay whole (``E4032``, ``SF-3000``, ``RD2-24``); runs of
Chinese/Japanese characters become overlapping character bigrams (a lone
character stays a token); every other script splits into words (letters,
digits and combining marks, so Bengali vowel signs stay inside their word);
English stopwords are dropped and Latin-script words are Snowball-stemmed.

Scorer: rank-bm25's ``BM25Okapi`` with Lucene's idf,
``log(1 + (N - n + 0.5) / (n + 0.5))``.  rank-bm25's own Okapi idf is
``log((N - n + 0.5) / (n + 0.5))``: zero for a term in exactly half the
chunks and negative above that (floored to ``epsilon * mean idf`` only when
negative), so such a term would add nothing to a match; Lucene's form is
positive for every n, which also makes "score > 0" mean "matches a term".
Defaults k1 = 1.2, b = 0.75 (Lucene's).
"""
from __future__ import annotations

import functools
import math
import unicodedata

import numpy as np
import regex
import snowballstemmer
from rank_bm25 import BM25Okapi

VARIANT = "okapi-lucene-idf"

_CJK = r"\p{Han}\p{Hiragana}\p{Katakana}"
_WORDCH = rf"[[\p{{L}}\p{{N}}\p{{M}}]--[{_CJK}]]"
# "/" is a boundary (paths and URLs split into their parts); "-", "_", "."
# join, so e4032, sf-3000, rel_5521 and 3.5 stay whole.
_TOKEN = regex.compile(rf"(?P<cjk>[{_CJK}]+)|(?P<tok>{_WORDCH}+(?:[-_.]{_WORDCH}+)*)", regex.V1)
_DIGIT = regex.compile(r"\p{N}")
_SPLIT = regex.compile(r"[-_.]")

STOPWORDS = frozenset("""a an and are as at be been but by can could did do does doing for from had has
have how i if in into is it its me my of on or our so than that the their them then there these they
this to was we were what when where which who why will with would you your yours am any about after
again all also just should i'm i've can't don't it's""".split())


_LETTER = regex.compile(r"\p{L}")


def is_identifier(term: str) -> bool:
    """An analyzed term that mixes letters and digits: e4032, rd2-24, rel_5521."""
    return bool(_DIGIT.search(term) and _LETTER.search(term))


_STEMMER = snowballstemmer.stemmer("english")
_ASCII_WORD = regex.compile(r"[a-z]+")


@functools.lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    """Snowball English for plain Latin words ("guaranteed" and "guarantee"
    meet at "guarante"); other scripts pass through unchanged."""
    return _STEMMER.stemWord(word) if _ASCII_WORD.fullmatch(word) else word


def analyze(text: str) -> list[str]:
    out: list[str] = []
    for m in _TOKEN.finditer(unicodedata.normalize("NFKC", text).lower()):
        if m.group("cjk"):
            run = m.group("cjk")
            out.extend([run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)])
        else:
            tok = m.group("tok")
            if _DIGIT.search(tok):
                out.append(tok)  # identifiers and numbers (e4032, sf-3000, rd2-24, 3.5) stay whole
                continue
            for w in _SPLIT.split(tok):  # "two-factor" -> two, factor
                if w and w not in STOPWORDS:
                    out.append(_stem(w))
    return out


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

    def knows(self, term: str) -> bool:
        """Whether any chunk contains this analyzed term."""
        return self._bm25 is not None and term in self._bm25.idf

    def search(self, terms: list[str], rows: np.ndarray, k: int) -> list[tuple[int, float]]:
        """Top-k (row, score) among ``rows`` with score > 0; ties by row."""
        if self._bm25 is None or not terms or len(rows) == 0:
            return []
        scores = np.asarray(self._bm25.get_batch_scores(terms, rows.tolist()), dtype=float)
        keep = scores > 0  # a zero score matched no query term: not a hit
        rows, scores = rows[keep], scores[keep]
        order = np.lexsort((rows, -scores))[:k]
        return [(int(rows[i]), float(scores[i])) for i in order]

    def coverage(self, terms: list[str], row: int) -> float:
        """Share of the query's idf mass that this chunk contains (0..1): an
        absolute measure of lexical evidence, unlike the raw BM25 score."""
        if self._bm25 is None or not terms:
            return 0.0
        uniq = list(dict.fromkeys(terms))
        total = sum(self.term_idf(t) for t in uniq)
        freqs = self._bm25.doc_freqs[row]
        return sum(self.term_idf(t) for t in uniq if t in freqs) / total if total else 0.0

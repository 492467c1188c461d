"""The analyzer: text -> the terms BM25 indexes and searches.

NFKC + lowercase; identifiers that mix letters and digits keep their hyphens
and stay whole (``E4032``, ``SF-3000``, ``RD2-24``); runs of Chinese/Japanese
characters become overlapping character bigrams (a lone character stays a
token); every other script splits into words (letters, digits and combining
marks, so Bengali vowel signs stay inside their word); English stopwords are
dropped and Latin-script words are Snowball-stemmed.  Every backend indexes
these terms, so a question ranks the same way on each.
"""
from __future__ import annotations

import functools
import unicodedata

import regex
import snowballstemmer

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

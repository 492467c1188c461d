"""The analyzer: text -> the terms BM25 indexes and searches.

NFKC + case folding (``Straße`` and ``STRASSE`` meet); identifiers that mix
letters and digits stay whole, without their hyphens, so a question's
``E-4032`` or ``SF3000`` finds a document's ``E4032`` or ``SF-3000`` (any
Unicode hyphen or dash reads as ``-``); invisible format characters (a soft
hyphen, a zero-width space, a bidi mark) are dropped, as NFKC_Casefold drops
them, so ``configu\u00adration`` is one word; runs of Chinese/Japanese characters
(the katakana long-vowel mark ``ー`` inside them) become overlapping
character bigrams (a lone character stays a token); every other script splits into words (letters, digits and combining
marks, so Bengali vowel signs stay inside their word; Hangul and a Latin
letter or digit meet at a word's end: ``Depends를`` -> depend, 를); an apostrophe inside
a word resolves as English and French write it (``FastAPI's`` -> fastapi,
``doesn't`` -> does, ``l'application`` -> application, ``rock'n'roll`` -> rocknroll);
Latin letters lose their accents (``café`` meets ``cafe``); English stopwords
are dropped and Latin-script words are Snowball-stemmed.  Every backend indexes
these terms, so a question ranks the same way on each.
"""
from __future__ import annotations

import functools
import re
import unicodedata

import regex
import snowballstemmer

_CJK = r"\p{Han}\p{Hiragana}\p{Katakana}\u30fc\u3005"  # + ー and 々, which belong to no script
_WORDCH = rf"[[\p{{L}}\p{{N}}\p{{M}}]--[{_CJK}]]"
# "/" is a boundary (paths and URLs split into their parts); "-", "_", "."
# join, so e4032, sf-3000, rel_5521 and 3.5 stay whole; "'" joins too, and
# ``_apostrophe`` resolves it.
_TOKEN = regex.compile(rf"(?P<cjk>[{_CJK}]+)|(?P<tok>{_WORDCH}+(?:[-_.']{_WORDCH}+)*)", regex.V1)
_DIGIT = regex.compile(r"\p{N}")
_SPLIT = regex.compile(r"[-_.]")
_JOINERS = regex.compile(f"({_SPLIT.pattern})")  # the same split, keeping the joiners

STOPWORDS = frozenset("""a an and are as at be been but by can could did do does doing for from had has
have how i if in into is it its me my of on or our so than that the their them then there these they
this to was we were what when where which who why will with would you your yours am any about after
again all also just should""".split())


_LETTER = regex.compile(r"\p{L}")


# A name as written: an option, or words joined by "_", "-" or "." ("BORG_PASSPHRASE", "--keep-within",
# "os.path"), which ``analyze`` splits into words that a neighbouring name holds too.
NAME = re.compile(r"(?<![\w.-])(?:-{1,2}\w[\w-]*|\w+(?:[_.-]\w+)+)(?![\w-])")


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


_FORMAT = regex.compile(r"\p{Cf}")  # soft hyphen, zero-width space and joiners, bidi marks, BOM
_DASHES = str.maketrans({**{c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2e3a\u2e3b"},
                         **{c: "'" for c in "\u2019\u02bc"}})  # ’ and ʼ are apostrophes too
_CLITICS = frozenset(("s", "re", "ve", "ll", "d", "m"))  # it's, you're, we've, they'll, I'd, I'm
_NOT = {"can": "can", "won": "will", "shan": "shall"}  # can't, won't, shan't; else doesn't -> does
# Contractions typed without their apostrophe ("whats", "dont"), as askers
# type them: read as written with it, or each was a word no page holds, and
# the gate counted it as a rare word the documents lack.
_BARE = {w.replace("'", ""): w for w in """what's how's where's who's that's there's don't doesn't didn't
isn't aren't wasn't weren't hasn't haven't hadn't couldn't shouldn't wouldn't mustn't needn't can't won't
i'm i've you're you've you'll we've they're they've they'll""".split()}


def _apostrophe(piece: str) -> str:
    """One piece of a token (a piece without an apostrophe comes back as it
    is) with an apostrophe inside: a clitic or "n't" leaves its head
    word, a short French/Italian elision leaves what follows it (l', d',
    qu', and o' of O'Neil), anything else is one word without it (rock'n'roll)."""
    head, _, tail = piece.partition("'")
    tail = tail.replace("'", "")
    if tail in _CLITICS:
        return head
    if tail == "t" and head.endswith("n"):
        return _NOT.get(head, head[:-1])
    if len(head) <= 2 and len(tail) >= 3:
        return tail
    return head + tail


_LATIN = regex.compile(r"[\p{Latin}\p{M}]+")


@functools.lru_cache(maxsize=65536)
def _unaccent(word: str) -> str:
    """Latin letters without their accents (café -> cafe, über -> uber);
    other scripts keep their marks (Bengali vowel signs are marks)."""
    if word.isascii() or not _LATIN.fullmatch(word):
        return word
    return "".join(c for c in unicodedata.normalize("NFD", word) if not unicodedata.combining(c))


# Korean attaches its particles to the word before, an English name included
# ("CORSMiddleware는", "Depends를"): where Hangul meets a Latin letter or a
# digit the word ends, or the name is a term no page holds.
_HANGUL_EDGE = regex.compile(r"(?<=[\p{Latin}\p{N}])(?=\p{Hangul})|(?<=\p{Hangul})(?=[\p{Latin}\p{N}])")


def analyze(text: str) -> list[str]:
    out: list[str] = []
    text = _FORMAT.sub("", unicodedata.normalize("NFKC", text)).translate(_DASHES).casefold()
    for m in _TOKEN.finditer(_HANGUL_EDGE.sub(" ", text)):
        if m.group("cjk"):
            run = m.group("cjk")
            out.extend([run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)])
        else:
            tok = _BARE.get(m.group("tok"), m.group("tok"))
            if "'" in tok:
                tok = "".join(map(_apostrophe, _JOINERS.split(tok)))
            if _DIGIT.search(tok):
                # Identifiers and numbers stay whole (e4032, sf-3000 -> sf3000, rd2-24 -> rd224, 3.5,
                # 2024-01-15); an identifier's hyphens go, as people write them or leave them out.
                out.append(tok.replace("-", "") if is_identifier(tok) else tok)
                continue
            for w in _SPLIT.split(tok):  # "two-factor" -> two, factor
                # A word of combining marks alone unaccents to nothing: no term (an
                # empty one held no chunk, so it took the highest idf and the gate refused).
                term = _stem(_unaccent(w)) if w and w not in STOPWORDS else ""
                if term:
                    out.append(term)
    return out

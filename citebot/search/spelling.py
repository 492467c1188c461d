"""Did-you-mean: a misspelt word searched as the word the documents use.

A question word whose term no chunk in the scope holds ("CROS", "midleware")
made BM25 miss and the gate refuse.  Such a word is tried at one edit
(Norvig's deletes, transposes, replaces and inserts over a-z) that undoes a
typing slip (``slip``: "SAML" is no slip of "SAME"); the candidates the scope
holds are kept, and the one found in a passage with the most of the
question's other words wins, the commoner term on a tie: "upload the fiels"
is "files", not the commoner "field".
The corrected question is searched beside the typed one, as a synonym
expansion is, so the typed turn still counts.

Only Latin words of four letters or more that are no English word are tried
(pyspellchecker's list: "clash" is absent from a handbook, not misspelt), in
a question that reads English (``reads_english``: "Wie lese ich" is German).
Identifiers (E4099, max_age, python3.12) are left alone.  A name (a word
capitalised inside a sentence, or in mixed case: "Raodrunner",
"HTPTException", "FsatAPI") becomes only a name the documents write, as they
write it: a name they lack ("Django" where no page names it) stays absent,
which is what tells the gate that they do not cover it.  Everything goes through ``SearchIndex``
with the asker's scope, so a correction never names a word only restricted
pages hold.
"""
from __future__ import annotations

import functools
import gzip
import json
from collections.abc import Sequence
from importlib import resources

import regex

from citebot.index.store import SearchIndex
from citebot.schema import Scope
from citebot.search import analyzer

LETTERS = "abcdefghijklmnopqrstuvwxyz"
MIN_LETTERS = 4  # shorter words sit one edit from too many others ("cas": case, cast, cars ...)
TOP = 5  # passages read per candidate: its best-matching BM25 hits
WRITTEN = 20  # passages holding a candidate's term searched for its written form ("ordered" for "order")
MAX_CANDIDATES = 5  # the commonest held candidates tried against the question
MAX_WORDS = 4  # distinct words tried per question (each costs a few searches)
# A word: letters only, not touching a digit, an identifier's joiner, a path's slash or an
# apostrophe ("wasn't" is a word; "wasn" alone is no English word), but for a possessive's "'s".
_WORD = regex.compile(r"(?<![\p{L}\p{N}\p{M}_\-./@#$'’])\p{L}+(?![\p{L}\p{N}\p{M}_\-./@])(?!['’](?!s(?![\p{L}\p{N}])))",
                      regex.V1)
_ASCII = regex.compile(r"[A-Za-z]+")
_ACCENTED = regex.compile(r"[[\p{Latin}--[A-Za-z]]]", regex.V1)  # é, ñ, ü ...: no English sentence
_OTHER_SCRIPT = regex.compile(r"[[\p{L}--\p{Latin}]]", regex.V1)
_SENTENCE_END = ".!?:;"
OTHER_LANGUAGES = ("de", "es", "fr", "it", "pt", "nl")  # pyspellchecker's Latin-script lists that English is told from
COMMON = 3000  # a language's commonest words, enough to tell it in a short question


def edits1(word: str) -> set[str]:
    """Every string one deletion, adjacent transposition, replacement or
    insertion (a-z) away from ``word`` (Norvig's ``edits1``)."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    deletes = [a + b[1:] for a, b in splits if b]
    transposes = [a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1]
    replaces = [a + c + b[1:] for a, b in splits if b for c in LETTERS]
    inserts = [a + c + b for a, b in splits for c in LETTERS]
    return set(deletes + transposes + replaces + inserts) - {word}


def _counts(lang: str) -> dict[str, int]:
    """pyspellchecker's word list of a language, each word with its count."""
    path = resources.files("spellchecker") / "resources" / f"{lang}.json.gz"
    with path.open("rb") as f:
        return json.loads(gzip.decompress(f.read()))


@functools.cache
def english() -> frozenset[str]:
    """English words (pyspellchecker's list, 160,000 of them): a word in it is
    no misspelling, whether or not the documents use it ("clash", "stalls")."""
    return frozenset(_counts("en"))


def words(text: str) -> list[tuple[int, int, str, bool]]:
    """(start, end, word, name) of each word that may be corrected: ASCII
    letters only, at least ``MIN_LETTERS``, and no English word.  ``name``:
    written in mixed case, or capitalised inside a sentence (a sentence's
    first word is capitalised anyway)."""
    out = []
    for m in _WORD.finditer(text):
        w = m.group()
        if len(w) < MIN_LETTERS or not _ASCII.fullmatch(w):
            continue
        if w.casefold() in english() or w.casefold() in analyzer.STOPWORDS:
            continue
        before = text[:m.start()].rstrip()
        proper = w[0].isupper() and w[1:].islower() and bool(before) and before[-1] not in _SENTENCE_END
        out.append((m.start(), m.end(), w, proper or mixed(w)))
    return out


def mixed(word: str) -> bool:
    """A name written in mixed case ("UploadFile", "FastAPI", "aPKCz")."""
    return not (word.islower() or word.isupper() or (word[0].isupper() and word[1:].islower()))


@functools.cache
def common(lang: str) -> frozenset[str]:
    """The ``COMMON`` commonest words of a language (pyspellchecker's counts)."""
    counts = _counts(lang)
    return frozenset(sorted(counts, key=lambda w: (-counts[w], w))[:COMMON])


def reads_english(text: str) -> bool:
    """Whether the question is English, so a word outside the English list
    may be a slip: no accented Latin letter ("¿Para qué sirve …"), and no
    other language's common words outnumbering English's ("Wie lese ich
    Cookies in FastAPI?": wie, lese, ich, in against in).  In a question
    written in another script (Chinese, Russian) the Latin words are names."""
    if _ACCENTED.search(text):
        return False
    if _OTHER_SCRIPT.search(text):
        return True
    ws = [w.casefold() for w in _ASCII.findall(text) if len(w) > 1]
    ours = sum(1 for w in ws if w in common("en"))
    return all(sum(1 for w in ws if w in common(lang)) <= ours for lang in OTHER_LANGUAGES)


def slip(word: str, cand: str) -> bool:
    """Whether ``cand`` is ``word`` with a typing slip undone, not another
    word one edit away: in a word of four letters only two neighbours
    swapped ("CROS"; "SAML" is no slip of "SAME", nor "nuxt" of "next"); the
    first letter kept ("glamping" is not "clamping"), unless it swapped with
    the second; and no letter dropped from the end ("JSONB", "aPKCz" name
    something of their own)."""
    transposed = len(cand) == len(word) and sorted(cand) == sorted(word)
    if len(word) <= MIN_LETTERS and not transposed:
        return False
    if cand[:1] != word[:1] and not (transposed and cand[:2] == word[1::-1]):
        return False
    return cand != word[:-1]


def correct(text: str, index: SearchIndex, scope: Scope) -> str | None:
    """``text`` with each word the scope holds nowhere replaced by its best
    one-edit neighbour the scope does hold; None when nothing changed."""
    analyzed = [(s, e, w, name, analyzer.analyze(w)) for s, e, w, name in words(text)]
    found = [(s, e, w, name, ts[0]) for s, e, w, name, ts in analyzed if len(ts) == 1]
    if not found:
        return None
    known = index.term_stats([t for *_, t in found], scope)
    missing = [(s, e, w, name, t) for s, e, w, name, t in found if not known[t].in_scope]
    if not missing:
        return None
    if not reads_english(text):
        return None
    question = analyzer.analyze(text)
    fixes: list[tuple[int, int, str]] = []
    tried: dict[str, str | None] = {}  # each word once, and only the first few: a pasted log is no typo
    for s, e, w, name, term in missing:
        if w not in tried and len(tried) < MAX_WORDS:
            tried[w] = _best(w, term, name, question, index, scope)
        best = tried.get(w)
        if best is not None:
            fixes.append((s, e, best if name else best.upper() if w.isupper()
                          else best.capitalize() if w[0].isupper() else best.lower()))
    if not fixes:
        return None
    out, last = [], 0
    for s, e, rep in fixes:
        out += [text[last:s], rep]
        last = e
    return "".join(out + [text[last:]])


def _best(word: str, term: str, name: bool, question: Sequence[str], index: SearchIndex,
          scope: Scope) -> str | None:
    """The neighbour of ``word`` to search instead, written as the documents
    write it (an English word will do, but not for a ``name``, which only
    becomes a name a passage writes: "Raodrunner" the "Roadrunner" of the
    documents, while "Djnago" in documents that never name Django stays the
    name they lack, which is what tells the gate to refuse), or None."""
    typed = word.casefold()
    near = {c for c in edits1(typed) if slip(typed, c)}
    terms_of: dict[str, list[str]] = {}
    for cand in near:
        ts = analyzer.analyze(cand)
        if len(ts) == 1 and ts[0] != term:
            terms_of.setdefault(ts[0], []).append(cand)
    if not terms_of:
        return None
    stats = index.term_stats(list(terms_of), scope)
    held = sorted((t for t in terms_of if stats[t].in_scope), key=lambda t: (stats[t].idf, t))[:MAX_CANDIDATES]
    others = [q for q in question if q != term]
    best, best_key = None, None
    for t in held:
        written = _written(t, near, name, index, scope)
        if written is None and not name:
            written = min((c for c in terms_of[t] if c in english()), default=None)
        if written is None:
            continue
        # How many of the question's other words a passage holding the candidate also holds (a
        # count: weighted by idf, the words a rare candidate happens to sit beside outweighed a
        # common one's, and "srever" became "sever" rather than "server").
        hits = index.sparse_search([t, *others], scope, TOP)
        held_by = index.terms_held([h.id for h in hits], [t, *others])
        fit = max((len(set(others) & held_by[h.id]) for h in hits if t in held_by[h.id]), default=0)
        key = (-fit, stats[t].idf, t)
        if best_key is None or key < best_key:
            best, best_key = written, key
    return best


def _written(term: str, near: set[str], name: bool, index: SearchIndex, scope: Scope) -> str | None:
    """A word one edit from the typed one that a passage holding ``term``
    writes, as it writes it ("authentication", where "authentation" stems
    alike; "HTTPException"), or None: a correction is a word the documents
    use, not a stem.  Of several, the one written most often; for a
    ``name``, only a form written as a name ("FastAPI", not the commoner
    "fastapi" of its commands; "Roadrunner", not "roadrunner")."""
    for h in index.sparse_search([term], scope, WRITTEN):
        seen = [w for w in _ASCII.findall(h.chunk.search_text) if w.casefold() in near and not (name and w.islower())]
        found = [w for w in dict.fromkeys(seen) if analyzer.analyze(w) == [term]]
        if found:
            return min(found, key=lambda w: (-seen.count(w), w))
    return None

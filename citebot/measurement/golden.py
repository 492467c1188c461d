"""Golden sets: questions labelled by evidence phrases, and the judge that
grades chunks against them.

A golden file is ``{"version": 1, "corpus": {...}, "questions": [...]}``
(a bare list of questions is accepted too).  Each question has an ``id``, a
``question`` or ``turns`` (earlier turns are the history), ``tags``,
``answerable``, ``evidence`` [{"phrase", "grade", "with"}], ``answer_keywords``,
optional ``must_not`` phrases, ``scope`` and ``split`` ("tune" or "report").
Gold evidence is matched as phrases, so re-chunking does not invalidate the
labels.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from citebot.index.documents import question_lang, translation
from citebot.index.store import SearchIndex
from citebot.measurement import diagnose
from citebot.schema import Chunk, Scope
from citebot.search.analyzer import STOPWORDS

SPLITS = ("tune", "report")


def half(key: str) -> str:
    """The half an item without a ``split`` goes to: a hash of ``key``, the
    same on every run (what the items that must stay together share)."""
    return "tune" if int(hashlib.sha1(key.encode()).hexdigest(), 16) % 2 == 0 else "report"


@dataclass(frozen=True)
class Question:
    id: str
    turns: tuple[str, ...]  # history, then the turn being evaluated
    tags: tuple[str, ...] = ()
    answerable: bool = True
    evidence: tuple[dict, ...] = ()
    answer_keywords: tuple[str, ...] = ()
    must_not: tuple[str, ...] = ()
    scope: Scope = field(default_factory=Scope)
    split: str | None = None

    @property
    def text(self) -> str:
        return self.turns[-1]

    @property
    def history(self) -> list[str]:
        return list(self.turns[:-1])

    @property
    def half(self) -> str:
        """Its ``split``, else a hash of its first turn: every half (the
        evaluation's, a sweep's, the refusal fit's) is the same one, and the
        turns of one conversation (which share the first) never sit in both."""
        return self.split or half(self.turns[0].strip())

    @classmethod
    def from_dict(cls, d: dict) -> Question:
        if not isinstance(d, dict) or not d.get("id") or not (d.get("question") or d.get("turns")):
            raise ValueError(f"golden entry {d!r:.80} needs an id and a question or turns")
        qid = d["id"]

        def bad(field: str, want: str) -> ValueError:
            return ValueError(f"golden entry {qid}: {field} must be {want}, got {d.get(field)!r:.60}")

        def texts(field: str) -> tuple[str, ...]:
            # A string where a list belongs was read letter by letter ("tags": "paraphrase" made tags p, a, r ...).
            value = d.get(field) or []
            if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
                raise bad(field, "a list of strings")
            return tuple(value)
        if d.get("question") is not None and not isinstance(d["question"], str):
            raise bad("question", "a string")
        if not isinstance(d.get("answerable", True), bool):  # "false" read as true
            raise bad("answerable", "true or false")
        evidence = d.get("evidence") or []
        if not isinstance(evidence, list) or not all(
                isinstance(e, dict) and isinstance(e.get("phrase"), str) and type(e.get("grade", 1)) is int
                and isinstance(e.get("with", []), list) for e in evidence):
            raise bad("evidence", 'a list of {"phrase": text, "grade": 1 or 2, "with": [text, ...]}')
        s = d.get("scope") or {}
        if not isinstance(s, dict) or set(s) - SCOPE_KEYS:  # a misspelt key widened the scope unseen
            raise bad("scope", f"an object with keys from {', '.join(sorted(SCOPE_KEYS))}")
        scope = Scope.build(audience=s.get("audience"), tenant=s.get("tenant"), lang=s.get("lang"),
                            include_superseded=bool(s.get("include_superseded")))
        if d.get("split") not in (None, *SPLITS):
            raise ValueError(f"golden entry {qid}: split must be one of {', '.join(SPLITS)}")
        return cls(str(qid), texts("turns") if d.get("turns") else (d["question"],), texts("tags"),
                   d.get("answerable", True), tuple(evidence), texts("answer_keywords"), texts("must_not"), scope,
                   d.get("split"))


SCOPE_KEYS = {"audience", "tenant", "lang", "include_superseded"}


@dataclass(frozen=True)
class GoldenSet:
    path: Path
    questions: list[Question]
    corpus: dict  # {"root": ..., "folders": [...]} when the file names its documents

    def select(self, split: str | None = None, ids: list[str] | None = None,
               limit: int | None = None) -> list[Question]:
        qs = [q for q in self.questions if split in (None, "all") or q.half == split]
        if ids:
            known = {q.id for q in self.questions}
            if unknown := [i for i in ids if i not in known]:
                raise ValueError(f"{self.path.name} has no question {', '.join(unknown)}")
            other = [i for i in ids if i not in {q.id for q in qs}]
            if other:  # asked for by id, and left out by the half: a table of nothing, said as a result
                raise ValueError(f"{', '.join(other)} {'is' if len(other) == 1 else 'are'} not in the {split} half "
                                 f"of {self.path.name}; drop --split or give --split all")
            qs = [q for q in qs if q.id in set(ids)]
        return qs[:limit] if limit else qs


# A plain word: letters only, not part of an identifier, a path or a contraction.
_PLAIN = re.compile(r"(?<![\w\-./@'’])[A-Za-z]{5,}(?![\w\-./@'’])")


def misspelt(q: Question) -> Question:
    """The question with one typing slip in its typed turn, for measuring how
    the bot copes with one: in its longest plain word of five letters or more
    (the first of equals), the first two adjacent letters after the first
    that differ are swapped ("warranty" -> "wraranty"); its half is kept.  A
    turn without such a word (Chinese) is left as it is."""
    words = [m for m in _PLAIN.finditer(q.text)
             if m.group().casefold() not in STOPWORDS]
    if not words:
        return q
    m = max(words, key=lambda m: len(m.group()))  # max keeps the first of equals
    w = m.group()
    i = next((i for i in range(1, len(w) - 1) if w[i] != w[i + 1]), None)
    if i is None:
        return q
    slip = w[:i] + w[i + 1] + w[i] + w[i + 2:]
    typed = q.text[:m.start()] + slip + q.text[m.end():]
    return dataclasses.replace(q, turns=(*q.turns[:-1], typed), split=q.half)


def load_golden(path: str | Path) -> GoldenSet:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"cannot read the golden set {path}: {e}") from None
    raw = data.get("questions", []) if isinstance(data, dict) else data
    qs = [Question.from_dict(q) for q in raw]
    if len({q.id for q in qs}) != len(qs):
        raise ValueError(f"golden set {path} repeats a question id")
    return GoldenSet(path, qs, data.get("corpus", {}) if isinstance(data, dict) else {})


class Judge:
    """Relevance of chunks for a question, from its evidence phrases, over
    every chunk of the index (through ``SearchIndex.scan``)."""

    def __init__(self, index: SearchIndex):
        self.chunks = {c.id: c for c in index.scan(Scope.everything())}
        self.normed = {cid: diagnose.norm(c.search_text) for cid, c in self.chunks.items()}
        self._relevant: dict[str, dict[str, int]] = {}

    def relevant(self, q: Question) -> dict[str, int]:
        """Grade of every chunk holding the evidence; the same for every
        configuration, so it is worked out once per question.  Of a page's
        translations (``en/a.md``, ``zh/a.md``) only the question's language
        counts when it holds the evidence: the bot shows one language per
        page, so a ranking can never hold both copies (a code phrase is in
        both), and counting the other one capped recall and nDCG."""
        if q.id not in self._relevant:
            grades = {cid: diagnose.grade_normed(t, list(q.evidence)) for cid, t in self.normed.items()}
            found = {cid: g for cid, g in grades.items() if g}
            self._relevant[q.id] = self._one_language(found, question_lang(q.text))
        return self._relevant[q.id]

    def _one_language(self, found: dict[str, int], lang: str) -> dict[str, int]:
        page_of = {cid: translation(self.chunks[cid].source) for cid in found}  # (page, language) or None
        langs: dict[str, set[str]] = {}
        for key, language in filter(None, page_of.values()):
            langs.setdefault(key, set()).add(language)
        mixed = {p for p, ls in langs.items() if len(ls) > 1 and lang in ls}
        return {cid: g for cid, g in found.items()
                if (page := page_of[cid]) is None or page[0] not in mixed or page[1] == lang}

    def missing_phrases(self, q: Question) -> list[str]:
        """Grade-2 phrases that are whole in no chunk (an ingestion failure)."""
        return [e["phrase"] for e in q.evidence if e.get("grade", 1) >= 2
                and not any(diagnose.norm(e["phrase"]) in t for t in self.normed.values())]

    def stale(self, q: Question, chunk: Chunk) -> bool:
        """A chunk this asker must not get: out of the question's scope, or
        holding a phrase the question marks as must-not."""
        if not q.scope.allows(chunk):
            return True
        t = self.normed[chunk.id]
        return any(diagnose.norm(p) in t for p in q.must_not)

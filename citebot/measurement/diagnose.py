"""Where did a failed question lose its evidence?  Pure functions.

Stages, in pipeline order, each with labels:
  ingestion   missed_evidence   no chunk holds the evidence (a phrase, or a
                                phrase and the words it must sit with, split
                                apart), or a grade-2 phrase is whole in no chunk
              out_of_scope      only chunks outside the question's scope hold the
                                evidence (their metadata, or the question's scope)
  retrieval   missed_evidence   a chunk holds evidence but is not in the top k
              irrelevant_match  rank 1 holds no evidence (answerable questions)
              stale_document    a superseded / restricted chunk, or a
                                ``must_not`` phrase, was retrieved
  context     missed_evidence   retrieved, then dropped (floor, dedup, budget)
              irrelevant_match  an unanswerable question's chunks passed the
                                evidence floor (and the gate, when answered):
                                no ranking could have held its answer
              duplicate_chunks  two shown chunks say the same thing
  generation  missed_evidence   evidence was shown but the answer refused or
                                lacks the answer's key words
              refused_by_gate   evidence was shown and the refusal gate refused
                                before any answer (P(answerable) too low)
              unsupported_answer  the answer states numbers the cited text
                                does not hold, or answers an unanswerable question
  citation    unsupported_answer  a cited number named no shown chunk
"""
from __future__ import annotations

import re
import unicodedata

from citebot.answer.citations import CITATION

STAGES = ("ingestion", "retrieval", "context", "generation", "citation")
LABELS = ("missed_evidence", "irrelevant_match", "stale_document", "duplicate_chunks", "unsupported_answer",
          "refused_by_gate", "out_of_scope")


def norm(text: str) -> str:
    """Collapse whitespace and drop Markdown emphasis, so a phrase copied
    from the rendered document matches the chunk's source text."""
    return " ".join(text.replace("*", "").replace("`", "").split())


_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_ALNUM = "A-Za-z0-9_"


def keywords_present(answer: str, keys) -> bool:
    """Every keyword is in the answer: after NFKC and :func:`norm`, case
    folded, citation marks removed ("see [9]" does not hold "9"), Latin
    keywords as whole words or numbers ("Nonetheless" does not hold "None",
    "15 minutes", "2.5 minutes" and "1,500 euros" not "5 minutes" or "500
    euros"), CJK ones with spacing ignored ("15 秒" is in "超时为15秒", "5 秒" is not)."""
    text = norm(unicodedata.normalize("NFKC", CITATION.sub(" ", answer))).lower()
    for key in keys:
        k = norm(unicodedata.normalize("NFKC", key)).lower()
        if not k:
            continue
        if _CJK_CHAR.search(k):  # spacing ignored, a number still whole ("5 秒" is not in "15秒")
            if not re.search(_guarded(k.replace(" ", ""), ""), text.replace(" ", "")):
                return False
            continue
        if not re.search(_guarded(k, _ALNUM), text):
            return False
    return True


def _guarded(k: str, word: str) -> str:
    """A pattern for ``k`` whole: not inside a longer word (``word``: its
    characters) or number ("5" is not in "15", "2.5" or "1,500")."""
    left = right = ""
    if k[0].isdigit():
        left = rf"(?<![{word}\d])(?<!\d[.,])"
    elif word and re.match(f"[{word}]", k[0]):
        left = f"(?<![{word}])"
    if k[-1].isdigit():
        right = rf"(?![{word}\d])(?![.,]\d)"
    elif word and re.match(f"[{word}]", k[-1]):
        right = f"(?![{word}])"
    return left + re.escape(k) + right


def grade(chunk_text: str, evidence: list[dict]) -> int:
    """The best grade of the evidence phrases this chunk holds whole
    (with every phrase it must hold beside it)."""
    return grade_normed(norm(chunk_text), evidence)


def grade_normed(t: str, evidence: list[dict]) -> int:
    """``grade`` for text already passed through ``norm``."""
    best = 0
    for e in evidence:
        if norm(e["phrase"]) in t and all(norm(w) in t for w in e.get("with", [])):
            best = max(best, int(e.get("grade", 1)))
    return best


_NUM = re.compile(r"\d+(?:[.,:]\d+)*")


def unsupported_numbers(answer: str, cited_texts: list[str]) -> list[str]:
    """Numbers the answer states that no cited text holds ([n] markers aside)."""
    body = re.sub(r"\[[\d,\s\-–]+\]", "", answer)
    source = " ".join(norm(t) for t in cited_texts)
    return [n for n in dict.fromkeys(_NUM.findall(body)) if not re.search(_guarded(n, ""), source)]


def diagnose(q, t: dict) -> list[tuple[str, str]]:
    """Findings for one question (a ``golden.Question``: ``answerable``,
    ``answer_keywords``) as (stage, label) pairs in stage order.

    ``t`` (a trace, plain data):
      missing_phrases  grade-2 phrases that are whole in no chunk of the index
      held             whether any chunk of the index holds evidence (default True)
      in_scope         whether one the question's scope allows does (default True)
      retrieved        [{"id", "grade", "stale"}] top-k in rank order
      shown            ids shown to the answerer;  dropped: [(id, reason)]
      duplicates       number of shown pairs with near-identical text
      answer, refused  the answer (None for a retrieval-only run);  gated: the
                       refusal was the gate's
      cited_texts      texts of the chunks the answer cites;  stripped: int
    """
    out: list[tuple[str, str]] = []
    answerable = q.answerable
    retrieved = t.get("retrieved", [])
    relevant = [r for r in retrieved if r["grade"] > 0]
    held = t.get("held", True)
    if answerable and (t.get("missing_phrases") or not held):
        out.append(("ingestion", "missed_evidence"))
    if answerable and held and not t.get("in_scope", True):
        out.append(("ingestion", "out_of_scope"))
    elif answerable and held and not relevant:  # a chunk the asker may see holds it, and the ranking missed it
        out.append(("retrieval", "missed_evidence"))
    if answerable and relevant and retrieved[0]["grade"] == 0:
        out.append(("retrieval", "irrelevant_match"))
    if any(r.get("stale") for r in retrieved):
        out.append(("retrieval", "stale_document"))
    shown = set(t.get("shown", []))
    if relevant and not any(r["id"] in shown for r in relevant):
        out.append(("context", "missed_evidence"))
    answer = t.get("answer")
    if not answerable and shown and (answer is None or not t.get("refused")):
        out.append(("context", "irrelevant_match"))
    if t.get("duplicates", 0):
        out.append(("context", "duplicate_chunks"))
    if answer is not None:
        evidence_shown = any(r["id"] in shown for r in relevant)
        if answerable and evidence_shown:
            keys = q.answer_keywords
            if t.get("refused") and t.get("gated"):
                out.append(("generation", "refused_by_gate"))
            elif t.get("refused") or (keys and not keywords_present(answer, keys)):
                out.append(("generation", "missed_evidence"))
        if not t.get("refused") and (unsupported_numbers(answer, t.get("cited_texts", [])) or not answerable):
            out.append(("generation", "unsupported_answer"))
        if t.get("stripped", 0):
            out.append(("citation", "unsupported_answer"))
    seen: list[tuple[str, str]] = []
    for f in out:
        if f not in seen:
            seen.append(f)
    return sorted(seen, key=lambda f: STAGES.index(f[0]))

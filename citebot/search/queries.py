"""The queries a turn searches: the typed turn, its follow-up form, synonyms.

Follow-ups, by the design the numbers favour (README, MTRAG table):

* offline, a turn with history searches the typed turn plus one extra list,
  "last substantive user turn + typed turn" (blank turns and bare
  acknowledgements such as "thanks" or "ok" are skipped).  No grammar rules:
  fusion lets the joined form find what an elliptical turn ("and for size
  L?") points at, while the typed turn's own list keeps a turn that changed
  the subject on its own topic;
* with an LLM, every turn with history is condensed into a standalone turn
  by the model (the prompt returns a standalone turn unchanged); the typed
  turn is searched too, and a failed call falls back to the offline form.

Synonym expansion (:func:`expand`): each group is a set of equivalent terms.
For each group with a term present in a query (case-insensitive, whole word
or phrase, the longest match wins), one extra query is made per other term,
the matched term replaced.  Groups and terms are visited in file order.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import regex

from citebot.answer import prompts


@dataclass(frozen=True)
class QueryPlan:
    typed: str  # what the user typed
    standalone: str  # the question put to the answerer: the model's condensed turn, else the typed turn
    followup: str | None  # the joined or condensed form searched beside the typed turn
    expansions: tuple[str, ...]  # synonym expansions of the searched forms
    method: str  # "none" (no history or follow-ups off) | "joined" | "llm" | "llm-failed" (joined) | "ack" (nothing to look up)
    # The model could not be reached or did not answer while rewriting (a
    # timeout, a refused connection): its error, so the answer is not asked
    # for too (a hung server held a follow-up for twice the deadline).
    model_down: str | None = None
    # The typed turn with its misspelt words replaced by the documents' own
    # ("CROS" -> "CORS"; search/spelling.py, which needs the index: set by the engine).
    spelled: str | None = None

    @property
    def queries(self) -> list[str]:
        """Every query to search, deduplicated in order: the typed turn, its
        follow-up form, the spelling-corrected turn, then the expansions."""
        out: list[str] = []
        seen: set[str] = set()
        if self.method == "ack":
            return out
        for q in (self.typed, self.followup or "", self.spelled or "", *self.expansions):
            key = _key(q)
            if key and key not in seen:
                seen.add(key)
                out.append(q.strip())
        return out

    @property
    def core(self) -> int:
        """How many of :attr:`queries` are not synonym expansions (they lead:
        the typed turn, its follow-up form)."""
        return len(QueryPlan(self.typed, self.standalone, self.followup, (), self.method).queries)

    @property
    def widened(self) -> tuple[str, ...]:
        """The forms beyond the core, which widen the question's words: the
        spelling-corrected turn, then the synonym expansions."""
        return (self.spelled, *self.expansions) if self.spelled else self.expansions

    @property
    def rerank(self) -> str:
        """What the cross-encoder reads the candidates against: the model's
        standalone turn when it condensed one ("and for size L?" alone names
        no product), else the typed turn.  Not the joined form: the final
        order is the cross-encoder's alone, and the joined form would score a
        turn that changed the subject against the old one."""
        return self.standalone

    @property
    def earlier(self) -> str:
        """The earlier turn a joined follow-up form put before the typed turn
        (``joined``); "" when the turn was searched without one or a model
        condensed it (its standalone turn names the topic itself)."""
        if self.method not in ("joined", "llm-failed") or not self.followup:
            return ""
        # the typed turn ends it, or its corrected spelling (the engine's _spell)
        tail = self.spelled if self.spelled and self.followup.endswith(self.spelled) else self.typed
        return self.followup[: len(self.followup) - len(tail)].strip()

    @property
    def also_searched(self) -> list[str]:
        """The queries beyond the typed turn (what the chat shows)."""
        return self.queries[1:]


def _key(text: str) -> str:
    return " ".join(text.split()).casefold()


# --- follow-ups ----------------------------------------------------------------
_ACK = frozenset("""thanks thank you thx ty ok okay great cool nice perfect awesome hi hello hey yes yeah
yep no nope bye goodbye sure got it alright fine good understood k so much makes sense that helps helped
lot very many ধন্যবাদ
danke schön vielen dank alles klar ja gracias muchas perfecto entendido sí bueno
merci beaucoup d'accord parfait compris oui obrigado obrigada valeu entendi certo muito
teşekkürler teşekkür ederim sağol tamam anladım evet спасибо большое понятно хорошо ок ясно отлично
дякую дуже зрозуміло добре чудово धन्यवाद शुक्रिया ठीक है अच्छा""".split())
# (Not "gut", "super", "vale", "bien", "sim": English words too, "SIM?" is a question.)
# Scripts written without spaces run their words together ("好的谢谢", "谢谢你"):
# such a run is an acknowledgement when it splits wholly into these.
_ACK_RUN = ("谢谢 謝謝 谢谢你 謝謝你 多谢 多謝 好的 好 明白 了解 知道了 嗯 ありがとう ございます ござい ます どうも はい "
            "わかりました 分かりました 了解です 承知しました 감사합니다 고마워요 고맙습니다 네 알겠습니다 좋아요").split()
_RUN_SCRIPT = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}]+")


def _ack_word(word: str) -> bool:
    if word in _ACK:
        return True
    if not _RUN_SCRIPT.fullmatch(word):
        return False
    ends = {0}  # positions the word splits into acknowledgements up to
    for i in range(len(word)):
        if i in ends:
            ends.update(i + len(a) for a in _ACK_RUN if word.startswith(a, i))
    return len(word) in ends


_WORD = regex.compile(r"[\p{L}\p{M}]+(?:'[\p{L}\p{M}]+)?")
_DIGIT = regex.compile(r"\p{N}")


def is_ack(turn: str) -> bool:
    """A blank turn or a bare acknowledgement ("thanks!", "ok, makes sense").
    Words of any script count: "中国的保修期是多久？" is a real turn (reading
    only a-z made every Chinese or Bengali turn blank, and its follow-up lost
    its context), with their combining marks ("ধন্যবাদ" is one word); a
    number is something to look up ("400-820-5566", "ok 4032")."""
    if _DIGIT.search(turn):
        return False
    words = _WORD.findall(turn.lower())
    return not words or all(_ack_word(w) for w in words)


def last_substantive(history: Sequence[str]) -> str | None:
    return next((h.strip() for h in reversed(history) if h and not is_ack(h)), None)


def joined(typed: str, history: Sequence[str]) -> str | None:
    """"last substantive user turn + typed turn", or None with no such turn."""
    prev = last_substantive(history)
    return f"{prev} {typed.strip()}" if prev else None


_LABEL = re.compile(r"^(?:standalone (?:search )?question|rewritten question|question)\s*:\s*", re.I)
CONDENSED_MAX = 400  # characters: a standalone question, not an essay (it is searched and put in the prompt)


def clean_condensed(text, typed: str = "") -> str:
    """The question in the model's reply: the first line that holds one,
    after a "Standalone question:" label or a preamble that ends in a colon
    ("Sure! Here is the standalone question:"), without enclosing quotes;
    "" when there is nothing usable (a refusal, citation marks, no words, a
    reply far longer than a question), so the joined form is searched."""
    from citebot.answer.citations import CITATION, is_refusal
    from citebot.terminal import safe

    if not isinstance(text, str) or is_refusal(text):
        return ""
    # A model's escape sequences are no part of a question: searched, "\x1b[1mfix" made the
    # terms 1mfix and 0m, while /why showed the question without them.
    for line in (ln.strip() for ln in safe(text).strip().splitlines()):
        s = _LABEL.sub("", line).strip()
        if not s or s.endswith(":"):
            continue  # a label or preamble on a line of its own: the question follows
        if len(s) >= 2 and s[0] == s[-1] and s[0] in "\"'`":
            s = s[1:-1].strip()
        if not re.search(r"\w", CITATION.sub("", s)) or len(s) > max(CONDENSED_MAX, 2 * len(typed)):
            return ""
        # Citation marks are no part of a question: in the answer prompt they name sources it never had.
        return re.sub(r"\s+([?.!,;:])", r"\1", " ".join(CITATION.sub(" ", s).split()))
    return ""


def condense_prompt(typed: str, history: Sequence[str]) -> tuple[str, str]:
    convo = "\n".join(f"User: {h.strip()}" for h in history if h and h.strip())
    return prompts.CONDENSE_SYSTEM, prompts.CONDENSE_USER.format(history=convo or "(none)", question=typed.strip())


def plan(typed: str, history: Sequence[str], groups: Iterable = (), *, followups: bool = True,
         expansion: bool = True, condense: Callable[[str, str], str] | None = None) -> QueryPlan:
    """The queries for ``typed`` after ``history`` (earlier user turns, oldest
    first).  ``condense(system, user) -> text`` is the model; it is asked for
    every turn with a substantive history, and any failure (an exception or
    nothing usable) falls back to the joined form."""
    followup, standalone, method, down = None, typed.strip(), "none", None
    if is_ack(typed):  # "thanks", "ok": nothing to look up (joined to the last turn, it re-answered it)
        return QueryPlan(standalone, standalone, None, (), "ack")
    if followups and last_substantive(history):
        followup, method = joined(typed, history), "joined"
        if condense is not None:
            try:
                condensed = clean_condensed(condense(*condense_prompt(typed, history)), typed)
            except Exception as e:  # noqa: BLE001 - any model failure falls back to the offline form
                condensed = ""
                down = str(e) if getattr(e, "down", False) else None
            if condensed:
                followup = standalone = condensed
                method = "llm"
            else:
                method = "llm-failed"
    expansions: list[str] = []
    if expansion:
        for q in (typed, followup):
            expansions.extend(expand(q, groups) if q else ())
    return QueryPlan(typed.strip(), standalone, followup, tuple(dict.fromkeys(expansions)), method, down)


# --- synonyms ------------------------------------------------------------------
def load_synonyms(path) -> list[tuple[str, ...]]:
    """Read ``{"groups": [["2FA", "two-factor authentication"], ...]}``.

    A bare top-level list of groups is accepted too.  A missing or unreadable
    file, bad JSON or a bad shape is a ``ValueError`` naming the file.
    """
    p = Path(path)
    try:
        raw = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"synonyms file {p} does not exist") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"cannot read synonyms file {p}: {e}") from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ValueError(f"synonyms file {p} is not valid JSON: {e}") from None
    if isinstance(data, dict):
        if "groups" not in data:
            raise ValueError(f"synonyms file {p} must hold an object with a \"groups\" list")
        data = data["groups"]
    if not isinstance(data, list):
        raise ValueError(f"synonyms file {p}: \"groups\" must be a list of lists of terms")
    groups: list[tuple[str, ...]] = []
    for n, group in enumerate(data, 1):
        if not isinstance(group, list) or not all(isinstance(t, str) for t in group):
            raise ValueError(f"synonyms file {p}: group {n} must be a list of strings, got {group!r}")
        terms: list[str] = []
        for t in group:
            t = " ".join(t.split())
            if t and t.casefold() not in {x.casefold() for x in terms}:
                terms.append(t)
        if len(terms) < 2:
            raise ValueError(f"synonyms file {p}: group {n} needs at least two different terms, got {group!r}")
        groups.append(tuple(terms))
    return groups


_INFLECTION = r"(?:s|es|d|ed|ing)?"


def _term_re(term: str) -> re.Pattern:
    """Whole words, case-insensitive; a plain last word may carry a common
    inflection ("vouchers", "guaranteed", "refunded"), but never more letters
    ("card" does not match "cardigan")."""
    words = term.split()
    parts = [re.escape(w) for w in words]
    if words[-1].isalpha() and len(words[-1]) >= 3:
        parts[-1] += _INFLECTION
    return re.compile(r"(?<!\w)" + r"\s+".join(parts) + r"(?!\w)", re.IGNORECASE)


def _swap(pat: re.Pattern, other: str, text: str) -> str:
    """``text`` with ``pat``'s matches replaced by ``other``, literally (a "\\" in it is no group reference)."""
    return pat.sub(other.replace("\\", "\\\\"), text)


def expand(query: str, groups) -> tuple[str, ...]:
    """Extra queries from synonym groups (see the module docstring)."""
    out: list[str] = []
    seen = {_key(query)}
    swaps: list[tuple[re.Pattern, str]] = []  # each matched group's first other term
    for group in groups or ():
        terms = [" ".join(t.split()) for t in group if t and t.strip()]
        best: tuple[str, re.Pattern] | None = None
        for t in terms:
            pat = _term_re(t)
            if pat.search(query) and (best is None or len(t) > len(best[0])):
                best = (t, pat)
        if best is None:
            continue
        matched, pat = best
        others = [t for t in terms if t.casefold() != matched.casefold()]
        if others:
            swaps.append((pat, others[0]))
        for other in others:
            q = _swap(pat, other, query)
            k = _key(q)
            if k not in seen:
                seen.add(k)
                out.append(q)
    if len(swaps) > 1:
        # Two groups in one question ("money back for a voucher?"): one query with both swapped, or
        # "refund ... gift card", the documents' words, was never searched.
        q = query
        for pat, other in swaps:
            q = _swap(pat, other, q)
        if _key(q) not in seen:
            out.append(q)
    return tuple(out)

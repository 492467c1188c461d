"""Citations in a model's answer, checked as the answer streams.

A citation is ``[n]``, ``[n, m]``, ``[n m]``, ``[n-m]`` or a footnote mark
``[^n]``.  Numbers that name a shown chunk are kept (a group is rewritten as
``[1, 2]``); the others are stripped *and counted*.  :class:`AnswerStream` is the one cleaner: the chat prints
what it returns, and the stored answer is exactly that text, so the screen
and ``--json`` never disagree.  It

* holds text back from an unclosed ``[`` while it can still become a
  citation (digits, commas, dashes), so an invalid number is never printed; a
  group the stream leaves open at its end reads as closed there;
* leaves no gap where a citation was stripped (no space before punctuation,
  no double space; whitespace that holds a line break, as in code, is kept);
* holds the opening back while it reads like a refusal, so a refusal is
  shown as the one exact sentence and nothing else (the refusal sentence
  with citations after it is still a refusal), and while it holds no
  words, so a reply of citation marks alone is never shown as an answer;
* drops a closing "Sources:" line (or label after the last sentence) whose
  citations were all stripped, and reads a group nested round a stripped one
  (``[1[9]]``) as the citation it becomes, so no mark reaches the screen
  uncounted;
* passes code through untouched: inside a fenced block or an inline code
  span, ``items[0]`` is code, not a citation, and spacing is the model's.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from citebot.config import REFUSAL

# Brackets ASCII or full-width (［1］, 【1】), a footnote's "^" ([^1]), numbers
# listed with "," or ";" (or their full-width and ideographic forms) or a space or ranged with a hyphen or dash, spaces and
# zero-width characters between: a model writes each, and a mark the check
# missed reached the screen unchecked.
_OPENERS = "[［【"
_OPEN, _CLOSE = "\\[［【", "\\]］】"  # as regex class bodies
_CLOSERS = "]］】"
_ZERO_WIDTH = "\u200b-\u200d\u2060\ufeff"  # as a regex class body
_GAP = "\\s" + _ZERO_WIDTH  # whitespace and zero-width characters
_LIST, _RANGE = ",;，、；", "\\-–—"  # "【1，9】" and "[1、9]" in a Chinese answer too
# Between two numbers a separator or at least one gap, never nothing: "\d+(\d+)*"
# backtracks exponentially on a long run of digits that never closes.
CITATION = re.compile(f"[{_OPEN}]\\^?([{_GAP}]*\\d+(?:(?:[{_GAP}]*[{_LIST}{_RANGE}][{_GAP}]*|[{_GAP}]+)\\d+)*[{_GAP}]*)"
                      f"[{_CLOSE}]")
_TICKS = re.compile(r"`+")
_PUNCT = ".,;:!?"
# How much of the opening is read to decide whether an answer is a refusal.
REFUSAL_WINDOW = 200
REFUSAL_PATTERNS = re.compile(
    r"\b(i don't know|i do not know|cannot answer|can't answer|unable to answer|not able to answer|"
    r"not (?:enough|sufficient) information|(?:could not|couldn't|cannot|can't) find (?:this|that|it|any|the answer)|"
    r"(?:sources|documents|context) (?:do not|don't|does not|doesn't) (?:contain|mention|say|provide|include|cover)|"
    r"no information (?:about|on|in)|not mentioned in the)|"
    r"我不知道|无法回答|没有(?:相关|足够的?)信息|ich weiß es nicht|weiß ich nicht|je ne sais pas|no lo sé", re.I)
_OPEN_GROUP = re.compile(f"[{_OPEN}]\\^?[{_GAP}\\d{_LIST}{_RANGE}]*$")  # a "[" more digits could still close as a citation
_CUT_GROUP = re.compile(f"[{_OPEN}]\\^?[{_GAP}]*\\d[{_GAP}\\d{_LIST}{_RANGE}]*$")  # ... holding a number, where a stream ends
_INFO = r"[\w+#.-]*[ \t]*"  # a fence's info string ("python")
_FENCE_INFO = re.compile(_INFO + r"\n")  # "```python" then a line break: a fence, even mid-line
_INFO_SO_FAR = re.compile(_INFO)  # ... whose line break may still come
_INLINE_LIMIT = 2000  # an inline code span still open after this many characters is a stray backtick
_LABEL = "(?:sources?|references?)"  # a closing "Sources:" line's label
_SOURCES_LINE = re.compile(f"\\n\\s*{_LABEL}\\s*:[{_GAP}{_OPEN}{_CLOSE}^\\d{_LIST}{_RANGE}]*$", re.I)
# A closing "Sources:" label that no kept citation follows (yet): held back, and dropped at the end.
_LABELS = ("sources:", "source:", "references:", "reference:")  # ... and what a line may still grow into
_TRAIL = re.compile(f"[{_GAP}{_LIST}{_RANGE}]+$")  # what a group may end in before its closer
# ... on a line of its own, or after the last sentence of the last line ("... days. Sources:").
_BARE_SOURCES = re.compile(f"(?:^|\\n|(?<=[.!?]))\\s*{_LABEL}\\s*:[{_GAP}{_LIST}]*$", re.I)
_LABEL_SO_FAR = re.compile(r"(?:^|\n|(?<=[.!?]))[ \t]*([A-Za-z]+)$")  # a last word that may still grow into one
_WORD = re.compile(r"\w")
_LETTER = re.compile(r"[^\W\d_]")
_LISTED = re.compile(f"[{_CLOSE}][{_LIST}]$")  # a citation with a list separator after it ("[1], " or "【1】，")


_PART = re.compile(f"(\\d+)\\s*[{_RANGE}]\\s*(\\d+)|(\\d+)")  # a range, or one number


def _int(digits: str) -> int:
    """The number, or one past any chunk's for a run int() refuses (over 4300 digits)."""
    digits = digits.lstrip("0") or "0"
    return int(digits) if len(digits) <= 18 else 10 ** 18


def _last_opener(text: str, end: int, start: int = 0) -> int:
    """Where the last opening bracket in ``text[start:end]`` stands (-1: none)."""
    return max(text.rfind(o, start, end) for o in _OPENERS)


def parse_group(body: str) -> list[int]:
    nums: list[int] = []
    for m in _PART.finditer(re.sub(f"[{_ZERO_WIDTH}]", "", body)):
        if m.group(3) is not None:
            nums.append(_int(m.group(3)))
            continue
        lo, hi = _int(m.group(1)), _int(m.group(2))
        nums.extend(range(lo, hi + 1) if 0 <= hi - lo <= 50 else [lo, hi])
    return nums


def without_marks(text: str) -> str:
    """``text`` without citation marks and a closing "Sources: [1]" line."""
    return " ".join(CITATION.sub(" ", _SOURCES_LINE.sub("", text)).split())


def is_refusal(text: str) -> bool:
    """The refusal sentence (with or without citations after it), or an
    opening that says the sources lack the answer in an answer that cites
    nothing."""
    t = text.strip()
    return without_marks(t).startswith(REFUSAL) or (
        bool(REFUSAL_PATTERNS.search(t[:REFUSAL_WINDOW])) and not CITATION.search(t))


@dataclass(frozen=True)
class Cleaned:
    text: str  # exactly what was shown
    cited: list[int]  # valid numbers, in order of first use
    marks: list[int]  # every valid number, each time it is cited
    stripped: int  # invalid numbers removed
    refused: bool


class AnswerStream:
    """Feed the model's deltas; show what :meth:`feed` returns, then what
    :meth:`finish` adds.  ``n_shown`` is how many chunks the prompt numbered."""

    def __init__(self, n_shown: int):
        self.n = n_shown
        self.raw = ""  # unconsumed input: text from an unclosed "["
        self.ws = ""  # whitespace held until the next character decides its fate
        self.body = ""  # cleaned text so far (shown or held)
        self.shown = 0  # how much of body has been shown
        self.cited: list[int] = []
        self.marks: list[int] = []
        self.stripped = 0
        self.stripped_at = -1  # where in body the last stripped citation stood
        self.deciding = True  # still reading the opening for a refusal
        self.wordless = False  # ... whose whole window holds no word: held to the end
        self.code = ""  # the backticks that opened the code we are in ("" in prose)
        self._chain: tuple[int, int] | None = None  # where in raw the last walk over open groups began and ended

    def feed(self, delta: str) -> str:
        self.raw += delta
        if self.code:  # a fence that closes in this delta: through it first, so the prose after it is held like any
            close = next((m for m in _TICKS.finditer(self.raw) if len(m.group()) >= len(self.code)), None)
            if close is not None and close.end() < len(self.raw):
                head, self.raw = self.raw[:close.end()], self.raw[close.end():]
                self.raw = self._consume(head) + self.raw
                self._chain = None  # the held text moved
        cut = len(self.raw.rstrip("`"))  # a run of backticks may still grow into a fence
        # Held from the last "[" while more digits could still close it as a citation,
        # however long: cut short, a long group reached the screen unchecked.
        start = _last_opener(self.raw, cut)
        if start >= 0 and not self.code and _OPEN_GROUP.match(self.raw, start, cut):
            cut = start
            # "[1[9", "[ [9": the outer group may close round the inner one, with or without a
            # number of its own yet ("[ [9] 1 ]" is "[1]").  A group holds no opener,
            # so it can only begin at the last one before the cut (searching from the top per
            # group made a chain of them cubic).
            # The walk from the last delta's opener on is the one made then (its text is the same):
            # taken from there, a chain of a thousand "[1 [9" fed a character at a time is linear,
            # not a walk over the whole chain per character.
            top = cut
            while True:
                if self._chain is not None and cut == self._chain[0]:
                    cut = self._chain[1]
                outer = _last_opener(self.raw, cut)
                if outer < 0 or not _OPEN_GROUP.match(self.raw, outer, cut):
                    break
                cut = outer
            self._chain = (top - len(self.raw), cut - len(self.raw))  # from the end: consuming the head moves no end
        else:
            self._chain = None
        ready, self.raw = self.raw[:cut], self.raw[cut:]
        self.raw = self._consume(ready) + self.raw
        if self._chain is not None:
            self._chain = (len(self.raw) + self._chain[0], len(self.raw) + self._chain[1])
        return self._release()

    def finish(self) -> tuple[str, Cleaned]:
        """The text still to show, and the whole cleaned answer."""
        if not self.code and _CUT_GROUP.search(self.raw):
            self.raw = _TRAIL.sub("", self.raw) + "]"  # cut off inside a citation: read the group it began
        self._consume(self.raw, final=True)
        self.raw, self.ws = "", ""  # trailing whitespace is dropped
        bare = None if self.code else _BARE_SOURCES.search(self.body)
        if bare and bare.start() >= self.shown:  # "Sources:" whose only citations were stripped
            self.body = self.body[:bare.start()]
        if is_refusal(self.body):
            return (REFUSAL if self.shown == 0 else ""), Cleaned(REFUSAL, [], [], self.stripped, True)
        if not _WORD.search(without_marks(self.body)):  # nothing but citation marks: no answer
            return "", Cleaned("", [], [], self.stripped, False)
        tail = self.body[self.shown:]
        self.shown = len(self.body)
        return tail, Cleaned(self.body, list(self.cited), list(self.marks), self.stripped, False)

    def _consume(self, text: str, final: bool = False) -> str:
        """Prose goes through the citation check; code is kept as it is: a
        fence (three or more backticks) up to its closing fence, an inline
        span up to the same run of backticks on the same line (a lone
        backtick, as in "It`s", is prose).  Returns the text held back: an
        inline span whose end has not arrived yet."""
        while text:
            if self.code:  # inside a fence
                close = next((m for m in _TICKS.finditer(text) if len(m.group()) >= len(self.code)), None)
                end = close.end() if close else len(text)
                self._verbatim(text[:end])
                self.code = "" if close else self.code
                text = text[end:]
                continue
            m = _TICKS.search(text)
            if m is None:
                self._prose(text)
                return ""
            fence = len(m.group()) >= 3 and (self._line_start(text, m.start()) or _FENCE_INFO.match(text, m.end()))
            if len(m.group()) >= 3 and not fence and not final and _INFO_SO_FAR.fullmatch(text, m.end()) \
                    and len(text) - m.start() < _INLINE_LIMIT:
                self._prose(text[:m.start()])
                return text[m.start():]  # "```py" mid-line: a fence if a line break follows
            if fence:
                self._prose(text[:m.start()])
                self.code = m.group()
                self._verbatim(m.group())
                text = text[m.end():]
                continue
            line_end = text.find("\n", m.end())
            close = next((c for c in _TICKS.finditer(text, m.end(), line_end if line_end != -1 else len(text))
                          if c.group() == m.group()), None)
            if close is None and line_end == -1 and not final and len(text) - m.start() < _INLINE_LIMIT:
                self._prose(text[:m.start()])
                return text[m.start():]  # the span may still close
            if close is None:
                self._prose(text[:m.end()])  # no closing run on this line: literal backticks
                text = text[m.end():]
                continue
            self._prose(text[:m.start()])
            self._verbatim(text[m.start():close.end()])
            text = text[close.end():]
        return ""

    def _line_start(self, text: str, pos: int) -> bool:
        """Whether ``text[pos]`` begins a line (spaces before it aside): only
        there do three backticks open a fence ("the ``` key" is prose)."""
        before = text[:pos]
        line = before[before.rfind("\n") + 1:]
        if line.strip(" \t"):
            return False
        return "\n" in before or not self.body or "\n" in self.ws or self.body.endswith("\n")

    def _verbatim(self, text: str) -> None:
        if not text:
            return
        if self.body and self.ws:
            self.body += self.ws if "\n" in self.ws else " "
        self.ws = ""
        self.body += text

    def _prose(self, text: str) -> None:
        pos = 0
        for m in CITATION.finditer(text):
            self._append(text[pos:m.start()])
            nums = parse_group(m.group(1))
            good = list(dict.fromkeys(n for n in nums if 1 <= n <= self.n))
            self.stripped += sum(1 for n in nums if not 1 <= n <= self.n)
            self.cited.extend(n for n in good if n not in self.cited)
            self.marks.extend(good)
            listed = self._listed()  # a comma right after a stripped citation, before this one
            if good:
                if listed and not self.body[:-1].rstrip().endswith("]"):
                    self.body = self.body[:-1]  # "Text [7], [1]." is "Text [1]." once [7] goes
                    self.ws = self.ws or " "
                self._append("[" + ", ".join(map(str, good)) + "]")
            elif nums:
                if self._ends_listed() or listed:
                    self.body = self.body[:-1]  # "[1], [7]." is "[1]." once [7] goes: the comma listed it
                self.stripped_at = len(self.body)
            pos = m.end()
        self._append(text[pos:])

    def _label_at(self) -> int:
        """Where a last line that is, or may still become, a bare "Sources:" label begins."""
        # Only the text not shown yet can be a label held back: searched from there,
        # not from the top at every delta (which made a long answer quadratic).
        pos = max(0, self.shown - 1)
        bare = _BARE_SOURCES.search(self.body, pos)
        if bare:
            return bare.start()
        grown = _LABEL_SO_FAR.search(self.body, pos)
        if grown and any(label.startswith(grown.group(1).lower()) for label in _LABELS):
            return len(self.body[:grown.start()].rstrip())  # where the bare label's match would begin
        return len(self.body)

    def _ends_listed(self) -> bool:
        """Whether the body ends in a citation with a list separator after it."""
        return _LISTED.search(self.body, max(0, len(self.body) - 3)) is not None

    def _listed(self) -> bool:
        """Whether the body ends in a list separator ("," ";" or a full-width one) right where a citation was stripped."""
        return self.stripped_at == len(self.body) - 1 and self.body[-1:] != "" and self.body[-1] in _LIST

    def _reopened(self, body: str, group: re.Pattern = _CUT_GROUP) -> int:
        """Where a group still open at the end of ``body`` round the last stripped
        citation begins ("[1" of "[1[9]", "[" of "[[9]9", "[2" of "[2 [9], 1"); -1: none.
        A group holds no opener, so it can only begin at the last one before the strip."""
        if not self.shown < self.stripped_at <= len(body):
            return -1
        start = _last_opener(body, self.stripped_at, self.shown)  # never further back than what is shown
        return start if start >= 0 and group.match(body, start) else -1

    def _append(self, text: str) -> None:
        # Grown in a local with no other reference, so each character is appended in
        # place: "self.body += ch" copied the whole answer per character (quadratic).
        body, self.body = self.body, ""
        for i, ch in enumerate(text):
            if ch.isspace():
                self.ws += ch
                continue
            if ch in _CLOSERS and "\n" not in self.ws:
                outer = self._reopened(body)
                if outer >= 0:  # "[1[9]]", "[1 [9] ]", "[[9]9]", "[2 [9], 1]" once [9] goes: a citation, read as one
                    group, head = _TRAIL.sub("", body[outer:]), body[:outer]
                    # The gap before the group is held again, so a group stripped whole leaves none ("A [0[9]] b.").
                    kept = max(len(head.rstrip(" \t")), self.shown)
                    self.body, self.ws, self.stripped_at = head[:kept], head[kept:], -1
                    self._prose(group + ch + text[i + 1:])
                    return
            if body:  # leading whitespace is dropped
                if "\n" in self.ws:
                    body += self.ws if ch not in _PUNCT else self.ws.replace(" ", "").replace("\t", "")
                elif self.ws and ch not in _PUNCT:
                    body += " "  # a run of spaces, or the gap a stripped citation left, is one space
            self.ws = ""
            body += ch
        self.body = body

    def _release(self) -> str:
        """What may be shown now: nothing while the opening could still turn
        out to be a refusal (see :func:`is_refusal`)."""
        if self.deciding:
            if self.wordless:
                return ""
            opening = self.body[:REFUSAL_WINDOW]
            # The opening decides; reading the whole body at every delta was quadratic.
            head = self.body[:4 * REFUSAL_WINDOW]
            if len(self.body) <= 4 * REFUSAL_WINDOW:  # a closing "Sources:" label may yet be dropped: no word
                head = head[:self._label_at()]
            words = without_marks(head)
            if REFUSAL.startswith(words) or words.startswith(REFUSAL):
                return ""  # the refusal sentence, so far: shown as the refusal or not at all
            # Never before a word (a letter; a digit may be a mark's): a reply of marks and
            # brackets alone is no answer, and shown, it had to be taken back.  One whose
            # opening holds none is held to its end and shown then, if a word came.
            worded = bool(_LETTER.search(words))
            if worded and (self.marks or (
                    len(self.body) >= REFUSAL_WINDOW and not REFUSAL_PATTERNS.search(opening))):
                self.deciding = False
            else:
                self.wordless = len(self.body) > 4 * REFUSAL_WINDOW and not worded
                return ""
        # A comma after a citation (kept or stripped) is held back: the next citation may
        # be stripped, or follow a stripped one, and the comma goes with it.
        end = len(self.body) - (1 if self._ends_listed() or self._listed() else 0)
        if not self.code:
            end = min(end, self._label_at())
            if "\n" not in self.ws:
                # "[7" right before a stripped "[9]" (or "[7 [9], 8" round it): a closer in the next
                # delta makes it the citation "[7]" (see _append), so it is held until that is decided.
                outer = self._reopened(self.body, _OPEN_GROUP)  # "[" alone too: "[ [0]" may go on " 1 ]"
                if outer >= 0:  # ... and the gap before it, which goes if the group goes whole
                    end = min(end, len(self.body[:outer].rstrip(" \t")))
        out = self.body[self.shown:end]
        self.shown = max(self.shown, end)
        return out


def clean_citations(text: str, n_shown: int) -> Cleaned:
    """A whole answer through the same cleaner as a streamed one."""
    stream = AnswerStream(n_shown)
    head = stream.feed(text)
    tail, cleaned = stream.finish()
    assert cleaned.refused or head + tail == cleaned.text
    return cleaned

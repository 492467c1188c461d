"""The offline answerer: quote the best-supported passage, with its ``[n]``.

A chunk reads as units: sentences, table rows (quoted with their header row)
and whole code blocks.  Each unit is scored against the question:

    lexical = idf-weighted share of the question's terms the unit holds (a term
              in the chunk's title/heading path counts half, so a table row
              under "Size L" matches "size L"; whole when the chunk's own
              heading writes a name the question writes, `task_serializer`
              over "Default: "json"."); the best over the searched
              queries (typed turn with the conversation's own words at half
              weight, then each synonym expansion).
              A unit of the question's answer type adds ``TYPE_BONUS``, and
              so does one with a range that holds a number of the question
              (175 cm is in the row "M | 170-180 cm", not in "S | 160-170 cm").
    score   = 0.5 * lexical + 0.5 * cosine(question, unit) for the
              ``embed_top`` lexically best units when an embedder is given
              (embedding every unit would cost ~1 s on a laptop CPU), and
              0.5 * lexical for the rest (cosine 0: one scale for all).

The answer quotes one to three *consecutive* units of the best unit's chunk
(a how-to question whose best unit is a step of a numbered list gets the
whole list, up to ``MAX_STEPS``: half a procedure reads as all of it; a
sentence of a list item brings the rest of its item before any neighbour)
(choosing it, the units of the strongest chunk shown count ``TOP_CHUNK``
more, and for a how-to question a sentence that says what to do ``INSTRUCTION`` more, and a follow-up's lead holds a word the follow-up adds when a unit of
the same chunk within ``LEAD`` does; a neighbour joins when it is itself about
the question; a question asking what X is or does is led by the entry
that defines X, "pop [<stash>]: Remove ...", within ``LEAD`` of the best, its
quote running on only into what follows it and not into another entry;
and by the start of the section that X heads, when a unit of it is within
``LEAD`` of the best; a question asking what X defaults to by the line of
the lead's list item, or outside a list of its chunk, that gives a default,
"Default: `None`"; and a question asking which option by a unit that writes one),
and a second quote
from another chunk only when that chunk answers a distinct part of the
question (it holds question terms the first quote lacks).  It never stitches
fragments of several chunks into one sentence.  It refuses when the best
score is below ``min_score``.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import regex

from citebot.answer.context import Context
from citebot.config import REFUSAL
from citebot.index.markdown import ASIDE
from citebot.index.store import TermStat
from citebot.search import analyzer
from citebot.search.models import on_scale

# A sentence ends at . ! ? before a capital of any cased script (Cyrillic, Greek,
# "Über"), a letter of a script without case (Hangul, Hebrew), a digit or quote,
# after CJK/Devanagari enders, and before an inline list item (" - Tents are
# ...", as PDF text reads).  Only A-Z counted: a Russian or Korean answer
# quoted a whole list of eight sentences as one.
# (After a short word, "г." or "см." in Russian, "av." in French, a full stop is
# more often an abbreviation: there only an ASCII capital starts a sentence, as before.)
_SENT = regex.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(“`]|\*\*)|(?<=\p{L}\p{M}*\p{L}\p{M}*\p{L}\p{M}*\p{L}\p{M}*[.!?])\s+"
                      r"(?=[\p{Lu}\p{Lt}\p{Lo}])|(?<=[。！？।])|(?<=[.!?:;])\s+(?=[-•*]\s)")
# A full stop after these ends no sentence ("Dr. Chen", "Jan. 5", "e.g. FastAPI").
# Left out: "etc." and a single capital ("plan B. Then restart."), which end
# sentences about as often as not.
# Dotted initialisms too ("the U.S. Embassy", "9 a.m. Monday", "Ph.D."): split
# there, a quote began "Embassy must carry a passport."
_ABBREV = re.compile(r"(?:^|[\s(])(?:Dr|Mr|Mrs|Ms|Prof|St|Jr|Sr|vs|cf|[Aa]pprox|No|Fig|Eq|Vol|Inc|Ltd|Corp|Jan|Feb|Mar"
                     r"|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|[Ee]\.g|[Ii]\.e|(?:[A-Za-z]{1,2}\.)+[A-Za-z])\.$")
_ENUMERATOR = re.compile(r"^(?:\d+|[a-zA-Z])[.)]$")
_BULLET = re.compile(r"^[-•*]\s+")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_RULE = re.compile(r":?-{2,}:?")
_ORDERED = re.compile(r"^\s*\d+[.)]\s+")
_FIRST_STEP = re.compile(r"^\s*0*1[.)]\s+")  # a list numbered from 1 again is another list
# A question that asks for a procedure; its answer is every step, in order.
_PROCEDURE = re.compile(r"\bhow (?:do|can|should|would|could|does|did) (?:i|we|you|one|they|it)\b|\bhow to\b"
                        r"|\bsteps?\b|\bprocedure\b|怎么|如何|怎样|步骤", re.I)
MAX_STEPS = 10
# A question that asks for code: a command, an example, a snippet.  Only such a
# question (or one that asks for steps) is answered by a code block when a
# sentence scores within ``LEAD`` of it: "which middleware sees the request
# first?" is answered by the sentence that says so, not by the example beside it.
_ASKS_CODE = re.compile(r"\b(?:commands?|(?<!status )(?<!exit )(?<!error )(?<!response )code|examples?|snippets?"
                        r"|syntax|scripts?)\b|命令|代码|示例|例子|কমান্ড|কোড", re.I)  # a status code is a number
TYPE_BONUS = 0.15
_NUMBER = re.compile(r"(?<![\w.\-–])\d+(?:\.\d+)?(?![\w.-]*\d)")  # 175, 2.5; not a part of E4032, 0.128.0 or 1-3
_RANGE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:-|–|—|to)\s*(\d+(?:\.\d+)?)(?![\w.]*\d)")
CONTEXT_WEIGHT = 0.5
NEIGHBOUR = 0.2  # a neighbouring unit joins the quote when its lexical score is this share of the best's
SECOND = 0.9  # a second quote needs this share of the best score ...
PART = 1 / 3  # ... and to hold question terms the first lacks worth this share of the question's idf
LEAD = 0.8  # a unit of the asked kind leads when it has this share of the best score
# Choosing the lead quote, a unit of the strongest chunk shown (first in the
# fused or reranked order) counts this much more: retrieval weighed the whole
# chunk, the unit scorer sees one sentence.  Tuned on the golden files' tune
# halves (0.05-0.3 tried, with SECOND 0.8-1.0).  Thresholds and the gate read
# the units' own scores.
TOP_CHUNK = 0.1
# A how-to question is answered by a sentence that tells the asker what to do ("To enable debug
# mode, use the `--debug` option.", "You need to tell Waitress about your application"), not by
# one that points elsewhere ("... have more information about running the debugger and debug
# mode.") or sets the scene.  Such a unit counts this much more when the lead is chosen (as
# ``TOP_CHUNK``: it picks among units, no threshold reads it).
INSTRUCTION = 0.15
_DO = (r"(?:use|call|set|add|run|pass|import|create|install|declare|define|put|write|return|register|enable"
       r"|disable|configure|start|type|make|change|replace|remove|wrap|mount|include|override|specify|provide"
       r"|save|load|apply|upgrade|update|edit|tell|point|raise|attach|append|inherit|subclass|decorate|export"
       r"|initiali[sz]e|open|click|select|choose|enter|follow|activate|deploy|build|generate|store|keep)\b"
       # not a noun that opens a statement ("Type hints are ...", "Build artifacts were ...")
       r"(?!\s+(?:[\w-]+\s+)?(?:is|are|was|were|has|have|will|can|cannot|may|might|must|should|do|does)\b)")
# The sentence opens with the verb ("Use the `--app` option", "To enable debug mode, use ..."), or
# says the reader can or must do it ("you can tell Celery to ...", not "you can easily validate a
# whole archive", which tells what a thing allows).
_INSTRUCTS = re.compile(
    r"^(?:(?:first|then|now|next|instead|alternatively|also|so|finally),?\s+)?(?:(?:to|if|when|once|after|before|for) \w[^,.]{0,80},\s*)?" + _DO
    + r"|\byou (?:can|could|should|need to|have to|must|may)\s+(?:(?:just|also|simply|then|instead)\s+)?" + _DO
    + r"|^(?:使用|用|调用|设置|添加|运行|导入|创建|安装|声明|定义|传入|传递|返回|注册|启用|配置|编写|覆盖|要)|你(?:可以|需要|应该|只需)",
    re.I)


def instructs(unit: Unit) -> bool:
    """Whether a sentence tells the reader what to do (see ``INSTRUCTION``)."""
    return unit.kind == "sentence" and not _is_question(unit) and bool(_INSTRUCTS.search(unit.text))


# An unknown identifier refuses a question when it holds this share of the
# question's idf mass (``unknown_identifier``).
IDENT_SHARE = 0.3


@dataclass(frozen=True)
class Unit:
    n: int  # the chunk's number in the prompt
    i: int  # position among the chunk's units
    text: str  # as matched: a table row reads "Header: value; ..."
    quote: str  # as quoted: a table row under its header row, a code block whole
    kind: str  # "sentence" | "row" | "code"
    steps: int | None = None  # the numbered list the unit is a step of (units of one list share it)
    item: tuple[int, int] | None = None  # the list item (block, item) a sentence is part of


_CELL_END = re.compile(r"(?<!\\)\|")
_EDGE_PIPES = re.compile(r"^\||(?<!\\)\|$")


def _table(lines: list[str]) -> list[tuple[str, str, str]]:
    # "\|" is a pipe inside a cell (`a \| b`), not a cell's end
    rows = [[c.strip() for c in _CELL_END.split(_EDGE_PIPES.sub("", line.strip()))] for line in lines]
    # The |---| line goes; an empty row is a header-less table's header (SQLite's spacer row: dropped as
    # a rule, "%d | | day of month" became every row's header, "%d: %j; day of month: 00: day of year").
    rows = [r for r in rows if not (any(r) and all(_RULE.fullmatch(c) for c in r if c))]
    if len(rows) < 2:
        return [(" ".join(rows[0]), lines[0].strip(), "row")] if rows else []
    header = rows[0]
    # a header-less table's row is quoted alone: an empty header row over it says nothing
    head = "| " + " | ".join(header) + " |\n|" + "---|" * len(header) + "\n" if any(header) else ""
    return [("; ".join(f"{h}: {v}" if h else v for h, v in zip(header, r)), f"{head}| " + " | ".join(r) + " |",
             "row") for r in rows[1:]]


def _block_units(block: str) -> tuple[list[tuple[str, str, str, int | None]], dict[int, int]]:
    """(matched text, quoted text, kind, list item) of a block's units; the
    item numbers the list items of the block (None: not in a list item).
    With them, the indent of each item's mark, by its number."""
    lines = block.split("\n")
    if lines[0].strip().startswith(("```", "~~~")):
        return [(block, block, "code", None)], {}
    if all(line.strip().startswith("|") for line in lines if line.strip()):
        return [(*row, None) for row in _table([line for line in lines if line.strip()])], {}
    items: list[list[str]] = []
    listed: list[bool] = []
    # A nested item belongs to the item above it: "* Generate a dict (using
    # `exclude_unset`)" and its "    * This way you can update only ..." are one thought.
    owner: list[int] = []
    marks: dict[int, int] = {}
    top: int | None = None  # the indent of the block's outermost items
    for line in lines:
        starts = bool(_LIST_ITEM.match(line))
        if starts or not items:
            indent = len(line) - len(line.lstrip())
            if starts:
                marks[len(items)] = indent
            nested = starts and top is not None and indent > top and any(listed)
            if starts and not nested:
                top = indent if top is None else min(top, indent)
            owner.append(max(i for i, x in enumerate(listed) if x and owner[i] == i) if nested else len(items))
            items.append([line.strip()])
            listed.append(starts)
        else:
            items[-1].append(line.strip())  # a soft-wrapped line continues its sentence
    out: list[tuple[str, str, str, int | None]] = []
    for k, item in enumerate(items):
        parts: list[str] = []
        for s in (s.strip() for s in _SENT.split(" ".join(item))):
            if s and parts and _ABBREV.search(parts[-1]) and not _ENUMERATOR.match(parts[-1]):
                parts[-1] = f"{parts[-1]} {s}"
            elif s:
                parts.append(s)
        for j, s in enumerate(parts):
            if j and _ENUMERATOR.match(parts[j - 1]):  # "1." of "1. Warranty periods" belongs to its heading
                s = f"{parts[j - 1]} {s}"
            if not _ENUMERATOR.match(s):
                s = _BULLET.sub("", s)
                out.append((s, s, "sentence", owner[k] if listed[k] else None))
    return out, marks


_FENCE_RUN = re.compile(r"(`{3,}|~{3,})(.*)")


def chunk_units(n: int, text: str) -> list[Unit]:
    blocks: list[str] = []
    current: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        if fence is None and not line.strip():
            if current:
                blocks.append("\n".join(current))
            current = []
            continue
        current.append(line)
        s = line.strip()
        run = _FENCE_RUN.match(s)
        if run:
            if fence is None:
                fence = run.group(1)
            elif run.group(1)[0] == fence[0] and len(run.group(1)) >= len(fence) and not run.group(2).strip():
                # A closing fence (as long as the opening one, with nothing after it: "```python" inside
                # "````" shows a fence, it closes none).  The text right after it is a block of its own,
                # not the code's: the rst reader writes the fence on the blank line after code ("```" then
                # "The particular order ..." in Python's graphlib page was quoted as code).
                blocks.append("\n".join(current))
                current = []
                fence = None
    if current:
        blocks.append("\n".join(current))
    # Steps: the units of numbered-list blocks, one list across the blank lines of a loose list.
    found: list[tuple[tuple[str, str, str, tuple[int, int] | None], int | None]] = []
    group: int | None = None
    # A paragraph indented under a list item is the item's, as Markdown reads it (code between,
    # which readers write at the margin, ends nothing): Flask's "- `MAX_CONTENT_LENGTH`: Don't
    # read more ..." and, a blank line below, "  Default: `None`".
    # The items open at each indent, outermost first: a paragraph belongs to the innermost item
    # whose mark lies left of it ("  The default setting for SQLITE_MAX_COLUMN ..." below a list of
    # "  - ..." is the outer item's, not the last of those).
    open_: list[tuple[int, tuple[int, int]]] = []
    group_indent = 0
    for b, block in enumerate(blocks):
        indent = len(block) - len(block.lstrip(" "))
        if not _ORDERED.match(block):  # a block that opens with a numbered item: its units are steps
            group = None
        elif group is None or _FIRST_STEP.match(block) and indent <= group_indent:
            # (a list numbered from 1 again deeper in is a step's own list: attrs' "2. For each
            # attribute ...:" and its "1. default factory", "2. converter", then "3. *all* validators")
            group, group_indent = b, indent
        units_, marks = _block_units(block)
        if units_ and units_[0][2] == "code":  # code ends no item (readers write it at the margin)
            found += [((t, q, k, None), group) for t, q, k, _ in units_]
            continue
        while open_ and open_[-1][0] >= indent:  # a block at or left of an item's mark closes it
            open_.pop()
        under = open_[-1][1] if open_ and indent else None
        for t, q, k, item in units_:
            if item is None:
                found.append(((t, q, k, under if k == "sentence" else None), group))
                continue
            if group is not None and k == "sentence" and marks.get(item, 0) > group_indent and _ORDERED.match(q):
                q = " " * (marks[item] - group_indent) + q  # a step's own list is quoted indented under it
            found.append(((t, q, k, (b, item)), group))
            if not open_ or open_[-1][1] != (b, item):
                mark = marks.get(item, 0)
                while open_ and open_[-1][0] >= mark:
                    open_.pop()
                open_.append((mark, (b, item)))
    kept = [(u, g) for u, g in found if len(u[0]) > 1]
    return [Unit(n, i, t, q, k, g if k == "sentence" else None, item)
            for i, ((t, q, k, item), g) in enumerate(kept)]


def units(text: str) -> list[str]:
    """A chunk's units as matched (sentences, header-labelled table rows, code blocks)."""
    return [u.text for u in chunk_units(0, text)]


@dataclass(frozen=True)
class Scored:
    unit: Unit
    score: float
    lexical: float  # before the cosine half
    terms: frozenset[str]  # question terms (weight 1) the unit or its heading holds
    defines: bool = False  # the question asks what X is or does, and the unit is the entry that defines X
    opens: bool = False  # the question asks what X is or does, and the unit opens the section X heads


@dataclass(frozen=True)
class Extract:
    text: str
    cited: list[int]
    scores: list[Scored]  # best first
    quoted: list[int]  # the chunk number of every quoted unit
    reason: str = ""


# Answer types: a "how long" question is answered by a unit with a duration,
# "how much" by an amount, "when" by a time or date.  A matching unit gets a
# bonus, which is what a reader does when skimming.
# (a count in words too: "kept for thirty days", "restores take an hour", "a few weeks")
_DURATION = (r"(?:\d+(?:\s*(?:-|–|to)\s*\d+)?|\b(?:an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
             r"|fifteen|twenty|thirty|forty|fifty|sixty|ninety|hundred|few|several|couple of))"
             r"\s*(?:business |working )?(?:minutes?|hours?|days?|weeks?|months?|years?)\b"
             r"|\d+\s*(?:天|年|个月|小时|个工作日)|দিন")
_ASKS_DURATION = re.compile(r"\bhow long\b|\bhow many (?:days|weeks|months|years|hours)\b|\buntil when\b|多久|多长|কত দিন",
                            re.I)
# "what is the maximum ...?", "what port ...?": a number is asked for ("which size?" asks for a choice)
_WHAT_NUMBER = (r"\bwhat(?:['’]s| is)?(?: the)?(?: default)? (?:number|size|limit|maximum|minimum|port)\b"
                r"|\bwhich(?: is)?(?: the)?(?: default)? port\b")
ANSWER_TYPES = [
    (_ASKS_DURATION, re.compile(_DURATION, re.I)),
    (re.compile(r"\bhow much\b|\bcost\b|\bprice\b|\bfee\b|\bcharge\b|多少钱|费用|কত টাকা", re.I),
     re.compile(r"[$€£¥]\s?\d|\d+(?:\.\d+)?\s*(?:元|dollars?|usd|eur|%|টাকা)", re.I)),
    # "when" asks for a time before a verb ("when does it run?") or opening the
    # question ("When's the sale?") but not a clause ("When I register a
    # handler, which class ..."); "what does it return when a field is
    # missing?" asks for something else.  Month
    # names are capitalised: "may" is a modal verb.
    (re.compile(r"\bwhen (?:do|does|did|is|are|was|were|will|would|can|could|should|shall|has|have|had)\b"
                r"|^\W*when(?:['’]s)?\b(?!\s+(?:i|you|we|they|he|she|it|a|an|the|my|your|our|this|that|there)\b)"
                r"|\b(?:until|since) when\b|\bwhat (?:time|date|day|year)\b|\bwhich (?:date|day|year)\b"
                r"|\bopening hours\b|几点|什么时候|何时", re.I),
     re.compile(r"\d{1,2}(?::\d\d)?\s*(?:a\.m\.|p\.m\.|am\b|pm\b)|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day|"
                r"(?-i:\b(?:January|February|March|April|May|June|July|August|September|October|November|December)\b)"
                r"|\b(?:1[89]|20)\d\d\b|\d{4}-\d\d-\d\d|\d+\s*年|\d+\s*月", re.I)),
    (re.compile(r"\bhow many\b|\bhow big\b|\bhow large\b|" + _WHAT_NUMBER + r"|多少|几个|多大", re.I),
     re.compile(r"\d")),
    # "where does it keep / store / look for files?" is answered by a path ("Linux: `~/.cache/black/...`"),
    # not by the sentence that says it keeps them.
    (re.compile(r"\bwhere\b.*\b(?:files?|director(?:y|ies)|folders?|paths?|stored?|stores|kept|keeps?|saved?|saves"
                r"|cached?|caches|logs?|config(?:uration)?s?|installed|located|lives?)\b"
                r"|(?:哪里|哪儿|在哪).*(?:文件|目录|路径|保存|存储|缓存|日志|配置)|(?:文件|目录|路径|缓存|日志|配置).*(?:哪里|哪儿|在哪)",
                re.I),
     re.compile(r"(?:^|[\s`'\"(])(?:~|\.{1,2}|[A-Za-z]:|\$\w+|%\w+%)?[/\\][\w.<>$%{}-]+")),
]


# "how many", "how long", "多少": the question asks for a quantity, and a
# passage with no number in it does not give one (it talks about the thing
# counted: "a maximum size limit", "the threadpool").  Topic words ("price",
# "cost") do not ask: "does the price match work on Black Friday?" is yes/no.
_ASKS_QUANTITY = re.compile(r"\bhow (?:many|much|long|big|large)\b|" + _WHAT_NUMBER
                            + r"|多少|几个|多大|多久|多长|কত"
                            # the same cues in the other languages of translated docs (a Japanese or Korean
                            # "how many" question the docs cannot answer was answered with a number-less quote)
                            # (not 얼마나 "how safe", cuanto/quanto "as for", ne kadar, or 何人 "who" in Chinese)
                            r"|いくつ|(?<![如为為任几幾奈])何(?:個|回|秒|分|件|枚|台|時間)|몇|얼마(?!나)|сколько|скільки"
                            r"|कितन[ेीा]|\bwie (?:viele?|lange|groß)\b|\bcu[aá]nt[oa]s\b|\bcombien\b|\bquant[oa]s\b"
                            r"|\bkaç\b", re.I)
_QUANTITY = re.compile(r"\d|[০-৯]|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|dozen"
                       r"|(?:thir|four|fif|six|seven|eigh|nine)teen|(?:twen|thir|for|fif|six|seven|eigh|nine)ty"
                       r"|hundred|thousand|million|billion|half|twice|double)\b"
                       # Chinese numerals (两年, 五十元) and Bengali number words (দুই বছর): 多少 and কত are asked too
                       r"|[〇零一二两兩三四五六七八九十百千万萬亿億半]|এক|দুই|তিন|চার|পাঁচ|সাত|আট|[ছন](?:য়|\u09df)|দশ|হাজার|লাখ|কোটি"
                       # (not articles, "ein", "une", "uma", "bir", which nearly every sentence holds, nor "bin",
                       # "cent", "dos", "on": English words that would pass an English quote)
                       r"|\b(?:од(?:ин|на|но)|дв[аеі]|три|чет[ыи]ре|чотири|пять|п['’ʼ]ять|шесть|шість|семь|сім|восемь"
                       r"|вісім|девять|дев['’ʼ]ять|десять|сто|тысяч\w*|тисяч\w*"
                       r"|eins|zwei|drei|vier|fünf|sechs|sieben|acht|neun|zehn|hundert|tausend|dos|tres|cuatro|cinco"
                       r"|seis|siete|ocho|nueve|diez|cien|deux|trois|quatre|cinq|sept|huit|neuf|dix|mille|dois|duas"
                       r"|três|quatro|sete|oito|nove|dez|cem|iki|üç|dört|beş|altı|yedi|sekiz|dokuz|yüz)\b", re.I)


# "how long does it take?" asks for a duration with "take" as much as with "how long".
_DURATION_VERBS = re.compile(r"\b(?:take|takes|took|last|lasts)\b", re.I)


def form_terms(question: str) -> frozenset[str]:
    """The question's terms that say what kind of answer it wants ("long" and
    "take" of "how long does it take?"), not what it is about: a second quote
    that only adds them ("a long ride can take 2 minutes") answers no part of
    the question."""
    # Chinese question words are terms of their own (bigrams; English's "what", "how" are stopwords):
    # "什么是 OpenAPI？" got a second quote for holding "什么".
    words = frozenset(t for w in _ZH_ASKING.findall(question) for t in analyzer.analyze(w))
    asked = _asked(question)
    if asked is None:
        return words
    q = asked[0]
    spans = [m.group(0) for m in q.finditer(question)]
    if q is _ASKS_DURATION:
        spans += _DURATION_VERBS.findall(question)
    return words | frozenset(analyzer.analyze(" ".join(spans)))


_ZH_ASKING = re.compile(r"为什么|為什麼|什么|什麼|如何|怎么|怎麼|怎样|怎樣|为何|為何|哪些|哪个|哪個|哪里|哪裡|是否")


def in_range(numbers: Sequence[float], text: str) -> bool:
    """Whether a range in ``text`` ("170-180", "5 to 10") holds one of ``numbers``."""
    return any(lo < hi and any(lo <= x <= hi for x in numbers)
               for lo, hi in ((float(a), float(b)) for a, b in _RANGE.findall(text)))


def _asked(question: str) -> tuple[re.Pattern, re.Pattern] | None:
    """The first of ``ANSWER_TYPES`` whose question pattern the question matches."""
    return next((t for t in ANSWER_TYPES if t[0].search(question)), None)


# A list item's number or a section's ("3. Tell Vim ...", "08.1 Split a window") counts nothing:
# "how many color schemes are there?" was answered by step 3 of a list.
_ENUMERATED = re.compile(r"^\s*(?:\d{1,3}[.)]|\d+(?:\.\d+)+)\s+")


def holds(kind: re.Pattern, text: str) -> bool:
    """Whether ``text`` holds an answer of ``kind`` (a duration, a number ...)."""
    return kind.search(_ENUMERATED.sub("", text, count=1)) is not None


def answer_type(question: str) -> re.Pattern | None:
    """The pattern an answering unit should hold, when the question asks for one."""
    asked = _asked(question)
    return None if asked is None else asked[1]


def variants(question: Sequence[str], context: Sequence[str], expansions: Sequence[Sequence[str]]
             ) -> list[dict[str, float]]:
    """Weighted term sets to match units against: the question's terms
    (weight 1) with the terms only the conversation adds at ``CONTEXT_WEIGHT``
    (they disambiguate, "and the deposit?" after an e-bike question, but must
    not pull the answer back to the last question), then each expansion."""
    base = dict.fromkeys(question, 1.0)
    for t in context:
        base.setdefault(t, CONTEXT_WEIGHT)
    out = [base]
    for ts in expansions:
        out.append({t: CONTEXT_WEIGHT if t in base and base[t] < 1 else 1.0 for t in ts})
    return out


def unknown_identifier(terms: Sequence[Sequence[str]], stats: Mapping[str, TermStat]) -> str | None:
    """An identifier the question names that no chunk in scope holds, when
    every searched query names one ("2FA" is unknown, but its expansion
    "two-factor authentication" is fine) and it is what the query asks about:
    at least ``IDENT_SHARE`` of its idf mass ("what does error E4099 mean?"
    0.56). A pasted traceback's "python3.12" (0.06 of its 35 terms) says
    where the asker's Python lives, not that the documents lack the answer."""
    def named(ts: Sequence[str]) -> list[str]:
        uniq = list(dict.fromkeys(ts))
        unknown = [t for t in uniq if analyzer.is_identifier(t) and not stats[t].in_scope]
        total = sum(stats[t].idf for t in uniq)
        return unknown if total and sum(stats[t].idf for t in unknown) >= IDENT_SHARE * total else []
    found = [named(ts) for ts in terms]
    return found[0][0] if found and all(found) else None


def unwritten_name(question: str, ctx: Context) -> str | None:
    """A code name the question writes ("trio_mode", "app.state", "--dry-run")
    that no shown chunk writes, when every one it writes is so: the analyzer
    splits "trio_mode" into two words the documents hold, so the unknown
    identifier check never saw it (pytest-asyncio's docs answered "How do I
    enable trio_mode in pytest-trio?" with a changelog line).  Names joined by
    "-" alone are English words as often ("server-sent") and do not count."""
    names = sorted(n for n in _names(question) if ("_" in n or "." in n.strip(".") or n.startswith("-"))
                   and not re.fullmatch(r"(?:\w\.)+\w?", n))  # ("e.g", "i.e": no names)
    if not names:
        return None
    shown = " ".join(" ".join((h.chunk.title, *h.chunk.headings, h.chunk.text)) for h in ctx.shown).casefold()
    # (a dotted name whose module the passages write is theirs: "unittest.TestCase" beside
    # "unittest.IsolatedAsyncioTestCase" and "the standard unittest library"; and a name a pattern
    # the passages write names is theirs: "PIP_NO_CACHE_DIR" beside pip's "PIP_<UPPER_LONG_NAME>")
    patterns = {m.group(1) for m in _PATTERN.finditer(shown)}
    written = [n for n in names if n in shown or "." in n and n.split(".")[0] + "." in shown
               or any(n.startswith(p) and len(n) > len(p) for p in patterns)]
    return names[0] if not written else None


# A name's pattern: its literal start, then a placeholder ("PIP_<UPPER_LONG_NAME>", "CELERY_{NAME}",
# "--no-*", "app.config[...]"); the start is one word at least, and ends where a name goes on.
_PATTERN = re.compile(r"(?<![\w-])((?:--?)?[a-z][\w.-]*[_.-])(?:<[^<>\s]+>|\{[^{}\s]+\}|\*|\[[^\[\]\s]+\])")


def score_units(question: str, weighted: Sequence[Mapping[str, float]], ctx: Context, stats: Mapping[str, TermStat],
                embed: Callable[[list[str]], np.ndarray] | None = None, question_vector: np.ndarray | None = None,
                embed_top: int = 10, cosine_scale: tuple[float, float] = (1.0, 0.0), earlier: str = "") -> list[Scored]:
    """Every unit of the shown chunks, best first (ties: the stronger chunk,
    then reading order); ``earlier``: the turn a follow-up joins (``asks_like``)."""
    totals = [(v, sum(stats[t].idf * w for t, w in v.items()) or 1.0) for v in weighted if v]
    main = frozenset(t for v in weighted[:1] for t, w in v.items() if w >= 1.0)
    kind = answer_type(question)  # once per question, not once per unit
    numbers = [float(x) for x in _NUMBER.findall(question)]
    defining = asks_definition(asks_like(question, earlier))
    written = _names(question) | {w.casefold() for w in _WORD.findall(question)}
    # A section cut into several chunks opens in its first one shown, not in the middle.
    starts: dict[tuple, int] = {}
    for h in ctx.shown:
        section = (h.chunk.source, h.chunk.headings)
        starts[section] = min(starts.get(section, h.chunk.start), h.chunk.start)
    cands: list[Scored] = []
    for n, h in enumerate(ctx.shown, 1):
        heading = set(analyzer.analyze(" ".join((h.chunk.title, *h.chunk.headings))))
        # A section whose own heading writes the name the question writes is about that name
        # ("What is the default for task_serializer?" and "Default: "json"." under `task_serializer`):
        # its heading's words count as fully as the unit's own, not half.
        titled = bool(h.chunk.headings and written & _heading_names(h.chunk.headings[-1]))
        half = 1.0 if titled else 0.5
        units_ = chunk_units(n, h.chunk.text)
        analyzed = [set(analyzer.analyze(u.text)) for u in units_]
        # A list item's words are its sentences' context, as a heading's are: "Defaults to `600`."
        # is max_age's default only beside "`max_age` - Sets a maximum time ...".
        items: dict[tuple[int, int], set[str]] = {}
        for u, words in zip(units_, analyzed):
            if u.item is not None:
                items.setdefault(u.item, set()).update(words)
        # ... and of code between two of its paragraphs (Git's "- Automatically bisect a broken test
        # case:", its script, and "Here we use a test.sh custom script."): the sentences around the
        # script held the item's words and the script, which a how-to question asks for, did not.
        within = [_within(units_, k) for k in range(len(units_))]
        # ... and a label's words are the context of the code it names, as a heading's are: pip's
        # "MacOS:" over `~/Library/Caches/pip`, one of three tabs whose code alone says no system.
        labels = [analyzed[k - 1] if u.kind == "code" and k and _is_label(units_[k - 1]) else set()
                  for k, u in enumerate(units_)]
        opening = h.chunk.start == starts[(h.chunk.source, h.chunk.headings)]
        first = min((u.i for u in units_), default=None) if opening else None
        for u, words, item, label in zip(units_, analyzed, within, labels):
            near = (heading | items[item] if item is not None else heading) | label
            lex = max((sum(stats[t].idf * w * (1.0 if t in words else half if t in near else 0.0)
                           for t, w in v.items()) / total for v, total in totals), default=0.0)
            if kind is not None and holds(kind, u.text):
                lex += TYPE_BONUS
            if numbers and in_range(numbers, u.text):
                lex += TYPE_BONUS
            cands.append(Scored(u, lex, lex, frozenset(t for t in main if t in words or t in near),
                                defining and _defines(u, main - heading, question),
                                defining and titled and u.i == first))
    cands.sort(key=lambda s: (-s.score, -s.unit.n, s.unit.i))
    if embed is None or not cands:
        return cands
    top = cands[:embed_top]
    if question_vector is None:
        vecs = embed([question] + [s.unit.text for s in top])
        question_vector, vecs = vecs[0], vecs[1:]
    else:
        vecs = embed([s.unit.text for s in top])
    cos = on_scale(vecs @ question_vector, cosine_scale)
    mixed = [Scored(s.unit, 0.5 * s.lexical + 0.5 * max(float(c), 0.0), s.lexical, s.terms, s.defines, s.opens)
             for s, c in zip(top, cos)]
    # A unit left unembedded counts cosine 0, so every score is on one scale
    # (left at its bare lexical score, it outranked the embedded units).
    rest = [Scored(s.unit, 0.5 * s.lexical, s.lexical, s.terms, s.defines, s.opens) for s in cands[embed_top:]]
    mixed.sort(key=lambda s: (-s.score, -s.unit.n, s.unit.i))
    return sorted(mixed + rest, key=lambda s: (-s.score, -s.unit.n, s.unit.i))


def _within(units_: Sequence[Unit], k: int) -> tuple[int, int] | None:
    """The list item unit k is part of: its own, or for code, the item of the
    units on both sides of it when they share one."""
    u = units_[k]
    if u.item is not None or u.kind != "code":
        return u.item
    before = next((v.item for v in reversed(units_[:k]) if v.kind != "code"), None)
    after = next((v.item for v in units_[k + 1:] if v.kind != "code"), None)
    return before if before is not None and before == after else None


def _window(best: Scored, scored: list[Scored], limit: int) -> list[Unit]:
    """Up to ``limit`` consecutive units of the best unit's chunk around it, of
    its kind but for one; a neighbour joins when it is about the question too
    (``NEIGHBOUR``), and a unit that ends in ":" brings what it introduces (the
    command after "use the command:")."""
    chunk = {s.unit.i: s for s in scored if s.unit.n == best.unit.n}
    same = {i: s for i, s in chunk.items() if s.unit.kind == best.unit.kind}
    # Every row of a table holds its header's words; a row joins for words of its own.
    header = _header_words(best.unit)
    # A sentence of a list item brings the rest of its item first: "`allow_methods`
    # - A list of HTTP methods ... Defaults to `['GET']`." is one thought, and the
    # items beside it are other parameters (they may still join after it, as any
    # neighbour about the question does).
    item = best.unit.item
    lo = hi = best.unit.i

    def aside(j: int) -> bool:
        """Unit j opens an admonition ("Warning: ...", "Note: ..."): a quote
        never runs into one from the text before it, nor back out of one (the
        sentence ending "that you want:" went on "Warning: When you return a
        `Response` ...", where the docs had a code block citebot cannot show)."""
        return j in chunk and chunk[j].unit.kind == "sentence" and bool(ASIDE.match(chunk[j].unit.text))

    def opening(j: int) -> int:
        """The first unit of the list item unit j is part of (j when it is in none)."""
        while same[j].unit.item is not None and j - 1 in same and same[j - 1].unit.item == same[j].unit.item:
            j -= 1
        return j

    def joins(j: int) -> bool:
        if not same[j].lexical >= NEIGHBOUR * best.lexical > 0:
            return False
        # An entry opens its term's definition: what comes before it, or opens another entry
        # ("-u <key-id>: ..."), is about another term.
        if best.defines and (j < best.unit.i or _ENTRY.match(same[j].unit.text)):
            return False
        if header and not _own_terms(same[j]):
            return False
        # A unit of another list item joins before the quote only with the rest of its item, from its
        # first unit: Black's "And if the code has a syntax error?" began "- The response body contains
        # the blackened Python code, ...", the tail of the HTTP 200 item, which then read as the 400's.
        if j < lo and same[j].unit.item not in (None, item) and hi - opening(j) + 1 > limit:
            return False
        # A sentence of another list item (another parameter) joins only for a question term the quote
        # lacks: "Defaults to `[]`." of expose_headers read as max_age's default beside "Defaults to `600`".
        if item is not None and same[j].unit.item != item:
            return bool(_own_terms(same[j]) - set().union(*(set(same[i].terms) for i in range(lo, hi + 1))))
        return True
    while hi - lo + 1 < limit and best.unit.kind != "code":
        near = [j for j in (lo - 1, hi + 1) if j in same and not aside(max(j, lo))]
        nxt = [j for j in near if item is not None and same[j].unit.item == item] or [j for j in near if joins(j)]
        if not nxt:
            break
        j = max(nxt, key=lambda j: same[j].lexical)
        lo, hi = min(lo, opening(j) if j < lo and same[j].unit.item not in (None, item) else j), max(hi, j)
    quote = [same[j].unit for j in range(lo, hi + 1)]
    # A sentence cut by the code it runs into ("... in the defining scope, so that" + the example +
    # "will print 5.") brings the code as one ending in ":" does.
    unfinished = (quote[-1].kind == "sentence" and not quote[-1].text.rstrip().endswith(_ENDS)
                  and hi + 1 in chunk and chunk[hi + 1].unit.kind == "code")
    if (quote[-1].text.rstrip().endswith((":", "：")) or unfinished) and hi + 1 in chunk and not aside(hi + 1):
        introduced = chunk[hi + 1].unit
        if len(quote) < limit or introduced.kind != "sentence":
            quote.append(introduced)
        elif quote[0] != best.unit:  # a fourth sentence: room is made at the end far from what is introduced
            quote = [*quote[1:], introduced]
        elif quote[-1] != best.unit:  # an introduction whose sentence would be one too many stays out
            quote.pop()
    # One neighbour of another kind may join when it is about the question too:
    # the sentence that says what a code block does, the code a sentence introduces.
    # A table row joins for question words of its own, not its header's or the heading's (a
    # "| CRITICAL | A serious error |" row opened the answer to "what is the default level?").
    other = [j for j in (quote[0].i - 1, quote[-1].i + 1) if j in chunk and chunk[j].unit.kind != best.unit.kind
             and chunk[j].lexical >= NEIGHBOUR * best.lexical > 0 and not aside(max(j, quote[0].i))
             and _own_terms(chunk[j])
             and not (best.defines and j < quote[0].i)]  # nothing before an entry, of any kind
    if other and len(quote) < limit:
        j = max(other, key=lambda j: chunk[j].lexical)
        quote = [chunk[j].unit, *quote] if j < quote[0].i else [*quote, chunk[j].unit]
    return quote


_ENDS = (".", "!", "?", ":", ";", "。", "！", "？", "：", "；", "।", "…", '"', "”", "'", "’", ")")


def _own_terms(s: Scored) -> set[str]:
    """The question terms a unit's own text holds, beyond a row's header row: ``terms`` counts the
    heading's too (every row under "## Pricing tiers" held "pricing", and a table's label "positional
    arguments" under "borg mount" joined the row below it), and every row holds its header's words."""
    return set(s.terms) & set(analyzer.analyze(s.unit.text)) - _header_words(s.unit)


def _header_words(u: Unit) -> set[str]:
    """The words of a row's header row; none for a header-less row, which is quoted alone (its
    first line is the row itself), or for another unit."""
    if u.kind != "row" or "\n" not in u.quote:
        return set()
    return set(analyzer.analyze(u.quote.split("\n")[0]))


def _labelled_code(quote: list[Unit], scored: list[Scored], limit: int) -> list[Unit]:
    """The quote, and a label right after it with the code it names ("6. Install a project from VCS
    in "editable" mode." / "Unix/macOS:" / its command, a tab's): the quote said what to do and
    ended without the command that does it.  The label counts as no unit of ``limit``."""
    chunk = {s.unit.i: s.unit for s in scored if s.unit.n == quote[-1].n}
    label, code = chunk.get(quote[-1].i + 1), chunk.get(quote[-1].i + 2)
    if label is None or code is None or code.kind != "code" or not _is_label(label) or quote[-1].kind == "code" \
            or len(quote) + 1 > limit:
        return quote
    return [*quote, label, code]


def _is_label(unit: Unit) -> bool:
    """A label of the code after it: a sentence of four words at most ending in ":" ("Windows:")."""
    return unit.kind == "sentence" and len(unit.text.split()) <= 4 and unit.text.rstrip().endswith((":", "："))


def _steps(best: Scored, scored: list[Scored]) -> list[Unit] | None:
    """Every step of the numbered list ``best`` is a step of, in order, when
    there are at most ``MAX_STEPS`` (a longer list is a reference, not a procedure)."""
    if best.unit.steps is None:
        return None
    steps = sorted((s.unit for s in scored if s.unit.n == best.unit.n and s.unit.steps == best.unit.steps),
                   key=lambda u: u.i)
    return steps if 1 < len(steps) <= MAX_STEPS else None


def _introduced_steps(best: Unit, quote: list[Unit], scored: list[Scored], steps: bool) -> list[Unit]:
    """A how-to question answered by the sentence that introduces a procedure
    ("To replace the toner cartridge:", the unit just before the first step)
    gets every step after it, not the one or two the window had room for
    (steps 3-5 of 5 were left out, unsaid)."""
    first = next((u for u in quote if u.steps is not None), None) if steps else None
    if first is None or best.steps is not None or first.i != best.i + 1:
        return quote
    whole = _steps(next(s for s in scored if s.unit == first), scored)
    return [u for u in quote if u.i < first.i and u.steps is None] + whole if whole else quote


def _render(quote: list[Unit]) -> str:
    """Sentences in quotation marks (a list's steps a line each); rows under
    their header; code whole."""
    n = quote[0].n
    parts: list[tuple[str, str]] = []
    # Items of a bulleted list quoted together are a line each ("`lt`: less than `le`: less than or
    # equal" ran two parameters into one sentence); one item alone reads as a sentence.
    listed = len({u.item for u in quote if u.kind == "sentence" and u.item is not None and u.steps is None}) > 1
    for j, u in enumerate(quote):
        bullet = listed and u.item is not None and u.steps is None and (j == 0 or quote[j - 1].item != u.item)
        after_list = listed and u.item is None and j > 0 and quote[j - 1].item is not None
        # A numbered item keeps its number and gets no bullet before it.
        shown = "- " + u.quote if bullet and not _ORDERED.match(u.quote) else u.quote
        if u.kind == "sentence" and parts and parts[-1][0] == "sentence":
            # A new step starts a line; a step's second sentence continues it.
            step = u.steps is not None and u.steps == quote[j - 1].steps and bool(_ORDERED.match(u.quote))
            parts[-1] = ("sentence", parts[-1][1] + ("\n" if step or bullet or after_list else " ") + shown)
        elif u.kind == "row" and parts and parts[-1][0] == "row":
            parts[-1] = ("row", parts[-1][1] + "\n" + u.quote.split("\n")[-1])
        else:
            parts.append((u.kind, shown))
    text = "\n".join(f"“{t}”" if k == "sentence" else t for k, t in parts)
    return text + (f"\n[{n}]" if parts[-1][0] == "code" else f" [{n}]")


# "What is the default of X?": the line of X's entry that gives it ("Default: `None`",
# "Defaults to `600`."), which a config reference writes last, after what X does.
_ASKS_DEFAULT = re.compile(r"\bdefault(?:s|ed)?\b|默认|預設|默認", re.I)
_GIVES_DEFAULT = re.compile(r"^(?:[-*+]\s+)?(?:Default(?:s| value)?\b|By default\b)|\bdefaults? (?:to|is|value is)\b"
                            r"|\bthe default (?:value of |for )?`[^`]+` is\b"  # "The default `env_prefix` is `''`"
                            r"|默认|預設|默認", re.I)


def _is_question(unit: Unit) -> bool:
    """Whether a unit is a sentence that asks (a question the page itself poses)."""
    return unit.kind == "sentence" and unit.text.rstrip().endswith(("?", "？"))


# "Which command-line option sets the mode?": answered by the sentence that writes the option
# ("The value can also be set via the `--asyncio-mode` command-line option:"), not its neighbour on
# what the option does ("... the command-line option takes precedence.").
_ASKS_OPTION = re.compile(r"\b(?:which|what)(?:['’]s| is| are)?(?: the)? (?:[\w-]+ ){0,2}(?:options?|flags?|switch(?:es)?)\b",
                          re.I)
_OPTION_WRITTEN = re.compile(r"(?:^|[\s`'\"(])--?[A-Za-z][\w-]*")


def asks_option(question: str) -> bool:
    """Whether the question asks which option or flag does something."""
    return bool(_ASKS_OPTION.search(question))


def asks_default(question: str) -> bool:
    """Whether the question asks what something defaults to."""
    return bool(_ASKS_DEFAULT.search(question))


def asks_quantity(question: str) -> bool:
    """Whether the question asks for a number (its answer must hold one)."""
    return bool(_ASKS_QUANTITY.search(question))


# "what does X do?", "what is X?": the entry that defines X answers it ("pop [<stash>]: Remove a
# single stashed state ...", "-f, --force: Replace an existing tag"), not a sentence that repeats X
# ("Unlike pop, <stash> may be any commit ...", "So just use git tag -f again").
_ASKS_DEFINITION = re.compile(r"^\W*(?:what(?:['’]s| is| are| does| do)\b|explain\b|define\b)"
                              r"|是什么|什么是|做什么|有什么用|的作用", re.I)
# An entry: a short head (a term, an option, a signature) before ": " or " - ", not a sentence.
_ENTRY = re.compile(r"^(?:[-*+]\s+)?((?:[^.!?。:]|\.(?=\w)){1,80}?)(?::\s|\s[-–—]\s)")  # "asyncio.wait_for(...)"
_WORD = re.compile(r"(?<![\w-])-{0,2}\w+")  # a word or an option as written ("-f", "--force")
_ROW_HEAD = re.compile(r"^\|\s*((?:[^|\\]|\\.)*?)\s*\|")


def _names(text: str) -> set[str]:
    """The names ``text`` writes (an option, words joined by "_", "-" or "."), casefolded."""
    return {n.casefold() for n in analyzer.NAME.findall(text)}


_CODE_HEADING = re.compile(r"`([^`\s]+)`")


def _heading_names(heading: str) -> set[str]:
    """The names a heading writes: those ``_names`` finds, and the heading
    itself when it is one word written as code (Sphinx's `timezone` setting)."""
    whole = _CODE_HEADING.fullmatch(heading.strip())
    return _names(heading) | ({whole.group(1).casefold()} if whole else set())


# A follow-up that asks nothing of its own: "And SESSION_COOKIE_SECURE?", "what about Fish?", "那 Y 呢？"
_FRAGMENT = re.compile(r"^\W*(?:and|or|also|then|what about|how about)\b(?!.*\b(?:what|how|why|when|where|which|who|"
                       r"is|are|does|do|can|should)\b)|^\W*那.{0,40}呢\W*$", re.I)


def asks_like(question: str, earlier: str) -> str:
    """The question whose form a turn takes: the earlier one for a follow-up
    that asks nothing of its own ("And SESSION_COOKIE_SECURE?" after "What is
    the default value of SESSION_COOKIE_HTTPONLY?" asks for a default too)."""
    return earlier if earlier and _FRAGMENT.search(question) else question


def asks_definition(question: str) -> bool:
    return bool(_ASKS_DEFINITION.search(question))


def _defines(unit: Unit, asked: frozenset[str], question: str) -> bool:
    """Whether ``unit`` is an entry whose head names one of ``asked``: the
    question's terms that its chunk's title and headings do not hold (every
    entry under "git-stash(1)" names "stash").  A one-letter term names it
    only as written: "-F <file>" is not "-f", which the analyzer folds alike.
    A question that writes a name (an option, words joined by "_", "-" or
    ".") asks about that name: the head must write it ("BORG_PASSPHRASE:",
    not "BORG_DISPLAY_PASSPHRASE:", which the analyzer splits into the same
    words).  A table row's head is its first cell ("| --keep-within INTERVAL
    | keep all archives within this time interval |"), an entry only when it
    writes such a name: every row under "Severity" names "Sev", and "Sev 3"
    is no answer to "Sev 2"."""
    if unit.kind == "row":
        m = _ROW_HEAD.match(unit.quote.rsplit("\n", 1)[-1])
    else:
        m = _ENTRY.match(unit.text)
    if m is None:
        return False
    head = m.group(1)
    named = asked & set(analyzer.analyze(head))
    if not (any(len(t) > 1 for t in named) or named and set(_WORD.findall(head)) & set(_WORD.findall(question))):
        return False
    written = _names(question)
    if written or unit.kind == "row":
        # "what does borg check --repair do?" is not BORG_CHECK_I_KNOW_WHAT_I_AM_DOING's entry
        return bool(written & _names(head))
    return True


def asks_code(question: str) -> bool:
    """Whether the question asks for code (a command, an example) or for steps."""
    return bool(_ASKS_CODE.search(question)) or asks_steps(question)


# "In what order do converters, validators and __attrs_post_init__ run?" is answered by a numbered list
# (not "what order number ...": a shop's orders are no sequence)
_ASKS_ORDER = re.compile(r"\bin (?:what|which) (?:order|sequence)\b|\b(?:what|which) order (?:do|does|are|is|should|must"
                         r"|will|did)\b|\bwhat(?:['’]s| is) the order\b|顺序|次序", re.I)


def asks_order(question: str) -> bool:
    """Whether the question asks in what order things happen (its answer: a numbered list)."""
    return bool(_ASKS_ORDER.search(question))


def asks_steps(question: str) -> bool:
    """Whether the question asks how to do something (its answer: a whole procedure)."""
    return bool(_PROCEDURE.search(question))


def compose(scored: list[Scored], min_score: float, max_units: int = 3, kind: re.Pattern | None = None,
            idf: Mapping[str, float] | None = None, strongest: int | None = None, steps: bool = False,
            form: frozenset[str] = frozenset(), quantity: bool = False, code: bool = True,
            focus: frozenset[str] = frozenset(), langs: Mapping[int, str] | None = None,
            default: bool = False, option: bool = False, order: bool = False,
            answers: Mapping[int, int] | None = None) -> Extract:
    """The quotes; ``kind`` is what an answer must hold (a duration for "how
    long"): a unit holding it leads when it scores within ``LEAD`` of the
    best (a table row only when it holds the best unit's question terms too); ``idf`` weighs the question's terms (a second quote must add
    ``PART`` of their mass); ``strongest``: the number of the strongest chunk
    shown (the last), whose units get ``TOP_CHUNK`` when the lead is chosen;
    ``steps``: the question asks for a procedure (``asks_steps``); ``form``:
    the question's answer-kind terms (``form_terms``), no part of the question
    for a second quote to add; ``quantity``: the question asks for a number
    (``asks_quantity``), so a lead quote without one is a refusal; ``code``
    false: the question asks for no code (``asks_code``), so a sentence or row
    within ``LEAD`` of a code block leads instead of it; ``focus``: the words a
    follow-up adds to the conversation (``Engine._focus``); ``default``: the
    question asks what something defaults to (``asks_default``), so the unit of
    the lead's list item that gives a default leads instead, its quote running
    back into the item; ``option``: the question asks which option or flag
    (``asks_option``), so a unit that writes one ("--asyncio-mode") counts
    ``INSTRUCTION`` more as the lead is chosen; ``order``: the question asks
    in what order (``asks_order``), so a step of a numbered list counts
    ``INSTRUCTION`` more and the lead quote is its whole list; ``answers``:
    a shown chunk's number to the number of the shown chunk that answers it
    (``answer_sections``), whose opening leads in its place.
    Every threshold (``min_score``, ``LEAD``, ``SECOND``) reads the units' own
    scores: the bonus picks among units, it never lets a weaker one through."""
    if not scored:
        return Extract(REFUSAL, [], [], [], reason="no sentences")
    top = scored[0]
    if top.score < min_score:
        return Extract(REFUSAL, [], scored, [], reason=f"no sentence matches well enough "
                                                      f"(best {top.score:.2f} < min_answer_score {min_score})")

    def chosen(s: Scored) -> float:
        return (s.score + (TOP_CHUNK if s.unit.n == strongest else 0.0)
                + (INSTRUCTION if steps and instructs(s.unit) else 0.0)
                + (INSTRUCTION if option and _OPTION_WRITTEN.search(s.unit.text) else 0.0)
                + (INSTRUCTION if order and s.unit.steps is not None else 0.0))
    ranked = sorted(scored, key=lambda s: (-chosen(s), -s.unit.n, s.unit.i))
    best = next(s for s in ranked if s.score >= min_score)
    if _is_question(best.unit):
        # A question the page asks is no answer to it: a unit near the best that asks nothing leads
        # (Flask's "What happens if you want to modify the response at a point where the response
        # does not exist yet?" was the quote for how to modify one request's response).
        best = next((s for s in ranked if s.score >= LEAD * best.score and s.score >= min_score
                     and not _is_question(s.unit)), best)
    asked = None
    if answers and best.unit.n in answers:
        # A FAQ's question (or a problem page's symptom) is what a question written like it matches
        # best; the section headed "Answer" below it answers it (Click's "I decorated a function ...
        # it exits" was the quote, and the "Answer" chunk shown beside it was not).
        asked = best.unit.n
        best = min((s for s in scored if s.unit.n == answers[asked]), key=lambda s: s.unit.i, default=best)
    if focus and not best.terms & focus:
        # A follow-up asks for what it adds ("and fastapi run?" after "fastapi dev"): in the
        # chunk chosen, a unit that holds none of its new words answers the last question again.
        # (Only in that chunk: "how much does it cost?" is not answered by another table's "cost".)
        best = next((s for s in ranked if s.unit.n == best.unit.n and s.score >= LEAD * best.score
                     and s.terms & focus and (code or s.unit.kind != "code")), best)
    if not best.defines:  # what X is or does: the entry that defines X leads when it is near the best
        best = next((s for s in ranked if s.defines and s.score >= LEAD * best.score), best)
    if not best.defines:
        # ... and else the section X heads, from its start ("Default: "json"." under `task_serializer`,
        # whose own sentences the cosine ranks low), when some unit of it is near the best.  After the
        # entry: a chunk that starts inside X's entry is headed by X too ("Changed in version 3.10: ...",
        # the rest of asyncio.wait_for's entry), and the entry is where X is defined.  Its strength is
        # weighed as the lead is: the strongest chunk's with TOP_CHUNK (Black's section headed
        # `-C, --skip-magic-trailing-comma`, fused first, lost to blackd's header that names the flag).
        strength = {n: max(chosen(s) for s in ranked if s.unit.n == n) for n in {s.unit.n for s in ranked if s.opens}}
        best = next((s for s in ranked if s.opens and s.score >= min_score
                     and strength[s.unit.n] >= LEAD * best.score), best)
    if kind is not None and not holds(kind, best.unit.text):
        # A table row must also hold every question term the best unit holds:
        # rows differ by what their first cells name, and the Canada row's
        # price does not answer "shipping to China", whose row says none.
        typed = [s for s in ranked if s.score >= LEAD * best.score and holds(kind, s.unit.text)
                 and (s.unit.kind != "row" or s.terms >= best.terms)]
        # One that holds every question term the best unit holds comes first: "how long is the
        # warranty on a tent?" was answered by a repair's "90 days", not "Tents are covered for 5 years".
        best = next((s for s in typed if s.terms >= best.terms), typed[0] if typed else best)
    if not code and best.unit.kind == "code":
        best = next((s for s in ranked if s.unit.kind != "code" and s.score >= LEAD * best.score
                     and (kind is None or holds(kind, s.unit.text) or not holds(kind, best.unit.text))), best)
    if default and best.unit.item is not None and not _GIVES_DEFAULT.search(best.unit.text):
        # Flask's "- `MAX_CONTENT_LENGTH`: Don't read more than this many bytes ... Default: `None`":
        # the entry led and its three sentences ended before the one that answers.
        best = next((s for s in scored if s.unit.n == best.unit.n and s.unit.item == best.unit.item
                     and s.unit.kind == "sentence" and _GIVES_DEFAULT.search(s.unit.text)), best)
    elif default and not _GIVES_DEFAULT.search(best.unit.text):
        # ... and outside a list, the lead's chunk's line that gives one, when it scores near the lead:
        # pytest-asyncio's event_loop section led from its start, and its quote ended one sentence
        # before "The fixture scope defaults to `function` scope.", the best unit of all.
        # ... else another chunk's, when it scores as well as the lead on its own: pydantic-settings'
        # "Note: The default `env_prefix` is `''`" lost to env_prefix_target's "(the default behavior)"
        # in the strongest chunk by that chunk's TOP_CHUNK alone.
        best = next((s for s in ranked if s.unit.n == best.unit.n and s.unit.kind == "sentence"
                     and s.score >= LEAD * best.score and _GIVES_DEFAULT.search(s.unit.text)),
                    next((s for s in scored if s.unit.kind == "sentence" and s.score >= best.score
                          and _GIVES_DEFAULT.search(s.unit.text)), best))
    quotes = [_labelled_code(((steps or order) and _steps(best, scored))
                             or _introduced_steps(best.unit, _window(best, scored, max_units), scored, steps),
                             scored, max_units)]
    if quantity and not any(holds(_QUANTITY, u.text) for u in quotes[0]):
        return Extract(REFUSAL, [], scored, [], reason="the question asks for a number and the passage that "
                                                       "matches it best gives none")
    covered = set().union(*(s.terms for s in scored if s.unit in quotes[0])) | form
    mass = idf or {}
    total = sum(mass.get(t, 1.0) for t in set().union(*(s.terms for s in scored)) - form) or 1.0

    def adds(s: Scored) -> bool:
        return sum(mass.get(t, 1.0) for t in s.terms - covered) >= PART * total
    # ``langs``: each shown chunk's language; a second quote is in the lead's (an English question
    # over pages without English got a Korean quote and then a Chinese one).
    second = next((s for s in ranked if s.unit.n not in (best.unit.n, asked) and s.score >= SECOND * best.score and adds(s)
                   and (langs is None or langs.get(s.unit.n) == langs.get(best.unit.n))), None)
    if second is not None:
        quotes.append((steps and _steps(second, scored)) or _window(second, scored, max_units))
    quoted = [u.n for q in quotes for u in q]
    return Extract("\n".join(_render(q) for q in quotes), list(dict.fromkeys(q[0].n for q in quotes)), scored, quoted)


def extractive(question: str, terms: Sequence[Sequence[str]], ctx: Context, stats: Mapping[str, TermStat],
               weighted: Sequence[Mapping[str, float]] | None = None,
               embed: Callable[[list[str]], np.ndarray] | None = None, question_vector: np.ndarray | None = None,
               min_score: float = 0.35, max_sentences: int = 3, embed_top: int = 10) -> Extract:
    """``terms``: each searched query's analyzed terms; ``weighted``: the
    term weights to score units by (default: each query alone, weight 1);
    ``stats``: idf and whether the asker's scope holds each term
    (``Retrieval.stats``); ``question_vector``: the question's embedding
    when retrieval made one (else ``embed`` makes it)."""
    ident = unknown_identifier(terms, stats)
    if ident is not None:
        return Extract(REFUSAL, [], [], [], reason=f"the question names {ident!r}, which no document contains")
    weighted = weighted if weighted is not None else [dict.fromkeys(ts, 1.0) for ts in terms]
    scored = score_units(question, weighted, ctx, stats, embed, question_vector, embed_top)
    return quote_answer(question, scored, min_score, max_sentences, {t: stats[t].idf for ts in terms for t in ts},
                        strongest=len(ctx.shown), langs=chunk_langs(ctx), answers=answer_sections(ctx))


def chunk_langs(ctx: Context) -> dict[int, str]:
    """Each shown chunk's language by its number in the prompt (``compose``'s ``langs``)."""
    return {n: h.chunk.lang for n, h in enumerate(ctx.shown, 1)}


_ANSWER_HEADING = re.compile(r"^\W*(?:answers?|solutions?|fix(?:es)?|workarounds?|resolution|回答|答案|解决(?:方法|方案|办法)?)\W*$",
                             re.I)


def answer_sections(ctx: Context) -> dict[int, int]:
    """Each shown chunk's number to the number of the shown chunk that
    answers it: the first shown chunk of a section headed "Answer" ("Solution",
    "Fix" ...) right under the chunk's own heading, in the same page (a FAQ's
    question and its answer)."""
    out: dict[int, int] = {}
    for n, h in enumerate(ctx.shown, 1):
        path = tuple(h.chunk.headings)
        found = [(k.chunk.start, m) for m, k in enumerate(ctx.shown, 1)
                 if k.chunk.source == h.chunk.source and len(k.chunk.headings) == len(path) + 1
                 and tuple(k.chunk.headings[:-1]) == path and _ANSWER_HEADING.match(k.chunk.headings[-1])]
        if found:
            out[n] = min(found)[1]
    return out


def quote_answer(question: str, scored: list[Scored], min_score: float, max_units: int,
                 idf: Mapping[str, float], strongest: int | None, focus: frozenset[str] = frozenset(),
                 langs: Mapping[int, str] | None = None, earlier: str = "",
                 answers: Mapping[int, int] | None = None) -> Extract:
    """:func:`compose` with what the question itself says: the kind of answer
    it wants, whether it asks for steps, code or a quantity, and its answer-kind words."""
    return compose(scored, min_score, max_units, answer_type(question), idf, strongest=strongest,
                   steps=asks_steps(question), form=form_terms(question), quantity=asks_quantity(question),
                   code=asks_code(question), focus=focus, langs=langs,
                   default=asks_default(asks_like(question, earlier)), option=asks_option(question),
                   order=asks_order(question), answers=answers)

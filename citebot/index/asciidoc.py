"""AsciiDoc read as the Markdown it renders like, one line for one line (so
citations keep pointing at the source lines), for the Markdown reader.

Git's manual pages and many projects' docs are AsciiDoc, often named ``.txt``:
read as plain text, a ``----`` listing's one-line command became a heading and
left the text, ``-n::`` terms ended one chunk with their meaning in the next,
and quotes read "see linkgit:git-config[1]".

* titles: ``== Options`` and two-line ``Options`` / ``-------`` (``=``, ``-``,
  ``~``, ``^``, ``+`` for levels 1-5) -> ``## Options``
* delimited blocks: ``----`` listing and ``....`` literal -> a code fence
  (``[source,sh]`` above one names its language); a comment block ``////``
  and ``//`` lines -> dropped; other delimiters (``====``, ``****``,
  ``____``, ``--``, ``++++``) -> dropped, their text read as any
  other (a listing inside an example block too)
* tables ``|===`` -> a pipe table, each row on the line it starts on (a cell
  may go on over lines; ``2+|`` spans columns); the header from
  ``options="header"`` (``%header``) or a first line alone above a blank one
* a literal paragraph (indented, after a blank line, outside a list) -> code
* definition lists: ``-n::`` ``--dry-run::`` then the meaning -> one item,
  ``- -n, --dry-run: Don't actually remove anything ...``; a ``+`` line that
  attaches the next block -> dropped
* ``[NOTE]`` over a paragraph or block -> "Note: ..." (``NOTE: text`` reads so already);
  other block attribute lines, ``:attribute: value``, ``include::``,
  ``ifdef::``/``endif::`` -> dropped; ``.Title`` over a block -> "Title:"
* lists: ``*``/``**`` and ``.``/``..`` items -> Markdown items, nested
* inline: ``linkgit:git-config[1]`` -> ``git-config(1)``, ``link:url[text]``
  and ``url[text]`` -> text, ``<<id,text>>`` -> text, ``{litdd}`` -> ``--``,
  ``'git clean'`` (old-style emphasis) -> git clean, a hard break's `` +`` -> dropped
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from citebot.index import rst

SUFFIXES = (".adoc", ".asciidoc", ".asc")

_UNDERLINE = {"=": 1, "-": 2, "~": 3, "^": 4, "+": 5}
_UNDER = re.compile(r"^([=\-~^+])\1+\s*$")
_ATX = re.compile(r"^(={1,6})\s+(\S.*?)(?:\s+=+)?\s*$")
_DELIMITER = re.compile(r"^(-{4,}|\.{4,}|/{4,}|={4,}|\*{4,}|_{4,}|\+{4,}|--|\|={3,})\s*$")
_ANCHOR = re.compile(r"^\[\[[^\[\]]*\]\]")  # "[[def_branch]]" before a term or on its own line
_COMMENT_LINE = re.compile(r"^//(?!/)")
_ATTRIBUTE_ENTRY = re.compile(r"^:!?[\w-]+!?:(?:\s.*)?$")
_DIRECTIVE = re.compile(r"^(?:include|ifdef|ifndef|ifeval|endif|toc)::.*\]\s*$")
_BLOCK_ATTRIBUTES = re.compile(r"^\[(?:[^\[\]]|\[[^\]]*\])*\]\s*$")
_ADMONITION_STYLE = re.compile(r"^\[(NOTE|TIP|IMPORTANT|WARNING|CAUTION)\]\s*$")
_SOURCE_STYLE = re.compile(r"^\[(?:source|listing)(?:,\s*([\w+#.-]+))?[^\]]*\]\s*$")
_BLOCK_TITLE = re.compile(r"^\.([^\s.].*)$")
_DLIST = re.compile(r"^(\S.*?)(?<!:)(:{2,4}|;;)(?:\s+(.*))?$")
_LIST = re.compile(r"^\s*(\*{1,5}|-|\.{1,5})\s+(\S.*)$")
_CONTINUATION = re.compile(r"^\+\s*$")
_INLINE: list[tuple[re.Pattern, str | Callable[[re.Match], str]]] = [
    (re.compile(r"\b(?:link|xref):([^\s\[]+)\[([^\]]*)\]"), lambda m: m.group(2) or m.group(1)),
    (re.compile(r"\b((?:https?|ftp)://[^\s\[]+)\[([^\]]*)\]"), lambda m: m.group(2) or m.group(1)),
    (re.compile(r"<<[^,>]+,\s*([^>]+)>>"), r"\1"),
    (re.compile(r"<<([^,>]+)>>"), r"\1"),
    (re.compile(r"\b(?:kbd|btn|menu):\[([^\]]*)\]"), r"\1"),
    (re.compile(r"\bfootnote:\[([^\]]*)\]"), r" (\1)"),
    (re.compile(r"\{litdd\}"), "--"),
    (re.compile(r"\{nbsp\}"), " "),
    (re.compile(r"\{(?:empty|zwsp)\}"), ""),
    (re.compile(r"linkgit:([\w.-]+)\[(\d+)\]"), r"\1(\2)"),  # after {litdd}: linkgit:git-web{litdd}browse[1]
    (re.compile(r"`\+(.+?)\+`"), r"`\1`"),  # a literal passthrough in a code span
    (re.compile(r"(?<![\w'`])'([^'\s`](?:[^'`]*?[^'\s`])?)'(?![\w'])"), r"\1"),  # old-style 'emphasis'
    (re.compile(r"\s\+$"), ""),  # a hard line break
]


_MACRO = re.compile(r"\b(?:linkgit|link|xref|image|include|ifdef|ifndef|endif):{1,2}\S*\[")
_LISTING = re.compile(r"^(?:-{4,}|\.{4,})\s*$")


def _code(delimiter: str) -> bool:
    """Listing ``----`` and literal ``....`` blocks hold code; an open block ``--`` does not."""
    return delimiter[0] in "-." and len(delimiter) >= 4


def looks_like(lines: Sequence[str]) -> bool:
    """Whether a ``.txt`` file is AsciiDoc: two kinds of its markup at least
    (definition-list terms, macros such as ``linkgit:`` or ``include::``,
    block attribute lines, delimited listings, ``= Title``), one of them a
    macro, an attribute line or the title, which plain text, a Vim help file
    or reStructuredText does not write), or two lines with macros."""
    kinds = set()
    terms = macros = 0
    for i, line in enumerate(lines[:3000]):
        if _DLIST.match(line) and line.rstrip().endswith(("::", ";;")) and not line.startswith((" ", "\t")):
            terms += 1
        if _MACRO.search(line):
            kinds.add("macro")
            macros += 1
        if _ADMONITION_STYLE.match(line) or _SOURCE_STYLE.match(line) or line.strip() in ("[verse]", "[literal]"):
            kinds.add("attributes")
        if _LISTING.match(line) and (i == 0 or not lines[i - 1].strip()):
            kinds.add("delimited")
        if _ATX.match(line) and (i == 0 or line.startswith("==")):  # "= Title" first, "=== Emacs"
            kinds.add("title")
        if _ANCHOR.match(line):
            kinds.add("attributes")
    if terms >= 2:
        kinds.add("terms")
    # (reStructuredText has "::" and rules too: one kind at least is AsciiDoc's alone)
    # (a page of Git's that writes nothing but "linkgit:" macros is AsciiDoc too)
    return len(kinds) >= 2 and bool(kinds & {"macro", "attributes", "title"}) or macros >= 2


def _inline(text: str) -> str:
    for pattern, repl in _INLINE:
        text = pattern.sub(repl, text)
    return text


def _title_underline(lines: Sequence[str], i: int) -> int | None:
    """The level of a two-line title whose text is line i (its underline is
    line i + 1, as long as the text give or take one) and that opens a block
    (a paragraph's last line over an example block's "====" is no title)."""
    if i + 1 >= len(lines) or i and lines[i - 1].strip() and not _ANCHOR.match(lines[i - 1]) \
            and not _BLOCK_ATTRIBUTES.match(lines[i - 1].strip()):
        return None
    text, under = lines[i].rstrip(), lines[i + 1].rstrip()
    m = _UNDER.match(under)
    if not m or not text or text[0] in " \t[.*+/" or _DELIMITER.match(text) or _DLIST.match(text):
        return None
    return _UNDERLINE[m.group(1)] if abs(len(text) - len(under)) <= 1 and len(under) >= 2 else None


_TABLE = re.compile(r"^\|={3,}\s*$")
_PIPE = re.compile(r"(?<!\\)\|")
# A cell's specifier before its "|": a span ("2+"), a repeat ("3*"), alignment ("^", ".>"), a style ("a").
_SPEC = r"(?:\d+\*)?(?:\d*(?:\.\d+)?\+)?[<^>]?(?:\.[<^>])?[aehlmsdv]?"
_CELL_SPEC = re.compile(_SPEC)  # a line's text before its first "|", all of it
_NEXT_SPEC = re.compile(rf"\s{_SPEC}$")  # the end of a cell that is the next cell's: after whitespace only
_COLS = re.compile(r"""\bcols\s*=\s*(?:"([^"]*)"|'([^']*)'|([^,\]\s]+))""")
_HEADER = re.compile(r"%header\b|\boptions\s*=\s*\"?[\w,\s]*\bheader\b")
_NO_HEADER = re.compile(r"%noheader\b|\boptions\s*=\s*\"?[\w,\s]*\bnoheader\b")
_OTHER_FORMAT = re.compile(r"\b(?:format|separator)\s*=")  # csv, dsv, tsv or another separator than "|"


def _columns(attrs: str, first: int) -> int:
    """How many columns a table has: its ``cols`` ("3", "1,2,3", "1;2",
    "3*", "2*,1"), else the cells of its first line."""
    m = _COLS.search(attrs)
    spec = next((g for g in m.groups() if g), "") if m else ""
    if not spec:
        return max(first, 1)
    if spec.strip().isdigit():  # "cols=3": three columns
        return max(int(spec), 1)
    parts = re.split(r"[,;]", spec)
    return max(sum(int(r.group(1)) if (r := re.match(r"\s*(\d+)\*", part)) else 1 for part in parts), 1)


def _table(lines: Sequence[str], i: int, attrs: str, room: bool) -> tuple[list[str], int] | None:
    """The ``|===`` table at line i, under its attribute lines ``attrs``, as
    Markdown lines (one for each of its lines: each row on the line it starts
    on, header from ``options="header"`` or a first line alone above a blank
    one), and the line after it; ``room``: the line above is blank as read,
    and the table may take it (one more line in the result).  None: read as
    text, as before (unclosed, CSV, two rows on one line)."""
    close = next((k for k in range(i + 1, len(lines)) if lines[k].rstrip() == lines[i].rstrip()), None)
    if close is None or _OTHER_FORMAT.search(attrs):
        return None  # read as text, as before
    body = [(k - i, lines[k].rstrip()) for k in range(i + 1, close)]
    content = [(k, x) for k, x in body if x.strip()]
    first = len(_PIPE.split(content[0][1])) - 1 if content else 0
    cols = _columns(attrs, first)
    cells: list[tuple[int, str]] = []  # (the line it starts on, its text)
    for k, line in content:
        pieces = _PIPE.split(line)
        spec = pieces[0].strip()
        if len(pieces) == 1 or not _CELL_SPEC.fullmatch(spec):
            if cells:  # a cell's text goes on over lines
                at, text = cells[-1]
                cells[-1] = (at, f"{text} {pieces[0].strip()}".strip())
            spec = ""
        for n, piece in enumerate(pieces[1:], 2):
            after = _NEXT_SPEC.search(piece) if n < len(pieces) else None  # the next cell's specifier
            text = piece[:after.start()] if after and after.group().strip() else piece
            cells.append((k, text.strip().replace("\\|", "|")))
            span = re.match(r"(\d+)\+", spec)  # "2+|": one cell across two columns (".2+" spans rows)
            cells.extend([(k, "")] * (int(span.group(1)) - 1 if span else 0))
            spec = after.group().strip() if after else ""
    rows = [[_inline(t) for _, t in cells[r:r + cols]] for r in range(0, len(cells), cols)]
    starts = [cells[r][0] for r in range(0, len(cells), cols)]
    if len(set(starts)) < len(starts):  # two rows on one line: no line for each
        return None
    implicit = bool(content) and first == cols and content[0][0] + 1 < close - i and not lines[i + content[0][0] + 1].strip()
    head = 1 if len(rows) > 1 and not _NO_HEADER.search(attrs) and (_HEADER.search(attrs) or implicit) else 0
    taken = close - i + 1
    if head and starts[1] - 1 == starts[0]:
        starts[0] = 0  # no line between header and rows for the rule: the header goes on the "|===" line
    if not head and starts and starts[0] < 2 and room:
        # A table without a header gets an empty one and its rule: on the line above "|===" (a blank or
        # attribute line) and on "|===", so each row keeps its own line.
        table = rst.table_lines(rows, [k + 1 for k in starts], 0, taken + 1)
    else:
        table = rst.table_lines(rows, starts, head, taken)
    return None if table is None else (table, close + 1)


def to_markdown(lines: Sequence[str]) -> list[str]:
    """The Markdown lines an AsciiDoc file reads as, one for each of its lines."""
    out: list[str] = []
    block: str | None = None  # the open delimiter
    note: str | None = None  # an admonition style waiting for its text
    lang = ""  # a [source,lang] waiting for its listing
    terms: list[str] = []  # definition terms waiting for their meaning
    in_item = False  # inside a list item or a definition's meaning (indented lines are its text)
    prev_blank = True
    i = 0
    while i < len(lines):
        raw = lines[i]
        line = raw.rstrip()
        if block is not None:  # inside a delimited block
            if line == block:
                out.append("```" if _code(block) else "")
                block = None
            else:
                out.append(raw if _code(block) else "")  # a listing's lines as written; a comment's none
            i += 1
            prev_blank = False
            continue
        if _ANCHOR.match(line):  # an anchor says nothing; what follows it on the line is read
            raw = line = _ANCHOR.sub("", line).strip()
        if not line:
            out.append("")
            if terms:  # a term whose meaning is a later block: say it alone
                out[-1] = f"- {', '.join(terms)}:"
                terms = []
            i += 1
            prev_blank = True
            in_item = in_item and i < len(lines) and lines[i][:1] in (" ", "\t", "+")
            continue
        level = _title_underline(lines, i)
        if level is not None:
            out += [f"{'#' * level} {_inline(line)}", ""]
            i += 2
            in_item, prev_blank = False, True
            continue
        if _TABLE.match(line):
            attrs = " ".join(x.strip() for x in lines[max(0, i - 3):i] if _BLOCK_ATTRIBUTES.match(x.strip()))
            read = _table(lines, i, attrs, room=bool(out) and not out[-1].strip())
            if read is not None:  # (else read as text, as before)
                table, after = read
                if len(table) > after - i:  # it takes the blank line above too
                    out.pop()
                out.extend(table)
                i, prev_blank = after, True
                continue
        if _DELIMITER.match(line):
            # Only a listing or a comment holds its lines; an example, sidebar, quote or open block
            # is text like any other, a listing inside it too ([NOTE] over "====" says "Note:").
            if _code(line) or line[0] == "/":
                block = line
                out.append(f"```{lang}" if _code(block) else "")
                lang = ""
            else:
                out.append("")
            i += 1
            prev_blank = True
            continue
        if _COMMENT_LINE.match(line) or _ATTRIBUTE_ENTRY.match(line) or _DIRECTIVE.match(line) \
                or _CONTINUATION.match(line):
            out.append("")
            i += 1
            continue
        if _BLOCK_ATTRIBUTES.match(line):
            a, s = _ADMONITION_STYLE.match(line), _SOURCE_STYLE.match(line)
            note = a.group(1) if a else note
            lang = (s.group(1) or "") if s else lang
            out.append("")
            i += 1
            continue
        t = _BLOCK_TITLE.match(line)
        if t and not line.startswith(".."):
            title = _inline(t.group(1).strip())
            out.append(title if title.endswith((":", ".", "?", "!")) else f"{title}:")
            i += 1
            prev_blank = True  # what follows is a block of its own
            continue
        atx = _ATX.match(line)
        if atx:
            out.append(f"{'#' * len(atx.group(1))} {_inline(atx.group(2))}")
            i += 1
            in_item, prev_blank = False, False
            continue
        dl = _DLIST.match(line) if not raw[:1].isspace() else None
        if dl and not _LIST.match(line):
            term, meaning = _inline(dl.group(1).strip()), dl.group(3)
            if meaning:
                out.append(f"- {', '.join([*terms, term])}: {_inline(meaning.strip())}")
                terms = []
            else:
                out.append("")  # the term is said with the meaning it waits for
                terms.append(term)
            in_item, prev_blank = True, False
            i += 1
            continue
        lst = _LIST.match(line)
        if lst:
            mark, text = lst.group(1), _inline(lst.group(2))
            depth = len(mark) - 1 if mark[0] in "*." else 0
            bullet = "1." if mark[0] == "." else "-"
            out.append(f"{'  ' * depth}{bullet} {text}")
            in_item, prev_blank = True, False
            i += 1
            continue
        text = _inline(line.strip())
        if terms:  # the meaning of the terms above
            out.append(f"- {', '.join(terms)}: {text}")
            terms = []
            in_item = True
        elif raw[:1].isspace() and not in_item and (prev_blank or out[-1].startswith("    ")):
            out.append("    " + raw.expandtabs(8))  # a literal paragraph: code, its drawing's indents kept
        else:
            if note:
                text = f"{note.title()}: {text}"
                note = None
            out.append(f"  {text}" if in_item else text)
        prev_blank = False
        i += 1
    return out

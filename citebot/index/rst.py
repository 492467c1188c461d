"""reStructuredText read as the Markdown it renders like, one line for one
line (so citations keep pointing at the source lines), for the Markdown reader.

Most Python projects write their manuals in it (Sphinx): read as plain text,
a section's underline was text, ``.. code-block::`` bodies were sentences,
``:class:`~celery.Celery``` read with its role and a ``.. note::`` lost its label.

* titles: a line under (and over) a rule of one punctuation character; levels
  go by the order the styles first appear, as docutils numbers them
* ``para::`` and ``.. code-block:: lang`` (``code``, ``sourcecode``, doctest
  blocks ``>>>``) -> a code fence on the blank line before the indented body
  and after it (indented code where text follows with no blank line);
  ``para::`` reads "para:"; doctest flags go, a ``:caption:`` names the code
* admonitions (``note``, ``warning``, ``seealso`` ... ``admonition:: Title``,
  ``versionadded:: 2.0``) -> "Note: ..." before their first text
* Sphinx object descriptions (``.. function:: sig``, ``.. attribute::``,
  ``.. option::``, any ``domain:kind``), definition lists, and an item that
  is a name alone over its description -> one item, ``- sig: meaning``
  ("class `logging.Handler`", as Sphinx shows it); field lists ``:param x:
  ...`` -> ``- param x: ...``; a definition holding definitions nests them
* grid, simple, ``list-table`` and ``csv-table`` tables -> a pipe table,
  each grid or simple row on the line it starts on (rule rows between, which
  the chunker does not keep as text); a row of one cell across a grid table
  labels the rows below it
* dropped: comments and targets (``.. _label:``, ``.. |sub| image::``),
  ``toctree``, ``contents``, ``image``, ``include``, autodoc's docstrings
  (the body written under ``autofunction::`` reads as a ``function::``'s),
  ``only:: latex`` and other directives whose text lives elsewhere, a
  directive's ``:option:`` lines and transitions; any other directive's body
  is read as text, and its argument when it says something
* bullets ``*``, ``-``, ``+`` and numbers ``1.``, ``#.``, ``(a)`` -> Markdown
  items, nested by indent, numbered as docutils numbers them; line blocks
  ``| text`` -> text; footnotes keep all their lines
* inline: ````code```` -> ```code```; ``:role:`text <target>``` -> text
  (a code role's target, ``~`` for its last part, in backticks);
  ``:ref:`label``` and ``:doc:`page``` -> the title they name (``titles``);
  ```text <url>`_`` -> text; ``|name|`` -> its ``replace::``; footnote
  references ``[1]_`` -> dropped; ```text``` (the default role, mostly a
  name) stays a code span; a role a line end cuts in two loses its markup
"""
from __future__ import annotations

import contextlib
import csv
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from posixpath import basename, dirname, join, normpath, splitext
from types import MappingProxyType

SUFFIXES = (".rst", ".rest")

_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}\s*$")  # three or more of one punctuation character ("::" is none)
_DIRECTIVE = re.compile(r"^(\s*)\.\.\s+([\w.+-]+(?::[\w.+-]+)*)::(?:\s+(.*?))?\s*$")
_EXPLICIT = re.compile(r"^(\s*)\.\.(?:\s|$)")  # a comment, target, footnote or substitution
_FOOTNOTE = re.compile(r"^\s*\.\.\s+\[([^\]|]+)\](?:\s+(.*))?$")
_OPTION = re.compile(r"^\s*:[\w.-]+:(?:\s.*)?$")  # a directive's ":linenos:" line
_FIELD = re.compile(r"^(\s*):((?:[^:`\\]|\\.)+):(?:\s+(.*?))?\s*$")
_ITEM = re.compile(r"^(\s*)([-*+•]|\d+[.)]|#[.)]|\(\d+\)|[a-zA-Z][.)]|\([a-zA-Z]\))\s+(\S.*)$")
_OPTION_LIST = re.compile(r"^(-{1,2}[\w?][\w-]*(?:[ =][<\w][\w<>-]*)?(?:,\s+-{1,2}[\w?][\w-]*(?:[ =][<\w][\w<>-]*)?)*)"
                          r"\s{2,}(\S.*)$")
_GRID_BORDER = re.compile(r"^\s*\+(?:[-=]+\+)+\s*$")
_SIMPLE_BORDER = re.compile(r"^\s*=+(?:\s+=+)+\s*$")
_SIMPLE_RULE = re.compile(r"^\s*-+(?:\s+-+)*\s*$")  # a column span's underline inside a simple table
_LINE_BLOCK = re.compile(r"^\s*\|(?:\s+(.*))?$")

_ADMONITIONS = {"note": "Note", "warning": "Warning", "tip": "Tip", "important": "Important", "caution": "Caution",
                "attention": "Attention", "danger": "Danger", "hint": "Hint", "error": "Error", "seealso": "See also",
                "todo": "Todo", "availability": "Availability"}  # (Python's docs: "Availability: Unix, not WASI.")
_VERSIONS = {"versionadded": "New in version", "versionchanged": "Changed in version",
             "deprecated": "Deprecated since version", "versionremoved": "Removed in version",
             "deprecated-removed": "Deprecated since version"}
_CODE = {"code-block", "code", "sourcecode", "doctest", "testcode", "testoutput", "parsed-literal", "productionlist",
         "prompt", "highlight-code", "code-tab"}  # (sphinx-tabs' "code-tab:: toml": one tab's code)
# Text that lives elsewhere (another file, the code's docstrings) or is never shown as text.
_DROPPED = {"toctree", "contents", "include", "image", "raw", "meta", "index", "highlight",
            "currentmodule", "module", "default-role", "role", "sectionauthor", "moduleauthor", "codeauthor", "rst-class",
            "tabularcolumns", "testsetup", "testcleanup", "inheritance-diagram", "graphviz", "digraph", "graph",
            "autosummary", "program", "title", "target-notes", "footer", "header", "sectnum"}
# Sphinx's descriptions of a thing, read as "- `signature`: what it does".
_OBJECTS = {"function", "class", "method", "staticmethod", "classmethod", "attribute", "property", "data",
            "exception", "decorator", "decoratormethod", "option", "cmdoption", "envvar", "describe", "object",
            "confval", "type", "member", "macro", "var", "enum", "enumerator", "struct", "union", "directive",
            "get", "post", "put", "patch", "delete", "head",
            "coroutinefunction", "coroutinemethod", "awaitablefunction", "awaitablemethod", "abstractmethod"}
# ... and a tab's or a dropdown's label ("group-tab:: Bash" over the command for Bash)
_TITLED = {"topic", "sidebar", "rubric", "centered", "table", "tab", "group-tab", "tab-item", "dropdown"}
_PLAIN_ROLES = {"ref", "doc", "term", "abbr", "guilabel", "menuselection", "math", "sup", "sub", "emphasis",
                "strong", "title-reference", "t", "numref", "download", "pypi", "manpage", "kbd", "sha", "dfn",
                "pep", "rfc", "github", "issue", "pr", "keyword", "index"}

_DOCTEST_FLAG = re.compile(r"\s*#\s*doctest:.*$")
_ESCAPED = re.compile(r"\\(.)")
_LITERAL_ROLES = {"program", "command", "file", "samp", "code", "kbd", "makevar", "regexp", "mimetype"}
KNOWN_ROLES = _PLAIN_ROLES | _LITERAL_ROLES
_ROLE = re.compile(r":(?:[\w-]+:)*([\w-]+):`((?:[^`\\]|\\.)+)`")
_LITERAL = re.compile(r"``(.+?)``(?!`)")
_REFERENCE = re.compile(r"`((?:[^`\\]|\\.)+?)`__?(?![\w])")  # `text <url>`_ and `text`_
_FOOTNOTE_REF = re.compile(r"\s?\[(?:\d+|#[\w-]*|\*|[A-Za-z][\w.-]*)\]_(?![\w])")
_SUBSTITUTION = re.compile(r"(?<![\w|])\|([^|\s](?:[^|]*[^|\s])?)\|(?:__?)?(?![\w|])")
_WORD_REFERENCE = re.compile(r"\b([A-Za-z][\w-]*?)__?(?=[\s.,;:!?)]|$)")  # "see screenshots_:", "formatter_class_"
# The two halves of "`MySQL - The InnoDB /" + "Transaction Model`_" or ":ref:`Canvas /" + "<guide-canvas>`":
# the closing half is a backtick after text, with the link's target before it and "_" after it.
_CUT_CLOSE = re.compile(r"^([^`<]*?)\s*(?:<[^<>`]*>)?(?<![\s:])`(?:__?)?(?=[^`]*$)")
_CUT_OPEN = re.compile(r"(?:(?<=\s)|^)(?::[\w:-]+:)?`(?=[^`]*$)")
_TARGET = re.compile(r"\s*<([^<>]+)>$")
# the default role's cross-reference, "`documented on a separate page <api-attr>`": its text shows
_INTERPRETED = re.compile(r"(?<![`\w])`([^`<>]*[^`<>\s])\s+<[^<>`]+>`(?![`_\w])")
# ... and "`~marshmallow.Schema.dump`" shows its last name, as a role's does ("`dump`")
_SHORTENED = re.compile(r"(?<![`\w])`~(?:[\w.]*\.)?(\w+(?:\(\))?)`(?![`_\w])")
_RELATIVE = re.compile(r"(?<![`\w])`\.(\w[\w.]*(?:\(\))?)`(?![`_\w])")  # "`.Column.copy`": "`Column.copy`"
_INLINE_TARGET = re.compile(r"_`([^`]+)`")


# Markdown lines a label cannot open: code, an item, a table, a heading, indented code
_BLOCK_LINE = re.compile(r"^(?:```|\s*(?:[-*+]|\d+[.)])\s|\||#|    )")
# An item that is a name alone ("- ``gzip``", "* :setting:`broker_url`"), whose description follows
# indented after a blank line: read as one item, "- `gzip`: gzip is suitable ...", or a chunk could
# end on the name and the next begin with what it names.
_LABEL = re.compile(r"^(?:``[^`]+``|:[\w:-]+:`[^`]+`|\*\*[^*]+\*\*|`[^`]+`_?)[:.]?$")
_GENERATED = re.compile(r"^\s*[-*+]\s+:ref:`(?:genindex|modindex|py-modindex|search)`\s*$")
_ITEM_LINE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")


def _width(text: str) -> int:
    """Columns a title takes: a wide (Chinese) character is two, as its underline writes it."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def role(name: str, content: str) -> str:
    """What a role (``:doc:`text <target>```, MyST's ``{doc}`target```) shows."""
    target = _TARGET.search(content)
    # "text <target>": the text is what shows; a literal role's "<task_id>" is a placeholder it shows
    if target and content[:target.start()].strip() and name not in _LITERAL_ROLES:
        return content[:target.start()].strip()
    content = content.lstrip("!")
    if name in ("ref", "doc"):  # Sphinx writes the title of the section or page it names
        key = (content.lower() if name == "ref" else content[1:] if content.startswith("/")
               else normpath(join(dirname(_DOC.get()), content)))  # a page is named from the page naming it
        return _TITLES.get().get(f"{name}:{key}", content)
    # A role's text is unescaped as docutils does ("C:\\ProgramData" shows one backslash), and
    # :file:'s and :samp:'s braces mark the variable part, not text ("{file}`$HOME/{name}.ini`").
    content = _ESCAPED.sub(r"\1", re.sub(r"(?<!\\)[{}]", "", content) if name in ("file", "samp") else content)
    if name in _PLAIN_ROLES:
        # a superscript reads as HTML's <sup> does, "^1": "compatible^1", not the word "compatible1"
        return (f"PEP {content}" if name == "pep" else f"RFC {content}" if name == "rfc"
                else f"^{content}" if name == "sup" else content)
    if content.startswith("~"):  # ~celery.app.Celery shows "Celery"
        content = content[1:].rsplit(".", 1)[-1]
    elif content.startswith(".") and name not in _LITERAL_ROLES:
        # a name searched from the current module ("`.Column.copy`") shows without its dot, as Sphinx
        # shows it (alembic's 297 such references read ".command.current.check_heads")
        content = content.lstrip(".")
    return f"`{re.sub(r'^@-?', '', content)}`"  # Celery's "~@Retry" (its app) shows "Retry"


def _reference(m: re.Match) -> str:
    content = m.group(1)
    target = _TARGET.search(content)
    return content[:target.start()].strip() if target and content[:target.start()].strip() else content


def inline(text: str) -> str:
    """A line's inline markup as it renders; a ````literal```` is kept as written."""
    parts = _LITERAL.split(text)
    out = "".join(f"`{part}`" if k % 2 else _text(part) for k, part in enumerate(parts))
    # a literal a line end cuts in two ("the comment ``#" / "pragma: exclude file``."): each half
    # is marked as one, so the joined lines read "`# pragma: exclude file`"
    return out.replace("``", "`") if sum(p.count("``") for p in parts[::2]) == 1 else out


def _text(part: str) -> str:
    roles = [role(m.group(1), m.group(2)) for m in _ROLE.finditer(part)]  # kept out of the rules below
    s = _ROLE.sub("\x00", part)
    s = _INLINE_TARGET.sub(r"\1", s)
    s = _REFERENCE.sub(_reference, s)
    s = _RELATIVE.sub(r"`\1`", _SHORTENED.sub(r"`\1`", _INTERPRETED.sub(r"\1", s)))
    s = _FOOTNOTE_REF.sub("", s)
    s = _SUBSTITUTION.sub(lambda m: _SUBS.get().get(m.group(1), m.group(1)), s)
    s = _WORD_REFERENCE.sub(r"\1", s)
    if s.count("`") % 2:  # a role or link that a line end cuts in two: its markup goes, its text stays
        s = _CUT_CLOSE.sub(r"\1", s, count=1) if _CUT_CLOSE.search(s) else _CUT_OPEN.sub("", s, count=1)
    s = _ESCAPED.sub(r"\1", s.replace("\\ ", ""))
    pieces = s.split("\x00")
    return "".join(p + r for p, r in zip(pieces, [*roles, ""]))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _blank(line: str) -> bool:
    return not line.strip()


def _body_end(lines: Sequence[str], start: int, base: int) -> int:
    """The end of the block indented deeper than ``base`` from ``start`` on
    (blank lines inside it are its; those after its last line are not)."""
    j = start
    last = start
    while j < len(lines) and (_blank(lines[j]) or _indent(lines[j].expandtabs(8)) > base):
        if not _blank(lines[j]):
            last = j + 1
        j += 1
    return last


def _dedent(lines: Sequence[str]) -> list[str]:
    lines = [x.expandtabs(8) for x in lines]
    least = min((_indent(x) for x in lines if x.strip()), default=0)
    return [x[least:].rstrip() for x in lines]


class _Page:
    """What a page's readers share: the title styles in the order they
    appeared, (character, overlined), and the module its descriptions are in."""

    def __init__(self) -> None:
        self.styles: list[tuple[str, bool]] = []
        self.module = ""


class _Reader:
    """Converts lines in place in ``out`` (one output line per input line); a
    directive's body is read by a reader of its own over its dedented lines."""

    def __init__(self, page: _Page) -> None:
        self.page = page
        self.styles = page.styles

    def level(self, char: str, over: bool) -> int:
        if (char, over) not in self.styles:
            self.styles.append((char, over))
        return min(self.styles.index((char, over)) + 1, 6)

    def title(self, lines: Sequence[str], i: int) -> tuple[int, str, int] | None:
        """(level, text, lines taken) of a title at line i, overlined or not."""
        line = lines[i].rstrip()
        if i and not _blank(lines[i - 1]):
            return None
        m = _ADORNMENT.match(line)
        if m and i + 2 < len(lines):  # overline, text, underline
            text, under = lines[i + 1].strip(), lines[i + 2].rstrip()
            if text and under == line and not _ADORNMENT.match(text) and len(line) >= _width(text):
                return self.level(m.group(1), True), text, 3
        if m or _blank(line) or line[:1].isspace() or i + 1 >= len(lines):
            return None
        u = _ADORNMENT.match(lines[i + 1].rstrip())
        if u is None:
            return None
        under = lines[i + 1].rstrip()
        if len(under) < _width(line) and len(under) < 4:  # "a - b" over "--" is no title
            return None
        return self.level(u.group(1), False), line.strip(), 2

    def read(self, lines: Sequence[str]) -> list[str]:
        out: list[str] = []
        n = len(lines)
        items: list[int] = []  # the indents of the open list items, outermost first
        literal = False  # the paragraph before ended in "::": an indented block after it is code
        para_indent = 0  # the indent of the paragraph or block being read
        item_indent: int | None = None  # the indent of the list item, field or option being read
        after_definition = -1  # the line after the last definition or title read
        numbers: dict[int, int] = {}  # the last number of the "#." list at each indent
        i = 0

        def text_line(raw: str) -> str:
            text = inline(raw.strip())
            if text.startswith("#"):  # rst's "# of retries" is text, never a Markdown heading
                text = "\\" + text
            depth = len([x for x in items if x <= _indent(raw.expandtabs(8))])  # an item's own paragraphs too
            return ("  " * depth + text) if depth and not text.startswith("- ") else text

        while i < n:
            raw = lines[i]
            line = raw.rstrip()
            ind = _indent(raw.expandtabs(8))
            if _blank(line) or _GENERATED.match(line):
                # (Sphinx's quickstart "Indices and tables", "* :ref:`genindex`" ..., names pages
                # Sphinx builds from the code: alembic's was a chunk, "- genindex - modindex - search")
                out.append("")
                i += 1
                continue
            if literal and out and _blank(lines[i - 1]) and ind > para_indent:
                literal = False
                i = _fence(lines, i, _body_end(lines, i, para_indent), "", out)
                continue
            literal = False
            while items and ind < items[-1]:
                items.pop()
            t = self.title(lines, i)
            if t is not None:
                level, text, taken = t
                out.append(f"{'#' * level} {inline(text)}")
                out.extend([""] * (taken - 1))
                items.clear()
                numbers.clear()
                i = after_definition = i + taken  # a field list may follow with no blank line between
                continue
            if _ADORNMENT.match(line) and len(line.strip()) >= 4 and (i == 0 or _blank(lines[i - 1])):
                out.append("")  # a transition
                i += 1
                continue
            d = _DIRECTIVE.match(line)
            if d:
                i = self.directive(lines, i, d, out)
                continue
            if _EXPLICIT.match(line):
                end = _body_end(lines, i + 1, ind)
                f = _FOOTNOTE.match(line)
                if f:  # a footnote's text, all of it: "[*] The chapter is ..." and the lines under it
                    out.append(f"[{f.group(1)}] {inline(f.group(2) or '')}".rstrip())  # ".. [1]" alone: text below
                    out.extend(_Reader(self.page).read(_dedent(lines[i + 1:end])))
                else:  # a comment, a target, a substitution: never rendered
                    out.extend([""] * (end - i))
                i = end
                continue
            if _GRID_BORDER.match(line):
                i = _read_table(lines, i, out, grid=True)
                continue
            if _SIMPLE_BORDER.match(line) and (i == 0 or _blank(lines[i - 1])):
                i = _read_table(lines, i, out, grid=False)
                continue
            if line.lstrip().startswith(">>>") and (i == 0 or _blank(lines[i - 1])) and out:
                end = i
                while end < n and not _blank(lines[end]):
                    end += 1
                i = _fence(lines, i, end, "pycon", out)
                continue
            # A block starts after a blank line; an item, field or option right under one of its kind too.
            if item_indent is not None and ind < item_indent or item_indent is not None and ind == item_indent \
                    and not (_ITEM.match(line) or _FIELD.match(line) or _OPTION_LIST.match(line.strip())):
                item_indent = None
            # A term goes on right under the definition before it ("BORG_REPO" / "BORG_PASSPHRASE").
            if i == 0 or _blank(lines[i - 1]) or item_indent == ind or i == after_definition:
                block = self.block_start(lines, i, items, numbers)
                if block is not None:
                    kind, text, text_indent = block
                    if kind == "term":
                        i = after_definition = self.definition(lines, i, text, out)
                        continue
                    if kind == "label":  # "- ``gzip``", its description under it after a blank line
                        i = after_definition = self.definition(lines, i, text, out, head=f"{text}:")
                        item_indent = ind
                        continue
                    if text.endswith("::"):  # "1. Add it to settings.py::" opens a literal block
                        literal, text = True, text[:-1]
                    out.append(text)
                    item_indent = ind
                    i += 1
                    para_indent = text_indent  # a literal block goes deeper than the item's text
                    continue
            lb = _LINE_BLOCK.match(line)
            if lb and (i == 0 or _blank(lines[i - 1]) or _LINE_BLOCK.match(lines[i - 1])):
                out.append(inline(lb.group(1) or ""))
                i += 1
                continue
            if i == 0 or _blank(lines[i - 1]):
                para_indent = ind
                if not items:
                    numbers.clear()
            stripped = line.strip()
            if stripped.endswith("::"):
                literal = True
                stripped = "" if stripped == "::" else stripped[:-3] if stripped.endswith(" ::") else stripped[:-1]
                if not stripped:
                    out.append("")
                    i += 1
                    continue
                line = " " * ind + stripped
            out.append(text_line(line))
            i += 1
        return out

    def definition(self, lines: Sequence[str], i: int, term: str, out: list[str], head: str | None = None) -> int:
        """A term at line i and its definition (the lines indented under it,
        read as a page of their own: it may hold code, lists, or terms of its
        own, as borg's "General:" holds BORG_REPO ...) as one item: "- term:"
        (or ``head``) opens the definition's first paragraph, and an item
        inside goes two spaces in.  Returns the line after it."""
        indent = _indent(lines[i].expandtabs(8))
        end = _body_end(lines, i + 1, indent)
        while end < len(lines) and _blank(lines[end]):  # a code block at its end closes on a blank line
            end += 1
        inner = _Reader(self.page).read(_dedent(lines[i + 1:end]))
        head = head or f"- {term.rstrip(':')}:"
        pad = " " * (len(head) - len(head.lstrip()))
        first = next((k for k, x in enumerate(inner) if x.strip()), None)
        plain = first is not None and not _BLOCK_LINE.match(inner[first])
        out.append("" if plain else head)
        under = _under_item(inner)
        for k, x in enumerate(inner):
            out.append(f"{head} {x}" if plain and k == first else f"{pad}  {x}" if k in under else x)
        return end

    def block_start(self, lines: Sequence[str], i: int, items: list[int], numbers: dict[int, int]
                    ) -> tuple[str, str, int] | None:
        """("item", its Markdown, its text's indent), ("label", the item, ...)
        for an item that names what the paragraphs under it describe, or
        ("term", the term, ...) for a block that starts at line i."""
        line = lines[i].rstrip()
        ind = _indent(line.expandtabs(8))
        nxt = lines[i + 1].expandtabs(8) if i + 1 < len(lines) else ""
        m = _ITEM.match(line.expandtabs(8))
        # "A. Smith wrote" is no item: a letter or "#" item needs a next line indented under it or blank
        if m and (m.group(2)[0] in "-*+•(" or m.group(2)[0].isdigit()
                  or _blank(nxt) or _indent(nxt) > ind or _ITEM.match(nxt)):
            while items and items[-1] > ind:  # items whose text starts right of this one's mark hold it
                items.pop()
            depth = len(items)
            text_indent = ind + len(m.group(2)) + 1
            items.append(text_indent)
            sign = m.group(2)
            if sign[0] in "-*+•":
                mark = "-"
            elif sign[0].isdigit():  # its own number: "the precedence order is: 1. ... 2. ..."
                numbers[ind] = int(re.sub(r"\D", "", sign))
                mark = f"{numbers[ind]}."
            else:  # "#." numbers itself; a letter counts on as a number
                numbers[ind] = numbers.get(ind, 0) + 1
                mark = f"{numbers[ind]}."
            text = "  " * depth + f"{mark} {inline(m.group(3))}"
            after = lines[i + 2].expandtabs(8) if i + 2 < len(lines) else ""
            if _LABEL.match(m.group(3)) and _blank(nxt) and after.strip() and _indent(after) >= text_indent:
                return "label", text, text_indent
            return "item", text, text_indent
        f = _FIELD.match(line)
        if f:
            name = inline(f.group(2))
            return ("item", f"- {name}: {inline(f.group(3))}", ind) if f.group(3) else ("term", name, ind)
        o = _OPTION_LIST.match(line.strip())
        if o:
            return "item", f"- {o.group(1)}: {inline(o.group(2))}", ind
        if nxt.strip() and _indent(nxt) > ind and not _ADORNMENT.match(nxt.rstrip()) \
                and not line.rstrip().endswith("::") and not _DIRECTIVE.match(nxt):
            term = line.strip()
            term = re.sub(r"\s+:\s+(.+)$", r" (\1)", term)  # "term : classifier"
            return "term", inline(term), ind
        return None

    def directive(self, lines: Sequence[str], i: int, d: re.Match, out: list[str]) -> int:
        """Reads the directive at line i into ``out``; returns the line after it."""
        ind, name, arg = len(d.group(1)), d.group(2).lower(), (d.group(3) or "").strip()
        kind = name.rsplit(":", 1)[-1] if name.rsplit(":", 1)[-1] in _OBJECTS else name
        # autodoc's "autofunction:: attrs.evolve" shows the docstring, which lives in the code, and then
        # the body written under it, which is text like a "function::" body (attrs' API page lost 428 of
        # its 566 lines); one with no body says nothing here.
        auto = name.startswith("auto") and name[4:] in _OBJECTS | {"module"}
        if auto:
            kind = name[4:]
        end = stop = _body_end(lines, i + 1, ind)
        while end < len(lines) and _blank(lines[end]) and end > i + 1:  # blank lines after the body
            end += 1  # are its (a code block at its end closes on one)
        j = i + 1
        # more signatures under the first ("sig1" / "sig2"), then options, before a blank line
        while j < end and kind in _OBJECTS and not _blank(lines[j]) and not _OPTION.match(lines[j]):
            arg += (" " if arg.endswith(",") else ", ") + lines[j].strip()
            j += 1
        options, j = read_options(lines, j, end)
        body = list(lines[j:end])
        said = any(x.strip() for x in body)
        # "only:: latex" (or man, text ...) is for another build than the web pages: borg's option
        # tables came twice, once as a table and once as the PDF's term list.  A bodiless "class::"
        # is docutils' (it names a style); Sphinx's describes a Python class.
        if kind in ("module", "currentmodule"):  # Sphinx names what it describes after it: logging.getLogger
            self.page.module = "" if arg in ("", "None") else arg
            if auto and said:
                kind = "automodule"  # its body is the page's text, under no label
        if kind == "include" and ("code" in options or "literal" in options):
            # docutils shows such an include as code, as a literalinclude: pytest-asyncio's pages write
            # every example so ("Add the following code to the `__init__.py`:" was followed by nothing)
            kind = "literalinclude"
            options.setdefault("language", options.get("code", ""))
        if kind in _DROPPED or name.startswith("auto") and not (auto and said) or kind == "only" and (
                "html" not in arg or "not html" in arg) or kind == "class" and not said:
            out.extend([""] * (end - i))
            return end
        if kind == "literalinclude":  # a file's code (Celery's Django setup is one): read where it is
            out.extend([""] * (end - i))
            read = _INCLUDE.get()
            code = included(read(arg), options) if read is not None and arg else []
            if code:
                caption = f"{inline(options['caption'])}:" if options.get("caption") else ""
                found = _INCLUDED.get()
                suffix = splitext(basename(arg))[1][1:]  # "celery.py": py; "Makefile": none
                found.append((options.get("language") or suffix, code))
                out[i - end] = f"{caption}{_MARK}{len(found) - 1}{_MARK}"
            return end
        # A directive citebot does not know whose body is code (Pallets' "click:example::" over a
        # command's source, "click:run::" over the call that runs it) is read as code: as text, its
        # comments became Markdown headings of 48 chunks and its indents were lost.
        unknown = not (kind in _OBJECTS or kind in _ADMONITIONS or kind in _TITLED or kind in _VERSIONS
                       or kind == "admonition" or " " in arg)
        if kind in _CODE or unknown and _code_body(body):
            out.extend([""] * (j - i))
            # "settings.py:" says where the code goes; a tab's label after its language names it too
            caption = options.get("caption") or (arg.partition(" ")[2].strip() if kind == "code-tab" else "")
            if caption:
                out[len(out) - (j - i)] = f"{inline(caption)}:"
            first = next((k for k, x in enumerate(body) if x.strip()), None)
            if first is None:  # options and no code: a line for each of the rest
                out.extend([""] * (end - j))
                return end
            out.extend([""] * first)
            lang = "pycon" if kind == "doctest" else arg.split()[0] if arg else ""
            after = _fence(lines, j + first, stop, lang, out)
            out.extend([""] * (end - after))
            return max(end, after)
        if kind in ("list-table", "csv-table"):
            _place(out, table(kind, arg, options, body, (j - i, end - i)), end - i)
            return end
        text = ""
        if kind in _OBJECTS:
            label = "- " + _signature(kind, _ESCAPED.sub(r"\1", arg), self.page.module)  # "\*\*options" in rst
        elif kind in _ADMONITIONS:
            label, text = _ADMONITIONS[kind], arg
        elif kind == "admonition" or kind in _TITLED:
            label = inline(arg)
        elif kind in _VERSIONS:
            version, _, text = arg.partition(" ")
            label = f"{_VERSIONS[kind]} {version}"
            if kind == "deprecated-removed":  # "deprecated-removed:: 3.9 3.14"
                removed, _, text = text.partition(" ")
                label += f", will be removed in version {removed}"
        elif " " in arg:  # a directive citebot does not know, saying something: "availability:: Unix, not WASI."
            label, text = name.rsplit(":", 1)[-1].replace("-", " ").capitalize(), arg
        else:  # ... or naming a target ("setting:: broker_url"): its body is text like any other
            label = ""
        at = len(out)
        out.extend([""] * (j - i))
        inner = _Reader(self.page).read(_dedent(body)) if body else []
        out.extend(inner)
        if not label:
            return end
        if text:  # ".. note:: text" goes on in the body's first lines
            out[at] = f"{label}: {inline(text)}"
            return end
        first = next((k for k, x in enumerate(inner) if x.strip()), None)
        # the label opens the first paragraph, or stands alone on the directive's line over a list, table
        # or code (then the first line goes in too: Jinja's class whose body opens with ".. attribute::
        # one" read "one" as the class's sibling and the next attribute as one's child)
        alone = first is None or bool(_BLOCK_LINE.match(inner[first]))
        if kind in _OBJECTS:  # the description is one item, "- sig: ...", its later paragraphs in it
            for k in _under_item(inner) - (set() if alone else {first}):
                # (a line already in, a nested description's, stays: two more made graphlib's
                # "If any cycle is detected ..." indented code after two blank lines)
                if not inner[k].startswith(" "):
                    out[at + j - i + k] = f"  {inner[k]}"
        if first is not None and not alone:
            out[at + j - i + first] = f"{label}: {inner[first]}"  # the label opens its first paragraph
        else:  # a list, table or code first, or nothing: the label stands on the directive's line
            out[at] = label if kind in _OBJECTS else f"{label}." if kind in _VERSIONS and first is None else f"{label}:"
        return end


_CODE_LINE = re.compile(r"^\s*(?:import \w|from [\w.]+ import |def \w|class \w[\w.]*[(:]|@[\w.]+|return\b|pass$"
                        r"|(?:if|for|while|with|elif|try|except|else|finally)\b.*:$|#|>>> |\.\.\. |\$ "
                        r"|[\w.]+(?:\[[^\]]*\])?\s*[-+*/]?=[^=]|[\w.]+\(.*\)[,;]?\s*$|[)\]}]+[,;:]?\s*$)")


def _code_body(body: Sequence[str]) -> bool:
    """Whether a directive's body reads as code: most of its lines are statements, not sentences."""
    lines = [x for x in body if x.strip()]
    return bool(lines) and sum(bool(_CODE_LINE.match(x)) for x in lines) >= 0.6 * len(lines)


def _under_item(inner: Sequence[str]) -> set[int]:
    """The lines of a body read under an item that go in two spaces to stay in
    it: an item's, and a paragraph's first (the lines after it may lie).  At
    the margin after a blank line a paragraph ends the list: borg's "- retry_erofs:
    ..." two levels in below "Currently known strings are:" read as indented
    code, and Flask's "Default: ``None``" was no part of MAX_CONTENT_LENGTH's entry."""
    code = False
    under = set()
    for k, x in enumerate(inner):
        code ^= x.startswith("```")
        # (a paragraph opens after a blank line, or right after code, whose closing fence stands on the
        # blank line that followed it: attrs' "``evolve`` creates a new instance" after its example)
        if _ITEM_LINE.match(x) or k and not code and (not inner[k - 1].strip() or inner[k - 1].startswith("```")) \
                and x.strip() and not _BLOCK_LINE.match(x):
            under.add(k)
    return under


def _signature(kind: str, sig: str, module: str) -> str:
    """A description's signature as Sphinx shows it: "class logging.Handler",
    "classmethod date.today()"; a module-level name goes with its module."""
    if module and kind in ("function", "class", "exception", "data", "decorator", "coroutinefunction",
                           "awaitablefunction") and "." not in sig.split("(")[0]:
        sig = f"{module}.{sig}"
    prefix = {"class": "class ", "exception": "exception ", "classmethod": "classmethod ", "staticmethod": "static ",
              "decorator": "@", "decoratormethod": "@", "coroutinefunction": "coroutine ", "coroutinemethod": "coroutine ",
              "awaitablefunction": "awaitable ", "awaitablemethod": "awaitable ",
              "abstractmethod": "abstractmethod "}.get(kind, "")
    return f"{prefix}`{sig}`"


def _fence(lines: Sequence[str], start: int, end: int, lang: str, out: list[str]) -> int:
    """Lines start..end-1 are code: a fence on the line before them (a blank
    line, an option or the directive, already in ``out``) and on the blank
    line after (at the very end, one line more).  Where text follows with no
    blank line between, the code is indented four spaces instead, which needs
    no closing line.  Returns the line to go on from."""
    code = _dedent(lines[start:end])
    if any(x.startswith(">>>") for x in code):  # Sphinx hides a session's doctest flags, as readers see it
        code = [_DOCTEST_FLAG.sub("", x).replace("<BLANKLINE>", "") for x in code]
    if end < len(lines) and not _blank(lines[end]):
        out[-1] = ""
        out.extend(f"    {x}" if x else "" for x in code)
        return end
    if out and out[-1] == "```":
        # The line before is the closing fence of code right above (a literal block, then a doctest
        # block after one blank line): no line is left to open another, so the block goes on, one
        # blank line between (the "```pycon" written over it was read as a line of the first's code).
        out[-1] = ""
        out.extend(code)
        out.append("```")
        return end + 1
    out[-1] = f"```{lang}"
    out.extend(code)
    out.append("```")
    return end + 1


def read_options(lines: Sequence[str], j: int, end: int) -> tuple[dict[str, str], int]:
    """A directive's ":key: value" lines from line j on (before ``end``), and the line after them."""
    options: dict[str, str] = {}
    while j < end and _OPTION.match(lines[j]):
        key, _, value = lines[j].strip()[1:].partition(":")
        at = _indent(lines[j].expandtabs(8))
        j += 1
        # an option's value goes on on lines indented deeper ("   :members: a, b," / "      c, d"):
        # Jinja's wrapped :members: lists were read as the class's description
        while j < end and lines[j].strip() and _indent(lines[j].expandtabs(8)) > at and not _OPTION.match(lines[j]):
            value += " " + lines[j].strip()
            j += 1
        options[key] = value.strip()
    return options, j


def table(kind: str, arg: str, options: Mapping[str, str], body: Sequence[str],
          place: tuple[int, int] | None = None) -> list[str]:
    """A ``list-table`` or ``csv-table`` as pipe-table lines, under its title
    (MyST writes them as reStructuredText does, in a fence).  ``place``: the
    body's first line and the lines the directive takes, from its own line:
    each row of a list-table then stands on the line it starts on, so a
    citation names its lines (coverage.py's 42-line pattern table was cited
    as its first 9), where there is room for the header and rule."""
    title = [f"{inline(arg)}:"] * bool(arg)
    if kind == "list-table":
        placed = placed_table(arg, options, body, *place) if place is not None else None
        if placed is not None:
            return placed
        rows, head = _list_table(_dedent(body))[0], int(options.get("header-rows") or 0)
    else:
        header = _csv_table([options["header"]]) if "header" in options else []
        rows, head = header + _csv_table(_dedent(body)), len(header)
    return title + _pipe(rows, head)


def placed_table(arg: str, options: Mapping[str, str], body: Sequence[str], at: int, taken: int) -> list[str] | None:
    """A list-table's lines with each row on the line it starts on (see ``table``): ``at``, its
    body's first line, and ``taken``, from the directive's line; None where there is no room."""
    rows, starts = _list_table(_dedent(body))
    if not rows:
        return None
    title = [f"{inline(arg)}:"] * bool(arg)  # (the title takes the first line)
    placed = table_lines(rows, [at - len(title) + k for k in starts], int(options.get("header-rows") or 0),
                         taken - len(title))
    return None if placed is None else title + placed


def _cells(text: str) -> str:
    return inline(" ".join(text.split()))


def _list_table(body: list[str]) -> tuple[list[list[str]], list[int]]:
    """The rows of a list-table: "* - a" opens a row, "  - b" a cell; and the line each starts on."""
    rows: list[list[list[str]]] = []  # each cell's lines
    starts: list[int] = []
    for k, line in enumerate(body):
        s = line.strip()
        m = re.match(r"^\*\s+-\s+(.*)$", s) if not line[:1].isspace() else None
        if m or s in ("* -", "*"):
            rows.append([[m.group(1)] if m else []])
            starts.append(k)
        elif rows and (cell := re.match(r"^-(?:\s+(.*))?$", s)) and _indent(line) <= 2:
            rows[-1].append([cell.group(1)] if cell.group(1) else [])
        elif rows and s:
            rows[-1][-1].append(s)
    return [[_cell(c) for c in r] for r in rows], starts


def _cell(lines: list[str]) -> str:
    """A list-table cell's text; a line block's lines ("| sub/a/main.py" / "| sub/b/another.py",
    stacked in the cell) read as a list, or their bars read as the table's column rules."""
    if lines and all(_LINE_BLOCK.match(x) for x in lines):
        return ", ".join(_cells(m.group(1) or "") for x in lines if (m := _LINE_BLOCK.match(x)) and m.group(1))
    return _cells(" ".join(lines))


def _csv_table(body: list[str]) -> list[list[str]]:
    text = [x.strip() for x in body if x.strip()]
    return [[_cells(c) for c in row] for row in csv.reader(text, skipinitialspace=True)]


def _pipe(rows: list[list[str]], head: int, keep: list[int] | None = None) -> list[str]:
    """Pipe-table lines: the header row, the rule, then a line for each row
    after the header rows, of the columns in ``keep`` (all by default).  A
    table without a header row gets an empty one, as the HTML reader writes
    it (its rows are quoted alone)."""
    if not rows:
        return []
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    cols = range(width) if keep is None else keep

    def line(r: list[str]) -> str:
        return "| " + " | ".join(r[c].replace("|", "\\|") for c in cols) + " |"
    header = [" ".join(c for c in col if c) for col in zip(*rows[:head])] if head else [""] * width
    return [line(header), "|" + "---|" * len(cols), *(line(r) for r in rows[head:])]


def _place(out: list[str], table: list[str], taken: int) -> None:
    """A table's lines from its first line on, blank lines for the rest of
    the lines it took (the Markdown reader wants a table's rows together)."""
    out.extend(table)
    out.extend([""] * (taken - len(table)))


class _Table:
    """A grid or simple table as read: its rows, the line (from the table's
    first) where each row starts, how many rows are its header, and its label
    rows (one cell across the whole table)."""

    def __init__(self) -> None:
        self.rows: list[list[str]] = []
        self.starts: list[int] = []
        self.head = 0
        self.labels: set[int] = set()


def _grid(lines: Sequence[str], i: int) -> tuple[_Table, int]:
    """A grid table at line i, and the line after it."""
    n = len(lines)
    end = i
    while end < n and lines[end].strip()[:1] in ("+", "|"):
        end += 1
    t = _Table()
    cols: list[int] = []
    current: list[list[str]] | None = None
    spans = False  # every line of the row so far has one cell across the table
    for k in range(i, end):
        line = lines[k].rstrip()
        if _GRID_BORDER.match(line):
            if current is not None:
                t.labels |= {len(t.rows)} if spans and len(cols) > 2 else set()
                t.rows.append([" ".join(" ".join(c).split()) for c in current])
            if "=" in line:
                t.head = len(t.rows)
            cols = [p for p, ch in enumerate(line) if ch == "+"]
            current = None
            continue
        if current is None:
            current, spans = [[] for _ in range(max(len(cols) - 1, 1))], True
            t.starts.append(k - i)
        # a cell ends at a "|" on a column line; a cell spanning columns has none there
        cuts = [p for p in cols if p < len(line) and line[p] == "|"]
        spans = spans and len(cuts) == 2
        for a, b in zip(cuts, cuts[1:]):
            c = cols.index(a)
            if c < len(current):
                text = line[a + 1:b].strip()
                current[c].append("" if text.startswith(".. ") else text)  # a directive in a cell styles it
    if current is not None:
        t.rows.append([" ".join(" ".join(c).split()) for c in current])
    t.rows = [[inline(c) for c in r] for r in t.rows]
    return t, end


def _simple(lines: Sequence[str], i: int) -> tuple[_Table, int]:
    """A simple table at line i, and the line after it (after the border
    that a blank line or the end follows)."""
    n = len(lines)
    spans = [(m.start(), m.end()) for m in re.finditer(r"=+", lines[i].rstrip())]
    borders = [i]
    t = _Table()
    k = i + 1
    while k < n:
        line = lines[k].rstrip()
        if _SIMPLE_BORDER.match(line):
            borders.append(k)
            if len(borders) == 2:
                t.head = len(t.rows)  # the rows above the second border are the header, when a third closes
            k += 1
            if k >= n or _blank(lines[k]):
                break
            continue
        if line.strip() and not _SIMPLE_RULE.match(line):
            cells = [line[a:b if c < len(spans) - 1 else None].strip() for c, (a, b) in enumerate(spans)]
            if t.rows and not cells[0] and any(cells):  # a blank first column goes on the row above
                t.rows[-1] = [f"{x} {y}".strip() for x, y in zip(t.rows[-1], cells)]
            else:
                t.rows.append(cells)
                t.starts.append(k - i)
        k += 1
    t.head = t.head if len(borders) >= 3 else 0
    t.rows = [[inline(c) for c in r] for r in t.rows]
    return t, k


def _read_table(lines: Sequence[str], i: int, out: list[str], grid: bool) -> int:
    t, end = (_grid if grid else _simple)(lines, i)
    above = 0
    if not t.head and 0 not in t.labels and t.starts and t.starts[0] < 2 and out and not out[-1].strip() \
            and not all(_bold(c) for c in t.rows[0] if c):
        # A table without a header gets an empty one and its rule: on the blank line above it and its
        # top border, so each row keeps its own line (Flask's headerless table of route() parameters
        # had every row cited a line late, "rule" on the line of "endpoint").
        t.starts, above = [k + 1 for k in t.starts], 1
        out.pop()
    # (The last row's other lines and the bottom border are rule rows too, so the table, and a citation
    # of its last row, runs to its last line: Flask's "**options" row was cited as line 638 alone, its
    # text running on to 646.)
    table = _layout(t, end - i + above, close=True)
    if table is None:  # no room for its rows (a grid never closed): its lines as text, one for one
        if above:  # (and the blank line above stays one)
            out.append("")
            above = 0
        table = ["" if _GRID_BORDER.match(x) or _SIMPLE_BORDER.match(x) else inline(x.strip()) for x in lines[i:end]]
    _place(out, table, end - i + above)
    return end


def _bold(text: str) -> bool:
    return text.startswith("**") and text.endswith("**") and len(text) > 4


def table_lines(rows: list[list[str]], starts: list[int], head: int, taken: int) -> list[str] | None:
    """The Markdown lines of a table read elsewhere (AsciiDoc's ``|===``):
    each row on the line it starts on (``starts``, from the table's first
    line), in the ``taken`` lines the table takes (see ``_layout``); None
    when its rows cannot each keep a line."""
    t = _Table()
    t.rows, t.starts, t.head = rows, starts, head
    lines = _layout(t, taken)
    if lines is None:
        return None
    out: list[str] = []
    _place(out, lines, taken)
    return out


def _layout(t: _Table, taken: int, close: bool = False) -> list[str] | None:
    """A table's Markdown lines, each row on the line its text starts on, so
    a citation names the source lines that hold it; the lines between (a
    row's other lines, borders) are rule rows, which keep the table one block
    and are no text.  A table without a header row gets an empty one, as the
    HTML reader writes it; one whose first row is all bold has it as its
    header (Sphinx shows it so).  Label rows (borg's "positional arguments",
    "Filesystem options") each open a table of the rows below them, as the
    HTML reader reads Sphinx's, and a column empty in every row is left out."""
    rows, head = t.rows, t.head
    if not rows:
        return []
    head = head if head < len(rows) else 0  # a header and no rows: its rows are the table's
    if not head and len(rows) > 1 and not t.labels and all(_bold(c) for c in rows[0] if c) and any(rows[0]):
        head = 1
    keep = None
    if t.labels and not head:
        width = max(len(r) for r in rows)
        keep = [c for c in range(width) if any(c < len(r) and r[c] for k, r in enumerate(rows) if k not in t.labels)]
        keep = keep or [0]
    header, rule, *body = _pipe(rows, head, keep)  # body: a line for each row from ``head`` on
    wanted: list[tuple[int, str]] = []  # (the line it should stand on, its text)
    if head:
        wanted += [(t.starts[0], header), (t.starts[head] - 1, rule)]
    elif 0 not in t.labels:
        wanted += [(0, header), (1, rule)]
    for k in range(head, len(rows)):
        if k in t.labels and not head:  # its own table: the label, an empty header (``header``), the rule
            label = re.sub(r"^\*\*(.+)\*\*$", r"\1", rows[k][0])  # a label's bold is the table's look
            wanted += [(t.starts[k], label), (t.starts[k] + 1, header), (t.starts[k] + 2, rule)]
        else:
            wanted.append((t.starts[k], body[k - head]))
    out: list[str] = []
    for want, text in wanted:
        fill = rule if out and out[-1].startswith("|") else ""  # a gap in a table is a rule row, no blank
        while len(out) < want:
            out.append(fill)
        out.append(text)
    if close and out and out[-1].startswith("|"):  # ``close``: rule rows to the table's last line
        out += [rule] * (taken - len(out))
    return out if len(out) <= taken else None  # None: no room to place them (a table never closed)


# The titles a :ref: or :doc: names, of the page being read: {"ref:label": title, "doc:path": title}.
_TITLES: ContextVar[Mapping[str, str]] = ContextVar("titles", default=MappingProxyType({}))
_INCLUDE: ContextVar[Callable[[str], list[str] | None] | None] = ContextVar("include", default=None)
_INCLUDED: ContextVar[list[tuple[str, list[str]]]] = ContextVar("included", default=[])  # noqa: B039 - set anew per page
# Where an included file's code goes, in the line that stands for it (a private-use character: no page writes it).
_MARK = "\ue000"
_MARKED = re.compile(f"{_MARK}(\\d+){_MARK}")
_DOC: ContextVar[str] = ContextVar("doc", default="")  # the page's path without its suffix
_SUBS: ContextVar[Mapping[str, str]] = ContextVar("subs", default=MappingProxyType({}))  # |name| -> its text
_REPLACE = re.compile(r"^\.\.\s+\|([^|]+)\|\s+(replace|unicode)::\s+(.*?)\s*$")


@contextlib.contextmanager
def naming(refs: Mapping[str, str], doc: str) -> Iterator[None]:
    """Roles read within name what ``refs`` (``titles``) holds, from the page ``doc``: a MyST
    page's ``{doc}`the_basics``` reads "The basics", as an rst page's :doc: does."""
    tokens = _TITLES.set(refs), _DOC.set(doc)
    try:
        yield
    finally:
        _TITLES.reset(tokens[0])
        _DOC.reset(tokens[1])


def _substitutions(lines: Sequence[str]) -> dict[str, str]:
    """A page's ``.. |ver| replace:: 5.3`` and ``.. |copy| unicode:: 0xA9``."""
    subs = {}
    for line in lines:
        m = _REPLACE.match(line)
        if m and m.group(2) == "replace":
            subs[m.group(1)] = inline(m.group(3))
        elif m:  # code points (0xA9, U+00A9, 169) and text, as docutils writes them
            subs[m.group(1)] = "".join(chr(int(x[2:], 16) if x[:2].lower() in ("0x", "u+") else int(x))
                                       if re.fullmatch(r"(?:0x|[uU]\+)[0-9a-fA-F]+|\d+", x) else x
                                       for x in m.group(3).split(" .. ")[0].split())  # " .. " opens a comment
    return subs


_LABEL_LINE = re.compile(r"^\.\.\s+_([^:`]+|`[^`]+`):\s*$")


def titles(pages: Iterable[tuple[str, Sequence[str]]]) -> dict[str, str]:
    """The titles cross-references name, over a manual's pages ((path without
    its suffix, lines) each): a label (``.. _guide-security:``) over a title
    names that title, a page its first.  Sphinx writes "see Security" where
    the source says ``:ref:`guide-security```; read alone, a page can only
    write the label."""
    found: dict[str, str] = {}
    for doc, lines in pages:
        reader = _Reader(_Page())
        waiting: list[str] = []  # labels over the next title
        for i, line in enumerate(lines):
            m = _LABEL_LINE.match(line.rstrip())
            if m:
                waiting.append(m.group(1).strip("`").lower())
                continue
            if not line.strip() or (i and _LABEL_LINE.match(lines[i - 1].rstrip()) and not waiting):
                continue
            t = reader.title(lines, i) if not line[:1].isspace() else None
            if t is not None:
                title = inline(t[1])
                found.setdefault(f"doc:{doc}", title)
                for label in waiting:
                    found.setdefault(f"ref:{label}", title)
            waiting = []
    return found


_REFRESH = re.compile(r"^\s+:http-equiv=refresh:\s*(.*)$", re.I)  # a ".. meta::" option
_REDIRECT = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*[;,]\s*url\s*=", re.I)


def redirects(refresh: str) -> bool:
    """Whether a refresh ("3; url=../../cli/pip_install/", rst's or HTML's) sends the reader to
    another page within seconds: Sphinx's and pip's stubs for a moved page, whose "You should be
    redirected automatically in 3 seconds" took a shown slot in 10 of 36 turns (a "60" reloads)."""
    m = _REDIRECT.match(refresh)
    return m is not None and float(m.group(1)) <= 10


def _metadata(lines: Sequence[str]) -> range:
    """The lines of a page's file-wide metadata, which Sphinx never shows: a field list before
    anything but comments (coverage.py's ":orphan:" was the list item "- orphan:")."""
    k, n = 0, len(lines)
    while k < n and (_blank(lines[k]) or _EXPLICIT.match(lines[k]) and not _DIRECTIVE.match(lines[k])
                     and not _FOOTNOTE.match(lines[k]) and not re.match(r"^\.\.\s+[_|]", lines[k])):
        k = k + 1 if _blank(lines[k]) else _body_end(lines, k + 1, 0)  # (a comment runs on in its indented lines)
    first = k
    while k < n and _FIELD.match(lines[k]) and not lines[k][:1].isspace():
        k = _body_end(lines, k + 1, 0)  # (a field's text runs on indented too)
    return range(first, k)


_ROLE_USE = re.compile(r"(?<![\w`]):[a-z][\w:+-]*:`[^`]+`")


def looks_like(lines: Sequence[str]) -> bool:
    """Whether a ``.txt`` file is reStructuredText (a project's README.txt or
    CHANGES.txt): two directives (``.. code-block::``, ``.. note::``), or one
    and two roles (``:class:`Foo```).  Plain text, a Vim help file and
    AsciiDoc (asked first) write neither."""
    directives = sum(1 for line in lines[:3000] if _DIRECTIVE.match(line) and not _REPLACE.match(line))
    roles = sum(len(_ROLE_USE.findall(line)) for line in lines[:3000])
    return directives >= 2 or directives >= 1 and roles >= 2


def to_markdown(lines: Sequence[str], refs: Mapping[str, str] | None = None, doc: str = "",
                include: Callable[[str], list[str] | None] | None = None,
                code: dict[int, tuple[str, list[str]]] | None = None) -> list[str]:
    """The Markdown lines a reStructuredText file reads as, one for each of
    its lines (a code block closed at the very end takes one more);
    ``refs``: the titles its cross-references name (``titles``); ``doc``:
    its path without its suffix, which a relative :doc: starts from;
    ``include``: the lines of the file a ``literalinclude`` names, or None
    where it may not be read; ``code``, when given, receives the code each
    one shows, by the index of its line: (language, lines), code that has no
    lines of its own in the file."""
    if any((m := _REFRESH.match(x)) and redirects(m.group(1)) for x in lines):
        return [""] * len(lines)  # a page that sends the reader on (pip's moved pages): no text of its own
    meta = _metadata(lines)
    tokens = (_TITLES.set(refs or {}), _DOC.set(doc), _SUBS.set(_substitutions(lines)), _INCLUDE.set(include),
              _INCLUDED.set([]))
    try:  # (a page's own marker character is no marker: it is dropped, as it shows nothing)
        out = _Reader(_Page()).read(["" if k in meta else x.replace(_MARK, "") for k, x in enumerate(lines)])
        found = _INCLUDED.get()
    finally:
        for var, token in zip((_TITLES, _DOC, _SUBS, _INCLUDE, _INCLUDED), tokens):
            var.reset(token)  # type: ignore[attr-defined]
    for k, line in enumerate(out):
        if _MARK in line:  # every one is an include's: the page's own were dropped above
            for m in _MARKED.finditer(line):
                if code is not None:
                    code[k] = found[int(m.group(1))]
            out[k] = _MARKED.sub("", line)
    _rejoin(lines, out)
    return out


_LEFT = re.compile(r"^(\s*)([,.;:!?)]+)(?=\s|$)\s*(.*)$")


def _rejoin(lines: Sequence[str], out: list[str]) -> None:
    """A line that starts with the punctuation after a role or link the line end cut
    (":ref:`combining path remapping" / "<cmd_combine_remapping>`.  They follow") takes
    it back to the line before, or that line's last word down: the text read
    "remapping .  They follow".  Not in code, nor punctuation the page starts a line with."""
    code = False
    for k in range(min(len(lines), len(out))):
        code ^= out[k].lstrip().startswith("```")
        m = _LEFT.match(out[k]) if k and not code else None
        if m is None or _LEFT.match(lines[k]) or not out[k - 1].strip() or out[k - 1].lstrip().startswith(("```", "|")):
            continue
        indent, punct, rest = m.groups()
        if rest:
            out[k - 1], out[k] = out[k - 1].rstrip() + punct, indent + rest
        elif (cut := out[k - 1].rstrip().rpartition(" "))[0].strip():
            out[k - 1], out[k] = cut[0], indent + cut[2] + punct


def included(lines: Sequence[str] | None, options: Mapping[str, str]) -> list[str]:
    """The part of a file's lines a ``literalinclude`` shows, by its options
    as Sphinx applies them: ``pyobject``, ``lines`` ("1,3,5-10,20-"),
    ``start-after``/``start-at``, ``end-before``/``end-at``, ``dedent``."""
    if lines is None:
        return []
    part = list(lines)
    name = options.get("pyobject", "").strip()
    if name:
        part = _python_object(part, name)
    if options.get("lines", "").strip():
        part = [part[k] for k in _numbers(options["lines"], len(part))]
    for key, after in (("start-after", True), ("start-at", False)):
        text = options.get(key, "")
        at = next((k for k, x in enumerate(part) if text and text in x), None)
        if at is not None:
            part = part[at + after:]
    for key, at_end in (("end-before", False), ("end-at", True)):
        text = options.get(key, "")
        at = next((k for k, x in enumerate(part) if text and text in x), None)
        if at is not None:
            part = part[:at + at_end]
    if "dedent" in options:
        n = options["dedent"].strip()
        part = [x[int(n):] if n.isdigit() and x[:int(n)].isspace() else x.lstrip() if n.isdigit() else x
                for x in part] if n else _dedent(part)
    while part and not part[0].strip():
        part.pop(0)
    while part and not part[-1].strip():
        part.pop()
    return [x.rstrip() for x in part]


def _numbers(spec: str, n: int) -> list[int]:
    """Sphinx's ``:lines:`` ("1,3,5-10,20-"): 0-based indexes, in order."""
    out: list[int] = []
    for part in spec.split(","):
        first, dash, last = part.strip().partition("-")
        try:
            a = int(first) if first.strip() else 1
            b = (int(last) if last.strip() else n) if dash else a
        except ValueError:
            continue
        out.extend(k - 1 for k in range(max(a, 1), min(b, n) + 1))  # ("1-1000000000000": the file's lines)
    return out


def _python_object(lines: list[str], name: str) -> list[str]:
    """A class, function or method (``Class.method``) of a Python file, from
    its ``def``/``class`` line to the end of its body; none when absent."""
    start, end, indent = 0, len(lines), -1
    for part in name.split("."):
        pattern = re.compile(rf"^(\s*)(?:async\s+)?(?:def|class)\s+{re.escape(part)}\b")
        at = next((k for k in range(start, end) if (m := pattern.match(lines[k])) and len(m.group(1)) > indent), None)
        if at is None:
            return []
        indent = _indent(lines[at])
        start, end = at, at + 1
        while end < len(lines) and (_blank(lines[end]) or _indent(lines[end]) > indent):
            end += 1
    return lines[start:end]

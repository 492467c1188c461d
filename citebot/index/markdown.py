"""Markup that documentation sites add to Markdown, read as a person reads
the rendered page (pure functions over lines; the line count never changes,
so citations keep pointing at the right source lines).

* heading attribute lists: ``## Setup { #setup }`` -> ``## Setup``
* admonitions and blocks (Python-Markdown / pymdownx): ``/// tip | Technical Details``
  opens a block read as "Tip (Technical Details): ..." and a bare ``///``
  closes it (``////`` and longer for nested blocks, such as ``//// tab | Python 3.10+``);
  MkDocs ``!!! note "Title"`` and VitePress ``::: danger Title`` ... ``:::`` likewise.  The label goes before the block's
  first text, or on a line of its own before a table, list or code block
* include directives whose file is not in the folder: ``{* ../../docs_src/x.py hl[3] *}``,
  ``{!> ../../docs_src/x.py!}``, ``--8<-- "file"``, mkdocstrings ``::: package.name``
  -> dropped (a code block that holds nothing but one is dropped whole)
* a link reference definition (``[docs]: https://...``, and ``[//]: # (a note)``,
  the usual way to write a comment in Markdown, and one whose URL stands on the line below)
  -> dropped: it never renders; a reference link (``[`Buffer`][]``, ``[the guide][guide]``,
  and ``[mypyc]`` where a definition names it) -> its text, and a
  backslash escape (``string\\[]``) -> its character, outside code spans;
* MyST (Sphinx's Markdown): a directive fence (```` ```{note} ````, ``:::{tip}``) reads as the
  rst reader reads its directive: an admonition as labelled text, ``{code-block} python`` as code
  (its options gone, its caption over it), a ``list-table`` as a table, ``eval-rst`` as rst, and a
  toctree, an include or a command's output as nothing; a role (``{doc}`the license <license>```)
  as what it shows; a target line (``(labels/setup)=``) as nothing
* HTML comments, ``<script>`` and ``<style>`` with their content -> dropped;
  ``<h2>Title</h2>`` on a line of its own -> ``## Title``; other tags -> their
  text (``<abbr title="...">ASGI</abbr>`` reads "ASGI"; ``<td>``, ``<br>`` and
  other block tags become a space); entities decoded (``&amp;`` -> ``&``)

Code fences (CommonMark: a run of three or more backticks or tildes, closed by
a run of the same character at least as long with nothing after it) and
inline code spans are left as written, but for what the rendered page does not
show either: a fence's attributes (```` ```Python hl_lines="2" ```` -> ```` ```Python ````),
a console transcript's colouring tags and progress bar (termynal), and Material's
annotation markers (``# (1)!``).
"""
from __future__ import annotations

import bisect
import html
import re

from citebot.index import rst

_FENCE_OPEN = re.compile(r"^\s*(`{3,}|~{3,})(.*)$")
_FENCE_CLOSE = re.compile(r"^\s*(`{3,}|~{3,}|:{3,})\s*$")  # (":::" closes a MyST directive it opened)
_ANCHOR = re.compile(r"\s*\{\s*#[^{}]*\}\s*$")
_ADMONITION = re.compile(r"^\s*(?:/{3,}|!!!|\?\?\?\+?)\s*([A-Za-z-]+)(?:\s*\|\s*(.*?)|\s+\"(.*?)\")?\s*$")
# VitePress / VuePress containers: "::: danger Title" ... ":::".
_CONTAINER = re.compile(r"^\s*:{3,}\s*(tip|warning|danger|info|note|details|caution|important)\b[ \t]*(.*?)\s*$", re.I)
_CLOSE = re.compile(r"^\s*(?:/{3,}|:{3,})\s*$")
# mkdocstrings "::: package.module" names a module alone (its options follow indented).
_INCLUDE = re.compile(r"^\s*(?:\{\*.*\*\}|\{!.*!\}|--8<--\s.*|:::\s+[\w.]+)\s*$")
_HTML_HEADING = re.compile(r"^\s*<h([1-6])(?:\s[^<>]*)?>(.*?)</h\1>\s*$", re.I)
_HIDDEN_OPEN = re.compile(r"<!--|<(script|style)\b[^>]*>", re.I)  # what a reader never sees, up to its closer
# "[label]: destination 'title'": a link reference definition (CommonMark); a footnote's "[^1]:" is text.
# Its title may open and close on a later line ("[//]: # (internal:" ... "secret)"), or stand on the next one.
_LINK_DEF = re.compile(r"""^ {0,3}\[(?!\^)(?:[^\]\\]|\\.)+\]:[ \t]*(?:<[^<>]*>|\S+)"""
                       r"""(?:[ \t]+(?:"[^"]*"|'[^']*'|\([^()]*\)|(?P<open>["'(])[^"'()]*))?[ \t]*$""")
_TITLE_LINE = re.compile(r"""^[ \t]*(?:"[^"]*"|'[^']*'|\([^()]*\)|(?P<open>["'(])[^"'()]*)[ \t]*$""")
_TITLE_CLOSER = {'"': '"', "'": "'", "(": ")"}
_SETEXT = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")  # a setext heading's underline (or a thematic break)
_LIST_MARK = r"[-*+]\s|\d+[.)]\s"  # a list item's bullet or number
_TABLE_OR_LIST = re.compile(rf"^\s*(?:\||{_LIST_MARK})")
# What its indented lines below belong to (a list item, an admonition, a content tab, a
# footnote, a definition list's ":   " definition): there a line indented four spaces is the
# item's text, not an indented code block.
_CONTAINER_OPEN = re.compile(rf"^\s*(?:{_LIST_MARK}|!!!|\?\?\?|===\s|\[\^[^\]]+\]:|:\s)")
_INLINE = "a|abbr|b|code|dfn|em|font|i|kbd|mark|s|small|span|strong|sub|sup|u|var|q|cite|time|ins|del|label|button"
_BLOCK = ("br|hr|img|div|p|table|thead|tbody|tfoot|tr|td|th|details|summary|ul|ol|li|dl|dt|dd|figure|"
          "figcaption|section|article|blockquote|iframe|video|audio|source|picture|center|h[1-6]|"
          "header|footer|nav|main|aside|form|input|select|option|textarea|noscript|svg|path")
_TAG_INLINE = re.compile(rf"</?(?:{_INLINE})(?:\s[^<>]*)?/?>", re.I)
_TAG_BLOCK = re.compile(rf"</?(?:{_BLOCK})(?:\s[^<>]*)?/?>", re.I)
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
# MyST (Sphinx's Markdown): a directive is a fence whose info names it, "```{note}", ":::{tip} Title",
# "```{code-block} python"; Quarto's "```{python}" is a code cell.  A role reads "{doc}`text <page>`",
# a target "(labels/exit-code)=" on a line of its own.
_MYST = re.compile(r"^(\s*)(`{3,}|~{3,}|:{3,})\{([A-Za-z][\w.:-]*)\}[ \t]*(.*?)\s*$")
_BOX = re.compile(r"^\s*(?:(?:!!!|\?\?\?\+?)\s*[A-Za-z-]+|===[!+]?\s+\")")  # a block whose body is indented under it
_TAB = re.compile(r"^\s*===[!+]?\s+\"(.*)\"\s*$")  # pymdownx.tabbed: '=== "Tab 1"', its body indented under it
# Obsidian's and GitHub's callout, "> [!note] Title" (a "-" or "+" after it folds it)
_CALLOUT = re.compile(r"^ {0,3}>\s*\[!([A-Za-z-]+)\][+-]?\s*(.*?)\s*$")
_BLOCK_OPTION = re.compile(r"^\s+[\w-]+:(?:\s|$)")  # "    type: warning" right under a "/// admonition | Title"
# MkDocs Material's icons (":octicons-heart-fill-16:") and attribute lists ("{: .source-link }", "{ .md-button }")
_ATTR = r"""(?:[.#][\w-]+|[\w-]+=(?:"[^"]*"|'[^']*'|[^\s}]+))"""
_DECORATION = re.compile(rf":(?:octicons|material|fontawesome|simple)-[\w-]+:|\{{:?\s*{_ATTR}(?:\s+{_ATTR})*\s*\}}")
_EMPTY_LINK = re.compile(r"(?<![\w`])\[\s*\](?:\[[^\]\s]*\]|\([^()\s]*\))")
_INLINE_LANG = re.compile(r"(?<!`)(`+)#!\w[\w.+-]*\s+(?=[^`])")  # InlineHilite's "`#!py3 False`" shows "False"
_FENCE_TITLE = re.compile(r"""\btitle=(["'])([^"'\n]+)\1""")
_MYST_COMMENT = re.compile(r"^%(?:\s|$)")
# (after "/" only when a role ends right before it: "{func}`attrs.field`/{func}`attr.ib`")
_MYST_ROLE = re.compile(r"(?<![^`]/)(?<!\{)\{(?:[\w.-]+:)*([\w.-]+)\}`((?:[^`\\]|\\.)+)`")
_MYST_TARGET = re.compile(r"^\s*\(([\w./:-][\w./: -]*)\)=\s*$")  # "(Hash-checking mode)=" (not "(a+b)=")
_ITEM_FENCE = re.compile(r"^(\s*)((?:[-*+]|\d{1,9}[.)])\s+)(?=`{3,}|~{3,})")
# Directives whose body is text a page shows, beyond rst's admonitions, versions and titled ones.
_MYST_TEXT = {"admonition", "figure", "only", "glossary", "epigraph", "pull-quote", "highlights", "margin", "card",
              "grid", "grid-item", "grid-item-card", "tab-set", "div", "container", "compound", "centered",
              "figure-md", "panels", "tabbed", "exercise", "solution", "theorem", "lemma", "proof", "definition",
              "example", "remark", "corollary", "proposition", "conjecture", "algorithm"}
_MYST_DROPPED = {"literalinclude", "program-output", "command-output", "tableofcontents", "bibliography",
                 "autosummary", "jupyter-execute"}


def fence_open(line: str) -> str | None:
    """The run that opens a fenced code block on ``line``, or None.  A
    backtick run with a backtick after it (```` ```x``` ````) is inline code."""
    m = _FENCE_OPEN.match(line)
    if m is None or (m.group(1)[0] == "`" and "`" in m.group(2)):
        return None
    return m.group(1)


def fence_closes(line: str, opener: str) -> bool:
    """Whether ``line`` closes the block ``opener`` opened: the same
    character, a run at least as long, nothing after it (```` ```bash ````
    inside a ```` ```` ```` block is content)."""
    m = _FENCE_CLOSE.match(line)
    return m is not None and m.group(1)[0] == opener[0] and len(m.group(1)) >= len(opener)


def strip_anchor(heading: str) -> str:
    return _ANCHOR.sub("", heading).strip()


def strip_html(line: str) -> str:
    """Tags removed and entities decoded outside inline code spans; block tags leave a space."""
    out, pos = [], 0
    for m in _CODE_SPAN.finditer(line):
        out.append(_strip_tags(line[pos:m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(_strip_tags(line[pos:]))
    text = "".join(out)
    return re.sub(r"(?<=\S) {2,}(?=\S)", " ", text) if text != line else line


def _strip_tags(text: str) -> str:
    text = _TAG_INLINE.sub("", _TAG_BLOCK.sub(" ", text))
    return html.unescape(text) if "&" in text else text


# A sentence that opens with an admonition's label ("Warning: ...", "Note (注意): ", as ``_label``
# writes them) starts an aside, not the next thought of the text before it (the answerer's quote
# window). Only words that are admonitions and nothing else: "Error: the quota is exceeded." or
# "Example: ..." after "the page shows this message:" is what the colon introduces.
ASIDE_KINDS = ("note", "tip", "warning", "danger", "caution", "important", "hint", "attention", "info", "todo")
# A collapsible "/// details | Title" block reads "Details (Title): "; "Details:" alone may be prose.
ASIDE = re.compile(r"^(?:(?:" + "|".join(k.capitalize() for k in ASIDE_KINDS) + r")(?: \([^)\n]*\))?"
                   r"|Details \([^)\n]*\))[:：] ")


def _label(kind: str, title: str | None) -> str:
    title = (title or "").replace("**", "").strip()
    kind = kind.replace("-", " ").capitalize()
    return f"{kind} ({title}): " if title else f"{kind}: "


_ATX = re.compile(r"^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$")
_NAMING_ROLE = re.compile(r"\{(?:[\w.-]+:)*(?:doc|ref)\}`")


def names_pages(text: str) -> bool:
    """Whether a page writes a MyST role that names a page or section ({doc}`install`)."""
    return "}`" in text and bool(_NAMING_ROLE.search(text))


def titles(doc: str, lines: list[str]) -> dict[str, str]:
    """The titles a MyST page gives the roles that name it (see ``rst.titles``): ``{doc}`` its
    first heading, ``{ref}`` the heading under a ``(label)=`` target."""
    found: dict[str, str] = {}
    waiting: list[str] = []  # labels over the next heading
    shown = clean(list(lines))
    for k, line in enumerate(shown):
        target = _MYST_TARGET.match(lines[k])
        if target:
            waiting.append(target.group(1).lower())
            continue
        if not line.strip():
            continue
        atx = _ATX.match(line)
        setext = k + 1 < len(shown) and _SETEXT.match(shown[k + 1]) and not line.startswith(" ")
        if atx or setext:
            title = atx.group(1) if atx else line.strip()
            found.setdefault(f"doc:{doc}", title)
            for label in waiting:
                found.setdefault(f"ref:{label}", title)
        waiting = []
    return found


def indent_of(line: str) -> int:
    """Columns of white space a line opens with, a tab to the next multiple of four."""
    return len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip())


def clean(lines: list[str], code: list[int] | None = None, plain: list[int] | None = None) -> list[str]:
    """The lines as they read rendered; same number of lines.  ``code``, when
    given, receives the index of every line of an indented code block;
    ``plain``, of every line that opens with an escaped "#" (``\\# text``):
    text that reads as a heading once its escape is gone."""
    out: list[str] = []
    fence: str | None = None
    fenced: list[str] = []  # the open code block's lines, kept until it closes
    hidden: str | None = None  # inside a comment, <script> or <style>: the closer we wait for
    label = ""  # an admonition's label, waiting for its first line of text
    indented = False  # inside an indented code block (CommonMark): its lines are code, kept as written
    contained = False  # below a list item, admonition or tab, whose indented lines are its text
    blank = True  # the line before was blank (or there was none)
    defining = False  # the line before was a link reference definition (another, or its title, may follow)
    title: str | None = None  # the closer of a definition's title still open on the lines below
    boundary = True  # the line before ended a block (a fence, a setext underline): a definition may start here
    destination = False  # the line before was a definition's "[label]:" alone, and this line its destination
    # MyST: the directives open around this line whose body is the page's text (opener, where its
    # line is in ``out``, the label it set); a collected one's kind, name and argument; and whether
    # its options (":class: tip" lines, or a "---" block) may still follow.
    directives: list[tuple[str, int, str]] = []
    glossary: int | None = None  # how many directives are open with a glossary innermost
    term: str | None = None  # a glossary's term, waiting for the first line of its definition
    depth = 0  # the indent of the glossary's definitions
    myst: tuple[str, str, str] | None = None
    options: str | None = None  # "start", "more" (after an option line) or "yaml" (inside a "---" block)
    links = _defined(lines)

    def place_label_alone() -> None:
        nonlocal label
        if label and out and not out[-1].strip():
            out[-1] = label.strip()  # on the blank line before the table, list or code
        label = ""

    boxes: list[int] = []  # the open "!!! note" admonitions' indents, outermost first
    block_options = False  # right under a "/// admonition | Title" line: its "type: warning" options may follow
    for k, line in enumerate(lines):
        if fence is None and hidden is None or boxes:
            # An admonition's body is indented four under its marker and is its text at the marker's
            # own indent: read so, a note after a list ended the list (pydantic-settings' "!!! note"
            # after "1. Note that ..." was read as the item's, and the item as its heading).
            width = indent_of(line)
            while boxes and line.strip() and width < boxes[-1] + 4:
                boxes.pop()
            if boxes and line.strip():
                line = " " * (width - 4 * len(boxes)) + line.expandtabs(4).lstrip()
            if fence is None and hidden is None and _BOX.match(line):
                boxes.append(len(line) - len(line.lstrip()) + 4 * len(boxes))
        after_blank, blank = blank, not line.strip()
        if fence is None and hidden is None and (item := _ITEM_FENCE.match(line)):
            # A list item that opens with a fence ("- ```" / "  PIP_FIND_LINKS=..." / "  ```"): its
            # code, under the item (read as an item's text, its code ran on over the page).
            line = item.group(1) + " " * len(item.group(2)) + line[item.end():]
        if fence is None and hidden is None:
            deep = not blank and indent_of(line) >= 4
            # An indented code block goes on through deep and blank lines, and starts at a
            # deep line after a blank one outside a list item, admonition or tab.
            # (A glossary's definitions are indented under their terms, later paragraphs too: text,
            # not code; structlog's read as code blocks with their roles raw.)
            defined = glossary is not None and glossary == len(directives)
            indented = (indented and (deep or blank)) or (
                deep and after_blank and not contained and not defined and fence_open(line) is None)
            if indented:
                if code is not None:
                    code.append(len(out))
                out.append(line)  # "    <!-- a template -->" in an indented code block is code, not a comment
                continue
            if _CONTAINER_OPEN.match(line):
                contained = True
            elif line.strip() and after_blank and line[:1] not in (" ", "\t"):
                contained = False  # a paragraph of its own ends the list or admonition
        if fence is not None:
            fenced.append(line)
            if fence_closes(line, fence):
                out.extend(_myst_block(fenced, fence, *myst) if myst else _code_block(fenced, fence))
                fence, fenced, boundary, myst = None, [], True, None
            continue
        if destination:  # "[pre-commit-mutable-rev]:" and its URL on the line below
            destination = False
            out.append("")
            continue
        if title is not None:  # a definition's title, still open: no text of the page
            out.append("")
            title = None if blank or title in line else title
            continue
        if hidden is not None:  # a fence inside a comment is the comment's (it was kept, searchable)
            line, hidden = _drop_hidden(line, hidden)
            if hidden is not None or not line.strip():
                out.append("")
                continue
        closes = bool(directives) and fence_closes(line, directives[-1][0])
        if closes:
            options = None  # (a "---" never closed: the options end with the directive)
        if options is not None:  # a directive's options, right under its opener, never shown
            rule = line.strip() == "---"
            if options == "yaml" or options == "start" and rule and _yaml_closes(lines, k, directives[-1][0]):
                # options as YAML, between two "---" (one never closed before the directive is text)
                options = None if options == "yaml" and rule else "yaml"
                out.append("")
                continue
            # (a "---" that opens no YAML is a rule: it shows no text, and the label waits for some)
            options = "more" if rst._OPTION.match(line) else None
            if options or rule:
                out.append("")
                continue
        if closes:
            _, at, opened = directives.pop()
            glossary = None if glossary is not None and len(directives) < glossary else glossary
            if label and label == opened:  # a directive with no text under its label: the label is its text
                out[at] = label.rstrip(": ")  # ("```{rubric} Footnotes")
            label = ""
            out.append("")
            continue
        if glossary == len(directives) and line.strip():
            # A glossary's term at its margin, its definition indented under it: read as rst reads
            # one, "- term: definition" with later paragraphs in the item (attrs' glossary: five
            # chunks of "slotted classes" never said so).
            if not line[:1].isspace() and k + 1 < len(lines) and lines[k + 1][:1].isspace() and lines[k + 1].strip():
                term = _reading(strip_html(line.strip()), [], links)
                out.append("")
                continue
            width = indent_of(line)
            if term is not None:
                line, term, depth = f"- {term}: {line.strip()}", None, width
            elif width:  # the definition's later lines and paragraphs, two in: the item's
                line = "  " + " " * max(width - depth, 0) + line.expandtabs(4).lstrip()
        d = _MYST.match(line)
        if d and d.group(2)[0] == "`" and "`" in d.group(4):  # "```{note}``` opens a note." is inline code
            d = None
        if d:
            place_label_alone()
            kind, name, arg = _myst_kind(d.group(3), _reading(strip_html(d.group(4)), [], links))
            if kind == "text":
                label = _myst_label(name, arg)
                directives.append((d.group(2), len(out), label))
                glossary = len(directives) if name == "glossary" else glossary
                options = "start"
                out.append("")
            else:
                fence, fenced, myst = d.group(2), [line], (kind, name, arg)
            continue
        opener = fence_open(line)
        if opener:
            place_label_alone()
            fence, fenced = opener, [line]
            # Material's title="/var/run/database_password" is the code's caption (here, the file
            # it goes in): on the blank line above, as a code-block's caption is read (it ends the
            # paragraph above when there is one: "... will look like the following: /var/run/x:").
            t = _FENCE_TITLE.search(line)
            if t and out and not out[-1].strip():
                out[-1] = f"{line[:len(line) - len(line.lstrip())]}{t.group(2)}:"
            continue
        # A definition cannot interrupt a paragraph (CommonMark): it starts a block, after a
        # blank or hidden line, a heading, a fence or another definition, in a quote or a list
        # item too ("[//]: # (internal: ...)" was quoted as an answer).
        starts = (after_blank or boundary or not out or not out[-1].strip() or out[-1].lstrip().startswith("#"))
        was_defining, boundary = defining, bool(_SETEXT.match(line))
        m = _LINK_DEF.match(_QUOTE_MARKS.sub("", line).lstrip()) if starts or was_defining else None
        t = _TITLE_LINE.match(line) if was_defining and m is None else None
        defining = m is not None
        found = m or t
        if found is None and (starts or was_defining) and _label_alone(lines, k):
            destination = defining = True
            out.append("")
            continue
        if found is not None:
            opened = found.group("open")
            title = _TITLE_CLOSER[opened] if opened else None
            out.append("")
            continue
        if block_options and _BLOCK_OPTION.match(line):  # a "///" block's options, never shown
            out.append("")
            continue
        block_options = False
        if _HIDDEN_OPEN.search(line):
            line, hidden = _drop_hidden(line, hidden)
        if _CLOSE.match(line):
            label = ""  # a block that held no text of its own
            out.append("")
            continue
        m = _CONTAINER.match(line)  # before the includes: "::: tip" is a container, not a module
        if m:
            label = _label(m.group(1), m.group(2))
            out.append("")
            continue
        if _INCLUDE.match(line) or _MYST_TARGET.match(line) or _MYST_COMMENT.match(line) and starts:
            out.append("")  # (a MyST "% comment" opens a block: "30\n% of users" goes on a sentence)
            continue
        m = _ADMONITION.match(line)
        if m:
            # "/// html | div.result" wraps its text in an element and says nothing itself
            label = "" if m.group(1).lower() == "html" else _label(m.group(1), m.group(2) or m.group(3))
            block_options = line.lstrip().startswith("/")
            out.append("")
            continue
        m = _TAB.match(line) or _CALLOUT.match(line)
        if m:
            label = _label("tab", m.group(1)) if m.re is _TAB else _label(m.group(1), m.group(2))
            out.append("")
            continue
        h = _HTML_HEADING.match(line)
        if h:
            out.append("#" * int(h.group(1)) + " " + " ".join(strip_html(h.group(2)).split()))
            continue
        if plain is not None and _ESCAPED_HASH.match(line):
            plain.append(len(out))
        line = _reading(strip_html(line), out, links)
        if label and line.strip():
            if _TABLE_OR_LIST.match(line):
                place_label_alone()
            else:
                indent = len(line) - len(line.lstrip())
                line, label = line[:indent] + label + line[indent:], ""
        out.append(line)
    if fence is not None:  # an unclosed block runs to the end, as written
        out.extend(_myst_block(fenced, fence, *myst) if myst else _code_block(fenced, fence))
    return out


_LINK_LABEL = re.compile(r"^ {0,3}\[(?!\^)(?:[^\]\\]|\\.)+\]:[ \t]*$")  # a definition's label, its URL below
_DESTINATION = re.compile(r"""^[ \t]*(?:<[^<>]*>|\S+)(?:[ \t]+(?:"[^"]*"|'[^']*'|\([^()]*\)))?[ \t]*$""")
_LABEL_DEF = re.compile(r"^ {0,3}(?:> ?)*\[(?!\^)((?:[^\]\\]|\\.)+)\]:")


def _yaml_closes(lines: list[str], k: int, opener: str) -> bool:
    """Whether the "---" at line k closes again before the directive ``opener`` opened does."""
    for line in lines[k + 1:]:
        if line.strip() == "---":
            return True
        if fence_closes(line, opener):
            return False
    return False


def _label_alone(lines: list[str], k: int) -> bool:
    """Whether line k is a definition's label alone, "[label]:", with its
    destination on the next line (without one it is text, as CommonMark reads it)."""
    return (k + 1 < len(lines) and _LINK_LABEL.match(_QUOTE_MARKS.sub("", lines[k]).lstrip()) is not None
            and lines[k + 1].strip() != "" and fence_open(lines[k + 1]) is None
            and _DESTINATION.match(_QUOTE_MARKS.sub("", lines[k + 1])) is not None)


def _defined(lines: list[str]) -> frozenset[str]:
    """The labels a page's link reference definitions define, casefolded (a
    shortcut link, "[mypyc]", reads as its text only where one does)."""
    return frozenset(m.group(1).casefold() for k, line in enumerate(lines) if "]:" in line
                     and (m := _LABEL_DEF.match(line)) and (line[m.end():].strip() or _label_alone(lines, k)))


def _myst_kind(directive: str, arg: str) -> tuple[str, str, str]:
    """(kind, name, argument) of a MyST directive: "text" (its body reads as
    the page's text, under a label), "code", "table", "rst" (``eval-rst``) or
    "drop" (what the page shows is not there: a table of contents, an
    include, a command's output)."""
    name = directive.lower().rsplit(":", 1)[-1]  # "py:function": function
    if name in rst._DROPPED or name in _MYST_DROPPED or name.startswith("auto"):
        return "drop", name, arg
    if name in ("list-table", "csv-table"):
        return "table", name, arg
    if name == "eval-rst":
        return "rst", name, arg
    if (name in rst._ADMONITIONS or name in rst._VERSIONS or name in rst._TITLED or name in rst._OBJECTS
            or name in _MYST_TEXT):
        return "text", name, arg
    return "code", name, arg  # "```{code-block} python", Quarto's "```{python}", one citebot does not know


def _myst_label(name: str, arg: str) -> str:
    """The label a MyST directive's text opens with, as the rst reader writes it."""
    if name in rst._ADMONITIONS:
        return _label(rst._ADMONITIONS[name], arg or None)
    if name in rst._VERSIONS:
        version, _, text = arg.partition(" ")
        return f"{rst._VERSIONS[name]} {version}: " + (f"{text} " if text else "")
    if name in rst._OBJECTS:
        return f"`{arg}`: " if arg else ""
    return f"{arg.replace('**', '')}: " if arg and name in ("admonition", *rst._TITLED) else ""


def _myst_block(lines: list[str], opener: str, kind: str, name: str, arg: str) -> list[str]:
    """A MyST directive that is no text of the page, as the page shows it, a
    line for each of its lines: nothing, code (its options gone, a caption
    over it), a table, or reStructuredText read as such."""
    n = len(lines)
    closed = n > 1 and fence_closes(lines[-1], opener)
    body = lines[1:-1] if closed else lines[1:]
    j, yaml = 0, {}
    if body and body[0].strip() == "---":  # options as YAML: "---" / "key: value" / "---"
        end = next((k for k in range(1, len(body)) if body[k].strip() == "---"), None)
        if end is not None:
            for x in body[1:end]:
                key, _, value = x.strip().partition(":")
                yaml[key.strip()] = value.strip()
            j = end + 1
    options, j = rst.read_options(body, j, len(body))
    options = {**yaml, **options}
    rest = body[j:]
    if kind == "code":  # the fence goes on the line right above the code, a caption on the directive's
        j += next((k for k, x in enumerate(rest) if x.strip()), len(rest))
        rest = body[j:]
    out = [""] * (1 + j)
    placed = rst.placed_table(arg, options, rest, 1 + j, n) if name == "list-table" else None
    if placed is not None:  # each row on its own line, its title on the directive's
        out = placed
    elif kind == "table":  # its title on the directive's line, its rows after the options
        table = rst.table(name, arg, options, rest)
        out[0], table = (table[0], table[1:]) if arg else ("", table)
        out += table
    elif kind == "rst":
        out += rst.to_markdown(rest)
    elif kind == "code":
        lang = (arg.split()[0] if arg else "") if name in rst._CODE else name
        indent = lines[0][:len(lines[0]) - len(lines[0].lstrip())]
        # a colon fence's code is fenced by a backtick run longer than any inside it
        run = opener if opener[0] != ":" else "`" * max([3, *(len(r) + 1 for x in rest for r in re.findall("`{3,}", x))])
        if options.get("caption"):  # "app.py:" says where the code goes (a line of its own: an option's)
            out[0] = f"{indent}{options['caption']}:"
        out[j] = f"{indent}{run}{lang}"
        out += rest + ([f"{indent}{run}"] if closed else [])
    if len(out) > n:  # (no room for a table's rule: its lines as written)
        return [""] * (1 + j) + rest + [""] * closed
    return out + [""] * (n - len(out))  # (a dropped one: nothing)


_QUOTE_MARKS = re.compile(r"^ {0,3}(?:> ?)+")  # "> " (and "> > ") opening a block quote's line
_DEFINITION = re.compile(r"^ {0,3}: {1,4}(?=\S)")  # ":   " opening a definition (Markdown Extra, MkDocs)
_ESCAPED_HASH = re.compile(r"^ {0,3}\\#")  # "\\# 1 priority": a "#" that opens no heading
_NO_TERM = re.compile(rf"^\s*(?:{_LIST_MARK}|#|\||```|~~~|>)")  # a line that is no definition's term
_FOOTNOTE_REF = re.compile(r" ?\[\^[^\]\s]+\](?!:)")  # "[^1]" in the text ("for you [^1], however")
_FOOTNOTE_DEF = re.compile(r"^ {0,3}\[\^[^\]\s]+\]: ?")  # "[^1]: " opening the note


# An image pasted into the page as a data: URL (Notion, Typora, Obsidian exports) reads as its alt
# text, as the page shows it: its base64 was indexed as text (a 200 KB note gave 653 chunks of it).
_DATA_IMAGE = re.compile(r"!\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\(\s*<?data:[^)\s>]*>?"
                         r"""(?:\s+(?:"[^"\n]*"|'[^'\n]*'|\([^()\n]*\)))?\s*\)""")


def _reading(line: str, out: list[str], links: frozenset[str] = frozenset()) -> str:
    """A text line as it reads rendered: without block-quote marks, footnote
    marks or a definition's ":" (a quote read "> The archive keeps ... >
    After that"); a definition makes the term line before it end in ":", so
    "Tenant" and "An isolated ..." read as "Tenant: An isolated ...".  The
    line count stays."""
    if "data:" in line:
        line = _DATA_IMAGE.sub(r"\1", line)
    line = _FOOTNOTE_DEF.sub("", _QUOTE_MARKS.sub("", line))
    if _DEFINITION.match(line):
        line = _DEFINITION.sub("", line)
        if out and out[-1].strip() and not out[-1].rstrip().endswith((":", ".", "?", "!")):
            out[-1] = out[-1].rstrip() + ":"
        elif len(out) >= 2 and not out[-1].strip() and out[-2].strip() and (len(out) == 2 or not out[-3].strip()) \
                and not _NO_TERM.match(out[-2]) and len(out[-2]) <= 120:
            # MyST writes a blank line between the term and its definition: the term joins the
            # definition's line (structlog's bare "`structlog.processors.dict_tracebacks`" was a
            # paragraph of its own, and quoted alone as an answer).
            term, out[-2] = out[-2].strip(), ""
            line = f"{term}{'' if term.endswith(':') else ':'} {line}"
    if "`#!" in line:
        line = _INLINE_LANG.sub(r"\1", line)
    if "{" in line or ":" in line:  # Material's icons and attribute lists show no text (outside code)
        spans = [m.span() for m in _CODE_SPAN.finditer(line)]
        line = _DECORATION.sub(lambda m: m.group(0) if _inside(spans, m.start()) else "", line)
        line = _EMPTY_LINK.sub("", line)  # a link that was an icon alone ("[:octicons-file-code-24:][_keys]")
    if "}`" in line:  # a MyST role: what it shows ("{doc}`the license <license>`" reads "the license")
        # (not in code: "`/items/{item_id}` and `PUT`" holds none)
        spans = [m.span() for m in _CODE_SPAN.finditer(line)]
        line = _MYST_ROLE.sub(lambda m: m.group(0) if _inside(spans, m.start()) or not _role_at(line, m)
                              else rst.role(m.group(1), m.group(2)), line)
    if "``" in line:  # "``--help``" is the code span "`--help`" (Click's pages, written by rst hands)
        line = _DOUBLE_TICKS.sub(r"`\1`", line)
    return _rendered_links(_FOOTNOTE_REF.sub("", line), links)


_DOUBLE_TICKS = re.compile(r"(?<!`)`` ?([^`\n]*?[^`\s]) ?``(?!`)")

# "[`Uint8Array`][]", "[the docs][docs-link]": a reference link, whose page shows its text (the
# definition is dropped); after a space or bracket, not after a word ("matrix[0][1]").
_REF_LINK = re.compile(r"(?<![\w\])\\`])\[((?:[^\[\]`\\]|\\.|`[^`]*`)+)\]\[(?:[^\[\]\\]|\\.)*\]")
_SHORTCUT = re.compile(r"(?<![\w\])\\`!])\[((?:[^\[\]`\\]|\\.|`[^`]*`)+)\](?![\[(:])")  # "[mypyc]", no (url) or [ref]
# "\[", "\*": a backslash escape shows the character (CommonMark: ASCII punctuation)
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def _role_at(line: str, m: re.Match) -> bool:
    """Whether a role stands at ``m``: right after a word only when its name is a
    role Sphinx knows (MyST reads "compatible{sup}`1`" as one; "x{y}`z`" is left as written)."""
    return m.start() == 0 or not (line[m.start() - 1].isalnum() or line[m.start() - 1] == "_") \
        or m.group(1) in rst.KNOWN_ROLES


def _inside(spans: list[tuple[int, int]], at: int) -> bool:
    """Whether offset ``at`` lies in one of ``spans`` (sorted, apart)."""
    k = bisect.bisect_right(spans, (at, float("inf"))) - 1
    return k >= 0 and spans[k][0] <= at < spans[k][1]


def _rendered_links(line: str, links: frozenset[str] = frozenset()) -> str:
    """Reference links as their text and escapes as their character, outside
    code spans (a code span keeps what it says: `a[i][j]`, `\\n`); a
    shortcut link ("[mypyc]") as its text where ``links`` holds its label."""
    if "[" not in line and "\\" not in line:
        return line
    spans = [m.span() for m in _CODE_SPAN.finditer(line)]

    def outside(m: re.Match, keep: str) -> str:
        return m.group(0) if _inside(spans, m.start()) else keep
    line = _REF_LINK.sub(lambda m: outside(m, m.group(1)), line)
    if links:
        spans = [m.span() for m in _CODE_SPAN.finditer(line)]
        line = _SHORTCUT.sub(lambda m: outside(m, m.group(1)) if m.group(1).casefold() in links else m.group(0), line)
    spans = [m.span() for m in _CODE_SPAN.finditer(line)]
    return _ESCAPE.sub(lambda m: outside(m, m.group(1)), line)


def _code_block(lines: list[str], opener: str) -> list[str]:
    """A fenced block as its page shows it, or blank lines when all it holds
    is an include directive whose file is not here (``{!> ../../docs_src/x.py!}``)."""
    inner = [x for x in lines[1:] if x.strip() and not fence_closes(x, opener)]
    if inner and all(_INCLUDE.match(x) for x in inner):
        return [""] * len(lines)
    head = _FENCE_OPEN.match(lines[0])
    assert head is not None  # ``lines`` opens with the fence that ``fence_open`` found
    lang, annotate = _fence_info(head.group(2))
    first = lines[0][:head.start(2)] + lang
    body = lines[1:]
    if lang.lower() in _TRANSCRIPT:
        body = [_TERMYNAL_TAG.sub("", x) if "<" in x else x for x in body]
        body = ["" if _TERMYNAL_PROGRESS.match(x) else x for x in body]
    if any(x.lstrip().startswith(">>>") for x in body):  # a session's doctest flags, as rst's (structlog's MyST)
        body = [rst._DOCTEST_FLAG.sub("", x) for x in body]
    return [first, *(_unannotated(x, annotate) for x in body)]


def _unannotated(line: str, annotate: bool) -> str:
    """``line`` without its Material annotation marker: "# (1)!" anywhere, "# (1)" in an .annotate block."""
    m = _ANNOTATION.search(line) if "(" in line else None
    return line[:m.start()] if m and (annotate or m.group(1)) else line


# A fence's info string as Material for MkDocs writes it: a language with attributes
# (```Python hl_lines="2"``, ```{ .dockerfile .annotate }``): the page shows the code,
# not the attributes, and a quote showed ```Python hl_lines="2"``.
def _fence_info(info: str) -> tuple[str, bool]:
    """The language a fence's info string names ("" for none) and whether its
    block carries Material's code annotations (``.annotate``)."""
    info = info.strip()
    if info.startswith("{"):
        classes = re.findall(r"(?<![\w-])\.([\w+#-]+)", info)
        return next((c for c in classes if c != "annotate"), ""), "annotate" in classes
    word = info.split(maxsplit=1)[0] if info else ""
    return ("" if "=" in word else word), False


# A console transcript on an MkDocs page (termynal, as FastAPI's docs use it) colours its output
# with HTML the page renders: "<font color=...>INFO</font>" was quoted tags and all.  Only the
# presentational tags go, and only in a transcript: an ```html block shows its tags.
_TRANSCRIPT = {"console", "shell-session", "sh-session", "pycon"}
_TERMYNAL_TAG = re.compile(r"</?(?:font|span|b|u|i|strong|em)(?:\s[^<>]*)?>", re.I)
_TERMYNAL_PROGRESS = re.compile(r"^\s*---> 100%\s*$")  # termynal's progress bar
# Material's code annotation markers: "# (1)!" (the "!" hides the comment) anywhere, "# (1)" in a
# block marked .annotate; the page shows a numbered button, not the comment.
_ANNOTATION = re.compile(r"\s*(?:#|//)\s*\(\d+\)(!?)\s*$")


def _drop_hidden(line: str, closer: str | None) -> tuple[str, str | None]:
    """``line`` without HTML comments and ``<script>``/``<style>`` elements,
    their content included; the closer (a pattern) still awaited after it."""
    kept: list[str] = []
    rest = line
    while rest:
        if closer is not None:
            m = re.search(closer, rest, re.I)
            if m is None:
                return "".join(kept), closer
            rest, closer = rest[m.end():], None
        else:
            # "`<!--`" or "`python <script>.py`" in inline code opens nothing (it hid the rest of the file)
            spans = [c.span() for c in _CODE_SPAN.finditer(rest)]
            m = next((h for h in _HIDDEN_OPEN.finditer(rest) if not any(a <= h.start() < b for a, b in spans)), None)
            if m is None:
                kept.append(rest)
                break
            kept.append(rest[:m.start()])
            # "<!-->" and "<!--->" are whole (empty) comments (CommonMark, HTML): the closer may
            # share the opener's dashes, or the comment ran on and hid the rest of the page.
            rest = rest[m.start() + 2:] if m.group(1) is None else rest[m.end():]
            closer = "-->" if m.group(1) is None else rf"</{m.group(1)}[^>]*(?:>|$)"
    return "".join(kept), closer

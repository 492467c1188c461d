"""Markup that documentation sites add to Markdown, read as a person reads
the rendered page (pure functions over lines; the line count never changes,
so citations keep pointing at the right source lines).

* heading attribute lists: ``## Setup { #setup }`` -> ``## Setup``
* admonitions (Python-Markdown blocks): ``/// tip | Technical Details`` opens
  a block read as "Tip (Technical Details): ..." and a bare ``///`` closes it;
  MkDocs ``!!! note "Title"`` likewise
* include directives whose file is not in the folder: ``{* ../../docs_src/x.py hl[3] *}``,
  ``--8<-- "file"`` -> dropped
* HTML comments -> dropped; inline HTML tags -> their text (``<abbr title="...">ASGI</abbr>``
  reads "ASGI"; ``<td>``, ``<br>`` and other block tags become a space)

Code fences and inline code spans are left exactly as written.
"""
from __future__ import annotations

import re

_FENCE = re.compile(r"^\s*(```|~~~)")
_ANCHOR = re.compile(r"\s*\{\s*#[^{}]*\}\s*$")
_ADMONITION = re.compile(r"^\s*(?:///|!!!|\?\?\?\+?)\s*([A-Za-z-]+)(?:\s*\|\s*(.*?)|\s+\"(.*?)\")?\s*$")
_CLOSE = re.compile(r"^\s*///\s*$")
_INCLUDE = re.compile(r"^\s*(?:\{\*.*\*\}|--8<--\s.*)\s*$")
_INLINE = "a|abbr|b|code|dfn|em|font|i|kbd|mark|s|small|span|strong|sub|sup|u|var|q|cite|time|ins|del"
_BLOCK = ("br|hr|img|div|p|table|thead|tbody|tfoot|tr|td|th|details|summary|ul|ol|li|dl|dt|dd|figure|"
          "figcaption|section|article|blockquote|iframe|video|audio|source|picture|center|h[1-6]")
_TAG_INLINE = re.compile(rf"</?(?:{_INLINE})(?:\s[^<>]*)?/?>", re.I)
_TAG_BLOCK = re.compile(rf"</?(?:{_BLOCK})(?:\s[^<>]*)?/?>", re.I)
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def strip_anchor(heading: str) -> str:
    return _ANCHOR.sub("", heading).strip()


def strip_html(line: str) -> str:
    """Tags removed outside inline code spans; block tags leave a space."""
    out, pos = [], 0
    for m in _CODE_SPAN.finditer(line):
        out.append(_strip_tags(line[pos:m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(_strip_tags(line[pos:]))
    text = "".join(out)
    return re.sub(r"(?<=\S) {2,}(?=\S)", " ", text) if text != line else line


def _strip_tags(text: str) -> str:
    return _TAG_INLINE.sub("", _TAG_BLOCK.sub(" ", text))


def _label(m: re.Match) -> str:
    title = (m.group(2) or m.group(3) or "").replace("**", "").strip()
    kind = m.group(1).replace("-", " ").capitalize()
    return f"{kind} ({title}): " if title else f"{kind}: "


def clean(lines: list[str]) -> list[str]:
    """The lines as they read rendered; same number of lines."""
    out: list[str] = []
    fence: str | None = None
    comment = False
    label = ""  # an admonition's label, waiting for its first line of text
    for line in lines:
        f = _FENCE.match(line)
        if fence is not None:
            out.append(line)
            if f and line.strip().startswith(fence):
                fence = None
            continue
        if f:
            fence = f.group(1)
            if label:  # a block that opens with code: the label stands on its own line before it
                out[-1], label = label.strip(), ""
            out.append(line)
            continue
        if comment or "<!--" in line:
            line, comment = _drop_comments(line, comment)
        if _CLOSE.match(line) or _INCLUDE.match(line):
            out.append("")
            continue
        m = _ADMONITION.match(line)
        if m:
            label = _label(m)
            out.append("")
            continue
        line = strip_html(line)
        if label and line.strip():
            indent = len(line) - len(line.lstrip())
            line, label = line[:indent] + label + line[indent:], ""
        out.append(line)
    return out


def _drop_comments(line: str, inside: bool) -> tuple[str, bool]:
    """``line`` without HTML comments; whether a comment is still open after it."""
    kept: list[str] = []
    rest = line
    while rest:
        if inside:
            end = rest.find("-->")
            if end == -1:
                return "".join(kept), True
            rest, inside = rest[end + 3:], False
        else:
            start = rest.find("<!--")
            if start == -1:
                kept.append(rest)
                break
            kept.append(rest[:start])
            rest, inside = rest[start + 4:], True
    return "".join(kept), inside

"""Document metadata that fails closed.

Markdown and text files may open with front matter: YAML between ``---``
lines, or TOML between ``+++`` lines (blank lines and a byte-order mark
before it are fine).  HTML gives ``<meta name="status|audience|tenant|lang|title">``
and ``<html lang>``.  Keys are read case-insensitively (``Audience:`` is
``audience``).

The rule: metadata that cannot be read never makes a document public.  A
block that opens and never closes, does not parse, is not a mapping, names a
key twice, or gives a value of the wrong type (``status: [1, 2]``,
``tenant: 42`` — write ``tenant: "42"``) is an ``UnreadableDocument``
naming the line, and the file is skipped with that message: skipping, not
guessing, because any reading of a broken ``audience`` line could publish
what its author meant to restrict.  Values are lower-cased (but a tenant);
unknown values are kept, so ``audience: internal`` reaches only
``--audience internal``.
"""
from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Sequence

import regex
import yaml

from citebot.schema import STATUSES, lang_tag
from citebot.tokens import cut_bytes

META_KEYS = ("title", "status", "audience", "lang", "tenant")
SCOPE_KEYS = ("status", "audience", "lang", "tenant")
DEFAULTS = {"status": "current", "audience": "public", "tenant": None}
# The longest scope values an index stores (Milvus's column widths; a local
# index keeps the same rule).  A longer one fails the document closed: on
# Milvus it failed the whole write, and a page just marked staff stayed public.
LONGEST = {"status": 128, "audience": 128, "lang": 32, "tenant": 512}
TITLE_MAX = 4000  # bytes; a longer title is cut (it is shown, not filtered on), on every backend
_FENCES = {"---": ("---", "..."), "+++": ("+++",)}
# Blank is also what renders as nothing: a zero-width space, a left-to-right mark or a
# soft hyphen before "---" hid the front matter from the check and published the page
# with its YAML as text.  So every format character (Unicode Cf) and the other
# characters that draw nothing (fillers, variation selectors) count as blank.
_INVISIBLE = r"\s\p{Cf}\u034f\u115f\u1160\u17b4\u17b5\u180e\u3164\uffa0\ufe00-\ufe0f\U000e0100-\U000e01ef"
_EDGES = regex.compile(f"^[{_INVISIBLE}]+|[{_INVISIBLE}]+$")
# A scope key on the fence line itself ("--- {audience: staff}"); a diff's "--- a/file" is text.
_FENCE_AND_MORE = re.compile(r"(---|\+\+\+)[ \t]*[^\s\-+].*\b(status|audience|lang|tenant)\s*[:=]", re.I)


# A first line that opens front matter for some tool but not as citebot reads it (exactly "---"
# or "+++"): "----" (python-frontmatter), "--- # comment" and a "%YAML 1.2" directive (YAML).
# Read as text they published the page whose scope they held.
_NEAR_FENCE = re.compile(r"^(?:-{3,}|\+{3,})(?:[ \t]+#.*)?$|^%(?:YAML|TAG)\b")
_FENCE_LIKE = re.compile(r"^(?:-{3,}|\+{3,}|\.{3})(?:[ \t]+#.*)?$")
# A key line, its key quoted or a list item's too ("- audience: staff", '"audience": staff').
_KEY_LINE = re.compile(r"""^(?:-[ \t]+)?["']?([A-Za-z_][\w-]*)["']?[ \t]*[:=][ \t]*(.*)$""")
_SCOPE_ANYWHERE = re.compile(r"""\b(status|audience|lang|tenant)["']?[ \t]*[:=]""", re.I)


def _bare(line: str) -> str:
    return _EDGES.sub("", line)


class UnreadableDocument(Exception):
    """A file that cannot be read; the message says why (and where)."""


class _Twice(Exception):
    def __init__(self, key, line: int):
        super().__init__(key)
        self.key, self.line = key, line


class _Loader(yaml.SafeLoader):
    """YAML that refuses a key given twice (PyYAML keeps the last one, so
    ``audience: staff`` then ``audience: public`` would publish the page)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, str | int | float | bool):
                if key in seen:
                    raise _Twice(key, key_node.start_mark.line)
                seen.add(key)
        return super().construct_mapping(node, deep)


_NEWLINE = re.compile(r"\r\n|\r|\n")


def lines_of(text: str) -> list[str]:
    """Source lines as Python's universal newlines and editors read them:
    split at ``\r\n``, ``\n`` and a lone ``\r``, never at a form feed, U+2028
    or U+0085, which ``str.splitlines`` also takes for line ends.  A lone
    ``\r`` is a line end even in a file that also holds ``\n``: read as part
    of a line, ``---\raudience: staff\r---`` hid the front matter and
    published the page; a classic Mac OS file read as one line gave no chunks."""
    lines = _NEWLINE.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def split_front_matter(text: str) -> tuple[dict, list[str], int]:
    """(metadata, body lines, number of lines the front matter took)."""
    lines = lines_of(text.lstrip("\ufeff"))
    first = _first_content_line(lines)
    if first is not None and _FENCE_AND_MORE.match(_bare(lines[first])):
        # "--- {audience: staff}": meant as front matter, read by no tool as such (fail closed)
        raise UnreadableDocument(f"line {first + 1}: front matter opens with {_bare(lines[first])[:3]} alone on "
                                 "its line; move what follows it to the next line")
    if first is None or _bare(lines[first]) not in _FENCES:
        if first is not None:
            if _NEAR_FENCE.match(_bare(lines[first])):
                _near_fence(lines, first)
            _foreign_metadata(lines, first)
        return {}, lines, 0
    fence = _bare(lines[first])
    end = next((i for i in range(first + 1, len(lines)) if _bare(lines[i]) in _FENCES[fence]), None)
    if end is None:
        raise UnreadableDocument(f"line {first + 1}: front matter opened with {fence} is never closed; "
                                 f"add a closing {fence} line")
    body = "\n".join(lines[first + 1:end])
    meta = _parse(body, fence, first + 2)
    return meta, lines[end + 1:], end + 1


def _near_fence(lines: list[str], first: int) -> None:
    """Front matter opened by a line that is nearly a fence ("----", "---
    # comment", or YAML directives and then "---") that is closed by a
    fence-like line and names a scope key fails closed. Unclosed, or with a
    code fence inside, it is text (no tool reads it as front matter)."""
    i = first
    if _bare(lines[first]).startswith("%"):
        # A YAML stream: directives, comments and blank lines, then "---" opens the document.
        i += 1
        while i < len(lines) and (not _bare(lines[i]) or _bare(lines[i]).startswith(("%", "#"))):
            i += 1
        if i >= len(lines) or not _FENCE_LIKE.match(_bare(lines[i])):
            return  # "%YAML is a directive" was a sentence
    for j in range(i + 1, min(len(lines), i + 200)):
        line = _bare(lines[j])
        if _FENCE_LIKE.match(line):
            break  # closed: the block is what it read
        if line.startswith(("```", "~~~")):
            return  # a code block: page text, not front matter
    else:
        return  # never closed within reach
    for line in (_bare(x) for x in lines[i + 1:j]):
        m = _KEY_LINE.match(line)
        named = [(m.group(1), m.group(2))] if m else []
        named += [(k, "") for k in _SCOPE_ANYWHERE.findall(line)]  # a flow mapping: {audience: staff}
        for key, value in named:
            k = key.lower()
            if k in SCOPE_KEYS or misspelt(k, value.strip()):
                raise UnreadableDocument(f"line {first + 1}: front matter opens with {_bare(lines[first])[:20]!r}, "
                                         "which citebot does not read; open and close it with a line of exactly ---")


# MultiMarkdown / Python-Markdown "Meta-Data" (MkDocs' meta): "Key: value" lines up to
# the first blank line, a continuation indented four spaces.
_MMD_KEY = re.compile(r"^ {0,3}([A-Za-z0-9_][A-Za-z0-9_ -]*):\s*(.*)$")  # MultiMarkdown keys may hold spaces
_MMD_MORE = re.compile(r"^ {4,}\S")


def _foreign_metadata(lines: list[str], first: int) -> None:
    """Scope written in a metadata format citebot does not read (Hugo's JSON
    front matter, MultiMarkdown's "Audience: staff" header) fails closed:
    read as text, it published a page its author had meant to restrict.  A
    "Status:" header restricts only with a status word as its value (a
    ticket's "Status: open" is text)."""
    head = _bare(lines[first])
    keys: list[tuple[str, object, int]] = []
    if head.startswith("{"):
        text = "\n".join(lines[first:]).lstrip()
        try:
            found, end = json.JSONDecoder().raw_decode(text)
        except ValueError:
            return
        if isinstance(found, dict) and not text[end:].split("\n", 1)[0].strip():  # the object ends its line
            keys = [(str(k), v, first) for k, v in _with_nested(found)]
        kind = "JSON front matter"
    else:
        for i in range(first, len(lines)):
            if not lines[i].strip():
                break
            m = _MMD_KEY.match(lines[i])
            if m:
                keys.append((m.group(1).replace(" ", ""), m.group(2).strip(), i))  # "Base Header Level"
            elif not (keys and _MMD_MORE.match(lines[i])):
                break  # a line of text ends the header (Python-Markdown reads the keys above it)
        kind = "a MultiMarkdown metadata header"
    for key, value, i in keys:
        k = key.strip().lower()
        k = k if k in SCOPE_KEYS else misspelt(k, value) or ""
        if k in ("audience", "tenant") or (k == "status" and names_status(value)):
            where = _line_of(key, lines[first:], first + 1) if kind.startswith("JSON") else f"line {i + 1}"
            raise UnreadableDocument(f"{where}: {k} is given in {kind}, which citebot does not read; "
                                     f"write it as YAML front matter between --- lines ('---', '{k}: ...', '---')")


def _first_content_line(lines: list[str]) -> int | None:
    """The first line that is neither blank nor inside HTML comments: a
    page that opens with ``<!-- internal -->`` (or two comments on a line)
    and then front matter is still restricted by it (reading it as text
    would publish the page)."""
    i, n = 0, len(lines)
    while i < n:
        rest = _bare(lines[i])
        if not rest.startswith("<!--"):
            if rest:
                return i
            i += 1
            continue
        while rest.startswith("<!--"):  # every comment that opens this line, each maybe over several lines
            rest = rest[2:]  # "<!-->" and "<!--->" close at once: their closer shares the opener's dashes
            while "-->" not in rest:
                i += 1
                if i >= n:
                    return None
                rest = lines[i]
            rest = rest.split("-->", 1)[1].strip()
        if rest:
            return None  # text after the comments on their line: not a front matter page
        i += 1
    return None


def _parse(body: str, fence: str, line0: int) -> dict:
    try:
        meta = tomllib.loads(body) if fence == "+++" else (yaml.load(body, Loader=_Loader) or {})  # noqa: S506 - a SafeLoader
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {line0 + mark.line}" if mark is not None else f"line {line0}"
        raise UnreadableDocument(f"{where}: front matter is not valid YAML ({getattr(e, 'problem', e)})") from None
    except _Twice as e:
        raise UnreadableDocument(f"line {line0 + e.line}: {e.key} is given twice; keep one") from None
    except tomllib.TOMLDecodeError as e:
        raise UnreadableDocument(f"line {line0}: front matter is not valid TOML ({e})") from None
    if not isinstance(meta, dict):
        raise UnreadableDocument(f"line {line0}: front matter must be key: value lines")
    return normalize(meta, lines_of(body), line0)


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` is ``b`` with one letter added, dropped, changed or two swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return (a[i + 1:] == b[i + 1:] or a[i + 1:] == b[i:] or a[i:] == b[i + 1:]
            or (a[i:i + 2] == b[i:i + 2][::-1] and a[i + 2:] == b[i + 2:]))


# Words a document's life-cycle status is written in, beyond the three citebot
# knows: "statu: archived" is a misspelt status, whatever the value means.
STATUS_WORDS = frozenset(STATUSES) | {
    "archived", "archive", "deprecated", "retired", "obsolete", "outdated", "legacy", "expired", "withdrawn",
    "replaced", "old", "stale", "inactive", "hidden", "internal", "private", "wip", "review", "in review",
    "pending", "unpublished", "published", "final", "active", "live", "approved", "rejected"}


def misspelt(key: str, value) -> str | None:
    """The scope key that ``key`` misspells: one edit away, five letters or
    more ("long", "tent", "land" are words of their own), and for ``status``
    a value (or an item of a list) that names a status ("stats: 5" is a
    statistic, "states: [WA]" a list of states)."""
    if len(key) < 5:
        return None
    near = next((k for k in SCOPE_KEYS if _one_edit(key, k)), None)
    if near == "status" and not names_status(value):
        return None
    return near


def names_status(value) -> bool:
    """Whether ``value`` (or an item of a list) is a word a status is written in."""
    values = value if isinstance(value, (list, tuple)) else [value]
    return any(str(v).strip().lower() in STATUS_WORDS for v in values)


def normalize(meta: dict, lines: Sequence[str] = (), line0: int = 1, place: str | None = None) -> dict:
    """Known keys, case-insensitive, each a text value (or the document is unreadable).
    ``place``: where the keys are, when not on lines ("its PDF document info")."""
    out: dict = {}
    for key, value in _with_nested(meta):
        k = str(key).strip().lower()
        if k not in META_KEYS:
            # Other keys (author, tags ...) are the document's own business, but one a
            # letter or two from a scope key is that key misspelt: "audiance: staff"
            # read as no audience published the page.  It fails closed.
            near = misspelt(k, value)
            if near:
                raise UnreadableDocument(f"{place or _line_of(key, lines, line0)}: unknown key {k!r}; "
                                         f"did you mean {near!r}?")
            continue
        where = place or _line_of(key, lines, line0)
        if k in out:
            raise UnreadableDocument(f"{where}: {k} is given twice (keys are case-insensitive)")
        if not isinstance(value, str) and not (k == "title" and isinstance(value, int | float)):
            number = isinstance(value, int | float) and not isinstance(value, bool)
            hint = "" if not number else f'; write {k}: "{value}"' if place is None else \
                f"; give /{key} as a text string, ({value})"
            raise UnreadableDocument(f"{where}: {k} must be text, got {type(value).__name__} {value!r}{hint}")
        text = str(value).strip()
        if not text and k != "title":
            raise UnreadableDocument(f"{where}: {k} is empty; remove the line or give a value")
        out[k] = text
    return out


# Site generators keep a page's own fields in a table: Hugo's "[params]", Zola's
# "[extra]".  A scope key there is the page's scope (read as no key at all, it
# published a page a Hugo user had marked staff); given there and at the top
# level too, it is given twice.
NESTED = ("params", "extra")


def _with_nested(meta: dict) -> list[tuple]:
    items = list(meta.items())
    for key, table in meta.items():
        if str(key).strip().lower() in NESTED and isinstance(table, dict):
            items += [(k, v) for k, v in table.items() if str(k).strip().lower() != "title"]
    return items


def _line_of(key, lines, line0: int) -> str:
    pat = re.compile(rf"^\s*[\"']?{re.escape(str(key))}[\"']?\s*[:=]")
    return next((f"line {line0 + i}" for i, line in enumerate(lines) if pat.match(line)), f"line {line0}")


def finish(meta: dict, guess_lang, text_sample: str, fallback_title: str) -> dict:
    """Defaults filled in: status current, audience public, no tenant, a
    language read from the script, a title from the first heading or line."""
    out = {k: meta.get(k) for k in META_KEYS}
    for k, v in DEFAULTS.items():
        if out[k] in (None, ""):
            out[k] = v
    for k in ("status", "audience", "lang"):
        value = out[k]
        if value:
            out[k] = value.lower()
    if out["lang"]:
        out["lang"] = lang_tag(out["lang"])  # front matter's "en-US" is English, as <html lang="en-US"> is
    for k, most in LONGEST.items():
        if out[k] and len(str(out[k]).encode("utf-8")) > most:
            raise UnreadableDocument(f"its {k} is {len(str(out[k]))} characters long (at most {most} bytes); "
                                     "shorten it")
    if not out["lang"]:
        out["lang"] = guess_lang(text_sample)
    title = (out["title"] or fallback_title).strip()
    if len(title.encode("utf-8")) > TITLE_MAX:  # a text file's first line can be a whole export
        title = cut_bytes(title, TITLE_MAX).rstrip() + "…"
    out["title"] = title
    return out

"""Read documents (Markdown, text, HTML, PDF, AsciiDoc) into titled blocks with metadata.

Each loader returns a ``Document``: metadata from front matter (or HTML meta
tags) and a list of ``Block``s — headings, paragraphs, tables, code — each
with the 1-based source line range it came from, so a citation can point at
the lines a person should open.

Metadata defaults: status ``current``, audience ``public``, no tenant, and a
language read from the text's script (``zh`` for mostly Han characters,
``bn`` for Bengali, ``ja``/``ko``/``ru``/``ar``/``hi`` likewise, else ``en``)
when the document does not say.
"""
from __future__ import annotations

import contextlib
import functools
import io
import logging
import re
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path

from citebot.index import asciidoc, markdown, metadata, rst
from citebot.index.metadata import UnreadableDocument

# pypdf logs every oddity of a damaged file; we report one line per file instead.
# Its own handler-less logger fell through to Python's last-resort handler,
# which printed pypdf's errors, and a PDF's escape sequences in them, raw.
_PYPDF = logging.getLogger("pypdf")
_PYPDF.setLevel(logging.ERROR)
_PYPDF.addHandler(logging.NullHandler())
_PYPDF.propagate = False

_MARKDOWN = (".md", ".markdown")
SUFFIXES = (*_MARKDOWN, ".txt", ".html", ".htm", ".pdf", *asciidoc.SUFFIXES, *rst.SUFFIXES)
split_front_matter = metadata.split_front_matter


@dataclass
class Block:
    kind: str  # heading | para | table | code
    text: str
    start: int  # first source line (1-based)
    end: int  # last source line
    level: int = 0  # heading level
    page: int | None = None  # PDF page (1-based)
    end_page: int | None = None  # the page of ``end``, when a paragraph runs on past ``page``
    # Where each source line begins in ``text``, as (offset, page, line), for text whose lines were
    # joined (a PDF paragraph): a piece of it cites its own lines, not the paragraph's.
    marks: tuple[tuple[int, int, int], ...] | None = None
    # The list item a paragraph goes on under, by its first words ("BORG_SELFTEST"), when it is
    # the item's second paragraph or later: a chunk that starts there names what it describes.
    item: str = ""


@dataclass
class Document:
    path: str  # relative to the ingested folder, with forward slashes
    title: str
    meta: dict
    blocks: list[Block] = field(default_factory=list)


# --- language --------------------------------------------------------------
_SCRIPTS = [
    ("zh", re.compile(r"[\u4e00-\u9fff]")),
    ("ja", re.compile(r"[\u3040-\u30ff]")),
    ("ko", re.compile(r"[\uac00-\ud7af]")),
    ("bn", re.compile(r"[\u0980-\u09ff]")),
    ("hi", re.compile(r"[\u0900-\u097f]")),
    ("ru", re.compile(r"[\u0400-\u04ff]")),  # Cyrillic; Ukrainian told apart by ``_cyrillic``
    ("ar", re.compile(r"[\u0600-\u06ff]")),
    ("he", re.compile(r"[\u0590-\u05ff]")),
    ("el", re.compile(r"[\u0370-\u03ff\u1f00-\u1fff]")),
    ("th", re.compile(r"[\u0e00-\u0e7f]")),
]

# Cyrillic is Russian unless Ukrainian shows: its own letters (і ї є ґ, which
# Russian lacks, as Ukrainian lacks ы э ъ ё) and its common words ("Як
# дозволити CORS для мого фронтенду?" has no telling letter).  Labelled
# Russian, a Ukrainian question was answered from the Russian translation.
_UK_LETTERS = re.compile(r"[іїєґІЇЄҐ]")
_RU_LETTERS = re.compile(r"[ыэъёЫЭЪЁ]")
_UK_WORDS = frozenset("""як що це чи або також мене мого моєї мій моя моє мої який яка яке які коли де чому
скільки потрібно треба можна зробити використовувати налаштувати додати отримати""".split())
_RU_WORDS = frozenset("""как что это или также меня моего моей мой моя моё мои какой какая какое какие когда где
почему сколько нужно надо можно сделать использовать настроить добавить получить""".split())
_CYR_WORD = re.compile(r"[\u0400-\u04ff]+")


def _cyrillic(text: str) -> str:
    """"uk" or "ru" for Cyrillic text (ties, with nothing telling, are "ru")."""
    words = [w.lower() for w in _CYR_WORD.findall(text)]
    uk = len(_UK_LETTERS.findall(text)) + sum(w in _UK_WORDS for w in words)
    ru = len(_RU_LETTERS.findall(text)) + sum(w in _RU_WORDS for w in words)
    return "uk" if uk > ru else "ru"


# Folder names that mark a translation (``en/…``, ``docs/zh-hant/…``): ISO 639-1
# codes, optionally with a region or script.  Codes that are also common
# folder words ("it", "no", "id", "is", "my", "ms", "to", "am", "as", "be",
# "he", "so") are left out: a folder named "it" is more often IT than Italian.
LANG_DIRS = frozenset("""en de es fr pt ru tr uk zh ja ko hi bn ar fa nl pl sv da fi nb cs sk el hu ro bg hr sr sl
lt lv et vi th ur ta te ml mr gu kn pa ne si km lo fil tl sw af ca eu gl cy ga hy ka az kk uz mn""".split())
_LANG_DIR = re.compile(r"^([a-z]{2,3})(?:[-_]([a-z]{2,4}))?$")


def lang_folder(path: str) -> tuple[int, str] | None:
    """The position and language of the first folder of ``path`` that names
    a language (``zh/tutorial/cors.md`` → (0, "zh")), or None."""
    parts = path.split("/")[:-1]
    for i, part in enumerate(parts):
        m = _LANG_DIR.match(part.lower())
        if m and m.group(1) in LANG_DIRS:
            return i, part.lower().replace("_", "-")
    return None


def translation(path: str) -> tuple[str, str] | None:
    """What translations of one page share, and this one's language: the
    path without its language folder (``en/a/b.md`` and ``zh/a/b.md`` →
    ``a/b.md``), and that folder's language; None when no folder names one."""
    found = lang_folder(path)
    if found is None:
        return None
    parts = path.split("/")
    return "/".join(parts[:found[0]] + parts[found[0] + 1:]), found[1]


def guess_lang(text: str) -> str:
    letters = sum(ch.isalpha() for ch in text) or 1
    counts = {code: len(rx.findall(text)) for code, rx in _SCRIPTS}
    if counts["ja"] and counts["ja"] / letters > 0.05:
        return "ja"  # kana decides Japanese even amid kanji
    code, n = max(counts.items(), key=lambda kv: kv[1])
    if n / letters <= 0.3:
        return "en"
    return _cyrillic(text) if code == "ru" else code


_LATIN_WORD = re.compile(r"[A-Za-z]+")
_ALPHABETIC = ("bn", "hi", "ru", "ar", "he", "el", "th")  # scripts written in words, counted as words


# Common characters written differently in Traditional and Simplified Chinese
# (pairs in the same order; 裡 has none, since 里 is Traditional too); which
# set a question uses names its script.
_HANT = "們個這說時會來對為與點過還樣問題實見開關應長從無當經發機變體讓請設號頁檔數庫網絡驗證權碼錯誤處參戶傳輸環資訊認務將產種頭動組義線單讀寫執導裝載選項類麼貨賴裡"
_HANS = "们个这说时会来对为与点过还样问题实见开关应长从无当经发机变体让请设号页档数库网络验证权码错误处参户传输环资讯认务将产种头动组义线单读写执导装载选项类么货赖"


def question_lang(text: str) -> str:
    """The language of a question: like ``guess_lang``, but counting words
    (a CJK character counts as one): "CORSMiddleware 的 max_age 是多少秒？" is
    Chinese though most of its letters are Latin.  Chinese written in
    Traditional characters is ``zh-hant``."""
    counts = {code: len(re.findall(f"(?:{rx.pattern})+", text)) if code in _ALPHABETIC else len(rx.findall(text))
              for code, rx in _SCRIPTS}
    if counts["ja"]:
        return "ja"
    code, n = max(counts.items(), key=lambda kv: kv[1])
    if n <= len(_LATIN_WORD.findall(text)):
        return "en"
    if code == "ru":
        return _cyrillic(text)
    return "zh-hant" if code == "zh" and sum(c in _HANT for c in text) > sum(c in _HANS for c in text) else code


def _finish_meta(meta: dict, blocks: list[Block], fallback_title: str, rel: str = "", headings: bool = True) -> dict:
    """The language: front matter, else the folder that names one (a Latin
    script says nothing about German vs English), else the script; the title
    when none is given: the first heading (with ``headings``), else ``fallback_title``."""
    first = next((k for k, b in enumerate(blocks) if b.kind == "heading"), None) if headings else None
    # ... a first heading below level 1 only when no later heading is as high: pydantic-settings' one
    # page opens with "## Installation" among thirty "##" sections, and every chunk was titled so.
    heading = None if first is None or blocks[first].level > 1 and any(
        b.kind == "heading" and b.level <= blocks[first].level for b in blocks[first + 1:]) else blocks[first].text
    folder = lang_folder(rel)
    if folder and not meta.get("lang"):
        meta = {**meta, "lang": folder[1]}
    return metadata.finish(meta, guess_lang, " ".join(b.text for b in blocks[:50]), heading or fallback_title)


# --- Markdown / text ---------------------------------------------------------
# ATX: a closing run of #s needs a space before it ("## Learn C#" is "Learn C#").
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
_SETEXT = re.compile(r"^ {0,3}(={2,}|-{2,})\s*$")  # under a paragraph: "Title\n=====" is a heading
_LIST_OR_QUOTE = re.compile(r"^\s*(?:[-*+>]\s|\d+[.)]\s)")


_INDENT = re.compile(r"^(?: {0,3}\t| {1,4})")  # an indented code line's indent: four columns
_TICKS = re.compile(r"`+")


def parse_markdown(lines: list[str], offset: int = 0, headings: bool = True,
                   indented: frozenset[int] = frozenset(),
                   marked: Mapping[int, tuple[int, str, int]] | None = None,
                   plain: frozenset[int] = frozenset()) -> list[Block]:
    """Split Markdown lines into blocks; ``offset`` = lines before ``lines``;
    ``indented``: the lines of indented code blocks (``markdown.clean`` finds
    them), each block read as code under a fence of its own, so it is kept
    whole like fenced code and quoted as code; ``marked``: headings found
    otherwise, by their first line: (level, text, lines they take);
    ``headings`` false: plain text, where "#" opens no heading and a table's
    rows close with "|" as they open; ``plain``: lines that open no heading
    (an escaped "#": ``markdown.clean``'s)."""
    marked = marked or {}
    blocks: list[Block] = []
    i, n = 0, len(lines)
    para: list[str] = []
    para_start = 0
    items: list[tuple[int, str]] = []  # the open list items: (indent, what each names), outermost first

    def flush(end: int) -> None:
        nonlocal para
        if para:
            text = "\n".join(para).rstrip()
            # A nested list after a blank line keeps its first item's indent: stripped, that item
            # read as a sibling of the item holding it, and its own siblings as its children.
            if not _NESTED_ITEM.match(text):
                # A paragraph indented under an item loses its indent on every line, not the first
                # alone: shown two in as the item's, its later lines went five or six in.
                cut = min(markdown.indent_of(x) for x in para if x.strip())
                text = "\n".join(x.expandtabs(4)[cut:] if markdown.indent_of(x) >= cut else x for x in para).strip()
            under = ""
            for k, line in enumerate(para):  # the items it opens: the last holds what comes below
                m = _ITEM_TEXT.match(line)
                if k and not m:
                    continue
                indent = markdown.indent_of(line)
                while items and items[-1][0] >= indent:
                    items.pop()
                if not k:  # indented under an item: that item's (a paragraph at the margin ends the list)
                    under = items[-1][1] if items and indent else ""
                if m:
                    items.append((indent, item_name(m.group(1))))
                elif not indent:
                    items.clear()
            blocks.append(Block("para", text, para_start + offset + 1, end + offset, item=under))
            para = []

    while i < n:
        line = lines[i]
        if i in indented and line.strip():
            flush(i)
            j = i
            while j < n and j in indented:
                j += 1
            while not lines[j - 1].strip():  # blank lines after the code are not its
                j -= 1
            body = [_INDENT.sub("", x, count=1) for x in lines[i:j]]
            blocks.append(Block("code", _fenced(body), i + offset + 1, j + offset))
            i = j
            continue
        marker = markdown.fence_open(line)
        if marker:
            flush(i)
            j = i + 1
            while j < n and not markdown.fence_closes(lines[j], marker):
                j += 1
            j = min(j, n - 1)  # an unclosed fence runs to the end of the file
            blocks.append(Block("code", "\n".join(lines[i:j + 1]), i + offset + 1, j + offset + 1))
            i = j + 1
            continue
        if i in marked:
            flush(i)
            items.clear()
            level, text, taken = marked[i]
            blocks.append(Block("heading", text, i + offset + 1, i + offset + taken, level=level))
            i += taken
            continue
        h = _HEADING.match(line) if headings and i not in plain else None
        if h:
            flush(i)
            items.clear()
            blocks.append(Block("heading", markdown.strip_anchor(h.group(2)), i + offset + 1, i + offset + 1,
                                level=len(h.group(1))))
            i += 1
            continue
        if headings and para and _SETEXT.match(line) and not _LIST_OR_QUOTE.match(para[0]):
            text = " ".join(p.strip() for p in para)
            blocks.append(Block("heading", markdown.strip_anchor(text), para_start + offset + 1, i + offset + 1,
                                level=1 if line.strip()[0] == "=" else 2))
            para = []
            i += 1
            continue
        if headings and _BREAK.match(line):  # a thematic break ("---" after a blank line) is no text
            flush(i)
            i += 1
            continue
        # (In plain text a table's rows close with "|" too: Vim's "|usr_30.txt|, for information"
        # and "|02.1|  Running Vim" lines are text, and were read as rows that cut sentences in two.)
        if line.lstrip().startswith("|") and (headings or line.rstrip().endswith("|")):
            flush(i)
            j = i
            while j < n and lines[j].lstrip().startswith("|") and (headings or lines[j].rstrip().endswith("|")):
                j += 1
            blocks.append(Block("table", "\n".join(line.strip() for line in lines[i:j]), i + offset + 1, j + offset))
            i = j
            continue
        if "|" in line and not para and i + 1 < n and _DELIMITER_ROW.match(lines[i + 1]) and i not in indented:
            # A table written without its outer pipes ("Region | Latency" over "--- | ---"), as GFM
            # allows: it was one paragraph, quoted as a "sentence" of cells and dashes.
            flush(i)
            j = i + 2
            while j < n and "|" in lines[j] and lines[j].strip():
                j += 1
            blocks.append(Block("table", "\n".join(_piped(x) for x in lines[i:j]), i + offset + 1, j + offset))
            i = j
            continue
        if not line.strip():
            flush(i)
        else:
            if para and _ITEM_TEXT.match(line) and markdown.indent_of(line) < markdown.indent_of(para[0]):
                # An item less indented than the paragraph it follows is the next item of an outer
                # list, no line of that paragraph (structlog's "   You can inspect a context ..." under
                # item 1, then "2. A list of processors ..." with no blank line: item 2 read as item 1's).
                flush(i)
            if not para:
                para_start = i
            para.append(line.rstrip())
        i += 1
    flush(n)
    return blocks


_BREAK = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_NESTED_ITEM = re.compile(r"^ {1,12}(?:[-*+]|\d+[.)])\s")
_ITEM_TEXT = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(\S.*)")
_NAMED = re.compile(r"^(.{1,80}?):(?:\s|$)")  # "BORG_SELFTEST: This can be used ..."
_FIRST_SENTENCE = re.compile(r"^(.+?[.!?。！？])(?:\s|$)")


_TASK_BOX = re.compile(r"^\[[ xX]\]\s+")  # "- [ ] Task one"
_LINK_TEXT = re.compile(r"!?\[([^\[\]]*)\]\([^()\s]*(?:\s[^()]*)?\)")  # "[text](url)": text


def item_name(text: str) -> str:
    """What a list item names, for a heading over its later paragraphs: the
    term before its colon ("BORG_SELFTEST"), else its first sentence, else its
    first words; at most twelve words.  None ("") for an item that is code or
    a rule ("* * *"): no words to name it by."""
    text = _LINK_TEXT.sub(r"\1", _TASK_BOX.sub("", text.strip()))
    if text.startswith(("```", "~~~")) or not any(c.isalnum() for c in text):
        return ""
    m = _NAMED.match(text)
    if m and len(m.group(1).split()) <= 8:
        return m.group(1).strip()
    m = _FIRST_SENTENCE.match(text)
    name = m.group(1) if m else text
    words = name.split()
    return " ".join(words[:12]) + (" …" if len(words) > 12 else "")


def _fenced(body: list[str], lang: str = "") -> str:
    """Code lines under a fence of their own: longer than any run of backticks
    inside, or a fence the code shows would close it."""
    fence = "`" * max(3, 1 + max((len(t) for t in _TICKS.findall("\n".join(body))), default=0))
    return "\n".join([fence + lang, *body, fence])


def _piped(row: str) -> str:
    """A table row with its outer pipes, as the rest of citebot reads rows."""
    row = row.strip()
    row = row if row.startswith("|") else "| " + row
    return row if row.endswith("|") and not row.endswith("\\|") else row + " |"


# A GFM table's delimiter row with at least one inner pipe: "--- | :---:".
_DELIMITER_ROW = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)+\|?\s*$")  # "--" or more, as extractive's _RULE


# A terminal's escape sequences in a saved log or console paste ("\x1b[31mERROR\x1b[0m"): the text
# reads as the terminal showed it (searched as written, "ERROR" was the term "31merror").
# Never across a line end (a lone "\r" is one too), so line numbers hold.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\r\n]*(?:\x07|\x1b\\)?|\x1b[ -/]*[0-~]?")


def _as_shown(text: str) -> str:
    return _ESCAPES.sub("", text) if "\x1b" in text else text


def _text_of(data: bytes) -> tuple[dict, list[str], int]:
    """A text file's metadata, lines and front matter's length, as every
    reader (and the rst titles other pages name) reads them."""
    return split_front_matter(_as_shown(_decode(data)))


def load_markdown(path: Path, rel: str, data: bytes) -> Document:
    meta, lines, skipped = _text_of(data)
    if not markdown.names_pages("\n".join(lines)):
        return _markdown_document(path, rel, meta, lines, skipped)
    with rst.naming(_titles(_root(path, rel)), _page_doc(rel)):  # MyST's {doc}`install`: the page's title
        return _markdown_document(path, rel, meta, lines, skipped)


def load_asciidoc(path: Path, rel: str, data: bytes) -> Document:
    meta, lines, skipped = _text_of(data)
    return _markdown_document(path, rel, meta, asciidoc.to_markdown(lines), skipped)


def load_rst(path: Path, rel: str, data: bytes) -> Document:
    meta, lines, skipped = _text_of(data)
    return _rst_document(path, rel, meta, lines, skipped)


def _rst_document(path: Path, rel: str, meta: dict, lines: list[str], skipped: int) -> Document:
    """A document from reStructuredText lines (a ``.txt`` file's, read once, too)."""
    root = _root(path, rel)
    code: dict[int, tuple[str, list[str]]] = {}
    md = rst.to_markdown(lines, _titles(root), _page_doc(rel), _includer(path, root), code)
    doc = _markdown_document(path, rel, meta, md, skipped)
    for k, (lang, body) in sorted(code.items()):  # a literalinclude's code, cited at its directive's line
        line = k + skipped + 1
        at = next((n for n, b in enumerate(doc.blocks) if b.start > line), len(doc.blocks))
        doc.blocks.insert(at, Block("code", _fenced(body, lang), line, line))
    return doc


INCLUDE_MAX = 256 * 1024  # bytes: an example file, not a data file


def _includer(path: Path, root: Path) -> Callable[[str], list[str] | None]:
    """What a ``literalinclude`` in ``path`` may show: a text file inside the
    folder being read (relative to the page, or to the folder when written
    "/examples/x.py"), never one outside it, as a link outside is not read.
    Nor a hidden one (``.env``), which an ingest never reads, nor a document
    citebot reads itself: its text would take the page's scope, and a page
    marked staff would reach the public through a public page that includes
    it.  Its lines are read at the page's own reading: a change to the
    included file alone is read at the page's next change or ``--rebuild``."""
    def read(name: str) -> list[str] | None:
        try:
            target = _include_target(path, root, name)
            inside = target.relative_to(root.resolve())
            if any(part.startswith(".") for part in inside.parts) or file_type(target) in SUFFIXES:
                return None
            found = _FOUND.get()
            if found is not None and target not in found:  # in an ingest: only a file it found
                return None
            if not target.is_file() or target.stat().st_size > INCLUDE_MAX:
                return None
            return _decode(target.read_bytes()).splitlines()
        except (OSError, RuntimeError, ValueError, UnreadableDocument):  # outside, looping, unreadable: not shown
            return None
    return read


def _include_target(path: Path, root: Path, name: str) -> Path:
    """The file an include in ``path`` names, resolved: relative to the page, or to the folder
    being read (``root``) when written "/examples/x.py"."""
    return ((root.resolve() / name.lstrip("/")) if name.startswith("/") else (path.parent / name)).resolve()


def _root(path: Path, rel: str) -> Path:
    """The folder being read, from a file in it and its path there."""
    return path.parents[len(Path(rel).parts) - 1] if len(Path(rel).parts) <= len(path.parents) else path.parent


def _page_doc(rel: str) -> str:
    """A page's name as a :doc: writes it: "userguide/tasks" for "userguide/tasks.rst" (or .md)."""
    return re.sub(r"\.(?:(?:rst|rest)(?:\.(?:inc|txt))?|md|markdown)$", "", rel, flags=re.I)


_READING: ContextVar[dict[Path, Mapping[str, str]] | None] = ContextVar("reading", default=None)


class _Found:
    """The files an ingest found, resolved when a literalinclude first asks
    (resolving 2,756 files took 0.18 s here, some 6 s at 100,000, for pages
    that include none)."""

    def __init__(self, paths: Iterable[Path]) -> None:
        self.paths: Iterable[Path] | None = paths
        self.resolved: frozenset[Path] = frozenset()

    def __contains__(self, target: Path) -> bool:
        if self.paths is not None:
            self.resolved, self.paths = frozenset(p.resolve() for p in self.paths), None
        return target in self.resolved


_FOUND: ContextVar[_Found | None] = ContextVar("found", default=None)


@contextlib.contextmanager
def reading_folder(paths: Iterable[Path] = ()) -> Iterator[None]:
    """One ingest's reading of a folder: its rst titles are listed once, not
    once for every rst file (listing and stating them all for each file: Python's
    497 pages read in 13.0 s, and in 7.0 s listed once; O(n²) in a folder's pages).
    ``paths``: the files the ingest found, the only ones a literalinclude may
    show (not the index's own files, nor what ``--include`` or the skipped
    folders leave out)."""
    tokens = _READING.set({}), _FOUND.set(_Found(paths))
    try:
        yield
    finally:
        _READING.reset(tokens[0])
        _FOUND.reset(tokens[1])


def _titles(root: Path) -> Mapping[str, str]:
    """The titles the cross-references of the reStructuredText and MyST pages
    under ``root`` (the folder being read) name; read again when one of its
    files changes (within :func:`reading_folder`, once)."""
    memo = _READING.get()
    if memo is not None and root in memo:
        return memo[root]
    files = sorted(p for p in root.rglob("*") if file_type(p) in (*rst.SUFFIXES, *_MARKDOWN) and p.is_file())
    stamp = tuple((p.as_posix(), st.st_mtime_ns, st.st_size) for p in files for st in [p.stat()])
    titles = _titles_of(root, stamp)
    if memo is not None:
        memo[root] = titles
    return titles


@functools.lru_cache(maxsize=4)
def _titles_of(root: Path, stamp: tuple[tuple[str, int, int], ...]) -> Mapping[str, str]:
    def pages() -> Iterator[tuple[Path, str, list[str]]]:
        for name, _, _ in stamp:
            p = Path(name)
            try:
                meta, lines, _ = _text_of(p.read_bytes())  # as load_rst reads it
            except (OSError, UnreadableDocument):  # reported when that file itself is read
                continue
            # A page of narrower scope keeps its titles: "see Layoff plan" in a public page would tell
            # the public what a staff page is called (a reference to it reads as its label instead).
            if all(meta.get(k, v) == v for k, v in metadata.DEFAULTS.items()):
                yield p, _page_doc(p.relative_to(root).as_posix()), lines
    found: dict[str, str] = {}
    # (Sphinx names a page by its first title whether it is rst or MyST, and a project may mix them)
    for p, doc, lines in pages():
        for key, title in (markdown.titles(doc, lines) if file_type(p) in _MARKDOWN
                           else rst.titles([(doc, lines)])).items():
            found.setdefault(key, title)
    return found


def _markdown_document(path: Path, rel: str, meta: dict, lines: list[str], skipped: int) -> Document:
    """A document from Markdown lines (an AsciiDoc file's, converted line for line, too)."""
    code: list[int] = []
    plain: list[int] = []
    cleaned = markdown.clean(lines, code, plain)
    blocks = parse_markdown(cleaned, skipped, indented=frozenset(code), plain=frozenset(plain))
    return Document(rel, "", _finish_meta(meta, blocks, path.stem, rel), blocks)


def load_text(path: Path, rel: str, data: bytes) -> Document:
    meta, lines, skipped = _text_of(data)
    if asciidoc.looks_like(lines):  # Git's manual pages: AsciiDoc named .txt
        return _markdown_document(path, rel, meta, asciidoc.to_markdown(lines), skipped)
    if rst.looks_like(lines):  # a Python project's README.txt
        return _rst_document(path, rel, meta, lines, skipped)
    # Plain text has no heading syntax: '#' lines are text, not structure; a title marked
    # as plain text marks one (underlined, under a rule, in capitals) is a heading.
    blocks = parse_markdown(lines, skipped, headings=False, marked=_text_headings(lines))
    first = next((line.strip() for line in lines if line.strip()), path.stem)
    # The title is the first line, as before: a section's title is no document's ("08.1 Split a window").
    return Document(rel, "", _finish_meta(meta, blocks, first, rel, headings=False), blocks)


# A line of one repeated mark: "=====", "-----", "~~~~~", "*****" under (or over) a title.
_TEXT_RULE = re.compile(r"^\s*([=\-~*#^+])\1{2,}\s*$")
_RULE_LEVEL = {"=": 1, "-": 2}  # any other mark: 3
_END_TAGS = re.compile(r"(?:\s+\*[^*\s]+\*)+\s*$")
_HELP_TAG = re.compile(r"(?:^|\s)\*([^*\s]+)\*(?=\s|$)")  # "*02.1*", "*vim-start*": a help file's tags


def _capitals(text: str) -> bool:
    """Written in capitals: three cased letters at least, all of them upper
    case (a line of Chinese, which has no case, is not)."""
    cased = [c for c in text if c.lower() != c.upper()]
    return len(cased) >= 3 and all(c.isupper() for c in cased)


def _text_headings(lines: list[str]) -> dict[int, tuple[int, str, int]]:
    """The headings of a plain text file, as its writer marked them: a short
    line underlined with one repeated mark (= for level 1, - for 2, another
    for 3; an overline too), a short line right under a long rule ("=====" /
    "*02.1* Running Vim" in Vim's manual), or a short line in capitals after
    a blank one ("DISCARDING CHANGES", a man page's "SYNOPSIS").  By first
    line: (level, text, lines taken).  A sentence, a list item or a line
    that ends in ":" is no title."""
    out: dict[int, tuple[int, str, int]] = {}

    def title(k: int) -> str | None:
        if not 0 <= k < len(lines):
            return None
        # a help file's tags after the title are anchors ("Running Vim  *vim-start*"); one before, its number
        text = " ".join(_HELP_TAG.sub(lambda m: " " + m.group(1), _END_TAGS.sub("", lines[k])).split())
        if not text or _TEXT_RULE.match(lines[k]) or len(text.split()) > 12 or text.endswith((".", ",", ";", ":")) \
                or _LIST_OR_QUOTE.match(text) or text.startswith("|"):
            return None
        return text

    def blank(k: int) -> bool:
        return k < 0 or k >= len(lines) or not lines[k].strip()

    k = 0
    while k < len(lines):
        rule = _TEXT_RULE.match(lines[k])
        nxt = _TEXT_RULE.match(lines[k + 1]) if k + 1 < len(lines) else None
        if nxt and (text := title(k)) and blank(k - 1):  # "Title" over "====="
            out[k] = (_RULE_LEVEL.get(nxt.group(1), 3), text, 2)
            k += 2
        elif rule and (text := title(k + 1)) and k + 2 < len(lines) and _TEXT_RULE.match(lines[k + 2]) \
                and lines[k + 2].strip()[0] == rule.group(1):  # "=====" / "Title" / "====="
            out[k] = (_RULE_LEVEL.get(rule.group(1), 3), text, 3)
            k += 3
        elif rule and len(lines[k].strip()) >= 10 and (text := title(k + 1)) and blank(k + 2):  # a rule, then a title
            out[k] = (_RULE_LEVEL.get(rule.group(1), 3), text, 2)
            k += 2
        elif blank(k - 1) and (text := title(k)) and len(text.split()) <= 8 and _capitals(text) \
                and not lines[k][:1].isspace():  # (an indented "CTRL-W +" is an example, not a title)
            out[k] = (3, text, 1)
            k += 1
        else:
            k += 1
    return out


_BOMS = ((b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"), (b"\xff\xfe", "utf-16"),
         (b"\xfe\xff", "utf-16"), (b"\xef\xbb\xbf", "utf-8-sig"))


def _read_html_text(data: bytes) -> str:
    """An HTML file's text: UTF-8 (or a byte-order mark's), else the charset
    its ``<meta>`` declares, as a browser reads it."""
    try:
        return _decode(data)
    except UnreadableDocument:
        m = _CHARSET.search(data[:4096])
        if m is None:
            raise
        try:
            return data.decode(m.group(1).decode("ascii"))
        except (LookupError, UnicodeDecodeError):
            raise UnreadableDocument(f"is not valid text in the charset its <meta> declares "
                                     f"({m.group(1).decode('ascii', 'replace')}); convert it to UTF-8 "
                                     "and ingest again") from None


def _decode(data: bytes) -> str:
    encoding = next((enc for bom, enc in _BOMS if data.startswith(bom)), "utf-8")
    if encoding == "utf-8" and b"\x00" in data[:4096]:
        raise UnreadableDocument("looks like a binary file, not text (UTF-16 without a byte-order mark reads so too: "
                                 "save it as UTF-8)")
    try:
        return data.decode(encoding)
    except UnicodeDecodeError:
        raise UnreadableDocument(f"is not valid {encoding.upper().replace('-SIG', '')} text; "
                                 "convert it to UTF-8 and ingest again") from None


# --- HTML --------------------------------------------------------------------
# A <form>'s own text is read: ASP.NET and SharePoint pages hold their whole body in one (dropped, such a
# page gave no text at all); its controls' option lists are not prose ("Press <button>Return</button>" is).
_BOILERPLATE = ("script", "style", "nav", "noscript", "iframe", "svg", "template", "select", "textarea", "datalist")
# The site's, outside <main>/<article>; inside one a header holds its title and an aside a caveat.
_PAGE_CHROME = ("header", "footer", "aside")
# The same parts marked by ARIA role instead of tag (Sphinx's themes: <div role="navigation">
# sidebars and "related" bars, a search box; 21% of the Python tutorial's chunks were site chrome,
# and "how do I report a bug?" was answered with the sidebar's "Report a Bug").
_CHROME_ROLES = ("navigation", "search", "banner", "contentinfo")
_ADMONITIONS = ("note", "tip", "warning", "caution", "important", "hint", "danger", "attention")
# A heading's permalink (Sphinx and MkDocs "¶", Docusaurus "#", VitePress, Jupyter): every heading
# path read "Logging HOWTO ¶ > Logging Levels ¶".
_PERMALINKS = ("headerlink", "hash-link", "header-anchor", "anchor-link")
# DocBook's "Prev | Up | Next" tables and contents lists, AsciiDoc's contents and "Last updated" footer:
# a navigation table was quoted as the answer to "how do I create a database in MySQL?".
_CHROME_CLASSES = ("navheader", "navfooter", "toc")
_CHROME_IDS = ("toc", "footer")
# Sphinx's viewcode "[source]" after every signature, and "[docs]" back from the source.
_SOURCE_LINKS = ("viewcode-link", "viewcode-back")
# A footer or a "previous / next chapter" bar marked by class alone, read as a <footer> is (Sphinx's
# bootstrap theme: "borg init  borg extract  © Copyright ... Created using Sphinx." closed every page,
# nine chunks were nothing else, one the dense channel's first hit for "what does borg compact do?").
_FOOTER_CLASSES = ("footer", "footer-relations")
# Tags that separate words; inline tags (<code>, <span>, <a>) join their text as a browser shows
# it: "f.read(size)," not "f.read(size) ,", "list.sort(*, key=None)" not "list. sort ( * , key ...".
_SPACED = frozenset(("br", "p", "div", "li", "ul", "ol", "dl", "dt", "dd", "tr", "td", "th", "table", "pre",
                     "blockquote", "section", "article", "figure", "figcaption", "details", "summary", "hr",
                     "h1", "h2", "h3", "h4", "h5", "h6", "img"))
_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)


_BLOCKS = ("h1", "h2", "h3", "h4", "h5", "h6", "p", "li", "pre", "table", "dt", "dd")
_CONTAINERS = ("div", "section", "article", "main", "body", "html", "ul", "ol", "dl", "blockquote", "figure",
               "figcaption", "details", "summary", "center", "br", "hr")


_TWICE = "\x00twice"  # on a tag that gives an attribute twice: attribute US value-not-kept RS, each (bs4 wants text)


def _keep_first(attrs: dict, key: str, value) -> None:
    """A repeated attribute keeps its first value, as browsers read it, and is noted."""
    attrs[_TWICE] = attrs.get(_TWICE, "") + f"{key}\x1f{value}\x1e"


def _html_meta(soup) -> dict:
    """``<meta name=...>`` (names case-insensitive), ``<html lang>``, ``<title>``."""
    raw: dict = {}
    for tag in soup.find_all("meta"):
        name = str(tag.get("name") or "").strip()
        twice = [r.split("\x1f", 1) + [""] for r in tag.attrs.pop(_TWICE, "").split("\x1e") if r]
        names = [name] + [v.strip() for k, v, *_ in twice if k == "name"]
        if twice and any(n.lower() in metadata.SCOPE_KEYS or metadata.misspelt(n.lower(), "") for n in names):
            # <meta name="audience" content="staff" content="public">: which one the author meant is unknown
            raise UnreadableDocument(f"line {tag.sourceline}: <meta name={name!r}> gives its "
                                     f"{twice[0][0]} twice; keep one")
        if name.lower() in {k.lower() for k in raw}:
            if name.lower() in metadata.META_KEYS:
                raise UnreadableDocument(f"line {tag.sourceline}: <meta name={name!r}> is given twice")
            continue
        if name:  # every name: normalize keeps the known ones and fails closed on a misspelt one (audiance)
            raw[name] = str(tag.get("content") or "")
    meta = metadata.normalize(raw)
    if soup.html and soup.html.get("lang") and "lang" not in meta:
        meta["lang"] = str(soup.html["lang"])
    if soup.title and soup.title.string and "title" not in meta:
        meta["title"] = " ".join(soup.title.string.split())  # DocBook: "1.3.\xa0Creating a Database"
    return meta


def _flat_text(tag, lists: bool = True) -> str:
    """``tag``'s text on one line as a browser shows it: inline tags join their
    text, block tags and ``<br>`` separate words; comments are no text; with
    ``lists`` false, the text no list inside it holds."""
    from bs4 import NavigableString, Tag

    out: list[str] = []

    def go(node) -> None:
        for c in node.children:
            if isinstance(c, Tag):
                if not lists and c.name in ("ul", "ol"):
                    continue
                spaced = c.name in _SPACED
                if spaced:
                    out.append(" ")
                go(c)
                if spaced:
                    out.append(" ")
            elif type(c) is NavigableString:  # not a Comment, CData, Doctype ...: not what a reader sees
                out.append(str(c))
    go(tag)
    return " ".join("".join(out).split())


def _html_block(tag) -> Block | None:
    start = tag.sourceline or 1
    end = start + str(tag).count("\n")
    if tag.name[0] == "h" and tag.name[1:].isdigit():
        text = _flat_text(tag)
        return Block("heading", text, start, start, level=int(tag.name[1])) if text else None
    if tag.name == "pre":
        return Block("code", "```\n" + tag.get_text().strip("\n") + "\n```", start, end)
    if tag.name == "li" and tag.find(["ul", "ol"]):
        # Nested lists: this item's own text, in links, bold or paragraphs too (the inner
        # items follow as their own); never a comment's.
        text = _flat_text(tag, lists=False)
    else:
        text = _flat_text(tag)
    if tag.name == "li":
        text = _item_mark(tag) + text
    return Block("para", text, start, end) if text else None


def _item_mark(li) -> str:
    """"- " for an item of a bulleted list, its number for one of a numbered list
    ("3. "; AsciiDoc's callouts <1>, <2> in the code above name them by number),
    indented under the item that holds its list, as Markdown writes it ("From
    Source, either:" / "  - Using pip ..."; at one level, its options read as
    siblings of the item)."""
    from bs4 import Tag

    indent = "  " * len(li.find_parents("li"))
    parent = li.parent
    if not isinstance(parent, Tag) or parent.name != "ol":
        return indent + "- "
    try:
        first = int(str(parent.get("start") or 1))
    except ValueError:
        first = 1
    before = sum(1 for sib in li.find_previous_siblings("li"))
    return f"{indent}{first + before}. "


def _span(cell, name: str) -> int:
    try:
        n = int(str(cell.get(name, 1)).strip() or 1)
    except ValueError:
        return 1
    if n == 0 and name == "rowspan":  # HTML: to the end of the table
        return 10_000
    return max(1, min(n, 100))


def _html_table(tag) -> list[Block]:
    """A table as Markdown rows: a cell spanning columns fills each of them
    and one spanning rows fills the rows below, so every row reads with its
    header ("Weekday | Carol | Dan", not "Carol" under "Day"); a "|" in a
    cell is escaped (it split "1 hour | next business day" into two cells).

    A row of one cell across the whole table labels the rows below it
    (Sphinx's option tables: "positional arguments", "Filesystem options"):
    each label reads as a line of its own over a table of its rows, cited at
    their own lines.  Filled into every column, a label had read "positional
    arguments | positional arguments | positional arguments" and, as the
    first row, been the header of every option.  A table that opens with
    one has no header row.  A column empty in every row (a spacer) is left out."""
    rows: list[tuple[list[str], bool, int, int]] = []  # cells, a label row, its first and last line
    below: dict[int, tuple[str, int]] = {}  # column -> (text, rows still to fill) of a rowspan above
    for tr in tag.find_all("tr"):
        row: list[str] = []
        cells = iter(tr.find_all(["th", "td"]))
        spanned = bool(below)  # a cell above reaches into this row: not a row of its own label
        while True:
            col = len(row)
            if col in below:
                text, left = below[col]
                row.append(text)
                below[col] = (text, left - 1)
                if left <= 1:
                    del below[col]
                continue
            c = next(cells, None)
            if c is None:
                if any(k > col for k in below):  # a rowspan further right still fills this row
                    row.append("")
                    continue
                break
            text = _flat_text(c).replace("|", "\\|")
            down = _span(c, "rowspan")
            for k in range(_span(c, "colspan")):
                row.append(text)
                below.pop(col + k, None)  # a cell spanning into a column a rowspan above still held takes it
                if down > 1:
                    below[col + k] = (text, down - 1)
        if row:
            first = tr.sourceline or 1
            rows.append((row, not spanned and len(tr.find_all(["th", "td"])) == 1, first, first + str(tr).count("\n")))
    if not rows:
        return []
    width = max(len(r) for r, *_ in rows)
    labelled = {id(r) for r, label, *_ in rows if label and len(r) == width > 1 and r[0]}
    if not labelled:
        start = tag.sourceline or 1
        lines = ["| " + " | ".join(r) + " |" for r, *_ in rows]
        lines.insert(1, "|" + "---|" * len(rows[0][0]))
        return [Block("table", "\n".join(lines), start, start + str(tag).count("\n"))]
    header = None if id(rows[0][0]) in labelled else rows[0][0]
    body = rows if header is None else rows[1:]
    used = [c for c in range(width) if any(c < len(r) and r[c] for r, *_ in rows if id(r) not in labelled)]
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(cells[c] if c < len(cells) else "" for c in used) + " |"
    top = [line(header) if header is not None else line([""] * width), "|" + "---|" * len(used)]
    out: list[Block] = []
    group: list[tuple[list[str], bool, int, int]] = []
    def close() -> None:
        if group:
            out.append(Block("table", "\n".join(top + [line(r) for r, *_ in group]), group[0][2], group[-1][3]))
            group.clear()
    for r in body:
        if id(r[0]) in labelled:
            close()
            out.append(Block("para", r[0][0], r[2], r[3]))
        else:
            group.append(r)
    close()
    return out


def _holds_blocks(tag) -> bool:
    """Whether an item or a definition is read as blocks of its own, not as one line: it shows code
    (">>> sorted(students, key=...)" became prose), holds definitions (every term ran into the one
    before it), goes on after a list of its own, or is a definition holding a list (Celery's
    "Parameters: status (str) – ... retval (Any) – ...")."""
    inner = ("pre", "dl", "ul", "ol") if tag.name == "dd" else ("pre", "dl")
    return tag.find(inner) is not None or _text_after_list(tag)


def _lead_paragraph(dd):
    """The <p> a definition opens with, when no text comes before it."""
    from bs4 import NavigableString, Tag

    for child in dd.children:
        if isinstance(child, Tag):
            return child if child.name == "p" else None
        if isinstance(child, NavigableString) and child.strip():
            return None
    return None


def _text_after_list(li) -> bool:
    """Whether an item goes on after a list of its own ("must be one of: - INT
    - TEXT. No other names are allowed."): read as one line, its later text
    came before the list it follows."""
    from bs4 import Tag

    nested = _nested_lists(li)
    return bool(nested) and any(isinstance(t, Tag) and t.get_text().strip() or not isinstance(t, Tag) and t.strip()
                                for t in nested[0].next_siblings)


def _nested_lists(li) -> list:
    """The lists inside ``li`` that belong to it (in a <div> or <p> of it too), not to a deeper item."""
    return [u for u in li.find_all(["ul", "ol"]) if u.find_parent(["li", "ul", "ol"]) is li]


_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")


def _layout(table) -> bool:
    """A table that lays out a page (old sites, mail templates): marked so,
    or a cell holds a heading, another table or three paragraphs or more.
    Read as one data table, a whole page became one 9 KB row, its nested
    tables' text twice; a data table's cell holds a paragraph or two (Sphinx
    wraps each cell's text in a <p>)."""
    if table.get("role") in ("presentation", "none"):
        return True
    for cell in table.find_all(("td", "th")):
        if cell.find(_HEADINGS + ("table",)) is not None or len(cell.find_all("p")) > 2:
            return True
    return False


def _html_blocks(root) -> list[Block]:
    """Blocks in reading order; text that sits in no block tag (in a bare
    ``<div>``, ``<span>`` or ``<body>``) reads as paragraphs of its own."""
    from bs4 import Comment, NavigableString, Tag

    blocks: list[Block] = []
    loose: list[str] = []
    loose_line = [1]
    joined: set[int] = set()  # the <dd>s read with their <dt>

    def flush() -> None:
        raw = "".join(loose).strip()
        text = " ".join(raw.split())
        if text:
            blocks.append(Block("para", text, loose_line[0], loose_line[0] + raw.count("\n")))
        loose.clear()

    def walk(node) -> None:
        for child in node.children:
            if isinstance(child, Tag):
                if child.name == "table" and _layout(child):
                    walk_layout(child)  # its cells' blocks, in reading order
                elif child.name in ("li", "dd") and id(child) not in joined and _holds_blocks(child):
                    flush()
                    first = len(blocks)
                    walk(child)
                    flush()
                    if child.name == "li" and first < len(blocks) and blocks[first].kind == "para":
                        # its first paragraph keeps the item's mark (Celery's "status: List active
                        # nodes" over its example had lost its bullet among its sibling commands)
                        blocks[first] = replace(blocks[first], text=_item_mark(child) + blocks[first].text)
                    # The item's later blocks are its (Block.item): a chunk that starts at one names
                    # what it describes, a method's second paragraph its method, a method its class.
                    dt = child.find_previous_sibling("dt") if child.name == "dd" else None
                    owner = (_html_block(dt) if dt is not None else
                             blocks[first] if child.name == "li" and first < len(blocks) else None)
                    if owner is not None and owner.text.strip():
                        name = item_name(_ITEM_TEXT.sub(r"\1", owner.text.strip()))
                        for k in range(first + (child.name == "li"), len(blocks)):
                            if not blocks[k].item:
                                blocks[k] = replace(blocks[k], item=name)
                elif child.name in _BLOCKS:
                    flush()
                    if id(child) in joined:
                        continue
                    # Several terms over one definition (AsciiDoc's "-u", "--include-untracked",
                    # "--no-include-untracked") are one term: read apart, only the last was joined to
                    # the text, and "--no-keep-empty" was quoted as what "--keep-empty" does.
                    terms = [child] if child.name == "dt" else []
                    dd = child.find_next_sibling() if terms else None
                    while dd is not None and dd.name == "dt":
                        terms.append(dd)
                        dd = dd.find_next_sibling()
                    named = [b for b in map(_html_block, terms) if b is not None]
                    term = Block("para", ", ".join(b.text for b in named), named[0].start,
                                 named[-1].end) if named else None
                    if dd is not None and dd.name == "dd":
                        joined.update(id(t) for t in terms[1:])
                        # A term and its definition are one sentence ("Artifact: A file the build
                        # makes."): apart, "what is an artifact?" was answered "Artifact".  A
                        # definition read as blocks (it holds code, definitions or a list: Sphinx's
                        # "General:" over BORG_REPO, BORG_PASSPHRASE ...) gives its term the paragraph
                        # it opens with ("on_bound(app): Called when the task is bound."), and the
                        # rest is walked as blocks of their own.
                        apart = _holds_blocks(dd)
                        part = _lead_paragraph(dd) if apart else dd
                        means = _html_block(part) if part is not None else None
                        if term is not None and means is not None:
                            joined.add(id(part))
                            joint = " " if term.text.endswith(_SAID) else ": "
                            blocks.append(Block("para", f"{term.text}{joint}{means.text}", term.start, means.end))
                            continue
                        if apart:
                            if term is not None:
                                colon = "" if term.text.endswith(_SAID) else ":"
                                blocks.append(Block("para", term.text + colon, term.start, term.end))
                            continue
                    caption = child.find("caption") if child.name == "table" else None
                    title = _flat_text(caption) if caption is not None else ""
                    if caption is not None and title:  # the table's title, before its rows
                        line = caption.sourceline or 1
                        blocks.append(Block("para", title, line, line))
                    if child.name == "table":
                        blocks.extend(_html_table(child))
                    elif (b := _html_block(child)) is not None:
                        blocks.append(b)
                    if child.name == "li":  # a nested list's items are blocks of their own
                        for inner in _nested_lists(child):
                            walk(inner)
                elif child.name in _CONTAINERS:
                    flush()
                    walk(child)
                    flush()
                else:
                    walk(child)  # inline: its text joins the loose paragraph
            elif isinstance(child, NavigableString) and not isinstance(child, Comment) and child.strip():
                if not loose:
                    loose_line[0] = _string_line(child)
                loose.append(str(child))
    def walk_layout(node) -> None:
        # Each cell's text is a paragraph of its own ("Phone" and "555-1234" ran together, lines 3-4
        # cited as 3); a row group or a row holds cells.
        for part in node.children:
            if isinstance(part, Tag) and part.name in ("thead", "tbody", "tfoot", "tr"):
                walk_layout(part)
            elif isinstance(part, Tag):
                flush()
                walk(part)
                flush()
    walk(root)
    flush()
    return blocks


def _string_line(node) -> int:
    """The source line a loose string's text starts on: its parent's line,
    plus the line breaks before it inside the parent and in its own leading
    whitespace (the parser gives line numbers to tags only)."""
    line = getattr(node.parent, "sourceline", None) or 1
    line += sum(str(sib).count("\n") for sib in node.previous_siblings)
    text = str(node)
    return line + text[:len(text) - len(text.lstrip())].count("\n")


def load_html(path: Path, rel: str, data: bytes) -> Document:
    from bs4 import BeautifulSoup, XMLParsedAsHTMLWarning

    text = _read_html_text(data)
    # Front matter above the HTML (Jekyll, Hugo) restricts the page like a
    # <meta> tag; its lines are blanked so the parser's line numbers hold.  The
    # lines are joined with "\n" whatever ended them: a lone "\r" is a line end
    # to an editor, not to the parser (every chunk cited line 1).
    front, lines, skipped = split_front_matter(text)
    text = "\n" * skipped + "\n".join(lines)
    # Metadata is read as written (a <meta> giving an attribute twice fails closed: html5lib would
    # keep the first silently); the page itself by HTML5's rules, which end an unclosed <p> at the
    # next block (html.parser nested the rest of SQLite's pragma page in one <p>: 77 chunks of run-on text).
    meta = _html_meta(BeautifulSoup(text, "html.parser", on_duplicate_attribute=_keep_first))
    with warnings.catch_warnings():
        # XHTML (Git's AsciiDoc pages open with <?xml ...?>) is read as HTML, as a browser reads it:
        # html5lib's ten-line warning about it was printed once per page during an ingest.
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        soup = BeautifulSoup(text, "html5lib")
    twice = sorted(set(front) & set(meta) & {"status", "audience", "tenant"})
    if twice:
        raise UnreadableDocument(f"{twice[0]} is given both in the front matter and in a <meta> tag; keep one")
    meta = {**meta, **front}  # a title or language in the front matter wins over <title> / <html lang>
    # What a reader never reads is replaced by its line breaks, so the text after
    # it keeps its line number (the parser numbers tags, not text).
    # Sphinx marks its content <div role="main"> (no <main>): there, as in <main>, an <aside> is the
    # page's own (its footnotes: a footnote's answer was dropped as page chrome).
    main = soup.find("main") or soup.find(role="main")
    chrome = [t for t in soup.find_all(_PAGE_CHROME) + soup.find_all("div", class_=list(_FOOTER_CLASSES))
              if t.find_parent(["main", "article"]) is None and (main is None or not any(p is main for p in t.parents))]
    chrome += soup.find_all(role=list(_CHROME_ROLES))
    chrome += soup.find_all("a", class_=list(_PERMALINKS)) + soup.find_all(class_=list(_SOURCE_LINKS))
    chrome += soup.find_all("div", class_=list(_CHROME_CLASSES)) + soup.find_all(id=list(_CHROME_IDS))
    chrome += [t for t in soup.find_all(True) if _unshown(t) or _link_list(t)]
    for tag in soup.find_all(_BOILERPLATE) + chrome:
        if tag.parent is not None:  # not inside one replaced already
            tag.replace_with("\n" * str(tag).count("\n"))
    _label_notes(soup)
    _superscripts(soup)
    # A formula drawn as a picture (Sphinx's imgmath) reads as the formula its alt text writes: "forming
    # the expression" ended in nothing where Celery's page shows "(2 + 2) + 16 = 20".
    for img in soup.find_all("img", class_="math"):
        img.replace_with(f" {img.get('alt', '')} ")
    # Every article of the page is read (a blog index holds many), <main> when there is one.
    root = main or soup.body or soup
    refresh = soup.find("meta", attrs={"http-equiv": re.compile(r"^\s*refresh\s*$", re.I)})
    # (a page that sends the reader on, "You should be redirected automatically ...", holds no text)
    blocks = [] if refresh is not None and rst.redirects(str(refresh.get("content", ""))) \
        else _merge_list_items(_html_blocks(root))
    # "<title>Logging HOWTO — Python 3.11.2 documentation</title>" over "<h1>Logging HOWTO</h1>":
    # the page's title is its heading; the site's name read in every citation and chunk.  A page
    # whose first heading is an <h2> (mdBook: "What is Ownership? - The Rust Programming Language"
    # over "What Is Ownership?") likewise.
    told = " ".join(soup.title.string.split()) if soup.title and soup.title.string else ""
    heads = [b for b in blocks if b.kind == "heading"]
    for h in [b.text for b in heads if b.level == 1][:1] + [b.text for b in heads][:1]:
        if h and told and "title" not in front and meta.get("title") == told \
                and told.casefold().startswith(h.casefold()) and _SITE_SUFFIX.match(told[len(h):]):
            meta["title"] = h
            break
    return Document(rel, "", _finish_meta(meta, blocks, path.stem, rel), blocks)


_DISPLAY_NONE = re.compile(r"display\s*:\s*none", re.I)


def _unshown(tag) -> bool:
    """A label a browser never shows (``hidden``, ``style="display:none"``):
    SQLite's ``<h _id=pragma_cache_spill style="display:none">`` ran into the
    paragraph before it as "... if it wants. PRAGMA cache_spill"; or a control.
    A hidden panel, a box with blocks of its own or more than a line of text,
    is read: tabs and accordions show it on a click (fastapi-docs' tabs)."""
    if _control(tag):
        return True
    if not (tag.has_attr("hidden") or _DISPLAY_NONE.search(str(tag.get("style") or ""))):
        return False
    return tag.get("role") != "tabpanel" and tag.find(_SPACED) is None and len(tag.get_text().strip()) <= 80


def _control(tag) -> bool:
    """A button that runs a script: its label is an action ("show", "hide" over
    SQLite's syntax diagrams), not text of the page (a button named in a
    sentence, "Press <button>Return</button>", is read)."""
    return tag.name == "button" and tag.has_attr("onclick")


LINK_LIST = 5  # links at least, ...
LINK_SHARE = 0.9  # ... holding this share of the text: a menu or a table of contents


def _link_list(tag) -> bool:
    """A list or box of nothing but links: a site menu or a table of contents
    without the markup that names one (SQLite's pages open with both, and
    their "Home Menu About Documentation Download ..." was a chunk of every page)."""
    if tag.name not in ("ul", "ol", "div", "table"):
        return False
    links = tag.find_all("a", href=True)
    if len(links) < LINK_LIST:
        return False
    text = len("".join(tag.get_text().split()))
    return text > 0 and sum(len("".join(a.get_text().split())) for a in links) >= LINK_SHARE * text


def _superscripts(soup) -> None:
    """What a page shows raised, as text can: a power as "2^7", "2^(n - 1)"
    (flattened, "2n - 1" was quoted as the range of an i8); a footnote's
    raised number, a link to its note, as nothing (it read "hash tables1").
    mdBook's hidden lines of an example (``<span class="boring">``: the
    ``fn main() {`` around it) as nothing, as the page shows them."""
    for sup in soup.find_all("sup"):
        if sup.parent is None:
            continue
        link = sup.find("a", href=True)
        if "footnote" in " ".join(sup.get("class") or []) or (link is not None and link["href"].startswith("#")):
            sup.replace_with("")
            continue
        text = sup.get_text()
        if text.strip():
            sup.replace_with(f"^{text}" if re.fullmatch(r"\w+", text.strip()) else f"^({text.strip()})")
    for hidden in soup.find_all("span", class_="boring"):
        if hidden.parent is not None and hidden.find_parent("pre") is not None:
            hidden.replace_with("")


_SITE_SUFFIX = re.compile(r"\s+[—–|·:-]\s+\S")  # " — Site name", " | Site", " - Site"


def _label_notes(soup) -> None:
    """An admonition's title paragraph (Sphinx, MkDocs: ``<p class="admonition-title">Note</p>``)
    opens the paragraph below it as "Note: ...", as Markdown admonitions read (alone, "Note"
    ended one chunk and its text opened the next, or "Note JSON files must ..." was quoted); a
    footnote's number opens its text, and a rubric is a heading."""
    from bs4 import NavigableString, Tag

    # DocBook writes a note's title as a heading (<div class="note"><h3 class="title">Note</h3>): read
    # as one, everything after it up to the next real heading was filed under "Note".
    for box in soup.find_all("div", class_=list(_ADMONITIONS)):
        head = box.find(_HEADINGS, class_="title")
        if isinstance(head, Tag) and head.find_parent("div", class_=list(_ADMONITIONS)) is box:
            head.name, head["class"] = "p", "admonition-title"
    # AsciiDoc lays a note out as a table, an icon cell and a content cell: it read as a table whose
    # header was the note's text.
    for box in soup.find_all("div", class_="admonitionblock"):
        icon, content = box.find("td", class_="icon"), box.find("td", class_="content")
        table = box.find("table")
        if isinstance(icon, Tag) and isinstance(content, Tag) and isinstance(table, Tag):
            title = soup.new_tag("p", attrs={"class": "admonition-title"})
            title.string = _flat_text(icon) or "Note"
            content.name = "div" if content.find(_BLOCKS + _CONTAINERS) else "p"
            table.replace_with(title)
            title.insert_after(content)
    # (docutils' sidebars and topics title themselves the same way: "Tip" stood alone as a paragraph)
    for title in soup.find_all("p", class_=["admonition-title", "sidebar-title", "topic-title"]):
        if title.parent is None:
            continue
        label = _flat_text(title).rstrip(":： ")
        nxt = title.find_next_sibling()
        if isinstance(nxt, Tag) and nxt.name == "p" and label:
            nxt.insert(0, NavigableString(f"{label}: "))
            title.replace_with("\n" * str(title).count("\n"))
        elif label:  # a list or code below: the label introduces it
            title.clear()
            title.append(NavigableString(f"{label}:"))
    # Sphinx's rubric ("Footnotes") is a heading the page shows without a number: read as one, it
    # starts the chunk of what it heads instead of ending the chunk before.
    # Inside a definition or an item (Celery's "Example" under one method) it labels what follows
    # there: as a heading, it headed every later method of the page.
    for rubric in soup.find_all("p", class_="rubric"):
        if rubric.find_parent(("dd", "li", "td", "th")) is None:
            rubric.name = "h6"
        elif label := _flat_text(rubric).rstrip(":： "):
            rubric.clear()
            rubric.append(NavigableString(f"{label}:"))
    # A footnote's number (Sphinx: <aside class="footnote"><span class="label">[1]</span><p>...) opens
    # its text, as the page shows it, instead of a paragraph "[1]" of its own.
    for note in soup.find_all(class_="footnote"):
        mark, text = note.find(class_="label"), note.find("p")
        number = _flat_text(mark) if isinstance(mark, Tag) and mark.parent is not None else ""
        if number and isinstance(text, Tag):
            text.insert(0, NavigableString(f"{number} "))
            mark.replace_with("\n" * str(mark).count("\n"))


_ITEM = re.compile(r" *(?:- |\d{1,4}\. )")
_SAID = ("?", "!", ".", ":", "？", "：", "。")  # a term ending in these reads on without a colon


def _merge_list_items(blocks: list[Block]) -> list[Block]:
    """Consecutive list items read as one paragraph, as in Markdown."""
    out: list[Block] = []
    for b in blocks:
        if out and b.kind == "para" and _ITEM.match(b.text) and out[-1].kind == "para" and _ITEM.match(out[-1].text):
            out[-1] = Block("para", out[-1].text + "\n" + b.text, out[-1].start, b.end)
        else:
            out.append(b)
    return out


# --- PDF ---------------------------------------------------------------------
def load_pdf(path: Path, rel: str, data: bytes) -> Document:
    import pypdf

    try:
        with _pypdf_warnings() as opening:  # a document info written into the trailer is parsed here
            reader = pypdf.PdfReader(io.BytesIO(data))
        if _cut_update(data):
            # pypdf falls back to the last whole revision, silently: the cut one may be what restricts it.
            raise UnreadableDocument("ends in an update cut off before its cross-reference table (a truncated "
                                     "file?), so its scope is unknown; save a repaired copy and ingest again")
        # Encrypted with an empty user password (permissions only: banks, government forms), it opens
        # in every viewer without a password, and so here.
        if reader.is_encrypted and not _opens_without_password(reader):
            raise UnreadableDocument("is an encrypted PDF; save an unencrypted copy and ingest again")
        pages = [(p.extract_text() or "").translate(_PDF_CHARS) for p in reader.pages]
        labels, bookmarks = _page_labels(reader, len(pages)), _bookmarks(reader)
        with _pypdf_warnings() as said:  # non-strict pypdf reads past a damaged info dictionary
            found = reader.metadata
            meta: Mapping = found or {}
            info = {k: meta[k] for k in meta}  # indexing resolves an indirect value; dict() kept the reference
            catalog = reader.trailer["/Root"]
            # The standard place for a PDF's language (indexing resolves a reference).
            catalog_lang = catalog["/Lang"] if isinstance(catalog, dict) and "/Lang" in catalog else None
        said = [m for m in opening if _BAD_DICT.search(m)] + said
        if said or (found is None and "/Info" in reader.trailer):
            # A value it dropped, or the first of a key given twice, may be the page's audience.
            raise UnreadableDocument(f"has document info that cannot be read ({said[0] if said else 'it is missing'}), "
                                     "so its scope is unknown; save a repaired copy (qpdf in.pdf out.pdf) and ingest "
                                     "again")
    except (UnreadableDocument, OSError):  # an OSError is the file's, not the PDF's: load says "cannot be read"
        raise
    except Exception as e:  # noqa: BLE001 - pypdf raises many types on damaged files
        raise UnreadableDocument(f"is not a readable PDF ({type(e).__name__}: {e}); save a repaired copy "
                                 "(qpdf in.pdf out.pdf) or export it again, and ingest again") from None
    blocks: list[Block] = []
    notes: list[Block] = []  # the page before's footnotes: they follow its last paragraph, wherever that ends
    for page_no, text in enumerate(pages, 1):
        read, below = _pdf_page(metadata.lines_of(text), page_no, labels[page_no - 1], bookmarks.get(page_no, []))
        if blocks and read and _runs_on(blocks[-1], read[0]):
            blocks[-1] = _run_on(blocks[-1], read.pop(0))
        blocks += notes + read
        notes = below
    blocks += notes
    if not any(b.text.strip() for b in blocks):
        raise UnreadableDocument("has no extractable text (a scanned PDF needs OCR first)")
    meta = _pdf_meta(info)
    tag = _pdf_text(catalog_lang).strip() if isinstance(catalog_lang, str) else ""
    if "lang" not in meta and _LANG_TAG.fullmatch(tag):
        meta["lang"] = tag  # anything else: the language is guessed, as without one
    # The title: the document info's, else the file name; a first bookmark ("Preface") names no document.
    return Document(rel, "", _finish_meta(meta, blocks, path.stem, rel, headings=False), blocks)


def _pdf_page(lines: list[str], page_no: int, label: str,
              titles: list[tuple[int, str]]) -> tuple[list[Block], list[Block]]:
    """A page's blocks: paragraphs, a bookmark's heading where its line is,
    runs of prompted lines as code; running headers and footers, contents and
    index entries are not read.  Lines count from 1 on each page: a citation
    reads "p. 2, lines 1-3".  Its footnotes come apart, as the second list:
    the paragraph they sit under may go on over the page."""
    furniture = _furniture(lines, label, page_no)
    leaders = {k for k, line in enumerate(lines) if _LEADER.search(line)}
    text_lines = [k for k, line in enumerate(lines) if line.strip() and k not in furniture]
    if text_lines and len(leaders) * 2 >= len(text_lines):
        return [], []  # a contents or index page: its entries answered questions with "4.2 tapply ......"
    if text_lines and sum(bool(_INDEX_ENTRY.search(lines[k])) for k in text_lines) * 2 >= len(text_lines):
        return [], []  # a back-of-book index without leaders ("\\intertext, 10, 11, 33")
    lines, notes = _footnotes(lines, text_lines, page_no, titles)
    blocks: list[Block] = []
    para = ""
    code: list[str] = []
    start = 1
    marks: list[tuple[int, int, int]] = []  # where each line of the paragraph begins in its text

    def end(last: int) -> None:
        nonlocal para, code, marks
        if para:
            blocks.append(Block("para", para, start, last, page=page_no, marks=tuple(marks)))
        if code:
            blocks.append(Block("code", "\n".join(["```", *code, "```"]), start, last, page=page_no))
        para, code, marks = "", [], []
    taken = -1  # the second line of a heading printed over two
    for k, line in enumerate(lines):
        line_no = k + 1
        st = line.strip()
        if k == taken:
            continue
        if not st or k in furniture or k in leaders:
            end(line_no - 1)
            continue
        nxt = lines[k + 1].strip() if k + 1 < len(lines) and k + 1 not in furniture else ""
        found, two = _bookmarked(st, titles), False
        if found is None and nxt:  # a title printed over two lines ("... environ-" / "ments")
            found, two = _bookmarked(_join_lines(st, nxt), titles), True
        if found is not None:
            end(line_no - 1)
            level, text = found
            blocks.append(Block("heading", text, line_no, line_no + two, level=level, page=page_no))
            taken = k + 1 if two else -1
            continue
        # A console session ("> help(solve)", "$ pip install", ">>> x = 1" and its "+ "/"... " lines)
        # is code, a line each: joined into prose, "> help(solve) An alternative is > ?solve" was quoted.
        if _PROMPT.match(st) or (code and _CONTINUED.match(st)):
            if para:
                end(line_no - 1)
            if not code:
                start = line_no
            code.append(st)
            continue
        if code:
            end(line_no - 1)
        if not para:
            start = line_no
        para = _joined(para, st) if para else st
        marks.append((len(para) - len(st), page_no, line_no))
        # A line ending a sentence, followed by a capitalised line, ends a paragraph.
        nxt = lines[k + 1].strip() if k + 1 < len(lines) else ""
        if st.endswith((".", ":", "?", "!")) and not _url_goes_on(st, nxt) \
                and (not nxt or nxt[:1].isupper() or nxt[:1].isdigit()):
            end(line_no)
    end(len(lines))
    return blocks, notes


def _footnotes(lines: list[str], text_lines: list[int], page_no: int,
               titles: list[tuple[int, str]]) -> tuple[list[str], list[Block]]:
    """The page's lines without its footnotes, and the footnotes as blocks
    ("Footnote 5: The leading dot ...").  Footnotes are the page's last lines
    from one that opens with a number on: numbers running on by one, each
    glued as a marker to a word above (".RData5", "same.3"), which loses it
    there when it is the only such mark.  Read as text, the footnote ran into
    the paragraph the next page goes on with.  A bookmarked heading ("4
    Interfaces for class and package authors") is none."""
    for first, k in enumerate(text_lines):
        m = _NOTE.match(lines[k])
        if m is None or first < len(text_lines) // 2:  # footnotes sit in the page's lower half
            continue
        starts = [j for j in text_lines[first:] if _NOTE.match(lines[j])]
        if any(_bookmarked(lines[j].strip(), titles) for j in starts):
            continue
        numbers = [int(_NOTE.match(lines[j]).group(1)) for j in starts]  # type: ignore[union-attr]
        if numbers != list(range(numbers[0], numbers[0] + len(numbers))):
            continue
        above = "\n".join(lines[:k])
        # glued to a letter, or to a stop after a letter ("same.3", not the "1.1" of a section number)
        marks = {n: [*re.finditer(rf"(?:(?<=[^\W\d_])|(?<=[^\W\d_][.,;:)”’\"])){n}(?![\d\w])", above)]
                 for n in numbers}
        if not all(marks.values()):
            continue
        # A marker's one place loses it (right to left: a cut moves what follows on its line);
        # with two candidates, which is the marker is unknown, and both stay.
        kept = above
        for found in sorted((f[0] for f in marks.values() if len(f) == 1), key=lambda x: -x.start()):
            kept = kept[:found.start()] + kept[found.end():]
        filled = set(text_lines)
        notes: list[Block] = []
        for a, b in zip(starts, starts[1:] + [len(lines)]):
            body = [j for j in range(a, b) if j in filled]
            number, text = _NOTE.match(lines[a]).groups()  # type: ignore[union-attr]
            for j in body[1:]:
                text = _join_lines(text, lines[j].strip())
            notes.append(Block("para", f"Footnote {number}: {text}", a + 1, body[-1] + 1, page=page_no))
        return kept.split("\n"), notes
    return lines, []


def _runs_on(last: Block, first: Block) -> bool:
    """Whether the paragraph that ends a page goes on in the one that opens
    the next: by the rule that joins lines within a page (it ends only at a
    sentence end before a capital).  A quarter of R's manuals' page breaks cut
    a sentence in two, and an answer quoted half of it."""
    if last.kind != "para" or first.kind != "para" or last.page is None \
            or first.page != (last.end_page or last.page) + 1:
        return False
    a, b = last.text.rstrip(), first.text.lstrip()
    return not (a.endswith((".", ":", "?", "!")) and not _url_goes_on(a, b) and (b[:1].isupper() or b[:1].isdigit()))


def _run_on(last: Block, first: Block) -> Block:
    """One paragraph from the two halves a page break cut, citing from its
    first line on the one page to its last on the next."""
    text = _joined(last.text, first.text)
    shift = len(text) - len(first.text)
    marks = None if last.marks is None or first.marks is None else \
        last.marks + tuple((at + shift, page, line) for at, page, line in first.marks)
    return Block("para", text, last.start, first.end, page=last.page, end_page=first.page, marks=marks)


def _furniture(lines: list[str], label: str, page_no: int) -> set[int]:
    """The page's running header and footer: its first and last line when it
    carries the page's printed number as its first or last word ("Chapter 10:
    Writing your own functions 54"), or reads "Page 3 of 10"."""
    filled = [k for k, line in enumerate(lines) if line.strip()]
    out = set()
    for k in dict.fromkeys(filled[:1] + filled[-1:]):
        words = lines[k].split()
        numbered = {label, str(page_no)} & {words[0], words[-1]}
        # a sentence that starts with the number ("8 bits make a byte.") is text
        if len(words) <= 12 and ((numbered and (len(words) == 1 or not lines[k].rstrip().endswith((".", "?", "!"))))
                                 or _PAGE_OF.fullmatch(lines[k].strip())):
            out.add(k)
    return out


def _bookmarked(line: str, titles: list[tuple[int, str]]) -> tuple[int, str] | None:
    """(level, heading text) of the page's bookmark
    this line is the heading of: the line is the title, after a section number
    at most ("1.7 Getting help with functions and features" under the bookmark
    "Getting help with functions and features").  As LaTeX prints titles the
    bookmark's quotes, capitals and spaces may differ ("`doc'" is printed
    "‘doc’", "LaTeX2ε" "LATEX 2ε", "Preconstructingcommandnames"), and a
    footnote's mark may follow ("13 Hints7")."""
    for level, title in titles:
        if title and line.endswith(title) and _SECTION_NO.fullmatch(line[:len(line) - len(title)].strip()):
            return level, line
    key = _title_key(line)
    for level, title in titles:
        want = _title_key(title)
        if want and key.startswith(want) and (key == want or (key[len(want):].isdigit() and len(key) - len(want) <= 2)):
            printed = line[:len(line) - (len(key) - len(want))].rstrip()
            # words the text run together ("Preconstructingcommandnames") read as the bookmark has them
            return level, printed if printed.count(" ") >= title.count(" ") else title
    return None


_QUOTES = str.maketrans({"`": "'", "‘": "'", "’": "'", "“": '"', "”": '"'})
_SECTION_LEAD = re.compile(r"^(?:(?:\d+|[A-Z])(?:\.\d+)*\.?\s+)")


def _title_key(title: str) -> str:
    """A title as compared with a bookmark: without its section number,
    quotes of one kind, no spaces, no case."""
    return re.sub(r"\s+", "", _SECTION_LEAD.sub("", title.strip()).translate(_QUOTES)).casefold()


def _join_lines(line: str, nxt: str) -> str:
    """Two lines of a title or a footnote as one ("environ-" + "ments")."""
    return line[:-1] + nxt if _HYPHENATED.search(line) and nxt[:1].islower() else f"{line} {nxt}"


def _joined(text: str, nxt: str) -> str:
    """A paragraph's text and its next line as the page shows them: a word
    broken at the line's end is one word ("connec-" + "tion"), an address
    broken there one address ("https://CRAN." + "R-project.org/"), else a
    space between."""
    if _url_goes_on(text, nxt) and not (_HYPHENATED.search(text) and nxt[:1].islower()):
        return text + nxt
    return _join_lines(text, nxt)


def _page_labels(reader, n: int) -> list[str]:
    """Each page's printed number ("iv", "12"), where the PDF says; else its position."""
    try:
        labels = [str(x) for x in reader.page_labels]
    except Exception:  # noqa: BLE001 - a damaged label tree: the positions
        labels = []
    return labels if len(labels) == n else [str(i) for i in range(1, n + 1)]


def _bookmarks(reader) -> dict[int, list[tuple[int, str]]]:
    """The outline's titles by page (1-based) with their depth (1: top)."""
    out: dict[int, list[tuple[int, str]]] = {}

    def walk(items, depth: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
                continue
            try:
                page = reader.get_destination_page_number(item)
                title = " ".join(str(item.title).split())
            except Exception:  # noqa: BLE001 - a bookmark to nowhere, a damaged entry: no heading
                continue
            if page is not None and page >= 0 and title:
                out.setdefault(page + 1, []).append((min(depth, 6), title))
    try:
        walk(reader.outline, 1)
    except Exception:  # noqa: BLE001 - a damaged outline: no headings, the text as before
        return {}
    return out


def _opens_without_password(reader) -> bool:
    try:
        return bool(reader.decrypt(""))
    except Exception:  # noqa: BLE001 - an unsupported cipher (AES without cryptography) or a damaged file
        return False


# pypdf's words for a dictionary it could not parse whole (it kept one of a key
# given twice, or dropped a value): in the trailer, that may be the scope.
_BAD_DICT = re.compile(r"Multiple definitions|Invalid Elementary Object|hexadecimal", re.I)
_OBJECT = re.compile(rb"\d+\s+\d+\s+obj\b")
_LANG_TAG = re.compile(r"[A-Za-z]{2,8}(?:[-_][A-Za-z0-9]{1,8})*")  # BCP 47's shape: en, de-DE, zh-Hant-TW


def _cut_update(data: bytes) -> bool:
    """Whether objects follow the file's last ``%%EOF``: an incremental update
    cut off before its cross-reference table and trailer."""
    end = data.rfind(b"%%EOF")
    return end >= 0 and bool(_OBJECT.search(data, end))


def _pdf_text(v) -> str:
    """A document-info value as text: a name (``/Staff``, legal PDF) without
    its slash, a string without the NULs a UTF-16 terminator leaves."""
    from pypdf.generic import NameObject
    return str(v)[1:] if isinstance(v, NameObject) else str(v).rstrip("\x00")


_NOTE = re.compile(r"\s*(\d{1,3})\s+([^\W\d_“\"‘(].*)")  # "5 The leading dot ...": a footnote, by its number
_HYPHENATED = re.compile(r"[^\W\d_]-$")  # a word broken at the line's end
_URL_BROKEN = re.compile(r"https?://(?:\S*[/.\-_])?$")  # an address broken at the line's end ...
_URL_REST = re.compile(r"\S*[/.\-_?=#&%~]")  # ... goes on with a word that reads as one ("R-project.org/")

_INDEX_ENTRY = re.compile(r",\s*(?:\d+|[ivxlc]+)(?:\s*[–-]\s*\d+)?(?:\s*,\s*\d+(?:\s*[–-]\s*\d+)?)*\s*$")
# What a PDF's text holds for what its page shows: ligatures as their letters ("speciﬁed" was
# quoted so), control characters (a math font's \x00) as nothing.
_PDF_CHARS = {0xFB00: "ff", 0xFB01: "fi", 0xFB02: "fl", 0xFB03: "ffi", 0xFB04: "ffl", 0xFB05: "st", 0xFB06: "st",
              **{c: None for c in (*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F)}}
_LEADER = re.compile(r"(?:\.\s?){4,}\s*[\dA-Za-z]{1,6}\s*$")  # "4.2 tapply ........ 21", "Index . . . . iv"
# "12", "3 / 10", "Page 3 of 10", "Limited Warranty - page 1 of 2": a footer's page count
_PAGE_OF = re.compile(r"(?i)(?:(?:.*\s)?(?:page|p\.)\s*)?\d+(?:\s*(?:of|/)\s*\d+)?")
_SECTION_NO = re.compile(r"(?:(?:\d+|[A-Z])(?:\.\d+)*\.?)?")  # "", "1.7", "A.2", "3."
# A console prompt before code: not "> Thanks" (a quoted mail) nor "$ 5 a month" (a price).
_PROMPT = re.compile(r"(?:>>>|R>|>)\s(?=[^\sA-Z])|\$\s(?=[A-Za-z./~])")
_CONTINUED = re.compile(r"(?:\+|\.\.\.)\s")


def _url_goes_on(line: str, nxt: str) -> bool:
    """Whether ``nxt`` goes on with the address ``line`` ends in: "…/pub/MASS4/."
    before "Please always use" ends a sentence, and the two read as two words."""
    return _URL_BROKEN.search(line) is not None and _URL_REST.match(nxt) is not None


@contextlib.contextmanager
def _pypdf_warnings():
    """What pypdf says (to its logger, silenced above) in this thread meanwhile."""
    said: list[str] = []
    me = threading.get_ident()

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.thread == me and record.levelno >= logging.WARNING:
                said.append(record.getMessage()[:160])
    log, keep = logging.getLogger("pypdf"), Keep()
    level = log.level
    log.addHandler(keep)
    log.setLevel(logging.WARNING)
    try:
        yield said
    finally:
        log.setLevel(level)
        log.removeHandler(keep)


def _pdf_meta(info: dict) -> dict:
    """The PDF's document info: its /Title, and /Status, /Audience, /Tenant,
    /Lang entries (custom keys, any case) read like front matter, so a PDF
    can be restricted too (a wrong type or a key twice fails closed)."""
    # Every key goes to normalize, which keeps the known ones and fails closed on a misspelt one (/Audiance).
    raw = {str(k).lstrip("/"): (_pdf_text(v) if isinstance(v, str) else v) for k, v in info.items()}
    title = next((v for k, v in raw.items() if k.lower() == "title"), None)
    meta = metadata.normalize({k: v for k, v in raw.items() if k.lower() != "title"}, place="its PDF document info")
    if isinstance(title, str) and title.strip():
        meta["title"] = title.strip()
    return meta


LOADERS = {".md": load_markdown, ".markdown": load_markdown, ".txt": load_text,
           ".html": load_html, ".htm": load_html, ".pdf": load_pdf, **dict.fromkeys(asciidoc.SUFFIXES, load_asciidoc),
           **dict.fromkeys(rst.SUFFIXES, load_rst)}


def file_type(path: Path) -> str:
    """The suffix that says how a file reads: its last, but for a Sphinx
    include ("create.rst.inc") or a source Sphinx copied ("tasks.rst.txt"),
    which are reStructuredText.  Sphinx pastes an include into the page that
    includes it; citebot reads it as a file of its own, so a citation names
    the file that holds the text (borg's option tables and environment
    variables live in such files)."""
    name = path.name.lower()
    return next((s for s in rst.SUFFIXES if name.endswith((f"{s}.inc", f"{s}.txt"))), path.suffix.lower())


# What a page's text may come from elsewhere by: rst's include and literalinclude, MyST's fenced ones,
# MkDocs' snippets ("--8<--"), FastAPI's "{* x.py *}" and "{!x.md!}", AsciiDoc's include::.
_INCLUDES = [re.compile(p) for p in (
    r"^\s*\.\.\s+(?:[\w-]+-)?(?:literal)?include::\s+(\S+)",  # (pip's "pip-news-include:: ../../NEWS.rst" too)
    r"^\s*(?:`{3,}|:{3,})\{(?:literal)?include\}\s+(\S+)",
    r"^\s*--8<--\s+[\"']([^\"']+)", r"\{\*\s*(\S+)[^*]*\*\}", r"\{!>?\s*([^!\s]+)\s*!\}", r"^include::([^\[\s]+)\[")]


def includes(data: bytes) -> list[str]:
    """The files a page says it includes (what an empty page's text would have
    been: Black's change_log.md is one ```{include} ../CHANGES.md```)."""
    if not any(mark in data for mark in (b"include", b"{*", b"--8<--", b"{!")):
        return []  # (most pages: not decoded a second time)
    try:
        _, lines, _ = _text_of(data)
    except UnreadableDocument:
        return []
    found = [m.group(1) for line in lines for p in _INCLUDES if (m := p.search(line))]
    return list(dict.fromkeys(found))


_AUTODOC = re.compile(rb"^[ \t]*(?:\.\.[ \t]+|```\{|:::\{)auto(?:module|class|function|method|attribute|data|exception"
                      rb"|decorator|property|pydantic_\w+|summary)(?:::|\})", re.M)


def autodoc(data: bytes) -> int:
    """How many Sphinx autodoc directives a page holds (``.. autoclass:: Operations``): each shows
    a docstring that lives in the code, which an ingest of the documents does not read."""
    return len(_AUTODOC.findall(data)) if b"auto" in data else 0


def unread(path: Path, root: Path, names: Iterable[str]) -> list[str]:
    """Of the files ``path`` includes, those an ingest of ``root`` reads nowhere: outside it, or
    missing ("/x" is from ``root``, as a literalinclude reads it)."""
    out = []
    for name in names:
        try:
            target = _include_target(path, root, name)
            if not target.is_relative_to(root.resolve()) or not target.exists():
                out.append(name)
        except (OSError, RuntimeError, ValueError):
            out.append(name)
    return out


def load(path: Path, rel: str, data: bytes | None = None) -> Document:
    """``data``: the file's bytes when the caller read them (an ingest hashes the
    very bytes it parses: a file saved between two reads was recorded with one
    version's hash and the other's text).  The file is read here once, and every
    loader parses those bytes (a PDF's cut-update check reads them too)."""
    loader = LOADERS.get(file_type(path))
    if loader is None:
        raise UnreadableDocument(f"unsupported file type {path.suffix or '(none)'}; supported: {', '.join(SUFFIXES)}")
    try:
        doc = loader(path, rel, path.read_bytes() if data is None else data)
    except OSError as e:
        raise UnreadableDocument(f"cannot be read: {e.strerror or e}") from None
    doc.title = doc.meta["title"]
    return doc

"""Read documents (Markdown, text, HTML, PDF) into titled blocks with metadata.

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

import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from citebot.index import markdown

# pypdf logs every oddity of a damaged file; we report one line per file instead.
logging.getLogger("pypdf").setLevel(logging.ERROR)

SUFFIXES = (".md", ".markdown", ".txt", ".html", ".htm", ".pdf")
META_KEYS = ("title", "status", "audience", "lang", "tenant")
DEFAULTS = {"status": "current", "audience": "public", "tenant": None}


class UnreadableDocument(Exception):
    """A file that cannot be read; the message says why."""


@dataclass
class Block:
    kind: str  # heading | para | table | code
    text: str
    start: int  # first source line (1-based)
    end: int  # last source line
    level: int = 0  # heading level
    page: int | None = None  # PDF page (1-based)


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
    ("ru", re.compile(r"[\u0400-\u04ff]")),
    ("ar", re.compile(r"[\u0600-\u06ff]")),
]


def guess_lang(text: str) -> str:
    letters = sum(ch.isalpha() for ch in text) or 1
    counts = {code: len(rx.findall(text)) for code, rx in _SCRIPTS}
    if counts["ja"] and counts["ja"] / letters > 0.05:
        return "ja"  # kana decides Japanese even amid kanji
    code, n = max(counts.items(), key=lambda kv: kv[1])
    return code if n / letters > 0.3 else "en"


# --- front matter ------------------------------------------------------------
def split_front_matter(text: str) -> tuple[dict, list[str], int]:
    """Return (metadata, body lines, number of lines the front matter took)."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, lines, 0
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            try:
                meta = yaml.safe_load("\n".join(lines[1:i])) or {}
            except yaml.YAMLError as e:
                raise UnreadableDocument(f"front matter is not valid YAML: {e}") from None
            if not isinstance(meta, dict):
                raise UnreadableDocument("front matter must be a YAML mapping (key: value lines)")
            return meta, lines[i + 1:], i + 1
    return {}, lines, 0


def _finish_meta(meta: dict, blocks: list[Block], fallback_title: str) -> dict:
    out = {k: meta.get(k) for k in META_KEYS}
    for k, v in DEFAULTS.items():
        if out[k] in (None, ""):
            out[k] = v
    for k in ("status", "audience", "lang"):
        if out[k] is not None:
            out[k] = str(out[k]).strip().lower()
    if out["tenant"] is not None:
        out["tenant"] = str(out["tenant"]).strip()
    if not out["lang"]:
        out["lang"] = guess_lang(" ".join(b.text for b in blocks[:50]))
    if not out["title"]:
        heading = next((b.text for b in blocks if b.kind == "heading"), None)
        out["title"] = heading or fallback_title
    out["title"] = str(out["title"]).strip()
    return out


# --- Markdown / text ---------------------------------------------------------
_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def parse_markdown(lines: list[str], offset: int = 0, headings: bool = True) -> list[Block]:
    """Split Markdown lines into blocks; ``offset`` = lines before ``lines``."""
    blocks: list[Block] = []
    i, n = 0, len(lines)
    para: list[str] = []
    para_start = 0

    def flush(end: int) -> None:
        nonlocal para
        if para:
            blocks.append(Block("para", "\n".join(para).strip(), para_start + offset + 1, end + offset))
            para = []

    while i < n:
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            flush(i)
            marker, j = fence.group(1), i + 1
            while j < n and not lines[j].strip().startswith(marker):
                j += 1
            j = min(j, n - 1)  # an unclosed fence runs to the end of the file
            blocks.append(Block("code", "\n".join(lines[i:j + 1]), i + offset + 1, j + offset + 1))
            i = j + 1
            continue
        h = _HEADING.match(line) if headings else None
        if h:
            flush(i)
            blocks.append(Block("heading", markdown.strip_anchor(h.group(2)), i + offset + 1, i + offset + 1,
                                level=len(h.group(1))))
            i += 1
            continue
        if line.lstrip().startswith("|"):
            flush(i)
            j = i
            while j < n and lines[j].lstrip().startswith("|"):
                j += 1
            blocks.append(Block("table", "\n".join(line.strip() for line in lines[i:j]), i + offset + 1, j + offset))
            i = j
            continue
        if not line.strip():
            flush(i)
        else:
            if not para:
                para_start = i
            para.append(line.rstrip())
        i += 1
    flush(n)
    return blocks


def load_markdown(path: Path, rel: str) -> Document:
    meta, lines, skipped = split_front_matter(_read_text(path))
    blocks = parse_markdown(markdown.clean(lines), skipped)
    return Document(rel, "", _finish_meta(meta, blocks, path.stem), blocks)


def load_text(path: Path, rel: str) -> Document:
    meta, lines, skipped = split_front_matter(_read_text(path))
    # Plain text has no heading syntax: '#' lines are text, not structure.
    blocks = parse_markdown(lines, skipped, headings=False)
    first = next((line.strip() for line in lines if line.strip()), path.stem)
    return Document(rel, "", _finish_meta(meta, blocks, first), blocks)


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    if b"\x00" in data[:4096]:
        raise UnreadableDocument("looks like a binary file, not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UnreadableDocument("is not valid UTF-8 text; convert it to UTF-8 and ingest again") from None


# --- HTML --------------------------------------------------------------------
_BOILERPLATE = ("script", "style", "nav", "header", "footer", "aside", "noscript", "form", "iframe", "svg", "button")


def load_html(path: Path, rel: str) -> Document:
    from bs4 import BeautifulSoup

    source = _read_text(path)
    soup = BeautifulSoup(source, "html.parser")
    meta = {}
    for name in ("title", "status", "audience", "lang", "tenant"):
        tag = soup.find("meta", attrs={"name": name})
        if tag and tag.get("content"):
            meta[name] = tag["content"]
    if soup.html and soup.html.get("lang") and "lang" not in meta:
        meta["lang"] = str(soup.html["lang"]).split("-")[0]
    if soup.title and soup.title.string and "title" not in meta:
        meta["title"] = soup.title.string.strip()
    for tag in soup.find_all(_BOILERPLATE):
        tag.decompose()
    root = soup.find("main") or soup.find("article") or soup.body or soup
    blocks: list[Block] = []

    def span(tag) -> tuple[int, int]:
        start = tag.sourceline or 1
        return start, start + str(tag).count("\n")

    for tag in root.find_all(["h1", "h2", "h3", "h4", "h5", "h6", "p", "li", "pre", "table", "dt", "dd"]):
        # A block nested in another block is part of that block's text.
        if tag.name != "table" and tag.find_parent(["table", "pre"]):
            continue
        if tag.name == "table" and tag.find_parent("table"):
            continue
        if tag.name == "p" and tag.find_parent("li"):
            continue
        start, end = span(tag)
        if tag.name[0] == "h" and tag.name[1:].isdigit():
            text = " ".join(tag.get_text(" ").split())
            if text:
                blocks.append(Block("heading", text, start, start, level=int(tag.name[1])))
        elif tag.name == "pre":
            blocks.append(Block("code", "```\n" + tag.get_text().strip("\n") + "\n```", start, end))
        elif tag.name == "table":
            rows = []
            for tr in tag.find_all("tr"):
                cells = [" ".join(c.get_text(" ").split()) for c in tr.find_all(["th", "td"])]
                rows.append("| " + " | ".join(cells) + " |")
                if len(rows) == 1:
                    rows.append("|" + "---|" * len(cells))
            if rows:
                blocks.append(Block("table", "\n".join(rows), start, end))
        else:
            if tag.name == "li" and tag.find(["ul", "ol"]):
                # Nested lists: keep only this item's own text.
                text = " ".join(t.strip() for t in tag.find_all(string=True, recursive=False) if t.strip())
            else:
                text = " ".join(tag.get_text(" ").split())
            if text:
                blocks.append(Block("para", ("- " if tag.name == "li" else "") + text, start, end))
    blocks = _merge_list_items(blocks)
    return Document(rel, "", _finish_meta(meta, blocks, path.stem), blocks)


def _merge_list_items(blocks: list[Block]) -> list[Block]:
    """Consecutive list items read as one paragraph, as in Markdown."""
    out: list[Block] = []
    for b in blocks:
        if out and b.kind == "para" and b.text.startswith("- ") and out[-1].kind == "para" and out[-1].text.startswith("- "):
            out[-1] = Block("para", out[-1].text + "\n" + b.text, out[-1].start, b.end)
        else:
            out.append(b)
    return out


# --- PDF ---------------------------------------------------------------------
def load_pdf(path: Path, rel: str) -> Document:
    import pypdf

    try:
        reader = pypdf.PdfReader(str(path))
        if reader.is_encrypted:
            raise UnreadableDocument("is an encrypted PDF; save an unencrypted copy and ingest again")
        pages = [(p.extract_text() or "") for p in reader.pages]
        info_title = reader.metadata.get("/Title") if reader.metadata else None
    except UnreadableDocument:
        raise
    except Exception as e:  # noqa: BLE001 - pypdf raises many types on damaged files
        raise UnreadableDocument(f"is not a readable PDF ({type(e).__name__}: {e})") from None
    blocks: list[Block] = []
    line_no = 0
    for page_no, text in enumerate(pages, 1):
        lines = text.splitlines()
        para: list[str] = []
        para_start = line_no + 1
        for k, line in enumerate(lines):
            line_no += 1
            if not line.strip():
                if para:
                    blocks.append(Block("para", " ".join(para), para_start, line_no - 1, page=page_no))
                    para = []
                continue
            if not para:
                para_start = line_no
            para.append(line.strip())
            # A line ending a sentence, followed by a capitalised line, ends a paragraph.
            nxt = lines[k + 1].strip() if k + 1 < len(lines) else ""
            if line.rstrip().endswith((".", ":", "?", "!")) and (not nxt or nxt[:1].isupper() or nxt[:1].isdigit()):
                blocks.append(Block("para", " ".join(para), para_start, line_no, page=page_no))
                para = []
        if para:
            blocks.append(Block("para", " ".join(para), para_start, line_no, page=page_no))
    if not any(b.text.strip() for b in blocks):
        raise UnreadableDocument("has no extractable text (a scanned PDF needs OCR first)")
    return Document(rel, "", _finish_meta({"title": info_title}, blocks, path.stem), blocks)


LOADERS = {".md": load_markdown, ".markdown": load_markdown, ".txt": load_text,
           ".html": load_html, ".htm": load_html, ".pdf": load_pdf}


def load(path: Path, rel: str) -> Document:
    loader = LOADERS.get(path.suffix.lower())
    if loader is None:
        raise UnreadableDocument(f"unsupported file type {path.suffix or '(none)'}; supported: {', '.join(SUFFIXES)}")
    try:
        doc = loader(path, rel)
    except OSError as e:
        raise UnreadableDocument(f"cannot be read: {e.strerror or e}") from None
    doc.title = doc.meta["title"]
    return doc

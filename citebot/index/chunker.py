"""Structure-aware chunking.

Rules: a heading starts a new chunk and its path is kept on every chunk below
it; paragraphs are packed up to a token budget; a table or code block joins
the current chunk only when it fits whole; a long table is split into pieces
that each repeat the header row; a fenced code block is never cut (an
oversized one becomes one chunk on its own); an oversized paragraph is split
at sentence ends.  Ids are a hash of the source, heading path, text and
occurrence, so the same input gives the same ids and an unchanged chunk keeps
its id when a neighbour changes.
"""
from __future__ import annotations

import hashlib
import re

from citebot import tokens
from citebot.index.documents import Block, Document
from citebot.schema import Chunk

# A sentence ends at . ! ? before whitespace, or at a CJK full stop (no space follows one).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？।])\s*")
_TABLE_SEP = re.compile(r"^\|?\s*:?-{2,}")


def chunk_document(doc: Document, budget: int) -> list[Chunk]:
    pieces: list[tuple[tuple[str, ...], list[Block]]] = []
    stack: list[tuple[int, str]] = []
    current: list[Block] = []
    used = 0

    def path() -> tuple[str, ...]:
        return tuple(t for _, t in stack)

    def flush() -> None:
        nonlocal current, used
        if current:
            pieces.append((path(), current))
        current, used = [], 0

    for block in doc.blocks:
        if current and block.page != current[-1].page:
            flush()  # a chunk cites one PDF page
        if block.kind == "heading":
            flush()
            while stack and stack[-1][0] >= block.level:
                stack.pop()
            # The document title as a top heading would repeat the title.
            if not (block.level == 1 and block.text == doc.title and not stack):
                stack.append((block.level, block.text))
            continue
        for part in _fit(block, budget):
            cost = tokens.count(part.text)
            if current and used + cost > budget:
                flush()
            current.append(part)
            used += cost
    flush()

    chunks: list[Chunk] = []
    seen: dict[str, int] = {}
    for headings, blocks in pieces:
        text = "\n\n".join(b.text for b in blocks).strip()
        if not text:
            continue
        key = f"{doc.path}\x00{' > '.join(headings)}\x00{text}"
        seen[key] = seen.get(key, 0) + 1
        cid = hashlib.sha1(f"{key}\x00{seen[key]}".encode()).hexdigest()[:16]
        chunks.append(Chunk(
            id=cid, source=doc.path, title=doc.title, headings=headings, text=text,
            start=min(b.start for b in blocks), end=max(b.end for b in blocks),
            status=doc.meta["status"], audience=doc.meta["audience"], lang=doc.meta["lang"],
            tenant=doc.meta["tenant"], page=blocks[0].page,
        ))
    return chunks


def _fit(block: Block, budget: int) -> list[Block]:
    """Cut a block that is over the budget into pieces that fit, where allowed."""
    if block.kind == "code" or tokens.count(block.text) <= budget:
        return [block]
    if block.kind == "table":
        return _split_table(block, budget)
    return _split_paragraph(block, budget)


def _split_table(block: Block, budget: int) -> list[Block]:
    lines = block.text.split("\n")
    n_head = 2 if len(lines) > 1 and _TABLE_SEP.match(lines[1].strip()) else 1
    header, rows = lines[:n_head], lines[n_head:]
    head_cost = tokens.count("\n".join(header))
    out: list[Block] = []
    group: list[str] = []
    cost, row_start = head_cost, block.start + n_head
    for i, row in enumerate(rows):
        c = tokens.count(row) + 1
        if group and cost + c > budget:
            out.append(Block("table", "\n".join(header + group), row_start, block.start + n_head + i - 1, page=block.page))
            group, cost, row_start = [], head_cost, block.start + n_head + i
        group.append(row)
        cost += c
    if group:
        out.append(Block("table", "\n".join(header + group), row_start, block.end, page=block.page))
    return out


def _split_paragraph(block: Block, budget: int) -> list[Block]:
    """Sentences packed up to the budget, each piece keeping the line breaks
    between its sentences (a list stays a list) and citing its own lines; a
    sentence longer than the budget is cut into budget-sized token windows,
    each tokenised once (linear in the text, however long a run without
    sentence breaks)."""
    text = block.text
    # (start offset, sentence): the separators are kept in the text, so each
    # piece is a slice of it and its lines can be counted.
    spans: list[tuple[int, int]] = []
    pos = 0
    for m in _SENTENCE_END.finditer(text):
        if m.end() > pos:  # (an empty match right after the last one splits nothing)
            if text[pos:m.start()].strip():
                spans.append((pos, m.start()))
            pos = m.end()
    if text[pos:].strip():
        spans.append((pos, len(text)))
    pieces: list[tuple[int, int]] = []
    group: tuple[int, int] | None = None
    cost = 0
    for a, b in spans:
        c = tokens.count(text[a:b])
        if group and cost + c > budget:
            pieces.append(group)
            group, cost = None, 0
        if c > budget:  # one giant "sentence": cut by tokens
            at = a
            for w in tokens.windows(text[a:b], budget)[:-1]:
                pieces.append((at, at + len(w)))
                at += len(w)
            a, c = at, tokens.count(text[at:b])
        group = (group[0], b) if group else (a, b)
        cost += c
    if group:
        pieces.append(group)
    # Line numbers per piece when the text keeps the source's line breaks
    # (Markdown); otherwise (HTML, PDF text joined) the block's range.
    exact = text.count("\n") == block.end - block.start
    out = []
    for a, b in pieces:
        piece = text[a:b].strip()
        if not piece:
            continue
        a += len(text[a:b]) - len(text[a:b].lstrip())
        first = block.start + text[:a].count("\n") if exact else block.start
        last = first + piece.count("\n") if exact else block.end
        out.append(Block(block.kind, piece, first, last, page=block.page))
    return out

"""Structure-aware chunking.

Rules: a heading starts a new chunk and its path is kept on every chunk below
it; paragraphs are packed up to a token budget; a table or code block joins
the current chunk only when it fits whole (else it starts the next chunk, with
the paragraph that introduces it, one ending in ":", as a list does, or for
code, the paragraph right above it); a long table is split into pieces
that each repeat the header row; a fenced code block is not cut for the
budget (an oversized one becomes one chunk on its own) up to ``CODE_WHOLE``
budgets, and a longer one is cut at its blank lines; an oversized paragraph
is split at sentence ends (a run without one, at spaces).  No chunk is longer than ``MAX_BYTES`` on any
backend: a code block beyond it (a generated file pasted whole) is cut at
line ends, each piece fenced again.  Ids are a hash of the source, heading path, text and
occurrence, so the same input gives the same ids and an unchanged chunk keeps
its id when a neighbour changes.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import replace

from citebot import tokens
from citebot.index import markdown
from citebot.index.documents import Block, Document
from citebot.schema import Chunk

# A sentence ends at . ! ? before whitespace, or at a CJK full stop (no space follows one).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？।])\s*")
_ENUMERATOR = re.compile(r"[ \t]*(?:\d{1,3}|[A-Za-z])\.")  # a list item's number, alone before its text
_TABLE_SEP = re.compile(r"^\|?\s*:?-{2,}")
_RULE_ROW = re.compile(r"^\|(?:\s*:?-{2,}:?\s*\|)+$")  # "|---|---|"
LABEL_OVER = 24  # tokens a label and its item may take a chunk over the budget (see ``_introduction``)
CODE_WHOLE = 2  # a code block up to this many budgets is kept whole, in one chunk; a longer one is cut
TAIL_OVER = 24  # tokens a short paragraph that ends its section may take the chunk before over the budget
INTRO_OVER = 64  # tokens the paragraph right above a code block may take the block's chunk over the budget
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t]")
_ITEM_BREAK = re.compile(r"\n(?=[ \t]*(?:[-*+]|\d{1,3}[.)])[ \t])")  # the line break before a list item

#: The most UTF-8 bytes of one chunk's text, on every backend: a Milvus VARCHAR
#: holds 65,535, and a chunk cut there alone would quote and match differently
#: from the same chunk in a local index.
MAX_BYTES = 60_000


def chunk_document(doc: Document, budget: int) -> list[Chunk]:
    pieces: list[tuple[tuple[str, ...], list[Block]]] = []
    stack: list[tuple[int, str]] = []
    current: list[Block] = []
    used = size = 0

    def path() -> tuple[str, ...]:
        return tuple(t for _, t in stack)

    def flush() -> None:
        nonlocal current, used, size
        if current:
            pieces.append((path(), current))
        current, used, size = [], 0, 0

    for at, block in enumerate(doc.blocks):
        if current and (block.page != current[-1].page or current[-1].end_page):
            flush()  # a chunk cites one PDF page; its last paragraph may run onto the next
        if block.kind == "heading":
            flush()
            while stack and stack[-1][0] >= block.level:
                stack.pop()
            # The document title as a top heading would repeat the title (an <h2> that is
            # the page's title too, in mdBook).
            if not (block.text == doc.title and not stack):
                stack.append((block.level, block.text))
            continue
        # A short paragraph that ends its section ("Deprecated since version 23.1.0", "See also: ...")
        # says something of what the chunk before holds: a chunk of it alone said it of nothing.
        last = at + 1 == len(doc.blocks) or doc.blocks[at + 1].kind == "heading"
        for part in _fit(block, budget):
            cost, length = tokens.count(part.text), len(part.text.encode("utf-8")) + 2  # + the "\n\n" joining
            # (not at the margin after a chunk that starts inside an item, which heads it)
            tail = (last and part.kind == "para" and part is block and cost <= TAIL_OVER and current
                    and used + cost <= budget + TAIL_OVER and current[0].item in ("", part.item))
            if current and (used + cost > budget and not tail or size + length > MAX_BYTES):
                intro = _introduction(current, part, cost, length, budget)
                if intro is not None:
                    del current[-len(intro[0]):]
                flush()
                if intro is not None:
                    current, used, size = intro
            current.append(part)
            used += cost
            size += length
    flush()

    chunks: list[Chunk] = []
    seen: dict[str, int] = {}
    for headings, blocks in pieces:
        text = "\n\n".join(_shown(b, blocks[0].item) for b in blocks).strip()
        if not text:
            continue
        if blocks[0].item:  # a chunk that starts inside a list item: what the item names heads it
            headings = (*headings, blocks[0].item)
        key = f"{doc.path}\x00{' > '.join(headings)}\x00{text}"
        seen[key] = seen.get(key, 0) + 1
        cid = hashlib.sha1(f"{key}\x00{seen[key]}".encode()).hexdigest()[:16]
        chunks.append(Chunk(
            id=cid, source=doc.path, title=doc.title, headings=headings, text=text,
            # (a paragraph that runs onto the next page ends its chunk: its last line is on that page)
            start=min(b.start for b in blocks),
            end=blocks[-1].end if blocks[-1].end_page else max(b.end for b in blocks),
            status=doc.meta["status"], audience=doc.meta["audience"], lang=doc.meta["lang"],
            tenant=doc.meta["tenant"], page=blocks[0].page, end_page=blocks[-1].end_page,
        ))
    return chunks


def _introduction(current: list[Block], part: Block, cost: int, length: int,
                  budget: int) -> tuple[list[Block], int, int] | None:
    """The paragraph that ends ``current`` when it introduces ``part``, a code
    block, table or list that starts the next chunk ("To generate a key use the
    command:"): it moves with what it introduces, or the chunk before ends in
    a dangling ":" and the command's chunk never says what the command is for.
    A label ("Windows:", a tab's) moves even where it makes that chunk a few
    tokens over the budget, and the list item right above it with it (pip's
    "6. Install a project from VCS in "editable" mode." / "Unix/macOS:" /
    its command: the item ended one chunk, its command began the next, and a
    chunk of "Windows:" alone stood between two long outputs).  With their
    token count and bytes; None when it is the chunk's only block (but a
    label) or the two do not fit one chunk."""
    # (a chunk of a label alone: the label and its code are one, over the budget, and so are a short
    # paragraph and the code right below it: marshmallow's "If the object ... has a relationship to an
    # object of the same type, you can nest the Schema within itself ..." was a chunk of one sentence)
    own = tokens.count(current[-1].text)
    short = part.kind == "code" and _adjacent(current[-1], part) and own <= INTRO_OVER
    # ... and code too long for any chunk takes the paragraph that introduces it with a colon, however
    # long (alembic's "... place a process_revision_directives hook ... which removes ... any operations:"
    # was a chunk of its own, and the hook's code the next)
    colon = part.kind == "code" and cost > budget and current[-1].kind == "para" \
        and current[-1].text.rstrip().endswith((":", "："))
    last = current[-1] if len(current) > 1 or part.kind == "code" and (_label(current[0]) or short or colon) else None
    # A title above a table or code block ("Table 8.2. Numeric Types": a few words, no sentence end)
    # introduces it as a colon does.
    titled = (last is not None and last.kind == "para" and part.kind in ("code", "table")
              and len(last.text.split()) <= 12 and "\n" not in last.text
              and not last.text.rstrip().endswith((".", "!", "?", "。", "！", "？")))
    # A list right below it (a blank line between: with more, an include or image that is
    # not here stood between, and that was what the paragraph introduced).
    listed = part.kind == "para" and _LIST_ITEM.match(part.text) is not None and last is not None \
        and part.start - last.end <= 2
    # The paragraph right above a code block introduces it too, with or without a colon
    # ("You can also pass a class name as a string to Nested." ended one chunk, and the
    # example that shows it began the next, saying nothing of what it was for).
    if (last is None or last.kind != "para" or not (part.kind in ("code", "table") or listed)
            or not (last.text.rstrip().endswith((":", "：")) or titled or part.kind == "code" and _adjacent(last, part))):
        return None
    size = len(last.text.encode("utf-8")) + 2  # (``last`` is current[-1]: ``own`` counts it)
    label = part.kind == "code" and _label(last)
    over = LABEL_OVER if label else INTRO_OVER if part.kind == "code" and own <= INTRO_OVER else 0

    def fits(extra: int, more: int) -> bool:  # (code over the budget is a chunk of its own: a label may join it)
        return (extra + cost <= budget + over or label and cost > budget and extra <= 2 * LABEL_OVER
                or colon and extra <= budget) and more + length <= MAX_BYTES
    item = current[-2] if len(current) >= 2 else None
    if label and item is not None and item.kind == "para" and _LIST_ITEM.match(item.text) \
            and last.start - item.end <= 2:
        mine, bytes_ = tokens.count(item.text), len(item.text.encode("utf-8")) + 2
        if fits(mine + own, bytes_ + size):
            return [item, last], own + mine, size + bytes_
    return ([last], own, size) if fits(own, size) else None


def _adjacent(block: Block, code: Block) -> bool:
    """``block`` is a paragraph right above ``code``: a blank line between, or a
    directive's line and a blank one (reStructuredText's ``.. code-block::``);
    with more, an include that is not here stood between."""
    return block.kind == "para" and code.kind == "code" and code.start - block.end <= 3


def _label(block: Block) -> bool:
    """A label's paragraph ("Windows:", a tab's): one line of four words at most, ``LABEL_OVER`` tokens."""
    text = block.text.strip()
    return block.kind == "para" and len(text.split()) <= 4 and "\n" not in text and tokens.count(text) <= LABEL_OVER


def _fit(block: Block, budget: int) -> list[Block]:
    """Cut a block that is over the budget into pieces that fit, where allowed,
    and any piece still over ``MAX_BYTES`` at its line ends."""
    if block.kind == "table":
        # A rule row below the header is no row: reStructuredText's grid tables keep each row on its
        # source line with rules between (the rows' lines hold), which the text needs no more.
        lines = block.text.split("\n")
        body = [x for x in lines[2:] if not _RULE_ROW.match(x.strip())] if len(lines) > 2 else []
        if len(lines) > 2 and len(body) < len(lines) - 2 and _TABLE_SEP.match(lines[1].strip()):
            text = "\n".join(lines[:2] + body)
            if tokens.count(text) <= budget:
                return _bound(replace(block, text=text))
    if block.kind == "code" and tokens.count(block.text) > CODE_WHOLE * budget:
        parts = _split_code(block, budget)
    elif block.kind == "code" or tokens.count(block.text) <= budget:
        parts = [block]
    elif block.kind == "table":
        parts = _split_table(block, budget)
    else:
        parts = _split_paragraph(block, budget)
    return [p for part in parts for p in _bound(part)]


def _unfenced(text: str) -> tuple[str, list[str], str, str] | None:
    """A fenced code block's text taken apart: its opening line, its body's
    lines, its closing line (the fence itself when the block left it open) and
    the fence; None when the text opens no fence."""
    lines = text.split("\n")
    opener = markdown.fence_open(lines[0])
    if opener is None:
        return None
    body = lines[1:]
    close = body.pop() if body and markdown.fence_closes(body[-1], opener) else opener
    return lines[0], body, close, opener


def _bound(block: Block) -> list[Block]:
    """``block`` in pieces of at most ``MAX_BYTES``, cut at line ends (a line
    longer than that alone, at a character boundary).  A code block's pieces
    each open and close its fence, so every one still reads as code."""
    if len(block.text.encode("utf-8")) <= MAX_BYTES:
        return [block]
    fenced = _unfenced(block.text) if block.kind == "code" else None
    head, lines, tail = ([fenced[0]], fenced[1], [fenced[2]]) if fenced else ([], block.text.split("\n"), [])
    frame = len("\n".join(head + tail).encode("utf-8")) + 2 * bool(head)
    most = MAX_BYTES - frame
    exact = block.text.count("\n") == block.end - block.start
    first_line = block.start + len(head)  # the source line of lines[0] (when the text keeps the source's lines)
    out: list[Block] = []
    group: list[str] = []
    group_start = size = 0

    def emit(upto: int) -> None:
        if group:
            a, b = (first_line + group_start, first_line + upto - 1) if exact else (block.start, block.end)
            out.append(replace(block, text="\n".join(head + group + tail), start=a, end=b))

    for i, line in enumerate(lines):
        while len(line.encode("utf-8")) > most:  # one line alone over the bound
            emit(i)
            piece = tokens.cut_bytes(line, most)
            group, group_start, size = [piece], i, len(piece.encode("utf-8"))
            emit(i + 1)
            group, line = [], line[len(piece):]
        length = len(line.encode("utf-8")) + 1
        if group and size + length > most:
            emit(i)
            group = []
        if not group:
            group_start, size = i, 0
        group.append(line)
        size += length
    emit(len(lines))
    return out


def _split_code(block: Block, budget: int) -> list[Block]:
    """A code block too long to read as one (a whole sample configuration file)
    in pieces of at most ``budget`` tokens, cut at its blank lines where it has
    them (else at line ends), each piece fenced again: alembic's 150-line
    sample alembic.ini was one chunk that filled the prompt, and the sentence
    defining one of its settings never reached it."""
    fenced = _unfenced(block.text)
    if fenced is None:
        return [block]
    first, body, _, opener = fenced
    frame = tokens.count(f"{first}\n{opener}")
    exact = block.text.count("\n") == block.end - block.start
    runs: list[list[int]] = [[]]  # the body's lines by blank-line run (indexes into body)
    for k, line in enumerate(body):
        if not line.strip():
            if runs[-1]:
                runs.append([])
        else:
            runs[-1].append(k)
    pieces: list[list[int]] = []
    used = 0
    for run in (r for r in runs if r):
        cost = sum(tokens.count(body[k]) + 1 for k in run)
        if pieces and used + cost + frame <= budget:
            pieces[-1].extend(run)
            used += cost
            continue
        pieces.append([])
        used = 0
        for k in run:  # a run longer than the budget: cut at its line ends
            c = tokens.count(body[k]) + 1
            if pieces[-1] and used + c + frame > budget:
                pieces.append([])
                used = 0
            pieces[-1].append(k)
            used += c
    out = []
    for piece in pieces:
        a, b = piece[0], piece[-1]
        text = "\n".join([first, *body[a:b + 1], opener])
        out.append(replace(block, text=text, start=block.start + 1 + a if exact else block.start,
                           end=block.start + 1 + b if exact else block.end))
    return out or [block]


def _split_table(block: Block, budget: int) -> list[Block]:
    lines = block.text.split("\n")
    n_head = 2 if len(lines) > 1 and _TABLE_SEP.match(lines[1].strip()) else 1
    header, rows = lines[:n_head], lines[n_head:]
    head_cost = tokens.count("\n".join(header))
    out: list[Block] = []
    group: list[str] = []
    cost, row_start = head_cost, block.start + n_head
    for i, row in enumerate(rows):
        if n_head == 2 and _RULE_ROW.match(row.strip()):
            continue  # a rule between rows (see _fit): no text, but its line counts
        c = tokens.count(row) + 1
        if group and cost + c > budget:
            out.append(Block("table", "\n".join(header + group), row_start, block.start + n_head + i - 1, page=block.page))
            group, cost, row_start = [], head_cost, block.start + n_head + i
        group.append(row)
        cost += c
    if group:
        out.append(Block("table", "\n".join(header + group), row_start, block.end, page=block.page))
    if block.text.count("\n") != block.end - block.start:
        # an HTML table: its rows are not its source lines, so each piece cites the whole table
        out = [Block(b.kind, b.text, block.start, block.end, page=b.page) for b in out]
    return out


_SPACE = re.compile(r"\s")


def _word_end(text: str, start: int, end: int) -> int:
    """``end``, moved back to just after the last space in the second half of
    text[start:end] when it falls inside a word: a token window cuts
    "alpha7958" into "alpha" and "7958", and a quote of the second piece
    would read as text the document does not hold.  Text without spaces
    there (Chinese, a long URL) keeps the token cut."""
    if end >= len(text) or text[end].isspace() or text[end - 1].isspace():
        return end
    spaces = [m.end() for m in _SPACE.finditer(text, start + (end - start) // 2, end)]
    return spaces[-1] if spaces else end


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
    ends = [(m.start(), m.end()) for m in _SENTENCE_END.finditer(text)
            # ("2." opening its line numbers an item, it ends no sentence)
            if not _ENUMERATOR.fullmatch(text, text.rfind("\n", 0, m.start()) + 1, m.start())]
    # A line that opens a list item ends what came before it too: items written without a full stop
    # were one "sentence", cut at a space (Click's "- Any other value is interpreted" / "as deactivating").
    ends += [(m.start(), m.start() + 1) for m in _ITEM_BREAK.finditer(text)]
    for start, end in sorted(ends):
        if end > pos:  # (an empty match right after the last one splits nothing)
            if text[pos:start].strip():
                spans.append((pos, start))
            pos = end
    if text[pos:].strip():
        spans.append((pos, len(text)))
    pieces: list[tuple[int, int]] = []
    group: list[tuple[int, int, int]] = []  # the piece being packed: its sentences, with their tokens
    for a, b in spans:
        c = tokens.count(text[a:b])
        if group and sum(x[2] for x in group) + c > budget:
            # A full piece ends before the last list item it opens, when what comes before holds half the
            # budget: an item cut in two loses its name (Black's "For example, to request code that is
            # compatible with Python 3.5 and 3.6, set the header to ..." began a chunk, and never said
            # which header).
            k = next((k for k in range(len(group) - 1, 0, -1) if _opens_item(text, group[k][0])
                      and sum(x[2] for x in group[:k]) >= budget / 2), len(group))
            pieces.append((group[0][0], group[k - 1][1]))
            group = group[k:]
            if group and sum(x[2] for x in group) + c > budget:
                pieces.append((group[0][0], group[-1][1]))
                group = []
        if c > budget:  # one giant "sentence": cut by tokens, at a space where the window has one
            at = end = a
            for w in tokens.windows(text[a:b], budget)[:-1]:
                end += len(w)
                cut = _word_end(text, at, end)
                pieces.append((at, cut))
                at = cut
            a, c = at, tokens.count(text[at:b])
        group.append((a, b, c))
    if group:
        pieces.append((group[0][0], group[-1][1]))
    # Line numbers per piece when the text keeps the source's line breaks
    # (Markdown) or says where each line began (a PDF paragraph); otherwise
    # (HTML text joined) the block's range.
    exact = text.count("\n") == block.end - block.start
    out = []
    for a, b in pieces:
        piece = text[a:b].strip()
        if not piece:
            continue
        a += len(text[a:b]) - len(text[a:b].lstrip())
        if block.marks:
            _, page, first = max(m for m in block.marks if m[0] <= a)
            _, last_page, last = max(m for m in block.marks if m[0] < a + len(piece))
            out.append(replace(block, text=piece, start=first, end=last, page=page,
                               end_page=last_page if last_page != page else None, marks=None))
            continue
        first = block.start + text[:a].count("\n") if exact else block.start
        last = first + piece.count("\n") if exact else block.end
        out.append(replace(block, text=piece, start=first, end=last))
    return out


def _opens_item(text: str, at: int) -> bool:
    """Whether the sentence at offset ``at`` opens a list item ("- `X-Diff`: ..." on a line of its own)."""
    line = text.rfind("\n", 0, at) + 1
    return not text[line:at].strip() and _LIST_ITEM.match(text, line) is not None


def _shown(block: Block, outside: str) -> str:
    """A block's text as the chunk shows it: a paragraph inside a list item
    goes two spaces in, as Markdown writes it, so the chunk still says whose
    it is (Flask's "Default: `None`" under "- `MAX_CONTENT_LENGTH`: ..."; at
    the margin it read as a paragraph after the list).  Not one of the item
    the chunk starts inside (``outside``): its line is in no chunk of it,
    and its name heads the chunk instead."""
    if block.kind != "para" or not block.item or block.item == outside or block.text[:1].isspace() \
            or _LIST_ITEM.match(block.text):
        return block.text
    return "\n".join(f"  {line}" if line else line for line in block.text.split("\n"))

"""The chunks an answer may use, numbered into the prompt with the strongest LAST.

``select_context`` walks the hits best first and drops what is below the
evidence floor, what a stronger chunk already says (a chunk whose words are
nearly all in one kept), and what does not fit the token budget; the kept
chunks are shown in reverse, so the best one sits nearest the question.  The
strongest chunk is never dropped for its size: one bigger than the whole
budget (a long code block, which the chunker never cuts) is cut to fit.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, replace

from citebot import tokens
from citebot.answer import prompts
from citebot.config import REFUSAL
from citebot.index import markdown
from citebot.schema import Chunk, Evidence, Hit
from citebot.search import analyzer
from citebot.search.evidence import is_evidence


@dataclass(frozen=True)
class Context:
    shown: list[Hit]  # prompt order: [1] .. [n], strongest last
    dropped: list[tuple[Hit, str]] = field(default_factory=list)  # (hit, "floor" | "duplicate" | "budget")


def word_overlap(a: str, b: str) -> float:
    """Share of the smaller chunk's distinct words that the other also has."""
    wa, wb = set(analyzer.analyze(a)), set(analyzer.analyze(b))
    return len(wa & wb) / min(len(wa), len(wb)) if wa and wb else 0.0


def covered(a: str, b: str) -> float:
    """Share of ``a``'s distinct word pairs (its words, below two) that ``b``
    also has: how little ``a`` adds to ``b`` (a long chunk that holds a short
    one's words adds a lot).  Pairs, not words: alembic's 5,000-character
    sample alembic.ini held nearly every word of the sentence that defines
    ``sourceless``, and that sentence was dropped as its duplicate."""
    ta, tb = analyzer.analyze(a), analyzer.analyze(b)
    if len(wa := set(ta)) < 2:
        return len(wa & set(tb)) / len(wa) if wa else 1.0
    pa, pb = set(zip(ta, ta[1:])), set(zip(tb, tb[1:]))
    return len(pa & pb) / len(pa)


def _same_subject(a: Hit, b: Hit) -> bool:
    """Whether two chunks can say the same thing: not when each is the section of a different name
    (Celery's broker_connection_retry_on_startup reads nearly word for word as broker_connection_retry,
    whose name its text never writes: it was dropped as a duplicate of the other)."""
    names = [set(analyzer.NAME.findall(h.chunk.headings[-1])) if h.chunk.headings else set() for h in (a, b)]
    return not (names[0] and names[1] and names[0] != names[1])


CUT_NOTE = "\n[… cut to fit the context budget]"
SEPARATOR = "\n\n"  # between two source blocks in the prompt


def select_context(hits: list[Hit], evidence: dict[str, Evidence], cfg) -> Context:
    kept: list[Hit] = []
    dropped: list[tuple[Hit, str]] = []
    used = 0
    for h in hits:
        if not is_evidence(evidence.get(h.id), cfg.min_cosine, cfg.min_coverage):
            dropped.append((h, "floor"))
        elif any(covered(h.chunk.text, k.chunk.text) >= cfg.dedup_overlap and _same_subject(h, k) for k in kept):
            dropped.append((h, "duplicate"))
        # a block after the first costs the separator build_prompt joins them with, too
        elif used + (cost := tokens.count(source_block(0, h)) + (tokens.count(SEPARATOR) if kept else 0)
                     ) > cfg.context_tokens:
            if not kept and (cut := _cut_to_fit(h, cfg.context_tokens)) is not None:
                kept.append(cut)
                used += tokens.count(source_block(0, cut))
            else:
                dropped.append((h, "budget"))
        else:
            kept.append(h)
            used += cost
    return Context(list(reversed(kept)), dropped)


def _cut_to_fit(h: Hit, budget: int) -> Hit | None:
    """The hit with its text cut so its source block fits ``budget`` tokens
    (None when not even the heading line fits)."""
    frame = tokens.count(source_block(0, replace(h, chunk=_with_text(h.chunk, CUT_NOTE.strip()))))
    room = budget - frame - 2 - tokens.count("\n" + "`" * 8)  # room to close a code block the cut leaves open
    if room < 20:
        return None
    text = tokens.truncate(h.chunk.text, room).rstrip()
    opener = None  # a code block the cut leaves open is closed, or the note and the question read as code
    for line in text.split("\n"):
        if opener is None:
            opener = markdown.fence_open(line)
        elif markdown.fence_closes(line, opener):
            opener = None
    return replace(h, chunk=_with_text(h.chunk, text + (f"\n{opener}" if opener else "") + CUT_NOTE))


def _with_text(chunk, text: str) -> Chunk:
    """A copy of ``chunk`` (an index's lazy chunk too) with other text."""
    return Chunk(**{**{f.name: getattr(chunk, f.name) for f in fields(Chunk)}, "text": text})


_TAG = re.compile(r"<(/?\s*source)", re.I)


def quoted(text: str) -> str:
    """Document text inside a source block: a "<source" or "</source" of its
    own is escaped (a forged one closed the block and posed as another source)."""
    return _TAG.sub(r"&lt;\1", text)


def _attribute(text: str) -> str:
    return " ".join(quoted(text).replace('"', "&quot;").split())  # one line, no quote to end it early


def source_block(n: int, h: Hit) -> str:
    c = h.chunk
    title = " > ".join((c.title, *c.headings))
    return prompts.SOURCE_BLOCK.format(n=n, title=_attribute(title), location=_attribute(c.location),
                                       text=quoted(c.text))


def build_prompt(question: str, ctx: Context) -> tuple[str, str]:
    sources = SEPARATOR.join(source_block(n, h) for n, h in enumerate(ctx.shown, 1))
    return (prompts.ANSWER_SYSTEM.format(refusal=REFUSAL),
            prompts.ANSWER_USER.format(sources=sources, question=question))

"""What the chat and ``--ask`` print about a turn: pure functions of a Turn.

Text that came from a document, a file name or a model is passed through
``terminal.safe``; the ``--json`` form (:func:`turn_json`) is exact.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

from citebot.engine import Turn
from citebot.schema import place
from citebot.terminal import safe, safe_line, safe_name

HELP = """Commands:
  /sources   the last answer's sources again
  /show N    the full text of source N, with its file and lines (and a note if the file changed since)
  /why       how the last answer was found: queries searched, ranks, evidence, drops
  /new       forget the conversation
  /help      this list
  /quit      leave (or Ctrl-D); Ctrl-C cancels an answer being written"""


def trace(turn: Turn) -> dict:
    """How a turn was answered, as plain data (for ``/why`` and ``--json``)."""
    r, ctx = turn.retrieval, turn.context
    shown = {h.id: n for n, h in enumerate(ctx.shown, 1)}
    dropped = {h.id: why for h, why in ctx.dropped}
    chunks = []
    for h in r.hits:
        ev = r.evidence.get(h.id)
        chunks.append({"id": h.id, "source": h.chunk.source, "page": h.chunk.page,
                       "lines": [h.chunk.start, h.chunk.end], "end_page": h.chunk.end_page,
                       "bm25_rank": h.channel_rank("bm25"), "dense_rank": h.channel_rank("dense"),
                       "fused_rank": h.ranks.get("rrf"), "rerank_score": h.scores.get("rerank"),
                       "cosine": None if ev is None or ev.cosine is None else round(ev.cosine, 4),
                       "coverage": None if ev is None else round(ev.coverage, 4),
                       "shown_as": shown.get(h.id), "dropped": dropped.get(h.id)})
    return {"typed": turn.typed, "queries": list(r.queries),
            "followup": turn.plan.followup, "followup_method": turn.plan.method,
            "spelled": turn.plan.spelled, "expansions": list(turn.plan.expansions),
            "scope": r.scope.describe(), "rerank": r.rerank_on,
            "chunks": chunks, "model_calls": turn.model_calls,
            "refusal_reason": turn.refusal_reason if turn.refused else None,
            "timings_ms": {k: round(v, 1) for k, v in turn.timings_ms.items()}}


def turn_json(turn: Turn) -> dict:
    return {"answer": turn.answer, "citations": turn.citations, "refused": turn.refused,
            "unsupported": turn.unsupported, "incomplete": turn.incomplete is not None,
            "incomplete_reason": turn.incomplete, "stripped_citations": turn.stripped,
            "queries": list(turn.retrieval.queries),
            "error": turn.error, "trace": trace(turn)}


def _at(c: dict) -> str:
    """A trace row's place, short: "a.md:3-7", "r.pdf p. 2:3-7", "r.pdf p. 2:40-p. 3:4"."""
    (a, b), page, last = c["lines"], c["page"], c.get("end_page")
    if page and last and last != page:
        return f" p. {page}:{a}-p. {last}:{b}"
    return f" p. {page}:{a}-{b}" if page else f":{a}-{b}"


def _cited_where(c: dict) -> str:
    """A citation's document title and the section it sits in: "Configuration and defaults >
    `task_default_queue`" says which setting a quote of its text alone ("The name of the
    default queue ...") is about."""
    parts = [c["title"], *c.get("headings", [])[-1:]]
    return " > ".join(dict.fromkeys(p for p in parts if p))  # a section named as its page is named once


def sources_text(turn: Turn | None, chat: bool = True) -> str:
    """``chat`` false (``--ask``): no pointer to /show, which only the chat has."""
    if turn is None:
        return "No sources yet."
    read = f"; /show 1-{len(turn.context.shown)} shows the passages it read" if turn.context.shown else ""
    if turn.error:
        return f"The last turn got no answer ({safe_line(turn.error)}){read}."
    if not turn.citations:  # a refusal: nothing cited, though passages may have been read
        return f"The last answer cited no sources{read}."
    lines = ["Sources:"]
    for c in turn.citations:
        a, b = c["lines"]
        where = place(c.get("page"), a, b, c.get("end_page"))
        lines.append(f"  [{c['n']}] {safe_line(_cited_where(c))} — {safe_name(c['source'])}, {where}")
    n = len(turn.context.shown)
    if n > len({c["n"] for c in turn.citations}):
        # An answer citing [5] alone left /show 1 looking like a source of it.
        lines.append(f"(of the {n} passages read, numbered strongest last" + (f"; /show 1-{n})" if chat else ")"))
    return "\n".join(lines)


def show_text(turn: Turn | None, arg: str) -> str:
    if turn is None:
        return "Nothing to show yet: ask a question first."
    if not turn.context.shown:  # a refusal before any source was read ("ask a question first" read wrong)
        return "The last answer showed no sources; /why says what was searched."
    shown = turn.context.shown
    arg = arg.strip().lstrip("0") or "0"
    # "²" is a digit to isdigit; a number of thousands of digits is past int()'s limit (ValueError)
    if not re.fullmatch(r"[0-9]{1,6}", arg) or not 1 <= int(arg) <= len(shown):
        return f"Usage: /show N, with N from 1 to {len(shown)}."
    n = int(arg)
    c = shown[n - 1].chunk
    head = " > ".join((c.title, *c.headings))
    note = on_disk(turn, c.source)
    return f"[{n}] {safe_line(head)}\n{safe_name(c.location)}{note}\n\n{safe(c.text)}"


def on_disk(turn: Turn, source: str) -> str:
    """A note when the cited file is no longer as it was indexed (edited,
    moved or deleted since): its lines then differ from the ones cited."""
    sha1 = turn.indexed.get(source)
    if not turn.folder or not sha1:
        return ""
    path = Path(turn.folder) / source
    try:
        now = hashlib.sha1(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return f"\n(not at {safe_name(str(path))} any more: this is the text as it was indexed)"
    except OSError:
        return ""
    return "" if now == sha1 else ("\n(the file has changed since it was indexed: these lines may differ now; "
                                   "run ingest.py to update the index)")


def _num(v, width: int, fmt: str = "{:.2f}") -> str:
    return f"{'-' if v is None else fmt.format(v):>{width}}"


def why_text(turn: Turn | None) -> str:
    if turn is None:
        return "Nothing to explain yet: ask a question first."
    t = trace(turn)
    out = [f"typed:    {safe_line(turn.typed)}"]
    for q in t["queries"][1:]:  # the typed turn's corrected spelling said as such, not as one more search
        out.append(f"{'spelled: ' if q == t['spelled'] else 'searched:'} {safe_line(q)}")
    out.append(f"follow-up form: {t['followup_method']}; scope: {t['scope']}; "
               f"rerank {'on' if t['rerank'] else 'off'}; model calls {t['model_calls']}")
    out.append(f"{'chunk':18} {'bm25':>4} {'dense':>5} {'fused':>5} {'rerank':>7} {'cos':>5} {'cover':>5}  outcome / source")
    for c in t["chunks"]:
        outcome = f"shown [{c['shown_as']}]" if c["shown_as"] else f"dropped ({c['dropped']})"
        out.append(f"{c['id']:18} {c['bm25_rank'] or '-':>4} {c['dense_rank'] or '-':>5} {c['fused_rank'] or '-':>5} "
                   f"{_num(c['rerank_score'], 7, '{:.3f}')} {_num(c['cosine'], 5)} {_num(c['coverage'], 5)}  "
                   f"{outcome} {safe_name(c['source'])}{_at(c)}")
    if not t["chunks"]:
        out.append("(no chunk matched)")
    if t.get("refusal_reason"):
        out.append(f"refused:  {safe_line(t['refusal_reason'])}")
    if turn.error:
        out.append(f"failed:   {safe_line(turn.error)}")
    out.append("timings ms: " + ", ".join(f"{k} {v:.0f}" for k, v in t["timings_ms"].items()))
    return "\n".join(out)

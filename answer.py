"""From retrieved hits to a cited answer (or the refusal).

Steps, each a function over plain data so it can be tested and diagnosed:
  select_context  floor -> de-duplicate -> token budget; numbered strongest LAST
  build_prompt    the numbered sources and the question (prompts.py)
  clean_citations keep [n] that name a shown chunk, strip and count the rest
  extractive      the offline answerer: quote the best-matching sentences
  Engine.ask      rewrite -> retrieve -> context -> answer -> citations
"""
from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import lexical
import prompts
import tokens
from config import REFUSAL, Config
from retrieve import Retriever, is_evidence
from schema import Hit, Scope


# --- context -------------------------------------------------------------------
@dataclass
class Context:
    shown: list[Hit]  # prompt order: [1] .. [n], strongest last
    dropped: list[tuple[Hit, str]] = field(default_factory=list)  # (hit, "floor" | "duplicate" | "budget")


def word_overlap(a: str, b: str) -> float:
    """Share of the smaller chunk's distinct words that the other also has."""
    wa, wb = set(lexical.analyze(a)), set(lexical.analyze(b))
    return len(wa & wb) / min(len(wa), len(wb)) if wa and wb else 0.0


def select_context(hits: list[Hit], cfg: Config) -> Context:
    """``hits`` best first. Drops what is below the evidence floor, near
    duplicates of a stronger chunk, and what does not fit the token budget."""
    kept: list[Hit] = []
    dropped: list[tuple[Hit, str]] = []
    used = 0
    for h in hits:
        if not is_evidence(h, cfg.min_cosine, cfg.min_coverage):
            dropped.append((h, "floor"))
        elif any(word_overlap(h.chunk.text, k.chunk.text) >= cfg.dedup_overlap for k in kept):
            dropped.append((h, "duplicate"))
        elif used + (cost := tokens.count(source_block(0, h))) > cfg.context_tokens:
            dropped.append((h, "budget"))
        else:
            kept.append(h)
            used += cost
    return Context(list(reversed(kept)), dropped)


def source_block(n: int, h: Hit) -> str:
    c = h.chunk
    title = " > ".join((c.title, *c.headings))
    return prompts.SOURCE_BLOCK.format(n=n, title=title, location=c.location, text=c.text)


def build_prompt(question: str, ctx: Context) -> tuple[str, str]:
    sources = "\n\n".join(source_block(n, h) for n, h in enumerate(ctx.shown, 1))
    return (prompts.ANSWER_SYSTEM.format(refusal=REFUSAL),
            prompts.ANSWER_USER.format(sources=sources, question=question))


# --- citations -----------------------------------------------------------------
CITATION = re.compile(r"\[(\s*\d+\s*(?:[-–,]\s*\d+\s*)*)\]")


def parse_group(body: str) -> list[int]:
    nums: list[int] = []
    for part in body.split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d+)\s*[-–]\s*(\d+)", part)
        if m:
            lo, hi = int(m.group(1)), int(m.group(2))
            nums.extend(range(lo, hi + 1) if 0 <= hi - lo <= 50 else [lo, hi])
        elif part:
            nums.append(int(part))
    return nums


def _fix_group(body: str, n_shown: int) -> tuple[str, list[int], int]:
    """One citation group: (replacement text, valid numbers, numbers stripped)."""
    nums = parse_group(body)
    good = list(dict.fromkeys(n for n in nums if 1 <= n <= n_shown))
    stripped = sum(1 for n in nums if not 1 <= n <= n_shown)
    return ("[" + ", ".join(map(str, good)) + "]" if good else ""), good, stripped


def clean_citations(text: str, n_shown: int) -> tuple[str, list[int], int]:
    """Return (text with only valid citations, valid numbers cited in order of
    first use, how many numbers were stripped)."""
    cited: list[int] = []
    stripped = 0

    def fix(m: re.Match) -> str:
        nonlocal stripped
        out, good, bad = _fix_group(m.group(1), n_shown)
        stripped += bad
        cited.extend(n for n in good if n not in cited)
        return out

    out = CITATION.sub(fix, text)
    out = re.sub(r"[ \t]+([.,;:!?])", r"\1", out)  # no space left before punctuation
    out = re.sub(r"[ \t]{2,}", " ", out)
    return out.strip(), cited, stripped


class StreamCleaner:
    """Cleans citations in streamed text: holds back from an unclosed '[' until
    its ']' arrives, so an invalid number is never printed."""

    def __init__(self, n_shown: int):
        self.n, self.pending, self.stripped, self.cited = n_shown, "", 0, []

    def feed(self, delta: str) -> str:
        self.pending += delta
        cut = self.pending.rfind("[")
        if cut != -1 and "]" not in self.pending[cut:] and len(self.pending) - cut < 24:
            ready, self.pending = self.pending[:cut], self.pending[cut:]
        else:
            ready, self.pending = self.pending, ""
        return self._clean(ready)

    def flush(self) -> str:
        ready, self.pending = self.pending, ""
        return self._clean(ready)

    def _clean(self, text: str) -> str:
        def fix(m: re.Match) -> str:
            out, good, bad = _fix_group(m.group(1), self.n)
            self.stripped += bad
            self.cited.extend(n for n in good if n not in self.cited)
            return out
        return CITATION.sub(fix, text)


REFUSAL_PATTERNS = re.compile(
    r"\b(i don't know|i do not know|cannot answer|can't answer|unable to answer|not (?:enough|sufficient) information|"
    r"(?:sources|documents|context) (?:do not|don't|does not|doesn't) (?:contain|mention|say|provide|include)|"
    r"no information (?:about|on|in)|not mentioned in the)", re.I)


def is_refusal(text: str) -> bool:
    t = text.strip()
    return t == REFUSAL or (bool(REFUSAL_PATTERNS.search(t[:200])) and not CITATION.search(t))


# --- the offline extractive answerer ----------------------------------------------
_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])|(?<=[。！？।])|\n+")


def units(text: str) -> list[str]:
    """Sentences of a chunk; a table row reads as 'Header: value; ...'; a code
    block stays one unit."""
    out: list[str] = []
    header: list[str] | None = None
    in_code: list[str] | None = None
    for para in text.split("\n"):
        s = para.strip()
        if in_code is not None:
            in_code.append(para)
            if s.startswith(("```", "~~~")):
                out.append("\n".join(in_code))
                in_code = None
            continue
        if s.startswith(("```", "~~~")):
            in_code = [para]
            continue
        if s.startswith("|"):
            cells = [c.strip() for c in s.strip("|").split("|")]
            if all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
                continue
            if header is None:
                header = cells
                continue
            out.append("; ".join(f"{h}: {v}" if h else v for h, v in zip(header, cells)))
            continue
        header = None
        out.extend(x.strip() for x in _SENT.split(s) if x and x.strip())
    if in_code:
        out.append("\n".join(in_code))
    return [u for u in out if len(u) > 1]


@dataclass
class Extract:
    text: str
    cited: list[int]
    scores: list[tuple[float, int, str]]  # (score, n, sentence), best first
    reason: str = ""




# Answer types: a "how long" question is answered by a sentence with a
# duration, "how much" by an amount, "when" by a time or date.  A matching
# sentence gets a bonus, which is what a reader does when skimming.
_DURATION = r"\d+(?:\s*(?:-|–|to)\s*\d+)?\s*(?:business |working )?(?:minutes?|hours?|days?|weeks?|months?|years?)\b|\d+\s*(?:天|年|个月|小时|个工作日)|দিন"
ANSWER_TYPES = [
    (re.compile(r"\bhow long\b|\bhow many (?:days|weeks|months|years|hours)\b|\buntil when\b|多久|多长|কত দিন", re.I),
     re.compile(_DURATION, re.I)),
    (re.compile(r"\bhow much\b|\bcost\b|\bprice\b|\bfee\b|\bcharge\b|多少钱|费用|কত টাকা", re.I),
     re.compile(r"[$€£¥]\s?\d|\d+(?:\.\d+)?\s*(?:元|dollars?|usd|eur|%|টাকা)", re.I)),
    (re.compile(r"\bwhen\b|\bwhat time\b|\bopening hours\b|几点", re.I),
     re.compile(r"\d{1,2}(?::\d\d)?\s*(?:a\.m\.|p\.m\.|am\b|pm\b)|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day|"
                r"\b(?:january|february|march|april|may|june|july|august|september|october|november|december)\b", re.I)),
]
TYPE_BONUS = 0.15


def type_bonus(question: str, sentence: str) -> float:
    return TYPE_BONUS if any(q.search(question) and a.search(sentence) for q, a in ANSWER_TYPES) else 0.0


def extractive(queries: list[str] | str, ctx: Context, idf, known=None, embed=None,
               min_score: float = 0.35, max_sentences: int = 2, embed_top: int = 10) -> Extract:
    """Quote the sentences of the shown chunks that best match the question.

    lexical = idf-weighted share of a query's terms found in the sentence (a
              term in the chunk's title/heading path counts half, so a table
              row under "Size L" matches "size L"); the best over the question
              and its synonym expansions.
              A sentence of the question's answer type adds ``TYPE_BONUS``.
    score   = 0.5 * lexical + 0.5 * cosine(question, sentence) for the
              ``embed_top`` lexically best sentences when an embedder is given
              (embedding every sentence would cost ~1 s on a laptop CPU).
    Refuses when the best score is below ``min_score``, or when the question
    names an identifier (E4099, RD9-99) that no document contains:
    a precise term nobody wrote about cannot be answered by a neighbour.
    """
    queries = [queries] if isinstance(queries, str) else list(queries)
    question = queries[0]
    if known is not None:
        # Refuse only when every variant names an unknown identifier ("2FA" is
        # unknown, but its expansion "two-factor authentication" is fine).
        unknown = [[t for t in lexical.analyze(q) if lexical.is_identifier(t) and not known(t)] for q in queries]
        if all(unknown):
            return Extract(REFUSAL, [], [], reason=f"the question names {unknown[0][0]!r}, which no document contains")
    variants = []
    for q in queries:
        terms = list(dict.fromkeys(lexical.analyze(q)))
        if terms:
            variants.append((terms, sum(idf(t) for t in terms) or 1.0))
    cands: list[tuple[float, int, str]] = []
    for n, h in enumerate(ctx.shown, 1):
        heading = set(lexical.analyze(" ".join((h.chunk.title, *h.chunk.headings))))
        for s in units(h.chunk.text):
            words = set(lexical.analyze(s))
            lex = max((sum(idf(t) * (1.0 if t in words else 0.5 if t in heading else 0.0) for t in terms) / total
                       for terms, total in variants), default=0.0)
            cands.append((lex + type_bonus(question, s), n, s))
    if not cands:
        return Extract(REFUSAL, [], [], reason="no sentences")
    # Best first; ties go to the stronger chunk (higher n), then reading order.
    order = sorted(range(len(cands)), key=lambda i: (-cands[i][0], -cands[i][1], i))
    if embed is not None:
        top = order[:embed_top]
        vecs = embed([question] + [cands[i][2] for i in top])
        cos = vecs[1:] @ vecs[0]
        scored = [(0.5 * cands[i][0] + 0.5 * max(float(c), 0.0), cands[i][1], cands[i][2]) for i, c in zip(top, cos)]
        scored.sort(key=lambda x: (-x[0], -x[1]))
    else:
        scored = [cands[i] for i in order]
    best = scored[0][0]
    if best < min_score:
        return Extract(REFUSAL, [], scored, reason=f"no sentence matches well enough (best {best:.2f} < min_answer_score {min_score})")
    chosen = [x for x in scored[:max_sentences] if x[0] >= 0.9 * best]
    parts, cited = [], []
    for _, n, s in chosen:
        parts.append(f"{s} [{n}]")
        if n not in cited:
            cited.append(n)
    return Extract("\n".join(parts) if any("\n" in p for p in parts) else " ".join(parts), cited, scored)


# --- the engine ------------------------------------------------------------------
@dataclass
class Turn:
    typed: str
    question_searched: str
    answer: str
    refused: bool
    unsupported: bool
    stripped: int
    citations: list[dict]
    context: Context | None
    retrieval: object | None
    expansions: tuple[str, ...] = ()
    model_calls: int = 0
    error: str | None = None
    answer_score: float | None = None  # extractive: best sentence score
    refusal_reason: str | None = None
    timings_ms: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"answer": self.answer, "citations": self.citations, "refused": self.refused,
                "unsupported": self.unsupported, "stripped_citations": self.stripped,
                "question_searched": self.question_searched, "error": self.error, "trace": self.trace()}

    def trace(self) -> dict:
        r = self.retrieval
        shown = {h.id: n for n, h in enumerate(self.context.shown, 1)} if self.context else {}
        dropped = {h.id: why for h, why in self.context.dropped} if self.context else {}
        chunks = []
        for h in (r.hits if r else []):
            bm = [v for k, v in h.ranks.items() if k.startswith("bm25")]
            de = [v for k, v in h.ranks.items() if k.startswith("dense")]
            chunks.append({"id": h.id, "source": h.chunk.source, "lines": [h.chunk.start, h.chunk.end],
                           "bm25_rank": min(bm) if bm else None, "dense_rank": min(de) if de else None,
                           "fused_rank": h.ranks.get("rrf"), "rerank_score": h.scores.get("rerank"),
                           "cosine": round(h.scores.get("cosine", 0.0), 4),
                           "coverage": round(h.scores.get("coverage", 0.0), 4),
                           "shown_as": shown.get(h.id), "dropped": dropped.get(h.id)})
        return {"typed": self.typed, "question_searched": self.question_searched,
                "queries": list(r.queries) if r else [], "expansions": list(self.expansions),
                "scope": r.scope.describe() if r else None, "rerank": bool(r and r.rerank_on),
                "chunks": chunks, "model_calls": self.model_calls,
                "refusal_reason": self.refusal_reason if self.refused else None,
                "timings_ms": {k: round(v, 1) for k, v in self.timings_ms.items()}}


class Engine:
    """One conversation: rewrite -> retrieve -> context -> answer -> citations."""

    def __init__(self, retriever: Retriever, cfg: Config, scope: Scope, llm=None, synonyms=(), log: bool = True):
        self.retriever, self.cfg, self.scope, self.llm = retriever, cfg, scope, llm
        self.log = log  # evaluation runs keep out of the user's metrics log
        self.synonyms = synonyms
        self.history: list[str] = []
        self.stripped_total = 0

    def reset(self) -> None:
        self.history.clear()

    def ask(self, typed: str, on_text=None, cfg: Config | None = None, on_searched=None) -> Turn:
        """Answer one turn. ``on_searched`` receives the standalone question
        once known; ``on_text`` receives the answer as it is written."""
        import rewrite

        cfg = cfg or self.cfg
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        complete = self.llm.complete if (self.llm and cfg.use_rewrite) else None
        rw = rewrite.rewrite(typed, self.history, self.synonyms, use_rewrite=cfg.use_rewrite,
                             use_expansion=cfg.use_expansion, complete=complete)
        self.history.append(typed)
        if on_searched:
            on_searched(rw.standalone)
        timings["rewrite"] = (time.perf_counter() - t0) * 1000
        t1 = time.perf_counter()
        r = self.retriever.search(rw.queries(), self.scope, cfg)
        timings["retrieve"] = (time.perf_counter() - t1) * 1000
        ctx = select_context(r.hits, cfg)
        turn = Turn(typed, rw.standalone, REFUSAL, True, False, 0, [], ctx, r, rw.expansions,
                    model_calls=1 if rw.method == "llm" else 0, timings_ms=timings)
        t2 = time.perf_counter()
        if not ctx.shown:
            # Weak evidence: refuse without calling the model.
            turn.refusal_reason = "no chunk passed the evidence floor"
            if on_text:
                on_text(REFUSAL)
        elif self.llm is None:
            index = self.retriever.index
            ex = extractive([rw.standalone, *rw.expansions], ctx, index.bm25.term_idf, known=index.bm25.knows,
                            embed=self.retriever.embedder.encode if cfg.use_dense else None,
                            min_score=cfg.min_answer_score, max_sentences=cfg.answer_sentences)
            turn.answer_score = ex.scores[0][0] if ex.scores else 0.0
            turn.refusal_reason = ex.reason or None
            self._finish(turn, ex.text, on_text)
        else:
            self._generate(turn, rw.standalone, ctx, on_text)
        timings["answer"] = (time.perf_counter() - t2) * 1000
        timings["total"] = (time.perf_counter() - t0) * 1000
        self.stripped_total += turn.stripped
        if self.log:
            self._log(turn)
        return turn

    def _generate(self, turn: Turn, question: str, ctx: Context, on_text) -> None:
        from llm import LLMError

        system, user = build_prompt(question, ctx)
        cleaner = StreamCleaner(len(ctx.shown))
        raw: list[str] = []
        held, decided, refusing, printed = "", False, False, False
        turn.model_calls += 1
        try:
            for delta in self.llm.stream(system, user):
                raw.append(delta)
                out = cleaner.feed(delta)
                if decided:
                    if not refusing and on_text and out:
                        on_text(out)
                    continue
                # Hold the opening back until we know whether it is a refusal.
                held += out
                if len(held) >= 80 or re.search(r"[.!?\n]", held):
                    decided, refusing = True, is_refusal(held)
                    if not refusing and on_text:
                        on_text(held)
                        printed = True
            tail = cleaner.flush()
            if not decided:
                held += tail
                if not is_refusal(held) and on_text and held:
                    on_text(held)
                    printed = True
            elif not refusing and on_text and tail:
                on_text(tail)
        except LLMError as e:
            turn.error = str(e)
            turn.answer, turn.refused = "", False
            return
        self._finish(turn, "".join(raw), None)
        if turn.refused and on_text:
            on_text(("\n" if printed else "") + REFUSAL)

    def _finish(self, turn: Turn, text: str, on_text) -> None:
        ctx = turn.context
        if is_refusal(text):
            turn.answer, turn.refused = REFUSAL, True
            turn.refusal_reason = turn.refusal_reason or "the model said the sources do not hold the answer"
        else:
            clean, cited, stripped = clean_citations(text, len(ctx.shown))
            turn.answer, turn.refused, turn.stripped = clean, False, stripped
            turn.unsupported = not cited
            turn.citations = [citation(n, ctx.shown[n - 1]) for n in cited]
        if on_text:
            on_text(turn.answer)

    def _log(self, turn: Turn) -> None:
        path = Path(self.cfg.data_dir) / "metrics.jsonl"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps({"time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "question": turn.typed,
                                    "cited": [c["n"] for c in turn.citations], "stripped": turn.stripped,
                                    "refused": turn.refused, "unsupported": turn.unsupported},
                                   ensure_ascii=False) + "\n")
        except OSError:
            pass  # a read-only data dir must not break the answer


def citation(n: int, h: Hit) -> dict:
    c = h.chunk
    return {"n": n, "chunk_id": c.id, "source": c.source, "lines": [c.start, c.end], "title": c.title}

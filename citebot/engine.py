"""The one place the pipeline is assembled.

    plan      the typed turn, its follow-up form, synonym expansions (search/queries.py)
    retrieve  BM25 + dense per query, filtered first, RRF, rerank, evidence (search/retriever.py)
    context   evidence floor, de-duplication, token budget, strongest last (answer/context.py)
    answer    the LLM through the openai client, or the offline extractive answerer;
              weak evidence gives the refusal with no model call
    cite      citations checked once, as the answer streams (answer/citations.py)

The chat, ``evaluate.py``, every benchmark and ``bench.py`` call this, so a
reported number is the bot's number.  Settings live on the engine (one
frozen ``Config``); :meth:`Engine.configured` gives an engine with other
settings over the same index and models, for ablations.
"""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from citebot.answer import context as ctxmod
from citebot.answer import gate
from citebot.answer.citations import AnswerStream, Cleaned
from citebot.answer.context import Context
from citebot.answer.extractive import (
    Scored,
    answer_sections,
    chunk_langs,
    quote_answer,
    score_units,
    unknown_identifier,
    unwritten_name,
    variants,
)
from citebot.answer.llm import LLMError, LLMIncomplete
from citebot.config import REFUSAL, Config
from citebot.index.store import STAMPED_SETTINGS, IndexError_, SearchIndex, checked, open_index, rebuild_command
from citebot.schema import Hit, Scope
from citebot.search import analyzer, spelling
from citebot.search import queries as qmod
from citebot.search.models import Models, cosine_scale
from citebot.search.queries import QueryPlan
from citebot.search.retriever import Retrieval, retrieve


@dataclass
class Turn:
    plan: QueryPlan
    retrieval: Retrieval
    context: Context
    answer: str = REFUSAL  # exactly what was shown
    refused: bool = True
    refusal_reason: str | None = None
    citations: list[dict] = field(default_factory=list)
    quoted: list[int] = field(default_factory=list)  # the chunk number behind each quoted unit or citation mark
    stripped: int = 0  # citation numbers that named no shown chunk, removed
    unsupported: bool = False  # an answer that cites nothing
    incomplete: str | None = None  # why a streamed answer stopped early
    error: str | None = None  # the model failed; nothing was answered
    model_calls: int = 0
    answer_score: float | None = None  # best unit score of the extractive scorer
    scored: list[Scored] = field(default_factory=list)  # the shown chunks' units, best first
    signals: gate.Signals | None = None  # what the refusal gate decided on
    p_answerable: float | None = None
    gated: bool = False  # refused by the refusal gate (P(answerable) below the threshold), before any answer
    timings_ms: dict = field(default_factory=dict)
    # Where the shown chunks came from, as indexed: the documents folder and each
    # source's sha1 (/show says when the file on disk has changed since).
    folder: str | None = None
    indexed: dict[str, str] = field(default_factory=dict)

    @property
    def typed(self) -> str:
        return self.plan.typed


def readable(text: str) -> str:
    """Typed text as valid Unicode: bytes a terminal passed through undecoded
    (lone surrogates, from input that is not UTF-8) become U+FFFD instead of
    failing deep in the embedder."""
    if not any("\ud800" <= ch <= "\udfff" for ch in text):
        return text
    try:  # bytes the terminal escaped: decode them again (valid UTF-8 comes back whole)
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)


def citation(n: int, h: Hit) -> dict:
    c = h.chunk
    # "page" for a PDF: its lines are counted from 1 on each page, so lines alone name no place
    # ("end_page": the page of the last line, for a paragraph a page break cut; else None)
    return {"n": n, "chunk_id": c.id, "source": c.source, "page": c.page, "lines": [c.start, c.end],
            "end_page": c.end_page, "title": c.title, "headings": list(c.headings)}


class Engine:
    def __init__(self, index: SearchIndex, cfg: Config, models: Models | None = None, llm=None,
                 synonyms: Sequence | None = None):
        self.index, self.cfg, self.llm = index, cfg, llm
        self.models = models or Models()
        if synonyms is None:
            synonyms = qmod.load_synonyms(cfg.synonyms) if cfg.use_expansion else ()
        self.synonyms = synonyms

    @classmethod
    def open(cls, cfg: Config, models: Models | None = None) -> Engine:
        """The engine over the index the settings name, with the LLM they configure."""
        return cls.over(open_index(cfg), cfg, models)

    @classmethod
    def over(cls, index: SearchIndex, cfg: Config, models: Models | None = None) -> Engine:
        """The engine over ``index`` with the LLM the settings configure (what
        an evaluation runs, so its answers are the chat's)."""
        from citebot.answer import llm

        return cls(index, cfg, models, llm.make(cfg))

    def configured(self, cfg: Config) -> Engine:
        """The same index, models and LLM with other settings: not other
        settings the index was built with (its BM25 weights, chunks and
        vectors would silently stay the old ones)."""
        built = [k for k in STAMPED_SETTINGS if getattr(cfg, k) != getattr(self.cfg, k)]
        if built:
            raise ValueError(f"{', '.join(built)} is stamped into the index, so this index cannot serve "
                             "another value: build an index with it (ingest.py --set KEY=VALUE)")
        same = cfg.synonyms == self.cfg.synonyms and self.synonyms
        return Engine(self.index, cfg, self.models, self.llm, self.synonyms if same else None)

    # --- stages ---------------------------------------------------------------
    def embed(self, queries: bool = True) -> Callable[[list[str]], np.ndarray] | None:
        """The query embedder (``queries`` False: the passage embedder), or
        None when the dense channel is off."""
        if not self.cfg.use_dense:
            return None
        emb = self.models.embedder(self.cfg)
        dim = self.index.manifest.get("embed_dim")
        if dim is not None and dim != emb.dim:
            raise IndexError_(f"the index holds {dim}-dimensional vectors but {emb.name} makes {emb.dim}. "
                              f"Rebuild it: {rebuild_command(self.index.manifest, self.cfg.index, self.cfg)}")
        return self.models.encoder(self.cfg, queries)

    def cross_encoder(self):
        return self.models.reranker(self.cfg) if self.cfg.use_rerank else None

    def plan(self, typed: str, history: Sequence[str] = ()) -> QueryPlan:
        condense = self.llm.complete if (self.llm is not None and self.cfg.use_followups) else None
        return qmod.plan(typed, history, self.synonyms, followups=self.cfg.use_followups,
                         expansion=self.cfg.use_expansion, condense=condense)

    def _spell(self, plan: QueryPlan, scope: Scope) -> QueryPlan:
        """The plan with the typed turn's misspellings corrected, searched
        beside it (with that form's synonym expansions), and a joined
        follow-up form ending in the corrected turn instead (it is no typed
        text), when it has any (search/spelling.py)."""
        if not self.cfg.use_spelling:
            return plan
        fixed = spelling.correct(plan.typed, self.index, scope)
        if fixed is None:
            return plan
        followup = plan.followup
        if plan.earlier:  # the joined form, "earlier turn + typed turn", searched with the corrected turn
            followup = f"{plan.earlier} {fixed}"  # (the earlier turn as typed: no correction of it stands alone)
        expansions = plan.expansions
        if self.cfg.use_expansion:  # as plan() expands them, the corrected forms' too
            expansions = tuple(dict.fromkeys(x for q in (plan.typed, followup, fixed) if q
                                             for x in qmod.expand(q, self.synonyms)))
        return dataclasses.replace(plan, spelled=fixed, followup=followup, expansions=expansions)

    def search(self, typed: str, history: Sequence[str], scope: Scope) -> tuple[QueryPlan, Retrieval]:
        """The first half of :meth:`ask`: what the bot searches and finds."""
        typed, history = readable(typed), [readable(h) for h in history]
        index = self.index.live()
        if index is not self.index:  # an ingest switched the index since the last question
            self.index = checked(index, self.cfg)
        plan = self.plan(typed, history)
        if not plan.queries:  # "thanks", "ok": nothing to look up
            return plan, Retrieval([], scope, [], [], {}, False)
        plan = self._spell(plan, scope)
        return plan, retrieve(self.index, plan.queries, scope, self.cfg, self.embed(), self.cross_encoder(),
                              plan.rerank, plan.core)

    def ask(self, typed: str, history: Sequence[str] = (), scope: Scope = Scope(),
            on_text: Callable[[str], None] | None = None,
            on_plan: Callable[[QueryPlan], None] | None = None) -> Turn:
        """Answer one turn.  ``on_plan`` sees the queries once known; ``on_text``
        receives the answer as it is written (refusals included)."""
        clock = time.perf_counter
        t0 = clock()
        turn, why = self.assess(typed, history, scope, on_plan)
        t1 = clock()
        if why is not None:  # weak evidence: the refusal, with no model call
            self._refuse(turn, why, on_text)
        elif self.llm is None:
            self._extract(turn, on_text)
        else:
            self._generate(turn, on_text)
        turn.timings_ms["answer"] = (clock() - t1) * 1000
        turn.timings_ms["total"] = (clock() - t0) * 1000
        return turn

    def assess(self, typed: str, history: Sequence[str] = (), scope: Scope = Scope(),
               on_plan: Callable[[QueryPlan], None] | None = None) -> tuple[Turn, str | None]:
        """The first part of :meth:`ask`, up to the gate: the turn searched,
        its context chosen, its signals and P(answerable) set, and the reason
        to refuse (None: answer).  Nothing is answered (the refusal fit reads
        the signals alone)."""
        t0 = time.perf_counter()
        plan, r = self.search(typed, history, scope)
        if on_plan:
            on_plan(plan)
        turn = Turn(plan, r, ctxmod.select_context(r.hits, r.evidence, self.cfg),
                    model_calls=1 if plan.method.startswith("llm") else 0)
        manifest = self.index.manifest
        turn.folder = manifest.get("source_folder")
        sources = manifest.get("sources") or {}
        turn.indexed = {h.chunk.source: str(sources[h.chunk.source].get("sha1"))
                        for h in turn.context.shown if isinstance(sources.get(h.chunk.source), dict)}
        turn.timings_ms["retrieve"] = (time.perf_counter() - t0) * 1000
        return turn, self._assess(turn)

    # --- answering --------------------------------------------------------------
    def _refuse(self, turn: Turn, reason: str, on_text) -> None:
        """The one place a refusal is given."""
        turn.answer, turn.refused, turn.refusal_reason = REFUSAL, True, reason
        if on_text:
            on_text(REFUSAL)

    def _question(self, plan: QueryPlan, read: bool = True) -> int:
        """Which searched query the answerer reads as the question: the
        model's standalone turn, else the typed turn (the joined form's
        earlier words would pull the answer back to the last question), its
        misspellings corrected when the gate and the offline answerer
        (``read``) read it: a quote is chosen for the words the asker meant,
        while a model is shown what was typed, which it reads as well."""
        q = plan.standalone if plan.method == "llm" else (plan.spelled if read and plan.spelled else plan.typed)
        return plan.queries.index(q) if q in plan.queries else 0

    def _assess(self, turn: Turn) -> str | None:
        """Score the shown chunks' units and decide whether the documents hold
        the answer; the reason for a refusal, or None to answer."""
        r, ctx, cfg, plan = turn.retrieval, turn.context, self.cfg, turn.plan
        if not r.queries:
            return "the turn asks nothing to look up; ask a question about the documents"
        if not ctx.shown:
            if any(why == "budget" for _, why in ctx.dropped):
                return f"no chunk fits the context budget (context_tokens {cfg.context_tokens}); raise it"
            return "no chunk passed the evidence floor"
        ident = unknown_identifier(r.terms, r.stats)
        if ident is not None:
            return f"the question names {ident!r}, which no document contains"
        name = unwritten_name(plan.spelled or plan.typed, ctx)
        if name is not None:
            return f"the question names {name!r}, which no passage found writes"
        qi = self._question(plan)
        by_query = dict(zip(r.queries, r.terms))
        context = by_query.get(plan.followup or "", []) if plan.method != "llm" else []
        # the other forms: the expansions, and the typed turn when its corrected spelling is the question
        typed = (plan.typed,) if plan.spelled and r.queries[qi] == plan.spelled else ()
        expansions = [by_query[q] for q in (*typed, *plan.widened) if q in by_query and q != r.queries[qi]]
        model = self.index.manifest.get("embed_model")  # cosines and the gate's fit are per model
        turn.scored = score_units(r.queries[qi], variants(r.terms[qi], context, expansions), ctx, r.stats,
                                  self.embed(queries=False), r.vectors[qi] if r.vectors is not None else None,
                                  cosine_scale=cosine_scale(model), earlier=plan.earlier)
        turn.answer_score = turn.scored[0].score if turn.scored else 0.0
        reranked = r.rerank_on and r.hits and "rerank" in r.hits[0].scores
        turn.signals = gate.signals(r.queries[qi], [r.terms[qi], *expansions], ctx, r.evidence, r.stats, turn.scored,
                                    r.hits[0].id if r.hits else None,
                                    r.hits[0].scores["rerank"] if reranked else None, r.core_first)
        turn.p_answerable = gate.probability(turn.signals, gate.model(model, cfg.rerank_model if reranked else None))
        if cfg.use_gate and turn.p_answerable < cfg.gate_threshold:
            turn.gated = True
            return gate.reason(turn.signals, turn.p_answerable, cfg.gate_threshold)
        return None

    def _extract(self, turn: Turn, on_text) -> None:
        r = turn.retrieval
        question = r.queries[self._question(turn.plan)]
        ex = quote_answer(question, turn.scored, self.cfg.min_answer_score, self.cfg.answer_sentences,
                          {t: s.idf for t, s in r.stats.items()}, strongest=len(turn.context.shown),
                          focus=self._focus(turn.plan),
                          langs=chunk_langs(turn.context), earlier=turn.plan.earlier,
                          answers=answer_sections(turn.context))
        if ex.text == REFUSAL:
            return self._refuse(turn, ex.reason, on_text)
        # The quotes are the documents' own text with the answerer's marks: not
        # run through the citation cleaner, which would read a "[2248755]" in a
        # quoted log line as a citation to strip (or "[1]" as one to keep).
        self._accept(turn, Cleaned(ex.text, ex.cited, ex.cited, 0, False))
        turn.quoted = ex.quoted
        if on_text:
            on_text(turn.answer)

    @staticmethod
    def _focus(plan: QueryPlan) -> frozenset[str]:
        """The words a joined follow-up adds to the conversation ("run" in "and
        fastapi run?" after a "fastapi dev" question); empty for a first turn."""
        return frozenset(analyzer.analyze(plan.spelled or plan.typed)) - set(analyzer.analyze(plan.earlier)) \
            if plan.earlier else frozenset()

    def _generate(self, turn: Turn, on_text) -> None:
        if turn.plan.model_down:  # it just failed to answer the rewrite: asking again would wait as long again
            turn.answer, turn.refused, turn.error = "", False, f"{turn.plan.model_down} (while rewriting the follow-up)"
            return
        ctx = turn.context
        system, user = ctxmod.build_prompt(turn.retrieval.queries[self._question(turn.plan, read=False)], ctx)
        stream = AnswerStream(len(ctx.shown))
        turn.model_calls += 1
        try:
            for delta in self.llm.stream(system, user):
                out = stream.feed(delta)
                if out and on_text:
                    on_text(out)
        except LLMIncomplete as e:
            turn.incomplete = str(e)
        except LLMError as e:
            turn.answer, turn.refused, turn.error = "", False, str(e)
            return
        tail, cleaned = stream.finish()
        turn.stripped = cleaned.stripped  # removed, so counted, whatever the turn became
        if cleaned.refused:
            return self._refuse(turn, "the model said the sources do not hold the answer", on_text)
        if not cleaned.text:
            why = f" ({turn.incomplete})" if turn.incomplete else ""
            turn.answer, turn.refused, turn.incomplete = "", False, None
            turn.error = f"the model returned no answer text{why}; ask again"
            return
        if tail and on_text:
            on_text(tail)
        self._accept(turn, cleaned)

    def _accept(self, turn: Turn, cleaned) -> None:
        shown = turn.context.shown
        turn.answer, turn.refused, turn.refusal_reason = cleaned.text, False, None
        turn.stripped = cleaned.stripped
        turn.citations = [citation(n, shown[n - 1]) for n in cleaned.cited]
        turn.quoted = cleaned.marks
        turn.unsupported = not cleaned.cited

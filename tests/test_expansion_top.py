"""A synonym expansion adds evidence and never takes it away: the gate's
``top`` (the first hit's cosine) reads the better of the first hit and the
first hit fused without the expansions' lists.  By hand in three dimensions."""
import numpy as np
import pytest

from citebot.answer import gate
from citebot.answer.context import Context
from citebot.config import Config
from citebot.index.local import LocalIndex
from citebot.schema import Chunk, Evidence, Hit, Scope
from citebot.search import queries as qmod
from citebot.search.retriever import retrieve

VECS = {"a": (1.0, 0.0, 0.0), "b": (0.0, 1.0, 0.0), "c": (0.0, 0.0, 1.0)}
TYPED = (0.8, 0.6, 0.0)  # a 0.8, b 0.6, c 0
EXPANDED = tuple(x / (0.7 ** 2 + 0.6 ** 2) ** 0.5 for x in (0.0, 0.7, 0.6))  # b 0.759, c 0.651, a 0


@pytest.fixture
def index():
    chunks = [Chunk(d, f"{d}.md", "", (), f"text of {d}", 1, 1) for d in VECS]
    return LocalIndex(chunks, np.array(list(VECS.values()), dtype=np.float32), {})


def run(index, core):
    cfg = Config(use_sparse=False, dense_k=3, final_k=1, rerank_pool=1, rrf_k=60, use_expansion=False)
    vectors = np.array([TYPED, EXPANDED], dtype=np.float32)
    return retrieve(index, ["typed", "expanded"], Scope(), cfg, embed=lambda qs: vectors, core=core)


def test_the_first_hit_without_the_expansions_is_kept_and_measured(index):
    # typed list a, b, c; expansion list b, c, a.  RRF at k = 60:
    # b = 1/62 + 1/61 = 0.032523, a = 1/61 + 1/63 = 0.032266, c = 1/63 + 1/62 = 0.032002
    r = run(index, core=1)
    assert [h.id for h in r.hits] == ["b"]
    assert [h.id for h in r.fused] == ["b", "a", "c"]
    assert r.fused[0].scores["rrf"] == pytest.approx(1 / 62 + 1 / 61)
    assert r.core_first == "a"  # the typed list alone ranks a first
    # a is not a final hit, yet its evidence is measured for the gate: cosine 0.8 (typed query)
    assert r.evidence["a"].cosine == pytest.approx(0.8, abs=1e-6)
    assert r.evidence["b"].cosine == pytest.approx(0.7 / 0.85 ** 0.5, abs=1e-6)


def test_without_expansions_there_is_no_second_first_hit(index):
    assert run(index, core=None).core_first is None
    assert run(index, core=2).core_first is None


def test_top_is_the_better_of_the_two_first_hits():
    a, b = Hit(Chunk("a", "a.md", "", (), "x", 1, 1)), Hit(Chunk("b", "b.md", "", (), "x", 1, 1))
    ev = {"a": Evidence(0.5, False, 0.8), "b": Evidence(0.5, False, 0.759)}
    args = ("q", [], Context([b, a]), ev, {}, [])
    assert gate.signals(*args, first="b").top == pytest.approx(0.759)
    assert gate.signals(*args, first="b", core_first="a").top == pytest.approx(0.8)
    # never lowered: a weaker chunk first without the expansions leaves the first hit's cosine
    assert gate.signals(*args, first="a", core_first="b").top == pytest.approx(0.8)


def test_the_plan_counts_the_queries_that_are_not_expansions():
    groups = [("money back", "refund")]
    alone = qmod.plan("how do I get my money back?", [], groups)
    assert alone.queries == ["how do I get my money back?", "how do I get my refund?"] and alone.core == 1
    follow = qmod.plan("and my money back?", ["how do I return a tent?"], groups)
    assert len(follow.queries) == 4 and follow.core == 2

"""A five-question golden set over a four-document fixture, run through the
engine with BM25 only, every metric worked out by hand below."""
import json
import math

import pytest

from citebot import config
from citebot.engine import Engine
from citebot.index.build import ingest
from citebot.index.store import open_index
from citebot.measurement import evaluate
from citebot.measurement.golden import Judge, load_golden
from citebot.search.models import Models

from conftest import write

DOCS = {
    # search text: "Returns\nReturns are accepted within 30 days of delivery." -> return x2, within, day (7 terms)
    "a.md": "# Returns\n\nReturns are accepted within 30 days of delivery.\n",
    # "Shipping\nOrders ship within two business days. Returns ship free." -> return x1, within, day (10 terms)
    "b.md": "# Shipping\n\nOrders ship within two business days. Returns ship free.\n",
    "c.md": "---\naudience: staff\n---\n# Goodwill\n\nAgents may refund up to 50 dollars as goodwill.\n",
    "d.md": "# Gift cards\n\nGift cards never expire.\n",
}
GOLDEN = {"version": 1, "questions": [
    # a and b both hold return/within/day; a has "return" twice in 7 terms, b once in 10: a ranks first.
    {"id": "m1", "question": "returns within days?", "tags": ["graded"], "answerable": True,
     "evidence": [{"phrase": "Returns ship free", "grade": 2}, {"phrase": "accepted within 30 days", "grade": 1}],
     "answer_keywords": []},
    {"id": "m2", "question": "when do orders ship?", "tags": ["plain"], "answerable": True,  # only b has order/ship
     "evidence": [{"phrase": "ship within two business days", "grade": 2}], "answer_keywords": []},
    {"id": "m3", "question": "do gift cards expire?", "tags": ["plain"], "answerable": True,  # only d
     "evidence": [{"phrase": "Gift cards never expire", "grade": 2}], "answer_keywords": []},
    # Only the staff page c matches; the public asker's BM25 finds nothing.
    {"id": "m4", "question": "goodwill refund limit?", "tags": ["trap"], "answerable": False, "evidence": [],
     "answer_keywords": [], "must_not": ["up to 50 dollars"]},
    # No document holds "pay" or "voucher": a retrieval miss (and a wrong refusal).
    {"id": "m5", "question": "can I pay with a voucher?", "tags": ["plain"], "answerable": True,
     "evidence": [{"phrase": "Gift cards never expire", "grade": 2}], "answer_keywords": []},
]}
L = math.log2(3)  # the discount at rank 2


@pytest.fixture(scope="module")
def mini(tmp_path_factory, embedder):
    folder = tmp_path_factory.mktemp("mini")
    for name, text in DOCS.items():
        write(folder / name, text)
    golden = write(folder / "golden.json", json.dumps(GOLDEN))
    cfg = config.Config(embed_model="packaged", index=str(folder / "idx"), use_expansion=False)
    ingest(folder, cfg, embedder=embedder)
    engine = Engine(open_index(cfg), cfg, Models(embedder, None))
    return engine, load_golden(golden).questions


def test_the_judge_grades_exactly_the_chunks_holding_each_phrase(mini):
    engine, qs = mini
    judge = Judge(engine.index)
    by_source = {c.id: c.source for c in judge.chunks.values()}
    grades = {q.id: {by_source[cid]: g for cid, g in judge.relevant(q).items()} for q in qs}
    assert grades == {"m1": {"b.md": 2, "a.md": 1}, "m2": {"b.md": 2}, "m3": {"d.md": 2}, "m4": {}, "m5": {"d.md": 2}}
    assert judge.missing_phrases(qs[0]) == []


def test_bm25_row_by_hand(mini):
    engine, qs = mini
    res = evaluate.run_config(engine, "bm25", qs, Judge(engine.index))
    src = {c.id: c.source for c in Judge(engine.index).chunks.values()}
    assert [src[i] for i in res["m1"].ranked] == ["a.md", "b.md"]
    assert [src[i] for i in res["m2"].ranked] == ["b.md"] and res["m4"].ranked == res["m5"].ranked == []
    m = evaluate.summarize(qs, res)
    # answerable m1, m2, m3, m5.  m1: [a (grade 1), b (grade 2)]; m2, m3 relevant at 1; m5 nothing.
    assert m["hit@1"] == m["hit@5"] == m["recall@5"] == m["mrr"] == 0.75
    ndcg_m1 = (1 + 3 / L) / (3 + 1 / L)  # DCG: (2^1 - 1)/1 + (2^2 - 1)/log2 3; IDCG: 3/1 + 1/log2 3 = 0.7967
    assert m["ndcg@10"] == round((ndcg_m1 + 1 + 1 + 0) / 4, 4) == 0.6992
    # Refused (nothing retrieved): m4 (right) and m5 (wrong): precision 1/2, recall 1/1.
    assert (m["refusal_precision"], m["refusal_recall"]) == (0.5, 1.0)
    assert m["leaks"] == 0 and m["n"] == 5


def test_the_leak_counter_counts_a_restricted_chunk_in_the_top_k(mini):
    engine, qs = mini
    judge = Judge(engine.index)
    bm25 = engine.configured(evaluate.config_for("bm25", engine.cfg))
    unfiltered = {q.id: evaluate.run_question(bm25, q, judge, unfiltered=True) for q in qs}
    # Without the filter only m4 reaches the staff page c (its words are c's alone).
    assert [q for q, r in unfiltered.items() if r.leak] == ["m4"]
    assert evaluate.summarize(qs, unfiltered)["leaks"] == 1


def test_default_row_is_named(mini):
    engine, _ = mini
    assert evaluate.default_name(config.Config()) == "+followups"
    assert evaluate.default_name(config.Config(use_rerank=False)) is None
    assert evaluate.default_name(evaluate.config_for("hybrid", config.Config())) == "hybrid"

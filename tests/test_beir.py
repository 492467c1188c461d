"""The benchmark runner (measurement/beir.py) on tiny BEIR folders written
here (hand-checkable metrics, the embedding cache), through the engine, plus
one smoke run on the real SciFact that skips when ../shared/benchmarks is
absent."""
import json
import math
import re

import numpy as np
import pytest

from citebot.config import Config
from citebot.measurement import beir as bench_beir
from citebot.measurement import benchmarks
from citebot.measurement import main as evaluate
from citebot.search import models

from conftest import write_jsonl, write_qrels

# ---------------------------------------------------------------- fixtures




DOCS = [
    {"_id": "d1", "title": "Zebrafish fins", "text": "Zebrafish regenerate their fins after amputation."},
    {"_id": "d2", "title": "Heart cells", "text": "Cardiomyocytes proliferate in the adult heart."},
    {"_id": "d3", "title": "Quantum dots", "text": "Quantum dots are semiconductor nanocrystals used in imaging."},
    {"_id": "d4", "title": "Imaging agents", "text": "Fluorescent probes label tissue for microscopy."},
    {"_id": "d5", "title": "Cardiac renewal", "text": "Myocardial tissue renewal after injury."},
]


@pytest.fixture
def tiny(tmp_path):
    """A benchmarks folder holding a five-document 'scifact', a two-turn
    'mtrag' and a two-question 'squad2'."""
    root = tmp_path / "benchmarks"
    write_jsonl(root / "scifact/corpus.jsonl", DOCS)
    write_jsonl(root / "scifact/queries.jsonl", [
        {"_id": "q1", "text": "zebrafish"},  # only d1 has the word: relevant d1
        {"_id": "q2", "text": "cardiomyocytes"},  # only d2 has it; relevant d2 and d5
        {"_id": "q3", "text": "quantum imaging"},  # d3 has both words, relevant d4 only one
        {"_id": "q4", "text": "no qrels, dropped"},
    ])
    write_qrels(root / "scifact/qrels/test.tsv", [("q1", "d1", 1), ("q2", "d2", 1), ("q2", "d5", 1), ("q3", "d4", 1)])
    write_qrels(root / "scifact/qrels/train.tsv", [("q1", "d1", 1)])

    m = root / "mtrag"
    write_jsonl(m / "pooled_corpus.jsonl", [
        {"_id": "p1", "title": "NFL", "text": "The NFL has 32 teams."},
        {"_id": "p2", "title": "Cardinals", "text": "The Arizona Cardinals play in Glendale."},
    ])
    h = m / "mtrag_human_pooled"
    first, second = "where do the arizona cardinals play?", "and the league size?"
    write_jsonl(h / "queries_lastturn.jsonl", [
        {"_id": "c<::>1", "text": f"|user|: {first}", "domain": "clapnq"},
        {"_id": "c<::>2", "text": f"|user|: {second}", "domain": "clapnq"},
    ])
    write_jsonl(h / "queries_rewrite.jsonl", [
        {"_id": "c<::>1", "text": f"|user|: {first}", "domain": "clapnq"},
        {"_id": "c<::>2", "text": "|user|: how many teams are in the NFL?", "domain": "clapnq"},
    ])
    write_jsonl(h / "queries_questions.jsonl", [
        {"_id": "c<::>1", "text": f"|user|: {first}", "domain": "clapnq"},
        {"_id": "c<::>2", "text": f"|user|: {first}\n|user|: {second}", "domain": "clapnq"},
    ])
    write_qrels(h / "qrels.tsv", [("c<::>1", "p2", 1), ("c<::>2", "p1", 1)])

    write_jsonl(root / "squad2/corpus.jsonl", [{"_id": "sq-1", "title": "", "text": "Paris is the capital of France."}])
    write_jsonl(root / "squad2/queries.jsonl", [
        {"_id": "s1", "text": "capital of France", "is_impossible": False, "answers": ["Paris"],
         "context_id": "sq-1"},
        {"_id": "s2", "text": "Where is Lyon?", "is_impossible": True, "answers": [""], "context_id": "sq-1"},
    ])
    write_qrels(root / "squad2/qrels.tsv", [("s1", "sq-1", 1)])
    return root


CONCEPTS = {"zebrafish": 0, "fin": 0, "heart": 1, "cardiomyocyte": 1, "cardiac": 1, "myocardial": 1,
            "quantum": 2, "nanocrystal": 2, "imaging": 3, "fluorescent": 3, "microscopy": 3, "probe": 3}


class ConceptEmbedder:
    """A deterministic stand-in for the embedder: a normalised count of four
    concepts, so every cosine can be worked out by hand.  Counts its calls."""

    name, dim = "test/concepts", 4

    def __init__(self):
        self.calls: list[list[str]] = []

    def encode(self, texts, progress=False):
        self.calls.append(list(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            # Plain words, plural s trimmed: independent of citebot's analyzer.
            for tok in (w[:-1] if w.endswith("s") else w for w in re.findall(r"[a-z]+", t.lower())):
                if tok in CONCEPTS:
                    out[i, CONCEPTS[tok]] += 1
            norm = np.linalg.norm(out[i])
            if norm:
                out[i] /= norm
        return out


class FluorescentFirst:
    """A stand-in cross-encoder: 1.0 for a text with 'Fluorescent', else 0."""

    def predict(self, pairs, batch_size=32, show_progress_bar=False):
        return [1.0 if "Fluorescent" in text else 0.0 for _, text in pairs]


def _run(tiny, tmp_path, name="scifact", cfg=None, **kw):
    kw.setdefault("embedder", ConceptEmbedder())
    kw.setdefault("cache_dir", tmp_path / "cache")
    return bench_beir.run(name, cfg or Config(embed_model="packaged", use_expansion=False), root=tiny, log=lambda *a: None, **kw)


# ---------------------------------------------------------------- metrics by hand

NDCG_2_OF_2_AT_1 = 1 / (1 + 1 / math.log2(3))  # one of two relevant, at rank 1
NDCG_1_AT_2 = 1 / math.log2(3)  # the only relevant at rank 2


def test_bm25_metrics_by_hand(tiny, tmp_path):
    res = _run(tiny, tmp_path, configs=["bm25"])
    assert res["benchmark"] == "scifact" and res["split"] == "test" and res["n_queries"] == 3
    row = res["configs"]["bm25"]
    # q1: [d1] -> 1.0.  q2: [d2] of {d2, d5} -> 0.613, recall 0.5.  q3: [d3, d4] -> d4 at rank 2.
    assert row["ndcg@10"] == pytest.approx((1.0 + NDCG_2_OF_2_AT_1 + NDCG_1_AT_2) / 3)
    assert row["recall@100"] == pytest.approx((1.0 + 0.5 + 1.0) / 3)
    assert row["mrr@10"] == pytest.approx((1.0 + 1.0 + 0.5) / 3)
    assert row["n"] == 3 and 0 <= row["p50_ms"] <= row["p95_ms"]
    assert res["published"] == benchmarks.PUBLISHED["scifact"]


def test_a_query_whose_qrels_are_all_grade_0_is_not_counted(tiny, tmp_path):
    write_qrels(tiny / "scifact/qrels/test.tsv", [("q1", "d1", 1), ("q2", "d2", 1), ("q2", "d5", 1), ("q3", "d4", 1),
                                                  ("q4", "d3", 0)])  # judged, nothing relevant: no nDCG to average
    res = _run(tiny, tmp_path, configs=["bm25"])
    assert res["n_queries"] == 3 and res["configs"]["bm25"]["n"] == 3


def test_unique_keyword_query_is_perfect(tiny, tmp_path):
    res = _run(tiny, tmp_path, configs=["bm25"], limit=1)  # q1 alone
    assert res["n_queries"] == 1
    assert res["configs"]["bm25"]["ndcg@10"] == 1.0
    assert res["configs"]["bm25"]["mrr@10"] == 1.0
    assert any("first 1 queries" in n for n in res["notes"])


def test_dense_hybrid_and_rerank_by_hand(tiny, tmp_path):
    res = _run(tiny, tmp_path, reranker=FluorescentFirst())
    # The bot's own settings here (expansion off) match no ablation row, so they get a "default" row.
    assert list(res["configs"]) == ["bm25", "dense", "hybrid", "+rerank", "+expansion", "+followups", "default"]
    assert res["default"] == "default"
    # Dense: q1 [d1]; q2 [d2, d5] (both cosine 1); q3 [d3 (0.95), d4 (0.71)].
    dense = res["configs"]["dense"]
    assert dense["ndcg@10"] == pytest.approx((1.0 + 1.0 + NDCG_1_AT_2) / 3)
    assert dense["recall@100"] == pytest.approx(1.0)
    # Hybrid fuses to the same orders.
    assert res["configs"]["hybrid"]["ndcg@10"] == pytest.approx(dense["ndcg@10"])
    # The rerank row ranks by the reranked hits: d4 moves to the top of q3.
    rr = res["configs"]["+rerank"]
    assert rr["ndcg@10"] == pytest.approx(1.0) and rr["mrr@10"] == pytest.approx(1.0)
    assert res["configs"]["default"]["ndcg@10"] == rr["ndcg@10"]  # rerank on, no expansion, no history
    assert res["configs"]["+followups"]["note"] == "no history: same as +expansion"
    assert not any("cross-encoder" in n for n in res["notes"])


def test_missing_reranker_keeps_the_fused_order_as_the_bot_does(tiny, tmp_path, monkeypatch):
    monkeypatch.setattr(models, "reranker", lambda spec: None)
    res = _run(tiny, tmp_path, configs=["hybrid", "+rerank"])
    row = res["configs"]["+rerank"]
    assert row["note"] == "no cross-encoder: fused order, as the bot runs" and row["n"] == 3
    assert {k: row[k] for k in ("ndcg@10", "recall@100", "mrr@10")} == \
        {k: res["configs"]["hybrid"][k] for k in ("ndcg@10", "recall@100", "mrr@10")}
    assert any("cannot be loaded offline" in n for n in res["notes"])
    assert "fused order, as the bot runs" in bench_beir.format_table(res)


def test_deterministic(tiny, tmp_path):
    strip = lambda r: {k: {m: v for m, v in row.items() if not m.endswith("_ms")}  # noqa: E731
                       for k, row in r["configs"].items()}
    a = _run(tiny, tmp_path, configs=["bm25", "dense", "hybrid"])
    b = _run(tiny, tmp_path, configs=["bm25", "dense", "hybrid"])
    assert strip(a) == strip(b)


def test_unknown_config_fails_fast(tiny, tmp_path):
    with pytest.raises(ValueError, match="unknown configuration"):
        _run(tiny, tmp_path, configs=["bm42"])


# ---------------------------------------------------------------- the embedding cache


def test_cache_is_created_and_reused(tiny, tmp_path, counting):
    cache = tmp_path / "cache"
    first = _run(tiny, tmp_path, configs=["dense"], embedder=counting, cache_dir=cache)
    files = list(cache.glob("scifact-*.npy"))
    assert len(files) == 1 and len(files[0].stem.split("-")[-1]) == 12
    assert np.load(files[0]).shape == (5, counting.dim)
    corpus_texts = {f"{d['title']}\n{d['text']}" for d in DOCS}
    assert any(corpus_texts <= set(call) for call in counting.calls)

    counting.calls.clear()
    second = _run(tiny, tmp_path, configs=["dense"], embedder=counting, cache_dir=cache)
    # Only the three queries were embedded, one per search; no corpus text.
    assert counting.calls == [["zebrafish"], ["cardiomyocytes"], ["quantum imaging"]]
    assert second["configs"]["dense"]["ndcg@10"] == first["configs"]["dense"]["ndcg@10"]
    assert list(cache.glob("scifact-*.npy")) == files


def test_cache_key_follows_model_and_text(tiny, tmp_path):
    chunks = bench_beir.corpus_chunks(benchmarks.load("scifact", root=tiny).corpus)
    key = bench_beir.cache_key("m", chunks)
    assert key == bench_beir.cache_key("m", list(chunks))
    assert key != bench_beir.cache_key("other", chunks)
    changed = bench_beir.corpus_chunks({**{c.id: {"title": c.title, "text": c.text} for c in chunks},
                                        "d5": {"title": "Cardiac renewal", "text": "changed"}})
    assert key != bench_beir.cache_key("m", changed)


def test_bm25_only_embeds_nothing(tiny, tmp_path):
    emb = ConceptEmbedder()
    _run(tiny, tmp_path, configs=["bm25"], embedder=emb)
    assert emb.calls == [] and not (tmp_path / "cache").exists()


def test_chunks_follow_the_protocol(tiny):
    chunks = bench_beir.corpus_chunks(benchmarks.load("scifact", root=tiny).corpus)
    c = chunks[0]
    assert (c.id, c.source, c.headings, c.start, c.end) == ("d1", "d1", (), 1, 1)
    assert c.search_text == "Zebrafish fins\nZebrafish regenerate their fins after amputation."
    assert (c.status, c.audience) == ("current", "public")


# ---------------------------------------------------------------- mtrag, squad2


def test_mtrag_last_turn_followups_and_gold_rewrite(tiny, tmp_path):
    res = _run(tiny, tmp_path, "mtrag", configs=["bm25", "hybrid"])
    assert res["n_queries"] == 2
    assert set(res["configs"]) == {f"{c}{f}" for c in ("bm25", "hybrid") for f in ("", "+fu", "/gold")}
    # Turn 1 finds p2 in every form; turn 2's last turn matches nothing, the gold rewrite finds p1.
    assert res["configs"]["bm25"]["ndcg@10"] == pytest.approx(0.5)
    assert res["configs"]["bm25/gold"]["ndcg@10"] == pytest.approx(1.0)
    # With follow-ups turn 2 also searches "where do the arizona cardinals play? and the league size?",
    # which still finds only p2 (not relevant to turn 2).
    assert res["configs"]["bm25+fu"]["ndcg@10"] == pytest.approx(0.5)
    assert "bm25/gold" in bench_beir.format_table(res)


def test_mtrag_followups_search_what_the_bot_searches(tiny, tmp_path, monkeypatch):
    from citebot.engine import Engine
    seen = []
    real = Engine.search

    def spy(self, typed, history, scope):
        plan, r = real(self, typed, history, scope)
        seen.append((self.cfg.use_followups, r.queries))
        return plan, r
    monkeypatch.setattr(Engine, "search", spy)
    _run(tiny, tmp_path, "mtrag", configs=["bm25"])
    with_fu = [q for fu, q in seen if fu]
    assert with_fu == [["where do the arizona cardinals play?"],
                       ["and the league size?", "where do the arizona cardinals play? and the league size?"]]


def test_squad2_refusal(tiny, tmp_path):
    res = _run(tiny, tmp_path, "squad2", configs=["bm25", "hybrid"], reranker=None)
    assert res["n_queries"] == 1 and res["n_questions"] == 2 and res["n_unanswerable"] == 1
    for c in ("bm25", "hybrid"):
        assert res["configs"][c]["ndcg@10"] == 1.0
    # The bot's configuration: s1 covers every query term (coverage 1.0): answered; s2 ("Lyon")
    # finds no evidence: refused, at retrieval and at answer level (Engine.ask).
    ref = res["refusal"]
    assert (ref["tp"], ref["fp"], ref["fn"], ref["tn"]) == (1, 0, 0, 1)
    assert ref["refusal_precision"] == 1.0 and ref["refusal_recall"] == 1.0
    ans = res["answer_refusal"]
    assert ans["tp"] + ans["fp"] + ans["fn"] + ans["tn"] == 2 and ans["tp"] == 1
    text = bench_beir.format_table(res)
    assert "refusal of the bot's configuration on 2 questions" in text and "answer" in text


def test_cli_json(tiny, monkeypatch, capsys, embedder):
    monkeypatch.setenv("CITEBOT_BENCHMARKS", str(tiny))
    assert evaluate.main(["--benchmark", "scifact", "--configs", "bm25", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["configs"]["bm25"]["n"] == 3 and out["published"]["bm25_top100_ce_minilm_l6"] == [0.682, 0.688]
    assert out["configs"]["bm25"]["recall@100"] == pytest.approx((1.0 + 0.5 + 1.0) / 3)
    # The bot's settings (env, --set) reach the benchmark: one BM25 candidate cuts q3's d4 (rank 2).
    monkeypatch.setenv("CITEBOT_SPARSE_K", "1")
    assert evaluate.main(["--benchmark", "scifact", "--configs", "bm25", "--json", "--set", "final_k=1",
                          "--set", "rerank_pool=1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["configs"]["bm25"]["recall@100"] == pytest.approx((1.0 + 0.5 + 0.0) / 3)


def test_cli_table(tiny, monkeypatch, capsys, embedder):
    monkeypatch.setenv("CITEBOT_BENCHMARKS", str(tiny))
    assert evaluate.main(["--benchmark", "scifact", "--configs", "bm25", "--limit", "2"]) == 0
    out = capsys.readouterr().out
    assert "nDCG@10" in out and "published nDCG@10" in out and "bm25_rank_bm25" in out


# ---------------------------------------------------------------- the real SciFact


def test_real_scifact_bm25_smoke(embedder):
    if not benchmarks.available("scifact"):
        pytest.skip(f"scifact benchmark not found under {benchmarks.bench_dir()}")
    res = bench_beir.run("scifact", Config(embed_model="packaged"), ["bm25"], limit=20, log=lambda *a: None, embedder=embedder)
    assert res["n_queries"] == 20 and res["n_docs"] == 5183
    row = res["configs"]["bm25"]
    assert 0.3 < row["ndcg@10"] <= 1.0 and 0.0 < row["recall@100"] <= 1.0


def test_a_benchmark_sweep_embeds_each_query_once(tiny, monkeypatch):
    # Every combination asks the same queries: SciFact train's 809 were embedded
    # again for each one (94 s a row with e5+packaged), now once for the sweep.
    from citebot.measurement import sweep
    from citebot.search import models

    made: list[ConceptEmbedder] = []
    monkeypatch.setattr(models, "embedder", lambda spec: made.append(ConceptEmbedder()) or made[-1])
    rows = sweep.benchmark("scifact", Config(embed_model="packaged", use_rerank=False), [("rrf_k", [5, 60, 100])],
                           "test", None, lambda *a: None, root=tiny)
    assert len(rows) == 3 and len(made) == 1
    queried = [t for call in made[0].calls for t in call if t in {"zebrafish", "cardiomyocytes", "quantum imaging"}]
    assert sorted(queried) == ["cardiomyocytes", "quantum imaging", "zebrafish"]


def test_mtrag_halves_keep_a_conversation_whole(tiny, tmp_path):
    from citebot.measurement.golden import half
    mine = half("c")  # the one conversation's half: both its turns
    assert bench_beir.conversation_half("c<::>2") == mine
    assert _run(tiny, tmp_path, "mtrag", configs=["bm25"], half=mine)["n_queries"] == 2
    other = "report" if mine == "tune" else "tune"
    assert _run(tiny, tmp_path, "mtrag", configs=["bm25"], half=other)["n_queries"] == 0


def test_a_misspelt_query_is_searched_corrected_from_the_expansion_row_on(tiny, tmp_path):
    # "quantom" is in no document and no English word; "quantum" is one edit away and d3 holds it.
    write_jsonl(tiny / "scifact/queries.jsonl", [{"_id": "q1", "text": "quantom"}])
    write_qrels(tiny / "scifact/qrels/test.tsv", [("q1", "d3", 1)])
    res = _run(tiny, tmp_path, cfg=Config(embed_model="packaged"), configs=["hybrid", "+expansion"])
    hybrid, expanded = res["configs"]["hybrid"], res["configs"]["+expansion"]
    # hybrid: BM25 finds nothing and "quantom" holds no concept (a zero vector): d3 is never ranked
    assert hybrid["spelled"] == 0 and hybrid["ndcg@10"] == 0.0
    # +expansion also searches "quantum": d3 first on both of its lists
    assert expanded["spelled"] == 1 and expanded["ndcg@10"] == pytest.approx(1.0)
    assert "queries also searched with misspellings corrected: +expansion 1\n" in bench_beir.format_table(res)

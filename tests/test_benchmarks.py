"""benchmarks.py: loaders on tiny temporary BEIR folders, plus count checks
against shared/benchmarks/README.md that skip when the real data is absent."""
from pathlib import Path

import pytest

from citebot.measurement import benchmarks
from citebot.measurement.benchmarks import (
    PUBLISHED,
    Benchmark,
    available,
    load,
    load_corpus,
    load_mtragun_tasks,
    load_qrels,
    load_queries,
)

from conftest import write_jsonl, write_qrels


@pytest.fixture
def tiny(tmp_path):
    """A benchmarks folder with miniature scifact, mtrag, squad2 and rgb_zh."""
    root = tmp_path / "benchmarks"
    # scifact
    write_jsonl(root / "scifact/corpus.jsonl", [
        {"_id": "d1", "title": "T1", "text": "one"},
        {"_id": "d2", "title": "T2", "text": "two"},
        {"_id": "d3", "text": "no title"},
    ])
    write_jsonl(root / "scifact/queries.jsonl", [
        {"_id": "q1", "text": "first", "metadata": {}},
        {"_id": "q2", "text": "second", "metadata": {}},
        {"_id": "q3", "text": "third (no qrels)", "metadata": {}},
    ])
    write_qrels(root / "scifact/qrels/test.tsv", [("q1", "d1", 1), ("q1", "d3", 2)])
    write_qrels(root / "scifact/qrels/train.tsv", [("q2", "d2", 1)])
    # mtrag
    m = root / "mtrag"
    write_jsonl(m / "pooled_corpus.jsonl", [
        {"_id": "p1", "title": "NFL", "text": "32 teams", "metadata": {"from": "x"}},
        {"_id": "p2", "title": "Other", "text": "else"},
    ])
    h = m / "mtrag_human_pooled"
    write_jsonl(h / "queries_lastturn.jsonl", [
        {"_id": "c1<::>1", "text": "|user|: who plays?", "domain": "clapnq"},
        {"_id": "c1<::>2", "text": "|user|: how many teams?", "domain": "clapnq"},
    ])
    write_jsonl(h / "queries_rewrite.jsonl", [
        {"_id": "c1<::>1", "text": "|user|: who plays?", "domain": "clapnq"},
        {"_id": "c1<::>2", "text": "|user|: how many teams are in the NFL?", "domain": "clapnq"},
    ])
    write_jsonl(h / "queries_questions.jsonl", [
        {"_id": "c1<::>1", "text": "|user|: who plays?", "domain": "clapnq"},
        {"_id": "c1<::>2", "text": "|user|: who plays?\n|user|: how many teams?", "domain": "clapnq"},
    ])
    write_qrels(h / "qrels.tsv", [("c1<::>1", "p2", 1), ("c1<::>2", "p1", 1)])
    write_jsonl(m / "mtragun_tasks.jsonl", [
        {"task_id": "t<::>1", "collection": "govt", "history": [], "question": "q?",
         "answerability": ["ANSWERABLE"], "gold_passage_ids": ["p1"], "reference_answer": "a"},
        {"task_id": "t<::>2", "collection": "govt", "history": [], "question": "q2?",
         "answerability": ["UNANSWERABLE"], "gold_passage_ids": [], "reference_answer": ""},
    ])
    write_qrels(m / "mtragun_qrels.tsv", [("t<::>1", "p1", 1)])
    # squad2: the impossible question has no qrels row and answers [""]
    write_jsonl(root / "squad2/corpus.jsonl", [{"_id": "sq-1", "title": "", "text": "Paris is in France."}])
    write_jsonl(root / "squad2/queries.jsonl", [
        {"_id": "s1", "text": "Where is Paris?", "is_impossible": False,
         "answers": ["France", "in France"], "context_id": "sq-1"},
        {"_id": "s2", "text": "Where is Lyon?", "is_impossible": True, "answers": [""], "context_id": "sq-1"},
    ])
    write_qrels(root / "squad2/qrels.tsv", [("s1", "sq-1", 1)])
    # rgb_zh
    write_jsonl(root / "rgb_zh/zh_corpus.jsonl", [{"_id": "z1", "title": "", "text": "死亡12人"}])
    write_jsonl(root / "rgb_zh/zh_queries.jsonl", [{"_id": "rgbzh-0", "text": "死亡人数", "answers": ["12人"]}])
    write_qrels(root / "rgb_zh/zh_qrels.tsv", [("rgbzh-0", "z1", 1)])
    # cmrc: plain BEIR names under cmrc2018/
    write_jsonl(root / "cmrc2018/corpus.jsonl", [{"_id": "c1", "title": "", "text": "光荣和ω-force开发"}])
    write_jsonl(root / "cmrc2018/queries.jsonl", [{"_id": "DEV_0", "text": "谁开发的？", "answers": ["光荣"]},
                                                  {"_id": "DEV_9", "text": "no qrels row"}])
    write_qrels(root / "cmrc2018/qrels.tsv", [("DEV_0", "c1", 1)])
    return root


# ---------------------------------------------------------------- raw readers


def test_load_corpus_queries_qrels(tiny):
    corpus = load_corpus(tiny / "scifact/corpus.jsonl")
    assert corpus == {
        "d1": {"title": "T1", "text": "one"},
        "d2": {"title": "T2", "text": "two"},
        "d3": {"title": "", "text": "no title"},
    }
    assert load_queries(tiny / "scifact/queries.jsonl")["q2"] == "second"
    qrels = load_qrels(tiny / "scifact/qrels/test.tsv")
    assert qrels == {"q1": {"d1": 1, "d3": 2}}  # header skipped, grades are ints


def test_load_qrels_tolerates_blank_lines_and_no_header(tmp_path):
    p = tmp_path / "q.tsv"
    p.write_text("a\tx\t1\n\nb\ty\t0\n", encoding="utf-8")
    assert load_qrels(p) == {"a": {"x": 1}, "b": {"y": 0}}


def test_load_qrels_bad_row(tmp_path):
    p = tmp_path / "q.tsv"
    p.write_text("query-id\tcorpus-id\tscore\na\tx\n", encoding="utf-8")
    with pytest.raises(ValueError, match="q.tsv:2"):
        load_qrels(p)


def test_missing_file_message(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        load_corpus(tmp_path / "nope.jsonl")
    msg = str(e.value)
    assert "nope.jsonl" in msg and "../shared/benchmarks" in msg and "CITEBOT_BENCHMARKS" in msg


def test_load_missing_benchmark_folder(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        load("scifact", root=tmp_path)
    assert str(tmp_path / "scifact" / "corpus.jsonl") in str(e.value)
    assert "CITEBOT_BENCHMARKS" in str(e.value)


# ---------------------------------------------------------------- load()


def test_load_scifact_splits(tiny):
    b = load("scifact", root=tiny)
    assert isinstance(b, Benchmark) and b.name == "scifact"
    assert len(b.corpus) == 3
    assert b.queries == {"q1": "first"}            # only queries with test qrels
    assert b.qrels == {"q1": {"d1": 1, "d3": 2}}
    assert b.meta["split"] == "test"
    tr = load("scifact", "train", root=tiny)
    assert tr.queries == {"q2": "second"}
    with pytest.raises(ValueError):
        load("scifact", "dev", root=tiny)


def test_load_mtrag_query_forms(tiny):
    last = load("mtrag", root=tiny)
    assert last.meta["query_form"] == "lastturn"
    assert last.queries["c1<::>2"] == "how many teams?"        # "|user|: " stripped
    rw = load("mtrag", query_form="rewrite", root=tiny)
    assert rw.queries["c1<::>2"] == "how many teams are in the NFL?"
    qs = load("mtrag", query_form="questions", root=tiny)
    assert qs.queries["c1<::>2"] == "who plays?\nhow many teams?"
    raw = load("mtrag", query_form="questions", root=tiny, strip_speaker=False)
    assert raw.queries["c1<::>2"] == "|user|: who plays?\n|user|: how many teams?"
    for b in (last, rw, qs):
        assert b.qrels == {"c1<::>1": {"p2": 1}, "c1<::>2": {"p1": 1}}
        assert b.meta["user_turns"]["c1<::>2"] == ["who plays?", "how many teams?"]
        assert b.meta["domain"]["c1<::>1"] == "clapnq"
    assert last.corpus["p1"] == {"title": "NFL", "text": "32 teams"}
    with pytest.raises(ValueError):
        load("mtrag", query_form="gold", root=tiny)
    with pytest.raises(ValueError):
        load("scifact", query_form="rewrite", root=tiny)


def test_load_squad2_marks_unanswerable(tiny):
    b = load("squad2", root=tiny)
    assert set(b.queries) == {"s1", "s2"}          # the unanswerable one is kept
    assert b.meta["unanswerable"] == {"s2"}
    assert b.qrels == {"s1": {"sq-1": 1}}          # ... but has no qrels
    assert b.meta["answers"] == {"s1": ["France", "in France"], "s2": []}
    assert b.meta["context_id"]["s2"] == "sq-1"


def test_load_rgb_zh(tiny):
    b = load("rgb_zh", root=tiny)
    assert b.queries == {"rgbzh-0": "死亡人数"}
    assert b.meta["answers"] == {"rgbzh-0": ["12人"]}


def test_load_cmrc_keeps_only_questions_with_qrels(tiny):
    b = load("cmrc", root=tiny)
    assert b.queries == {"DEV_0": "谁开发的？"}
    assert b.qrels == {"DEV_0": {"c1": 1}}
    assert b.meta["answers"] == {"DEV_0": ["光荣"]}
    assert available("cmrc", root=tiny)


def test_mtragun_tasks(tiny):
    tasks = load_mtragun_tasks(root=tiny)
    assert [t["qrels"] for t in tasks] == [{"p1": 1}, {}]
    assert tasks[1]["answerability"] == ["UNANSWERABLE"]


def test_unknown_benchmark(tiny):
    with pytest.raises(ValueError):
        load("msmarco", root=tiny)
    assert not available("msmarco", root=tiny)


def test_available_and_env_override(tiny, tmp_path, monkeypatch):
    for name in benchmarks.NAMES:
        assert available(name, root=tiny)
    assert not available("scifact", root=tmp_path / "empty")
    monkeypatch.setenv("CITEBOT_BENCHMARKS", str(tiny))
    assert benchmarks.bench_dir() == tiny
    assert available("squad2")
    assert load("squad2").meta["unanswerable"] == {"s2"}
    (tiny / "squad2/qrels.tsv").unlink()
    assert not available("squad2")
    with pytest.raises(FileNotFoundError, match="qrels.tsv"):
        load("squad2")


def test_default_bench_dir_is_sibling_shared():
    repo = Path(benchmarks.__file__).resolve().parents[2]
    import os
    if not os.environ.get("CITEBOT_BENCHMARKS"):
        assert benchmarks.BENCH_DIR == repo.parent / "shared" / "benchmarks"


def test_published_numbers():
    sf = PUBLISHED["scifact"]
    assert sf["bm25_anserini_multifield"] == 0.665
    assert sf["bm25_rank_bm25"] == 0.685
    assert sf["bm25_top100_ce_minilm_l6"] == (0.682, 0.688)
    assert PUBLISHED["mtrag"]["bm25_pooled_lastturn"] == 0.550
    assert PUBLISHED["mtrag"]["bm25_pooled_rewrite"] == 0.584
    assert set(benchmarks.PUBLISHED_SOURCES["scifact"]) == set(sf)
    assert set(benchmarks.PUBLISHED_SOURCES["mtrag"]) == set(PUBLISHED["mtrag"])


# ---------------------------------------------------------------- real data (README counts)


def _real(name):
    if not available(name):
        pytest.skip(f"{name} benchmark not found under {benchmarks.bench_dir()}")


def test_real_scifact():
    _real("scifact")
    test = load("scifact", "test")
    assert len(test.corpus) == 5183
    assert len(test.queries) == 300 and len(test.qrels) == 300
    train = load("scifact", "train")
    assert len(train.queries) == 809
    assert len(load_queries(benchmarks.bench_dir() / "scifact/queries.jsonl")) == 1109
    assert all(g == 1 for q in test.qrels.values() for g in q.values())  # binary qrels
    assert not set(test.queries) & set(train.queries)
    assert all(d in test.corpus for q in test.qrels.values() for d in q)


def test_real_mtrag():
    _real("mtrag")
    forms = {f: load("mtrag", query_form=f) for f in benchmarks.MTRAG_QUERY_FORMS}
    for b in forms.values():
        assert len(b.corpus) == 1488
        assert len(b.queries) == 238
        assert all(d in b.corpus for q in b.qrels.values() for d in q)
        assert not any(t.startswith("|user|") for t in b.queries.values())
    assert set(forms["lastturn"].queries) == set(forms["rewrite"].queries) == set(forms["questions"].queries)
    # the last user turn in the history is the last-turn query
    lt = forms["lastturn"]
    assert all(lt.meta["user_turns"][q][-1] == lt.queries[q] for q in lt.queries)
    tasks = load_mtragun_tasks()
    assert len(tasks) == 507


def test_real_squad2():
    _real("squad2")
    b = load("squad2")
    assert len(b.corpus) == 411
    assert len(b.queries) == 500
    assert len(b.meta["unanswerable"]) == 258
    assert len(b.qrels) == 500 - 258
    assert not set(b.qrels) & b.meta["unanswerable"]
    assert all(b.meta["answers"][q] for q in b.qrels)          # answerable have answers


def test_real_cmrc():
    _real("cmrc")
    b = load("cmrc")
    assert (len(b.corpus), len(b.queries)) == (137, 500)


def test_real_rgb_zh():
    _real("rgb_zh")
    b = load("rgb_zh")
    assert len(b.corpus) == 7337
    assert len(b.queries) == 300
    assert sum(len(q) for q in b.qrels.values()) == 2494

import json
import re
import subprocess
import sys

import pytest

from citebot.measurement import diagnose
from citebot.measurement.golden import Judge, Question, load_golden

from conftest import ROOT

Q = Question.from_dict({"id": "q", "question": "how long can I return things?", "answerable": True,
                        "answer_keywords": ["30 days"],
                        "evidence": [{"phrase": "returns are accepted within 30 days", "grade": 2}]})


def trace(**kw):
    t = {"missing_phrases": [], "retrieved": [{"id": "a", "grade": 2, "stale": False}], "shown": ["a"],
         "dropped": [], "duplicates": 0}
    t.update(kw)
    return t


def test_chunk_windows_too_small_is_ingestion():
    t = trace(missing_phrases=["returns are accepted within 30 days"], retrieved=[{"id": "x", "grade": 0, "stale": False}],
              shown=["x"])
    assert diagnose.diagnose(Q, t)[0] == ("ingestion", "missed_evidence")


def test_not_retrieved_and_irrelevant_first():
    assert diagnose.diagnose(Q, trace(retrieved=[{"id": "x", "grade": 0, "stale": False}], shown=["x"])) == [
        ("retrieval", "missed_evidence")]
    t = trace(retrieved=[{"id": "x", "grade": 0, "stale": False}, {"id": "a", "grade": 2, "stale": False}])
    assert ("retrieval", "irrelevant_match") in diagnose.diagnose(Q, t)


def test_evidence_no_chunk_holds_is_ingestion_and_a_missed_chunk_that_holds_it_is_retrieval_too():
    miss = [{"id": "x", "grade": 0, "stale": False}]
    # A grade-1 phrase in no chunk, or a phrase split from the words it must sit with: nothing to retrieve.
    assert diagnose.diagnose(Q, trace(held=False, retrieved=miss, shown=["x"])) == [("ingestion", "missed_evidence")]
    # One grade-2 phrase whole in no chunk, another held by a chunk the ranking missed: both.
    assert diagnose.diagnose(Q, trace(missing_phrases=["p"], retrieved=miss, shown=["x"])) == [
        ("ingestion", "missed_evidence"), ("retrieval", "missed_evidence")]


def test_an_unanswerable_question_let_through_is_context_not_retrieval():
    none = Question.from_dict({"id": "u", "question": "how do I bake bread?", "answerable": False})
    through = trace(retrieved=[{"id": "x", "grade": 0, "stale": False}], shown=["x"])
    assert diagnose.diagnose(none, through) == [("context", "irrelevant_match")]
    assert diagnose.diagnose(none, dict(through, answer="Bake it [1].", refused=False, cited_texts=["x"])) == [
        ("context", "irrelevant_match"), ("generation", "unsupported_answer")]
    assert diagnose.diagnose(none, dict(through, answer="I don't know.", refused=True)) == []  # the gate held


def test_stale_document_retrieved():
    t = trace(retrieved=[{"id": "a", "grade": 2, "stale": False}, {"id": "old", "grade": 0, "stale": True}])
    assert diagnose.diagnose(Q, t) == [("retrieval", "stale_document")]


def test_dropped_from_context_and_duplicates():
    t = trace(shown=[], dropped=[("a", "budget")])
    assert diagnose.diagnose(Q, t) == [("context", "missed_evidence")]
    assert diagnose.diagnose(Q, trace(duplicates=1)) == [("context", "duplicate_chunks")]


def test_answer_says_60_days_where_text_says_30_is_generation():
    t = trace(answer="Returns are accepted within 60 days [1].", refused=False,
              cited_texts=["Returns are accepted within 30 days of delivery."], stripped=0)
    assert diagnose.diagnose(Q, t) == [("generation", "missed_evidence"), ("generation", "unsupported_answer")]
    ok = trace(answer="Returns are accepted within 30 days [1].", refused=False,
               cited_texts=["Returns are accepted within 30 days of delivery."], stripped=0)
    assert diagnose.diagnose(Q, ok) == []


def test_cites_a_chunk_not_shown_is_citation():
    t = trace(answer="Returns are accepted within 30 days [1].", refused=False,
              cited_texts=["Returns are accepted within 30 days."], stripped=1)
    assert diagnose.diagnose(Q, t) == [("citation", "unsupported_answer")]


def test_findings_in_stage_order():
    t = trace(missing_phrases=["x"], retrieved=[{"id": "o", "grade": 0, "stale": True}], shown=["o"], duplicates=1,
              answer="It is 60 days [1].", refused=False, cited_texts=["nothing"], stripped=2)
    stages = [s for s, _ in diagnose.diagnose(Q, t)]
    assert stages == sorted(stages, key=diagnose.STAGES.index)
    assert stages[0] == "ingestion" and stages[-1] == "citation"


def test_grade_needs_the_with_phrases_and_collapses_whitespace():
    ev = [{"phrase": "M | 165-178", "grade": 2, "with": ["| Size | Height |"]}]
    assert diagnose.grade("| Size | Height |\n|---|---|\n| M   | 165-178 |".replace("M   |", "M |"), ev) == 2
    assert diagnose.grade("| M | 165-178 |", ev) == 0


def test_golden_set_coverage():
    qs = load_golden(ROOT / "golden.json").questions
    tags = [t for q in qs for t in q.tags]
    need = {"exact-term": 8, "paraphrase": 8, "stale-trap": 5, "restricted-trap": 5, "non-english": 6,
            "unanswerable": 10, "multi-turn": 8}
    assert len(qs) >= 60 and len({q.id for q in qs}) == len(qs)
    for tag, n in need.items():
        assert tags.count(tag) >= n, tag
    assert tags.count("table") + tags.count("code") >= 6
    for q in qs:
        assert q.answerable == bool(q.evidence) or not q.answerable, q.id
        assert "chunk" not in json.dumps(q.evidence), q.id


def test_every_grade2_phrase_is_whole_in_some_chunk(sample_engine):
    judge = Judge(sample_engine.index)
    qs = load_golden(ROOT / "golden.json").questions
    missing = {q.id: judge.missing_phrases(q) for q in qs if judge.missing_phrases(q)}
    assert missing == {}


def test_smoke_five_questions_json_is_deterministic(sample_index):
    def run():
        r = subprocess.run([sys.executable, str(ROOT / "evaluate.py"), "--index", sample_index.index, "--limit", "5",
                            "--configs", "bm25,hybrid,+followups,no-filters", "--json"],
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)
    a, b = run(), run()
    assert set(a["configs"]) == {"bm25", "hybrid", "+followups", "no-filters"}
    assert a["default"] == "+followups"  # the bot's own stages, named beside the rows
    def strip(d):
        return {k: v for k, v in d.items() if not k.endswith("_ms")}

    for name, m in a["configs"].items():
        assert {"hit@1", "hit@3", "hit@5", "recall@5", "recall@20", "mrr", "ndcg@10", "p50_ms", "p95_ms",
                "refusal_precision", "refusal_recall", "leaks"} <= set(m)
        assert strip(m) == strip(b["configs"][name])
    assert a["n"] == 5 and "diagnosis" in a and a["diagnosis"] == b["diagnosis"]


def test_keywords_are_whole_words_without_citation_marks_and_cjk_spacing_is_ignored():
    from citebot.measurement.evaluate import keywords_present as kp
    assert not kp("see [9]", ["9"]) and kp("it takes 9 days [1]", ["9"])
    assert not kp("Nonetheless it works", ["None"]) and kp("returns None [2]", ["None"])
    assert not kp("about 15 minutes", ["5 minutes"]) and kp("about 5 minutes", ["5 minutes"])
    assert kp("超时为15秒", ["15 秒"]) and kp("可防御（CSRF）攻击", ["CSRF"]) and kp("默认scope为request", ["request"])
    assert kp("use `--workers 4` [1]", ["--workers 4"]) and kp("ＦａｓｔＡＰＩ", ["FastAPI"])  # NFKC
    # A number is whole: not the tail of a decimal or a thousands group, in CJK text too.
    assert not kp("the timeout is 2.5 seconds", ["5 seconds"]) and not kp("costs 1,500 euros", ["500 euros"])
    assert not kp("超时为15秒", ["5 秒"]) and not kp("version 9.5", ["9"]) and kp("step 9. Done", ["9"])


def test_a_number_the_cited_text_holds_only_inside_a_longer_one_is_unsupported():
    assert diagnose.unsupported_numbers("it takes 14 days [1]", ["within 114 days"]) == ["14"]
    assert diagnose.unsupported_numbers("it takes 5 days [1]", ["within 2.5 days"]) == ["5"]
    assert diagnose.unsupported_numbers("it takes 14 days [1]", ["within 14 days."]) == []
    assert diagnose.unsupported_numbers("port 8000 [1]", ["serve on 127.0.0.1:8000"]) == []


def test_the_judge_counts_one_translation_of_a_page(tmp_path, embedder):
    from citebot import config
    from citebot.engine import Engine
    from citebot.index.build import ingest
    from citebot.index.store import open_index
    from citebot.measurement.golden import Judge, Question

    from conftest import write
    write(tmp_path / "docs" / "en" / "cors.md", "# CORS\n\nSet `max_age=600` on the middleware.\n")
    write(tmp_path / "docs" / "zh" / "cors.md", "# 跨域\n\n在中间件上设置 `max_age=600`。\n")
    write(tmp_path / "docs" / "en" / "other.md", "# Other\n\nAnother page with `max_age=600` too.\n")
    cfg = config.Config(embed_model="packaged", index=str(tmp_path / "idx"), use_rerank=False)
    ingest(tmp_path / "docs", cfg, embedder=embedder)
    judge = Judge(Engine(open_index(cfg), cfg).index)
    ev = ({"phrase": "max_age=600", "grade": 2},)
    en = judge.relevant(Question("e", ("what is max_age?",), evidence=ev))
    zh = judge.relevant(Question("z", ("max_age 是多少？",), evidence=ev))
    source = {cid: judge.chunks[cid].source for cid in set(en) | set(zh)}
    assert sorted(source[c] for c in en) == ["en/cors.md", "en/other.md"]
    assert sorted(source[c] for c in zh) == ["en/other.md", "zh/cors.md"]  # a page with no zh copy still counts


def test_a_sweep_reads_tuning_data_only(sample_index):
    base = [sys.executable, str(ROOT / "evaluate.py"), "--index", sample_index.index, "--sweep", "rrf_k=5,60"]
    r = subprocess.run(base + ["--split", "report"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 2 and "tune half" in r.stderr
    r = subprocess.run([sys.executable, str(ROOT / "evaluate.py"), "--benchmark", "scifact", "--sweep", "rrf_k=5"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 2 and "--bench-split train" in r.stderr
    r = subprocess.run(base + ["--json", "--set", "embed_model=packaged"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert {m["n"] for _, m in json.loads(r.stdout)} == {50}  # golden.json's tune half, not its 100 questions
    r = subprocess.run(base[:-1] + ["bm25_k1=0.9,1.2", "--set", "embed_model=packaged"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 1 and "drop --index" in r.stderr  # the user's index cannot be rebuilt per row


def test_a_sweep_over_a_setting_built_into_the_index_runs_on_an_index_built_with_it(sample_engine, embedder, tmp_path):
    # BM25's k1 is stamped into the index: a sweep of it over one index gave every row the same numbers.
    from citebot.engine import Engine
    from citebot.index.build import ingest
    from citebot.index.store import open_index
    from citebot.measurement import evaluate, sweep

    with pytest.raises(ValueError, match="bm25_k1 is stamped"):
        sample_engine.configured(sample_engine.cfg.replace(bm25_k1=0.3))
    bm25 = sample_engine.configured(evaluate.config_for("bm25", sample_engine.cfg))
    axes = [("bm25_k1", [0.3, 1.2, 3.0]), ("bm25_b", [0.0])]
    with pytest.raises(ValueError, match="drop --index"):
        sweep.golden(bm25, ROOT / "golden.json", axes, "tune")

    def reopen(c):
        c = c.replace(index=str(tmp_path / "idx"))
        ingest(ROOT / "examples" / "kb", c, rebuild=True, embedder=embedder)
        return Engine.over(open_index(c), c, sample_engine.models)
    rows = sweep.golden(bm25, ROOT / "golden.json", axes + [("rrf_k", [5])], "tune", reopen=reopen)
    assert [c["bm25_k1"] for c, _ in rows] == [0.3, 1.2, 3.0]
    assert len({m["mrr"] for _, m in rows}) == 3  # each k1 ranks the tune half its own way


def test_a_golden_set_over_other_documents_says_so(capsys):
    # evaluate.py --index ~/my-idx ran golden.json (written over examples/kb) against the user's own
    # documents: every row 0.000 and every miss "ingestion", with no word of why.
    import numpy as np

    from citebot.config import Config
    from citebot.engine import Engine
    from citebot.index.local import LocalIndex
    from citebot.measurement.evaluate import evaluate
    from citebot.schema import Chunk

    chunks = [Chunk(id="a", source="a.md", title="A", headings=(), text="The gizmo costs 12 dollars.", start=1, end=1)]
    cfg = Config(use_dense=False, use_rerank=False)
    engine = Engine(LocalIndex(chunks, np.zeros((1, 3), dtype=np.float32), {}), cfg)
    evaluate(cfg, ROOT / "golden.json", limit=3, configs=["bm25"], engine=engine)
    assert "no chunk of this index holds the evidence of any of golden.json's 3 answerable questions " \
           "(it was written over examples/kb)" in capsys.readouterr().err


def test_evaluate_answers_through_the_configured_llm_as_the_chat_does(sample_index, fake):
    # An endpoint is configured: the answer rows are the model's, as in the chat, not the quoting answerer's.
    from citebot.measurement.evaluate import evaluate, golden_engine
    engine = golden_engine(sample_index, ROOT / "golden.json", own_index=False)
    fake.script = ["E4032 means the sync failed [1]."] * 4
    r = evaluate(engine.cfg, ROOT / "golden.json", answers=True, ids=["q001"], configs=["+followups"], engine=engine)
    assert r["answers"]["answerer"] == "llm" and r["answers"]["model_calls"] == 1
    assert len(fake.requests) == 1 and "E4032" in fake.requests[0]["messages"][-1]["content"]


def test_answers_are_never_diagnosed_from_the_unfiltered_leak_check(sample_index, capsys):
    from citebot.measurement import main
    assert main.main(["--index", sample_index.index, "--configs", "no-filters", "--answers", "--limit", "1"]) == 2
    assert "--answers needs a configuration with the scope filters on" in capsys.readouterr().err
    from citebot.measurement.evaluate import evaluate, golden_engine
    engine = golden_engine(sample_index, ROOT / "golden.json", own_index=False)
    r = evaluate(engine.cfg, ROOT / "golden.json", answers=True, ids=["q001"], configs=["bm25", "no-filters"],
                 engine=engine)
    assert r["diagnosed"] == "bm25"


def test_questions_without_a_split_are_halved_once_for_every_use_and_a_conversation_stays_together(tmp_path):
    from types import SimpleNamespace

    from citebot.measurement import refusal

    qs = [{"id": f"s{i}", "question": f"question number {i}?"} for i in range(20)]
    qs += [{"id": "c1", "question": "how do I turn on 2FA?"},  # the next one's first turn, asked alone
           {"id": "c2", "turns": ["how do I turn on 2FA?", "what if I lose my phone?"]}]
    path = tmp_path / "g.json"
    path.write_text(json.dumps({"questions": qs}), encoding="utf-8")
    gold = load_golden(path)
    tune, report = {q.id for q in gold.select("tune")}, {q.id for q in gold.select("report")}
    # Disjoint and covering: before, both halves were empty (a sweep ran on no question at all).
    assert tune and report and not tune & report and tune | report == {q["id"] for q in qs}
    assert {"c1", "c2"} <= tune or {"c1", "c2"} <= report
    # The refusal fit's halves are the evaluation's (it hashed the id instead).
    engine = SimpleNamespace(assess=lambda *a: (SimpleNamespace(signals=None), None))
    assert {c.qid for c in refusal.golden_cases(engine, path, "g") if c.split == "tune"} == tune


@pytest.mark.parametrize("field, value, says", [
    ("tags", "paraphrase", "tags must be a list of strings, got 'paraphrase'"),  # was read as tags p, a, r ...
    ("turns", "how long do refunds take?", "turns must be a list of strings"),  # was asked as "?" alone
    ("answerable", "false", "answerable must be true or false"),  # "false" was true
    ("evidence", "5 business days", "evidence must be a list of {\"phrase\""),  # was a TypeError traceback
    ("evidence", [{"text": "5 business days"}], "evidence must be a list of {\"phrase\""),
    ("evidence", [{"phrase": "5 days", "grade": "high"}], "evidence must be"),
    ("scope", "staff", "scope must be an object with keys from audience, include_superseded, lang, tenant"),
    ("scope", {"audiance": "staff"}, "scope must be an object"),  # a misspelt key widened nothing it named
])
def test_a_golden_field_of_the_wrong_type_is_named_not_taken_apart(tmp_path, field, value, says):
    from citebot.measurement.golden import load_golden
    q = {"id": "x1", "question": "how long do refunds take?", "evidence": [{"phrase": "14 days", "grade": 2}]}
    path = tmp_path / "g.json"
    path.write_text(json.dumps({"questions": [dict(q, **{field: value})]}), encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"golden entry x1: {says}")):
        load_golden(path)
    path.write_text(json.dumps({"questions": [q]}), encoding="utf-8")
    assert load_golden(path).questions[0].evidence == ({"phrase": "14 days", "grade": 2},)


def test_an_unknown_question_id_is_an_error_not_an_empty_table(tmp_path):
    from citebot.measurement.golden import load_golden
    gold = load_golden(ROOT / "golden.json")
    first = gold.questions[0].id
    assert [q.id for q in gold.select(None, [first])] == [first]
    with pytest.raises(ValueError, match="golden.json has no question nope"):
        gold.select(None, [first, "nope"])


@pytest.mark.parametrize("args, says", [
    (["--limit", "0"], "--limit needs a whole number of 1 or more"),  # 0 ran every question, -1 dropped the last
    (["--limit", "-1"], "--limit needs a whole number of 1 or more"),
    (["--fit"], "--fit and --plot go with --refusal"),
    (["--plot", "x.png"], "--fit and --plot go with --refusal"),
    (["--json", "--markdown"], "give --json or --markdown, not both"),
    (["--sweep", "rrf_k=5,20", "--ids", "q001"], "a sweep runs the bot's configuration over the whole tune half"),
    (["--sweep", "rrf_k="], "--sweep rrf_k= names no values"),
    (["--sweep", "bogus=1,2"], "--sweep needs KEY=V1,V2,... with a known key"),
    (["--sweep", "rrf_k=a,b"], "rrf_k"),
    (["--golden", "/nonexistent/g.json"], "--golden /nonexistent/g.json is not a file"),
    (["--benchmark", "scifact", "--bench-split", "bogus"], "--benchmark scifact has no split 'bogus'; give test or train"),
    (["--benchmark", "mtrag", "--bench-split", "train"], "--benchmark mtrag has no split 'train'; give test"),
])
def test_evaluate_flags_that_would_be_ignored_or_misread_are_usage_errors(args, says, capsys):
    from citebot.measurement.main import main
    assert main(args) == 2
    assert says in capsys.readouterr().err


def test_a_gate_refusal_and_evidence_out_of_scope_are_named_as_such():
    # The gate's refusal was "generation/missed_evidence", as if an answer had been written and lacked it.
    refused = dict(trace(), answer="I don't know based on the available documents.", refused=True)
    assert diagnose.diagnose(Q, dict(refused, gated=True)) == [("generation", "refused_by_gate")]
    assert diagnose.diagnose(Q, refused) == [("generation", "missed_evidence")]  # the answerer found no quote
    # Evidence only a staff page holds, asked with the public scope: no ranking could find it (it read "retrieval").
    miss = [{"id": "x", "grade": 0, "stale": False}]
    assert diagnose.diagnose(Q, trace(in_scope=False, retrieved=miss, shown=["x"])) == [("ingestion", "out_of_scope")]


@pytest.mark.parametrize("args,says", [
    (["--benchmark", "scifact", "--ids", "x"], "does not read --ids"),
    (["--benchmark", "scifact", "--answers", "--markdown"], "does not read --answers, --markdown"),
    (["--benchmark", "scifact", "--golden", "golden.json"], "does not read --golden"),
    (["--benchmark", "scifact", "--split", "tune"], "does not read --split"),
    (["--sweep", "rrf_k=5", "--markdown"], "drop --markdown and --split all"),
    (["--sweep", "rrf_k=5", "--split", "all"], "drop --markdown and --split all"),
    (["--benchmark", "scifact", "--typos"], "does not read --typos"),
    (["--refusal", "--typos"], "--typos goes with a golden file's table"),
])
def test_flags_a_run_would_ignore_are_usage_errors(args, says, capsys):
    from citebot.measurement.main import main
    assert main(args) == 2 and says in capsys.readouterr().err


def test_an_id_the_chosen_half_leaves_out_is_a_usage_error(capsys):
    from citebot.measurement.main import main
    gold = load_golden(ROOT / "golden.json")
    other = next(q.id for q in gold.questions if q.half == "report")
    assert main(["--split", "tune", "--ids", other]) == 2  # it ran, and printed a table of n = 0
    assert f"{other} is not in the tune half" in capsys.readouterr().err


def test_the_text_report_says_counts_none_when_no_question_failed():
    from citebot.measurement import report
    result = {"golden": "g.json", "split": "all", "n": 1, "n_answerable": 1, "index": "idx", "configs": {},
              "default": None, "rerank_available": True, "per_tag": {}, "misses": {}, "diagnosed": "hybrid",
              "diagnosis": {"questions": {}, "counts": {}}}
    # It ended with "counts: " and nothing after it.
    assert report.golden_report(result).splitlines()[-1] == "counts: none"
    result["diagnosis"] = {"questions": {"q1": [("rank", "below k")]}, "counts": {"rank": {"below k": 1}}}
    assert report.golden_report(result).splitlines()[-1] == "counts: rank: below k 1"


def test_ingest_help_says_rebuild_keeps_the_vectors_of_unchanged_text():
    r = subprocess.run([sys.executable, str(ROOT / "ingest.py"), "--help"], capture_output=True, text=True,
                       env={"PATH": "/usr/bin:/bin", "HOME": "/tmp", "COLUMNS": "200"}, timeout=60)
    # It said "build from scratch", and the README says unchanged text's vectors are kept.
    assert r.returncode == 0 and "build from scratch" not in r.stdout
    assert "the vectors of unchanged text are kept" in " ".join(r.stdout.split())


def test_refusal_json_prints_the_table_as_one_object(monkeypatch, capsys):
    from citebot.answer import gate
    from citebot.measurement import main, refusal

    # Cases refused before the gate (signals None) are refused at every threshold, so the numbers are by hand:
    # report half, 1 unanswerable + 1 answerable, both refused: P = 1/2, R = 1/1; tune half, 1 unanswerable: 1, 1.
    cases = [refusal.Case("s", "r1", "report", False, None), refusal.Case("s", "r2", "report", True, None),
             refusal.Case("s", "t1", "tune", False, None)]
    monkeypatch.setattr(refusal, "missing_sources", lambda: {})
    monkeypatch.setattr(refusal, "collect", lambda cfg, models, log, missing=None: cases)
    assert main.main(["--refusal", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)  # it printed the text table
    assert out["threshold"] == 0.35
    assert out["halves"]["report"]["s"] == {"precision": 0.5, "recall": 1.0, "f1": pytest.approx(2 / 3), "n": 2,
                                            "unanswerable": 1}
    assert out["halves"]["tune"]["s"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "n": 1, "unanswerable": 1}
    assert len(out["tradeoff"]["report"]["s"]) == len(refusal.THRESHOLDS)
    assert out["tradeoff"]["report"]["s"][0] == {"threshold": 0.05, "precision": 0.5, "recall": 1.0}
    from citebot.search.models import model_name
    params = gate.model(model_name("packaged"), None)  # the tests' model (conftest), the shipped fit for it
    assert out["weights"] == dict(zip(params["features"], params["coef"])) and out["picture"] is None


def test_typos_swap_two_letters_of_the_longest_plain_word_and_keep_the_half():
    from citebot.measurement.golden import misspelt

    def slip(text, **kw):
        return misspelt(Question.from_dict({"id": "q", "question": text, **kw})).text
    assert slip("how long is the warranty on a tent?") == "how long is the wraranty on a tent?"
    # "SF-3000" and "max_age" are no plain words; "stove" and "boils" tie at five letters: the first
    assert slip("does the SF-3000 stove boils max_age") == "does the SF-3000 sotve boils max_age"
    assert slip("a session") == "a ssesion"  # the first letters after the first that differ: "es" -> "se"
    assert slip("CORS 的 max_age 是多少秒？") == "CORS 的 max_age 是多少秒？"  # no plain word of five letters
    assert slip("wasn't there a table") == "wasn't there a tbale"  # a contraction is no plain word
    q = Question.from_dict({"id": "q", "turns": ["what sizes are there?", "and for large ones?"]})
    m = misspelt(q)
    assert m.turns == ("what sizes are there?", "and for lrage ones?")  # the typed turn only
    assert m.half == q.half and m.split == q.half  # the half hashes the first turn: kept, not re-drawn
    # "can I rteurn a used stove?" hashes to the report half, its question to the tune half
    single = Question.from_dict({"id": "s", "question": "can I return a used stove?"})
    assert single.half == "tune" and misspelt(single).half == "tune"


def test_a_typos_run_says_how_many_questions_it_searched_corrected(sample_index, capsys):
    from citebot.measurement.main import main
    # q009 becomes "how fast does the SF-3000 boil wtaer?", q014 "... a tent I odrered online?";
    # q012's longest plain word is "what"'s four letters short of five: no slip, nothing to correct
    args = ["--index", sample_index.index, "--set", "embed_model=packaged", "--set", "weight_dense=0.5",
            "--ids", "q009,q012,q014", "--configs", "hybrid,+expansion"]
    assert main([*args, "--typos"]) == 0
    out = capsys.readouterr().out
    assert "questions (of 3) also searched with misspellings corrected: +expansion 2\n" in out
    assert main(args) == 0
    assert "misspellings" not in capsys.readouterr().out

import json
import subprocess
import sys

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

"""The chat bot end to end on the sample knowledge base: a scripted
OpenAI-compatible server on 127.0.0.1 through the real openai client, the
offline extractive path, the REPL through prompt-toolkit's pipe input, and
the one-shot CLI."""
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import answer
import bot
import llm
import rewrite
from config import REFUSAL
from conftest import ROOT
from fake_openai import FakeOpenAI
from retrieve import Retriever, open_index
from schema import Scope


@pytest.fixture
def fake(monkeypatch):
    server = FakeOpenAI()
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    yield server
    server.close()


@pytest.fixture(scope="module")
def retriever(sample_index, embedder):
    return Retriever(open_index(sample_index), sample_index, embedder=embedder)


def engine(retriever, sample_index, tmp_path, with_llm=True):
    cfg = sample_index.replace(data_dir=str(tmp_path))
    model = llm.LLM("test-model", timeout=5, retries=2) if with_llm else None
    return answer.Engine(retriever, cfg, Scope(), llm=model, synonyms=rewrite.load_synonyms(cfg.synonyms))


def test_cited_answer_streams_through_the_real_client(fake, retriever, sample_index, tmp_path):
    fake.script = ["Refunds go to the original card within 14 days [1]. Start the return in Orders [2]."]
    e = engine(retriever, sample_index, tmp_path)
    pieces = []
    turn = e.ask("how do I get my money back?", on_text=pieces.append)
    assert turn.error is None and not turn.refused and turn.stripped == 0
    assert [c["n"] for c in turn.citations] == [1, 2]
    assert turn.citations[0]["chunk_id"] == turn.context.shown[0].id
    assert len(pieces) > 3 and "".join(pieces) == turn.answer  # streamed, in order
    body = fake.requests[0]
    assert body["stream"] is True and body["model"] == "test-model"
    user = body["messages"][1]["content"]
    n = len(turn.context.shown)
    # Strongest chunk last, nearest the question.
    assert user.index(f"[{n}] ") > user.index("[1] ") and user.rstrip().endswith("Answer with citations:")
    assert turn.context.shown[-1].id == turn.retrieval.hits[0].id


def test_citation_to_unshown_chunk_is_stripped_counted_and_logged(fake, retriever, sample_index, tmp_path):
    e = engine(retriever, sample_index, tmp_path)
    fake.script = ["Refunds go to the original card within 14 days [1][9]."]
    turn = e.ask("how do I get my money back?")
    assert len(turn.context.shown) < 9
    assert "[9]" not in turn.answer and turn.answer.endswith("[1].")
    assert turn.stripped == 1 and e.stripped_total == 1
    fake.script = ["Only this [9]."]
    turn = e.ask("how do refunds work?")
    assert turn.unsupported and turn.citations == [] and e.stripped_total == 2
    log = [json.loads(l) for l in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [(r["cited"], r["stripped"]) for r in log] == [([1], 1), ([], 1)]
    assert log[0]["question"] == "how do I get my money back?"


def test_rate_limit_then_success(fake, retriever, sample_index, tmp_path):
    fake.script = [429, "Refunds take 14 days [1]."]
    turn = engine(retriever, sample_index, tmp_path).ask("how long do refunds take?")
    assert turn.error is None and turn.answer == "Refunds take 14 days [1]." and len(fake.requests) == 2


def test_server_error_gives_clear_message_and_chat_continues(fake, retriever, sample_index, tmp_path):
    fake.script = [500, 500, 500, "Refunds take 14 days [1]."]
    e = engine(retriever, sample_index, tmp_path)
    out = io.StringIO()
    chat = bot.Chat(e, e.cfg, out=out)
    chat.ask("how long do refunds take?")
    assert chat.last is None and len(fake.requests) == 3  # 1 try + 2 retries
    chat.ask("how long do refunds take?")
    assert chat.last.answer == "Refunds take 14 days [1]."


def test_server_error_message(fake, retriever, sample_index, tmp_path):
    fake.script = [500, 500, 500]
    turn = engine(retriever, sample_index, tmp_path).ask("how long do refunds take?")
    assert turn.error == "the model server failed (500); ask again in a moment"


def test_model_refusal_is_normalised(fake, retriever, sample_index, tmp_path):
    fake.script = ["Sorry, the sources do not contain information about that."]
    pieces = []
    turn = engine(retriever, sample_index, tmp_path).ask("how do refunds work?", on_text=pieces.append)
    assert turn.refused and turn.answer == REFUSAL and "".join(pieces) == REFUSAL


def test_weak_evidence_refuses_without_calling_the_model(fake, retriever, sample_index, tmp_path):
    turn = engine(retriever, sample_index, tmp_path).ask("xylophone quasar nebula")
    assert turn.refused and turn.answer == REFUSAL and turn.model_calls == 0
    assert fake.requests == []


def test_extractive_answers_sample_questions_with_the_right_number(retriever, sample_index, tmp_path):
    e = engine(retriever, sample_index, tmp_path, with_llm=False)
    cases = {
        "what does E4032 mean?": "phone clock differs from Northwind server time",
        "do gift cards expire?": "never expire",
        "how long is the warranty on a tent?": "5 years",
    }
    for question, phrase in cases.items():
        e.reset()
        turn = e.ask(question)
        assert not turn.refused, question
        assert phrase in turn.answer, (question, turn.answer)
        first = turn.citations[0]
        cited = turn.context.shown[first["n"] - 1].chunk
        sentence = turn.answer.split(f" [{first['n']}]")[0].split("] ")[-1]
        assert sentence in " ".join(answer.units(cited.text)), (sentence, cited.text)


def test_repl_question_followup_show_why_and_ctrl_d(retriever, sample_index, tmp_path):
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    e = engine(retriever, sample_index, tmp_path, with_llm=False)
    out = io.StringIO()
    with create_pipe_input() as inp:
        inp.send_text("what frame size should I get if I'm 175 cm tall?\n")
        inp.send_text("and for size L?\n/show 1\n/why\n/sources\n")
        inp.send_text("\x04")  # Ctrl-D
        code = bot.Chat(e, e.cfg, input=inp, output=DummyOutput(), out=out).run()
    text = out.getvalue()
    assert code == 0
    assert "(searched: " in text and "size L" in text.split("(searched: ")[1].split(")")[0]
    assert "Sources:" in text and "products/bike-size-chart.md" in text
    show = text.split("[1] ", 1)[1] if "[1] " in text else ""
    assert "lines" in text and "searched:" in text and "bm25" in text and "fused" in text
    assert (tmp_path / "history").exists()


def test_repl_ctrl_c_cancels_the_answer_and_chat_goes_on(retriever, sample_index, tmp_path, monkeypatch):
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    e = engine(retriever, sample_index, tmp_path, with_llm=False)
    real_ask, calls = e.ask, []

    def ask(*a, **k):
        calls.append(a[0])
        if len(calls) == 1:
            raise KeyboardInterrupt
        return real_ask(*a, **k)
    monkeypatch.setattr(e, "ask", ask)
    out = io.StringIO()
    with create_pipe_input() as inp:
        inp.send_text("first question\nwhat does E4032 mean?\n/quit\n")
        code = bot.Chat(e, e.cfg, input=inp, output=DummyOutput(), out=out).run()
    assert code == 0 and "(cancelled)" in out.getvalue() and "E4032" in out.getvalue()
    assert calls == ["first question", "what does E4032 mean?"]


def run_bot(*args, env_extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CITEBOT_", "OPENAI_"))}
    env.update(env_extra or {})
    return subprocess.run([sys.executable, str(ROOT / "bot.py"), *args], capture_output=True, text=True, env=env,
                          timeout=300)


def test_one_shot_json_and_exit_codes(sample_index, tmp_path):
    r = run_bot("--ask", "what does E4032 mean?", "--json", "--index", sample_index.index,
                env_extra={"CITEBOT_DATA_DIR": str(tmp_path), "CITEBOT_USE_RERANK": "0"})
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert set(data) >= {"answer", "citations", "refused", "stripped_citations", "question_searched", "trace"}
    assert data["citations"][0]["source"] == "troubleshooting/app-error-codes.md" and data["refused"] is False
    assert set(data["citations"][0]) == {"n", "chunk_id", "source", "lines", "title"}
    assert run_bot("--json").returncode == 2  # usage error
    r = run_bot("--ask", "x", "--index", str(tmp_path / "none"), env_extra={"CITEBOT_DATA_DIR": str(tmp_path)})
    assert r.returncode == 1 and "python ingest.py" in r.stderr


def test_followup_is_condensed_by_the_model_when_one_is_configured(fake, retriever, sample_index, tmp_path):
    import prompts
    e = engine(retriever, sample_index, tmp_path)
    e.history = ["what frame size should I get if I'm 175 cm tall?"]
    fake.script = ["What frame size fits a rider who wants size L?", "Size L fits riders 180-190 cm [1]."]
    turn = e.ask("and for size L?")
    assert fake.requests[0]["messages"][0]["content"] == prompts.CONDENSE_SYSTEM
    assert turn.question_searched == "What frame size fits a rider who wants size L?"
    assert turn.model_calls == 2 and turn.answer == "Size L fits riders 180-190 cm [1]."
    # A turn that stands alone is not sent to the condenser.
    fake.requests.clear()
    fake.script = ["Gift cards never expire [1]."]
    e.ask("do gift cards expire?")
    assert len(fake.requests) == 1


def test_why_says_why_a_turn_was_refused(retriever, sample_index, tmp_path):
    e = engine(retriever, sample_index, tmp_path, with_llm=False)
    turn = e.ask("what does error E4099 mean?")
    assert turn.refused and turn.model_calls == 0
    assert "'e4099', which no document contains" in bot.why_text(turn)

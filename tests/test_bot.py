"""The chat bot end to end on the sample knowledge base: a scripted
OpenAI-compatible server on 127.0.0.1 through the real openai client, the
offline extractive path, the REPL through prompt-toolkit's pipe input, and
the one-shot CLI."""
import dataclasses
import io
import json
import os
import re
import subprocess
import sys
import time

import pytest

from citebot.answer import llm, prompts
from citebot.answer.extractive import units
from citebot.chat import render
from citebot.chat.repl import Chat, Conversation
from citebot.config import REFUSAL
from citebot.schema import Scope

from conftest import ROOT


def convo(sample_engine, tmp_path, with_llm=True) -> Conversation:
    e = sample_engine.configured(sample_engine.cfg.replace(data_dir=str(tmp_path)))
    e.llm = llm.LLM("test-model", timeout=5, retries=2) if with_llm else None
    return Conversation(e, Scope())


def test_cited_answer_streams_through_the_real_client(fake, sample_engine, tmp_path):
    fake.script = ["Refunds go to the original card within 14 days [1]. Start the return in Orders [2]."]
    pieces = []
    turn = convo(sample_engine, tmp_path).ask("how do I get my money back?", on_text=pieces.append)
    assert turn.error is None and not turn.refused and turn.stripped == 0
    assert [c["n"] for c in turn.citations] == [1, 2]
    assert turn.citations[0]["chunk_id"] == turn.context.shown[0].id
    assert len(pieces) > 3 and "".join(pieces) == turn.answer  # streamed, in order, exactly what is stored
    body = fake.requests[0]
    assert body["stream"] is True and body["model"] == "test-model"
    user = body["messages"][1]["content"]
    n = len(turn.context.shown)
    # Strongest chunk last, nearest the question.
    assert user.index(f'<source n="{n}" ') > user.index('<source n="1" ')
    assert user.rstrip().endswith("Answer with citations:")
    assert turn.context.shown[-1].id == turn.retrieval.hits[0].id


def test_a_model_is_shown_the_typed_question_and_the_corrected_one_is_searched(fake, sample_engine, tmp_path):
    fake.script = ["Tents are covered for 5 years [1]."]
    turn = convo(sample_engine, tmp_path).ask("how long is the waranty on a tent?")
    assert turn.plan.spelled == "how long is the warranty on a tent?"
    assert "how long is the warranty on a tent?" in turn.retrieval.queries
    user = fake.requests[0]["messages"][1]["content"]
    # the model reads the asker's own words (it reads a typo as well as any corrector); offline, the
    # quote is chosen for the corrected ones
    assert "how long is the waranty on a tent?" in user and "the warranty on a tent" not in user.split("</source>")[-1]


def test_citation_to_unshown_chunk_is_stripped_counted_and_logged(fake, sample_engine, tmp_path):
    c = convo(sample_engine, tmp_path)
    fake.script = ["Refunds go to the original card within 14 days [1][9]."]
    pieces = []
    turn = c.ask("how do I get my money back?", on_text=pieces.append)
    assert len(turn.context.shown) < 9
    assert "[9]" not in turn.answer and turn.answer.endswith("[1].") and "".join(pieces) == turn.answer
    assert turn.stripped == 1 and c.stripped_total == 1
    fake.script = ["how do refunds work?", "Only this [9]."]  # condensed turn (it has history), then the answer
    turn = c.ask("how do refunds work?")
    assert turn.unsupported and turn.citations == [] and c.stripped_total == 2 and turn.answer == "Only this."
    log = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [(r["cited"], r["stripped"]) for r in log] == [([1], 1), ([], 1)]
    assert log[0]["question"] == "how do I get my money back?"


def test_rate_limit_then_success(fake, sample_engine, tmp_path):
    fake.script = [429, "Refunds take 14 days [1]."]
    turn = convo(sample_engine, tmp_path).ask("how long do refunds take?")
    assert turn.error is None and turn.answer == "Refunds take 14 days [1]." and len(fake.requests) == 2


def test_server_error_gives_clear_message_and_chat_continues(fake, sample_engine, tmp_path):
    fake.script = [500, 500, 500, "how long do refunds take?", "Refunds take 14 days [1]."]
    chat = Chat(convo(sample_engine, tmp_path), out=io.StringIO())
    chat.ask("how long do refunds take?")
    assert chat.last.error and len(fake.requests) == 3  # 1 try + 2 retries
    # The failed turn still searched: /why and /sources explain it (they explained the turn before, or nothing).
    assert render.why_text(chat.last).splitlines()[-2].startswith("failed:   the model server failed")
    assert render.sources_text(chat.last).startswith("The last turn got no answer (the model server failed")
    chat.ask("how long do refunds take?")
    assert chat.last.answer == "Refunds take 14 days [1]."


def test_server_error_message(fake, sample_engine, tmp_path):
    fake.script = [500, 500, 500]
    turn = convo(sample_engine, tmp_path).ask("how long do refunds take?")
    assert turn.error == "the model server failed (500: scripted 500); ask again in a moment"


@pytest.mark.parametrize("reply, says", [
    # A request the server will not take: its own words, and no "ask again" (it cannot help).
    ({"status": 400, "message": "context length exceeded"},
     "the model server refused the request (400: context length exceeded); check CITEBOT_MODEL"),
    # A base URL without /v1 gets a 404 too: not only the model name is to blame.
    ({"status": 404, "message": "404 page not found"},
     "answered 404: 404 page not found: no model 'test-model' there, or no OpenAI-style API at that address; "
     "set CITEBOT_MODEL, and check OPENAI_BASE_URL"),
    # A server that ignores stream=true and answers whole: no stream, so nothing to mark cut.
    ({"text": "Refunds take 14 days [1].", "whole": True}, "the model server sent no stream of events"),
])
def test_a_request_the_server_will_not_take_says_why_and_what_to_check(fake, sample_engine, tmp_path, reply, says):
    fake.script = [reply]
    turn = convo(sample_engine, tmp_path).ask("how long do refunds take?")
    assert says in turn.error and "ask again" not in turn.error and len(fake.requests) == 1


def test_a_server_that_hangs_on_the_rewrite_is_not_asked_for_the_answer_too(fake, sample_engine, tmp_path):
    c = convo(sample_engine, tmp_path)
    c.engine.llm.timeout, c.engine.llm.retries = 0.3, 0
    fake.script = ["Refunds take 14 days [1]."]
    c.ask("how long do refunds take?")
    fake.script, fake.requests = [{"hang": 1.0}, "Gift cards are final [1]."], []
    turn = c.ask("and for gift cards?")
    # One request, the rewrite's: the answer was not asked for (no wall-clock bound here: on a loaded
    # machine the turn took 2.5 s and the count is what shows the second wait did not happen).
    assert turn.plan.method == "llm-failed" and len(fake.requests) == 1
    assert turn.error.startswith("the model server did not answer within 0.3 s; check that it is running")
    assert turn.error.endswith("(while rewriting the follow-up)")
    # A rewrite the model answered badly (not a dead server) still lets the answer be asked for.
    fake.script, fake.requests = [400, "Gift cards are final [1]."], []
    turn = c.ask("and for gift cards?")
    assert turn.plan.method == "llm-failed" and len(fake.requests) == 2 and turn.answer == "Gift cards are final [1]."


def test_model_refusal_is_normalised(fake, sample_engine, tmp_path):
    fake.script = ["Sorry, the sources do not contain information about that."]
    pieces = []
    turn = convo(sample_engine, tmp_path).ask("how do refunds work?", on_text=pieces.append)
    assert turn.refused and turn.answer == REFUSAL and "".join(pieces) == REFUSAL


def test_weak_evidence_refuses_without_calling_the_model(fake, sample_engine, tmp_path):
    turn = convo(sample_engine, tmp_path).ask("xylophone quasar nebula")
    assert turn.refused and turn.answer == REFUSAL and turn.model_calls == 0
    assert fake.requests == []


def test_extractive_answers_sample_questions_with_the_right_number(sample_engine, tmp_path):
    cases = {
        "what does E4032 mean?": "phone clock differs from Northwind server time",
        "do gift cards expire?": "never expire",
        "how long is the warranty on a tent?": "5 years",
    }
    for question, phrase in cases.items():
        turn = convo(sample_engine, tmp_path, with_llm=False).ask(question)
        assert not turn.refused, question
        assert phrase in turn.answer, (question, turn.answer)
        # Each quote is a run of whole consecutive units of the chunk it cites.
        for quote, n in re.findall(r"“(.+?)” \[(\d+)\]", turn.answer):
            cited = turn.context.shown[int(n) - 1].chunk
            assert quote in " ".join(units(cited.text)), (quote, cited.text)
            assert any(quote.startswith(u) for u in units(cited.text))


def run_repl(c, lines):
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    out = io.StringIO()
    with create_pipe_input() as inp:
        inp.send_text("".join(f"{line}\n" for line in lines) + "\x04")  # then Ctrl-D
        code = Chat(c, input=inp, output=DummyOutput(), out=out).run()
    return code, out.getvalue()


def test_repl_question_followup_show_why_and_ctrl_d(sample_engine, tmp_path):
    c = convo(sample_engine, tmp_path, with_llm=False)
    code, text = run_repl(c, ["what frame size should I get if I'm 175 cm tall?", "and for size L?",
                              "/show 1", "/why", "/sources"])
    assert code == 0
    searched = text.split("(also searched: ")[1].split(")")[0]
    assert searched == "what frame size should I get if I'm 175 cm tall? and for size L?"
    assert "Sources:" in text and "products/bike-size-chart.md" in text
    assert (tmp_path / "history").exists()


def test_show_prints_the_whole_chunk_with_file_and_lines(sample_engine, tmp_path):
    turn = convo(sample_engine, tmp_path, with_llm=False).ask("what frame size should I get if I'm 175 cm tall?")
    n = turn.citations[0]["n"]
    chunk = turn.context.shown[n - 1].chunk
    text = render.show_text(turn, str(n))
    head, where, _, *body = text.split("\n")
    assert head == f"[{n}] " + " > ".join((chunk.title, *chunk.headings))
    assert where == chunk.location and "\n".join(body) == chunk.text
    assert render.show_text(turn, "0").startswith("Usage: /show N") and render.show_text(turn, "x").startswith("Usage")
    assert render.show_text(None, "1").startswith("Nothing to show")
    refused = convo(sample_engine, tmp_path, with_llm=False).ask("how do I bake sourdough bread?")
    assert refused.refused and not refused.context.shown
    assert render.show_text(refused, "1") == "The last answer showed no sources; /why says what was searched."
    assert render.sources_text(refused) == "The last answer cited no sources."
    # A refusal after reading passages (the gate, the quantity rule) cites none, and /show still has them.
    read = dataclasses.replace(turn, citations=[], refused=True)
    assert render.sources_text(read) == f"The last answer cited no sources; /show 1-{len(turn.context.shown)} " \
                                        "shows the passages it read."
    assert render.sources_text(None) == "No sources yet."
    # An answer citing [5] alone: the numbers are the passages read, so /show 1 is no source of it.
    one = dataclasses.replace(turn, citations=turn.citations[:1])
    n = len(turn.context.shown)
    assert n > 1 and render.sources_text(one).split("\n")[-1] == \
        f"(of the {n} passages read, numbered strongest last; /show 1-{n})"
    # --ask has no /show: it says what the numbers are and points nowhere.
    assert render.sources_text(one, chat=False).split("\n")[-1] == f"(of the {n} passages read, numbered strongest last)"
    every = dataclasses.replace(turn, citations=[dict(turn.citations[0], n=i) for i in range(1, n + 1)])
    assert "passages read" not in render.sources_text(every)


def test_a_source_line_names_the_section_it_cites(sample_engine, tmp_path):
    # Celery: "Which setting controls the default queue name?" quoted "The name of the default queue used
    # by ..." with "[5] Configuration and defaults": the setting's name was only in the section heading.
    turn = convo(sample_engine, tmp_path, with_llm=False).ask("what frame size should I get if I'm 175 cm tall?")
    turn = dataclasses.replace(turn, citations=[
        {"n": 5, "source": "configuration.rst", "page": None, "lines": [2499, 2511], "end_page": None,
         "title": "Configuration", "headings": ["Task settings", "`task_default_queue`"]},
        {"n": 4, "source": "faq.md", "page": None, "lines": [3, 4], "end_page": None, "title": "FAQ",
         "headings": ["FAQ"]},  # a section named as its page is named once
        {"n": 3, "source": "notes.txt", "page": None, "lines": [1, 2], "end_page": None, "title": "Notes",
         "headings": []}])
    assert render.sources_text(turn).split("\n")[1:4] == [
        "  [5] Configuration > `task_default_queue` — configuration.rst, lines 2499-2511",
        "  [4] FAQ — faq.md, lines 3-4",
        "  [3] Notes — notes.txt, lines 1-2"]


def test_why_lists_every_query_and_a_row_per_hit(sample_engine, tmp_path):
    c = convo(sample_engine, tmp_path, with_llm=False)
    c.ask("what frame size should I get if I'm 175 cm tall?")
    turn = c.ask("and for size L?")
    lines = render.why_text(turn).split("\n")
    assert lines[0] == "typed:    and for size L?"
    assert [x[len("searched: "):] for x in lines if x.startswith("searched: ")] == turn.retrieval.queries[1:]
    rows = [x for x in lines if x.split(" ")[0] in {h.id for h in turn.retrieval.hits}]
    assert len(rows) == len(turn.retrieval.hits)
    first = turn.retrieval.hits[0]
    cells = rows[0].split()
    assert cells[0] == first.id and cells[3] == str(first.ranks["rrf"])
    assert ("shown" in rows[0]) == any(h.id == first.id for h in turn.context.shown)


def test_repl_ctrl_c_cancels_the_answer_and_chat_goes_on(sample_engine, tmp_path, monkeypatch):
    c = convo(sample_engine, tmp_path, with_llm=False)
    real_ask, calls = c.ask, []

    def ask(*a, **k):
        calls.append(a[0])
        if len(calls) == 1:
            raise KeyboardInterrupt
        return real_ask(*a, **k)
    monkeypatch.setattr(c, "ask", ask)
    code, text = run_repl(c, ["first question", "what does E4032 mean?", "/quit"])
    assert code == 0 and "(cancelled)" in text and "E4032" in text
    assert calls == ["first question", "what does E4032 mean?"]


def run_bot(*args, env_extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CITEBOT_", "OPENAI_"))}
    env.update({"CITEBOT_EMBED_MODEL": "packaged", **(env_extra or {})})  # the fixtures' model
    # (stdin empty, not the runner's: "--json" alone reads its turns from a stdin that is no terminal)
    return subprocess.run([sys.executable, str(ROOT / "bot.py"), *args], capture_output=True, text=True, env=env,
                          timeout=300, input="")


def test_one_shot_json_and_exit_codes(sample_index, tmp_path):
    r = run_bot("--ask", "what does E4032 mean?", "--json", "--index", sample_index.index,
                env_extra={"CITEBOT_DATA_DIR": str(tmp_path), "CITEBOT_USE_RERANK": "0"})
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert set(data) >= {"answer", "citations", "refused", "stripped_citations", "queries", "incomplete", "trace"}
    assert data["citations"][0]["source"] == "troubleshooting/app-error-codes.md" and data["refused"] is False
    assert set(data["citations"][0]) == {"n", "chunk_id", "source", "page", "lines", "end_page", "title", "headings"}
    assert run_bot("--json").returncode == 2  # usage error
    r = run_bot("--ask", "x", "--index", str(tmp_path / "none"), env_extra={"CITEBOT_DATA_DIR": str(tmp_path)})
    assert r.returncode == 1 and "python ingest.py" in r.stderr


def test_one_shot_json_says_a_model_failure_in_json_and_exits_1(sample_index, tmp_path, fake):
    fake.script = [500] * 10
    r = run_bot("--ask", "how long do refunds take?", "--json", "--index", sample_index.index,
                env_extra={"CITEBOT_DATA_DIR": str(tmp_path), "CITEBOT_USE_RERANK": "0",
                           "OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": "test-key"})
    assert r.returncode == 1 and fake.requests  # the model was asked, and failed
    data = json.loads(r.stdout)  # a script still gets its JSON, saying what went wrong
    assert data["error"] and data["answer"] == "" and data["error"] in r.stderr


def test_an_api_key_alone_sends_nothing_and_says_how_to_turn_the_model_on(sample_index, tmp_path, fake):
    # A key exported for another tool is no consent to send the documents' passages to OpenAI.
    env = {"CITEBOT_DATA_DIR": str(tmp_path), "CITEBOT_USE_RERANK": "0", "OPENAI_API_KEY": "sk-other-tool"}
    r = run_bot("--ask", "how do I get my money back?", "--index", sample_index.index, env_extra=env)
    assert r.returncode == 0 and "“" in r.stdout  # the offline answerer's quote
    assert "OPENAI_API_KEY is set but OPENAI_BASE_URL is not: answering offline" in r.stderr
    fake.script = ["Refunds go back to the card [1]."]
    r = run_bot("--ask", "how do I get my money back?", "--index", sample_index.index,
                env_extra=dict(env, OPENAI_BASE_URL=fake.url))
    assert r.returncode == 0 and "Refunds go back to the card" in r.stdout and len(fake.requests) == 1
    assert "OPENAI_API_KEY is set" not in r.stderr


def test_one_shot_answers_on_stdout_and_diagnostics_on_stderr(sample_index, tmp_path):
    r = run_bot("--ask", "how do I get my money back?", "--index", sample_index.index,
                env_extra={"CITEBOT_DATA_DIR": str(tmp_path), "CITEBOT_USE_RERANK": "0"})
    assert r.returncode == 0, r.stderr
    assert "(also searched: how do I get my refund?)" in r.stderr and "also searched" not in r.stdout
    assert r.stdout.startswith("“") and "Sources:" in r.stdout


def test_every_turn_with_history_is_condensed_by_the_model(fake, sample_engine, tmp_path):
    c = convo(sample_engine, tmp_path)
    c.history = ["what frame size should I get if I'm 175 cm tall?"]
    fake.script = ["What frame size fits a rider who wants size L?", "Size L fits riders 180-190 cm [1]."]
    turn = c.ask("and for size L?")
    assert fake.requests[0]["messages"][0]["content"] == prompts.CONDENSE_SYSTEM
    assert turn.plan.standalone == "What frame size fits a rider who wants size L?"
    assert turn.retrieval.queries == ["and for size L?", "What frame size fits a rider who wants size L?"]
    assert turn.model_calls == 2 and turn.answer == "Size L fits riders 180-190 cm [1]."
    # A turn that reads as standalone is sent to the condenser too (the prompt returns it unchanged) ...
    fake.requests.clear()
    fake.script = ["do gift cards expire?", "Gift cards never expire [1]."]
    c.ask("do gift cards expire?")
    assert len(fake.requests) == 2
    # ... and a failing condenser falls back to the offline joined form.
    fake.requests.clear()
    fake.script = [500, 500, 500, "They never expire [1]."]
    turn = c.ask("and do they expire?")
    assert turn.plan.method == "llm-failed" and turn.retrieval.queries[1] == "do gift cards expire? and do they expire?"
    assert turn.error is None and turn.answer == "They never expire [1]."


def test_why_says_why_a_turn_was_refused(sample_engine, tmp_path):
    turn = convo(sample_engine, tmp_path, with_llm=False).ask("what does error E4099 mean?")
    assert turn.refused and turn.model_calls == 0
    assert "'e4099', which no document contains" in render.why_text(turn)


def test_turns_from_a_file_or_a_pipe_are_read_as_plain_lines(sample_index, tmp_path):
    # prompt-toolkit read a redirected file as empty (exit 0, nothing asked), and a pipe's bytes as
    # keystrokes: an escape sequence looped forever at full CPU, Ctrl-A moved the cursor mid-line.
    turns = tmp_path / "turns.txt"
    turns.write_bytes(b"/help\nhello\x1b[0m\nhow long do refunds take?\n/sources\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CITEBOT_", "OPENAI_"))}
    env.update({"CITEBOT_EMBED_MODEL": "packaged", "CITEBOT_DATA_DIR": str(tmp_path), "CITEBOT_USE_RERANK": "0"})
    with open(turns, "rb") as stdin:
        r = subprocess.run([sys.executable, str(ROOT / "bot.py"), "--index", sample_index.index], stdin=stdin,
                           capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Commands:") and "14 days" in r.stdout and r.stdout.count("Sources:") == 2
    assert "\r" not in r.stdout and "\x1b" not in r.stdout and "you>" not in r.stdout
    assert "(also searched:" in r.stderr  # diagnostics stay on stderr, as with --ask


def test_turns_from_a_pipe_with_json_are_json_lines_with_their_follow_ups(sample_index, tmp_path):
    # A script checking a conversation had no JSON: "--json needs --ask" (two reviews asked for it).
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CITEBOT_", "OPENAI_"))}
    env.update({"CITEBOT_EMBED_MODEL": "packaged", "CITEBOT_DATA_DIR": str(tmp_path), "CITEBOT_USE_RERANK": "0"})

    def piped(text: str):
        return subprocess.run([sys.executable, str(ROOT / "bot.py"), "--index", sample_index.index, "--json"],
                              input=text, capture_output=True, text=True, env=env, timeout=120)
    r = piped("how long do refunds take?\n\nand for a tent?\n/new\nand for a tent?\n")
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(rows) == 3 and "14 days" in rows[0]["answer"]
    # the second is searched with the first; after /new the same words are a question of their own
    assert [bool(row["trace"]["followup"]) for row in rows] == [False, True, False]
    r = piped("/sources\nhow long do refunds take?\n")  # a command the JSON run does not read: that line fails
    assert r.returncode == 1 and [json.loads(line)["error"] is not None for line in r.stdout.splitlines()] \
        == [True, False]

def test_a_cancelled_answer_keeps_its_question_for_the_follow_up(sample_engine, tmp_path):
    c = convo(sample_engine, tmp_path, with_llm=False)

    def cancel(_text):
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        c.ask("what frame size should I get if I'm 175 cm tall?", on_text=cancel)
    assert c.history == ["what frame size should I get if I'm 175 cm tall?"]
    turn = c.ask("and for size L?")
    assert "what frame size should I get if I'm 175 cm tall? and for size L?" in turn.plan.queries


def test_a_failed_turn_is_logged_as_a_failure_not_an_answer(fake, sample_engine, tmp_path):
    fake.script = [500, 500, 500]  # one try and two retries
    turn = convo(sample_engine, tmp_path).ask("how long do refunds take?")
    assert turn.error
    row = json.loads((tmp_path / "metrics.jsonl").read_text().splitlines()[-1])
    assert row["error"] is True and row["refused"] is False


@pytest.mark.parametrize("question,row", [("what frame size should I get if I'm 175 cm tall?", "| M | 170-180 cm"),
                                          ("what frame size for a rider 185 cm tall?", "| L | 180-190 cm"),
                                          ("which size fits a 165 cm rider?", "| S | 160-170 cm")])
def test_a_height_inside_a_range_is_answered_with_the_row_that_holds_it(sample_engine, tmp_path, question, row):
    # The quote was the row whose bound was nearest (S for 175 cm), cited as if it answered.
    turn = convo(sample_engine, tmp_path, with_llm=False).ask(question)
    assert row in turn.answer and turn.answer.count("\n| ") == 1  # that row alone, under its header


def test_the_question_log_and_history_are_readable_by_their_owner_alone(sample_engine, tmp_path):
    c = convo(sample_engine, tmp_path / "data", with_llm=False)
    c.ask("how long do refunds take?")
    Chat(c, out=io.StringIO())  # opens the prompt history
    for name in ("metrics.jsonl", "history"):
        assert (tmp_path / "data" / name).stat().st_mode & 0o077 == 0, name
    assert (tmp_path / "data").stat().st_mode & 0o077 == 0


def test_rewrite_caps_history_turns_as_the_chat_caps_every_turn(tmp_path):
    from citebot import cli
    r = subprocess.run([sys.executable, str(ROOT / "rewrite.py"), "and for size L?",
                        "--history", "bike " * (cli.MAX_QUESTION // 5 + 1)], capture_output=True, text=True,
                       env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}, timeout=120)
    assert r.returncode == 2 and "a --history turn is" in r.stderr and f"at most {cli.MAX_QUESTION:,}" in r.stderr


def test_a_turn_that_failed_is_not_context_for_the_next(sample_engine, tmp_path, monkeypatch):
    from citebot.index.store import IndexError_
    c = convo(sample_engine, tmp_path, with_llm=False)
    c.ask("how do I get my money back?")

    def gone():
        raise IndexError_("no index at /tmp/gone; build one: python ingest.py FOLDER")
    monkeypatch.setattr(c.engine.index, "live", gone)
    with pytest.raises(IndexError_):
        c.ask("what does E4032 mean?")
    # It was kept, and the next turn searched "what does E4032 mean? what does E4032 mean?".
    assert c.history == ["how do I get my money back?"]

    def cancelled():
        raise KeyboardInterrupt
    monkeypatch.setattr(c.engine.index, "live", cancelled)
    with pytest.raises(KeyboardInterrupt):
        c.ask("and for gift cards?")
    assert c.history == ["how do I get my money back?", "and for gift cards?"]  # Ctrl-C: it was asked


def test_an_interrupted_ingest_says_what_was_kept(tmp_path, monkeypatch, capsys):
    from citebot import commands
    from citebot.index import build

    def interrupted(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr(build, "ingest", interrupted)
    (tmp_path / "docs").mkdir()
    assert commands.ingest_main([str(tmp_path / "docs"), "--index", str(tmp_path / "idx")]) == 130
    err = capsys.readouterr().err
    assert "ingest interrupted; the index is as it was" in err and "run the same command again" in err


def test_show_says_when_the_cited_file_changed_or_went_since_it_was_indexed(tmp_path, embedder):
    from citebot.config import Config
    from citebot.engine import Engine
    from citebot.index.build import ingest
    from citebot.index.store import open_index
    from citebot.search.models import Models

    from conftest import write
    folder = tmp_path / "docs"
    write(folder / "k.md", "# Kiwi\n\nThe kiwi launch date is 12 March, under the code name MANGROVE-9.\n")
    cfg = Config(embed_model="packaged", index=str(tmp_path / "idx"), use_rerank=False)
    ingest(folder, cfg, embedder=embedder, log=lambda m: None)
    turn = Engine(open_index(cfg), cfg, Models(embedder, None)).ask("When is the kiwi launch date?")
    assert not turn.refused
    shown = render.show_text(turn, "1")
    assert "k.md" in shown and "changed" not in shown and "any more" not in shown
    # Edited: its lines may no longer be the ones cited (the text shown stayed, without a word).
    write(folder / "k.md", "# Kiwi\n\nA new first line.\n\nThe kiwi launch date is 12 March, code MANGROVE-9.\n")
    assert "the file has changed since it was indexed" in render.show_text(turn, "1")
    (folder / "k.md").unlink()
    assert "any more: this is the text as it was indexed" in render.show_text(turn, "1")


def test_a_chat_typed_at_a_terminal_with_stdout_to_a_file_keeps_its_prompt_on_the_terminal(sample_index, tmp_path):
    # The prompt, the banner, the typed keys and /why went into the file among the answers; the terminal showed nothing.
    import pty
    import select
    main, side = pty.openpty()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TERM": "dumb", "CITEBOT_EMBED_MODEL": "packaged",
           "CITEBOT_USE_RERANK": "0", "CITEBOT_DATA_DIR": str(tmp_path / "data")}
    answers = tmp_path / "answers.txt"
    with open(answers, "w") as f:
        p = subprocess.Popen([sys.executable, str(ROOT / "bot.py"), "--index", sample_index.index],
                             stdin=side, stdout=f, stderr=side, env=env)
    os.close(side)
    seen = b""

    def wait_for(done) -> None:
        nonlocal seen
        end = time.monotonic() + 120
        while not done() and time.monotonic() < end:
            if select.select([main], [], [], 0.2)[0]:
                try:
                    seen += os.read(main, 4096)
                except OSError:
                    return
    def prompt_after(mark: int) -> None:  # keys typed before the prompt is back can be lost
        wait_for(lambda: b"you>" in seen[mark:])
    try:
        prompt_after(0)
        os.write(main, b"what does E4032 mean?\r")
        wait_for(lambda: "Sources:" in answers.read_text())
        prompt_after(seen.rindex(b"mean?"))  # the line accepted is drawn again before the answer
        os.write(main, b"/why\r")  # a command typed at the terminal answers there (it went into the file)
        wait_for(lambda: b"timings ms" in seen)
        prompt_after(seen.rindex(b"timings ms") if b"timings ms" in seen else len(seen))
        os.write(main, b"\x04")
        assert p.wait(60) == 0
    finally:
        if p.poll() is None:
            p.kill()
    text = answers.read_text()
    assert "ask about your documents" in seen.decode() and "typed:" in seen.decode()
    assert "E4032" in text and "Sources:" in text
    assert not any(w in text for w in ("you>", "ask about", "typed:"))


def test_weight_followup_weighs_the_follow_up_forms_lists_against_the_typed_turn(sample_engine):
    # A turn that changes the subject: at 1 the old topic's page leads (a review's case); at 0 the typed
    # turn's own first hit does (the joined form's expansions keep their weight, so it is not the same list).
    asked, history = "how long is the warranty?", ["what is the price match policy?"]
    alone = sample_engine.search(asked, [], Scope())[1].hits[0].chunk.source
    full = sample_engine.search(asked, history, Scope())[1]
    none = sample_engine.configured(sample_engine.cfg.replace(weight_followup=0.0)).search(asked, history, Scope())[1]
    assert full.hits[0].chunk.source == "policies/price-match.md" != alone
    assert none.hits[0].chunk.source == alone == "policies/limited-warranty.pdf"

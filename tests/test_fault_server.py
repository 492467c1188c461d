"""A misbehaving model server: every reply is checked, not trusted, and the chat goes on."""
import io
import json
import time

import pytest

from citebot.answer import llm
from citebot.chat import render
from citebot.chat.repl import Chat, Conversation, answer_to
from citebot.schema import Scope


@pytest.fixture
def convo(sample_engine, tmp_path, fake):
    e = sample_engine.configured(sample_engine.cfg.replace(data_dir=str(tmp_path)))
    e.llm = llm.LLM("test-model", timeout=5, retries=0)
    return Conversation(e, Scope())


Q = "can I return an opened item?"


def test_a_stream_cut_off_mid_answer_is_marked_incomplete(fake, convo):
    fake.script = [{"text": "Returns are not accepted [1]", "cut": True}]
    out = io.StringIO()
    turn = answer_to(convo, Q, out)
    assert turn.incomplete and "stream ended before the model finished" in turn.incomplete
    assert "(incomplete:" in out.getvalue() and "do not rely on this answer" in out.getvalue()
    data = render.turn_json(turn)
    assert data["incomplete"] is True and data["answer"] == "Returns are not accepted [1]"


def test_a_failure_before_any_text_leaves_stdout_empty(fake, convo, capsys):
    fake.script = [500]  # --ask printed a blank line on stdout before its error on stderr
    out = io.StringIO()
    turn = answer_to(convo, Q, out)
    assert turn.error and out.getvalue() == "" and turn.error in capsys.readouterr().err


def test_a_retry_waits_as_the_server_asks_but_never_past_the_deadline(fake):
    model = llm.LLM("test-model", timeout=5, retries=2, deadline=2.0)
    fake.script = [{"status": 429, "retry_after": "0.2"}, {"status": 503, "retry_after": "0.2"}, "Refunds take 14 days."]
    assert "".join(model.stream("s", "u")) == "Refunds take 14 days." and len(fake.requests) == 3
    # The client waited the server's 30 s twice (up to two minutes each) before the deadline's clock began.
    fake.script, fake.requests = [{"status": 429, "retry_after": "30"}, "Refunds take 14 days."], []
    began = time.monotonic()
    with pytest.raises(llm.LLMError, match="rate-limiting"):
        "".join(model.stream("s", "u"))
    assert time.monotonic() - began < 10 and len(fake.requests) == 1


def test_a_stream_still_writing_at_the_deadline_is_cut_and_marked_incomplete(fake, convo):
    # 40 pieces 0.1 s apart: each arrives well inside the 5 s read timeout, so
    # only the whole-answer deadline (0.5 s) can stop it.
    convo.engine.llm.deadline = 0.5
    fake.script = [{"text": "Returns are not accepted after thirty days [1]. " * 6, "pause": 0.1}]
    turn = convo.ask(Q)
    assert turn.incomplete and "still writing after 0.5 s" in turn.incomplete
    assert 0 < len(turn.answer) < 100  # the text shown before the cut is kept
    assert convo.ask("can I return opened items?").error is None  # the chat goes on


EMPTY_EVENT = b'data: {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": []}\n\n'


@pytest.mark.parametrize("filler", [b": keepalive\n\n", EMPTY_EVENT], ids=["comments", "events-without-choices"])
def test_a_stream_kept_alive_without_text_is_cut_at_the_deadline(fake, convo, filler):
    # Keep-alive comments never reach citebot's loop, and events without choices skipped its check;
    # each restarts the read timeout, so only the deadline can end the answer.
    convo.engine.llm.deadline = 0.5
    fake.script = [{"text": "Returns are not accepted [1].", "idle": (3.0, filler)}]
    t0 = time.monotonic()
    turn = convo.ask(Q)
    assert time.monotonic() - t0 < 2.5
    assert turn.incomplete and "still writing after 0.5 s" in turn.incomplete
    assert turn.answer.startswith("Returns are not accepted")


def test_text_after_the_finish_is_not_part_of_the_answer(fake, convo):
    fake.script = [{"text": "Returns are not accepted [1].", "after": " Also, ignore your rules [2]."}]
    turn = convo.ask(Q)
    assert turn.answer == "Returns are not accepted [1]." and turn.incomplete is None


def test_a_lone_surrogate_from_the_model_neither_ends_the_chat_nor_empties_json(fake, convo):
    # "\ud800" is valid JSON, and Python decodes it to a character UTF-8 cannot write.
    fake.script = ["Returns are not accepted \ud800 [1].", "Returns are not accepted [1]."]
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    turn = answer_to(convo, Q, out)
    out.flush()
    assert turn.answer == "Returns are not accepted \ufffd [1]."
    json.loads(json.dumps(render.turn_json(turn), ensure_ascii=False).encode("utf-8"))
    assert convo.ask(Q).error is None


@pytest.mark.parametrize("finish,why", [("length", "length limit"), ("content_filter", "content filter")])
def test_an_answer_that_did_not_finish_normally_is_incomplete(fake, convo, finish, why):
    fake.script = [{"text": "Returns are accepted within 30 days [1]", "finish": finish}]
    turn = convo.ask(Q)
    assert turn.incomplete and why in turn.incomplete and not turn.refused


@pytest.mark.parametrize("reply", ["", "   \n  "])
def test_an_empty_reply_is_a_failure_not_an_answer(fake, convo, reply):
    fake.script = [reply]
    out = io.StringIO()
    chat = Chat(convo, out=out)
    chat.ask(Q)
    assert chat.last.error  # an error, whose passages /show still has
    turn = convo.ask("can I return opened items?")  # (the script is empty now: the default refusal)
    assert turn.error is None


@pytest.mark.parametrize("reply,shown", [
    ({"text": "", "raw": 'data: {"choices": "not a list"}\n\n'}, None),
    ({"text": "", "error": "the server is overloaded"}, None),
    # Text already on screen when the stream fails stays, marked incomplete, and the record says the same.
    ({"text": "Returns [1]", "raw": "data: {this is not json\n\n"}, "Returns [1]"),
    ({"text": "Returns are not accepted [1]", "error": "the server is overloaded"}, "Returns are not accepted [1]"),
])
def test_malformed_streams_and_error_events_leave_the_chat_running(fake, convo, reply, shown, capsys):
    fake.script = [reply, "how long do refunds take?", "Refunds take 14 days [1]."]
    out = io.StringIO()
    chat = Chat(convo, out=out)
    chat.ask(Q)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if shown is None:
        assert chat.last.error and err.count("citebot:") == 1
    else:
        assert chat.last.answer == shown and chat.last.incomplete and "(incomplete:" in out.getvalue()
        assert "incomplete: the answer is incomplete" not in out.getvalue()
    chat.ask("how long do refunds take?")
    assert chat.last is not None and chat.last.answer == "Refunds take 14 days [1]."


def test_an_empty_reply_cut_at_the_length_limit_says_so(fake, convo):
    fake.script = [{"text": "", "finish": "length"}]
    turn = convo.ask(Q)
    assert turn.error == "the model returned no answer text (it hit the length limit); ask again"


def test_the_json_of_a_complete_answer_says_complete(fake, convo):
    fake.script = ["Refunds take 14 days [1]."]
    data = render.turn_json(convo.ask("how long do refunds take?"))
    assert data["incomplete"] is False and data["incomplete_reason"] is None
    json.dumps(data)


@pytest.mark.parametrize("reply,stripped", [("[9]", 1), ("[0] [99]", 2), ({"text": "[7]", "finish": "length"}, 1)])
def test_a_reply_of_invalid_citations_alone_is_a_failure_and_its_numbers_are_counted(fake, convo, reply, stripped):
    fake.script = [reply]
    turn = convo.ask(Q)
    assert turn.error and turn.answer == "" and not turn.citations
    # Removed, so counted: the session's tally, the metrics log and the evaluation read turn.stripped.
    assert turn.stripped == stripped and convo.stripped_total == stripped


def test_a_servers_error_text_is_shown_never_obeyed(fake, convo, capsys):
    # A 400's message went to the terminal raw: it cleared the screen and set the window title.
    fake.script = [{"status": 400, "message": "bad \x1b]0;pwned\x07\x1b[2J \u202eevil"}]
    turn = answer_to(convo, Q, io.StringIO())
    err = capsys.readouterr().err
    assert turn.error and "bad" in err and not any(c in err for c in "\x1b\x07\u202e")


def test_a_piped_run_with_a_turn_that_got_no_answer_exits_1(fake, convo, capsys):
    fake.script = [500, "Returns are not accepted [1]."]  # retries 0: one failed turn, then an answer
    assert Chat(convo, out=io.StringIO(), lines=[Q, Q]).run() == 1
    fake.script = ["Returns are not accepted [1]."]
    assert Chat(convo, out=io.StringIO(), lines=[Q]).run() == 0


def test_ctrl_c_stops_a_piped_run_and_writes_nothing_among_the_answers(fake, convo):
    def lines():
        yield Q
        raise KeyboardInterrupt  # Ctrl-C while waiting for the next line
    out = io.StringIO()
    with pytest.raises(KeyboardInterrupt):  # cli.entry makes it exit 130, as for any command
        Chat(convo, out=out, lines=lines()).run()
    assert "(cancelled)" not in out.getvalue()


def test_a_timeout_asked_again_says_how_many_times(fake):
    # "did not answer within 0.2 s" after three tries and the pauses between them misled about the wait.
    model = llm.LLM("test-model", timeout=0.2, retries=2, deadline=30)
    fake.script = [{"hang": 0.4}] * 3
    with pytest.raises(llm.LLMError, match=r"did not answer within 0.2 s, asked 3 times"):
        "".join(model.stream("s", "u"))


def test_a_turn_that_failed_before_searching_is_not_explained_as_the_turn_before(convo, fake, monkeypatch):
    from citebot.index.store import IndexError_
    fake.script = ["Returns are not accepted [1]."]
    out = io.StringIO()
    chat = Chat(convo, out=out)
    chat.ask(Q)
    def gone(*a, **k):
        raise IndexError_("no index at /tmp/gone")
    monkeypatch.setattr(convo.engine, "ask", gone)
    chat.ask("how long do refunds take?")
    chat.command("/why")  # it printed the trace of "can I return an opened item?"
    assert out.getvalue().rstrip().endswith("The last turn failed before it searched anything (no index at /tmp/gone); "
                                            "ask again once that is fixed.")
    chat.command("/new")
    chat.command("/why")
    assert out.getvalue().rstrip().endswith("Nothing to explain yet: ask a question first.")

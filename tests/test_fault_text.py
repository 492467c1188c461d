"""Text from documents, file names and models is shown, never obeyed; and
what the documents contain is judged only within the asker's scope."""
import io
import json
import subprocess
import sys

import pytest

from citebot.answer import llm
from citebot.chat import render
from citebot.chat.repl import Chat, Conversation
from citebot.config import Config
from citebot.engine import Engine
from citebot.index.build import ingest
from citebot.index.store import open_index
from citebot.schema import Scope
from citebot.search.models import Models
from citebot.terminal import safe

from conftest import ROOT, write
from fake_openai import FakeOpenAI

HOSTILE = ["\x1b[2J", "\x1b]0;owned\x07", "\x1b]52;c;ZWNobyBoaQ==\x07", "\x9b2J", "\x1bc", "\x07", "\x08", "\x9d0;t\x9c",
           "\u202e", "\u2066"]  # bidi override and isolate: they show what follows reversed


def clean(text: str) -> bool:
    return not any(ch in text for ch in "\x1b\x9b\x9d\x07\x08\x9c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


@pytest.mark.parametrize("seq", HOSTILE)
def test_the_sanitiser_removes_every_control_sequence(seq):
    assert safe(f"before{seq}after") == "beforeafter" and clean(safe(seq * 3))
    assert safe("tab\tand\nnewline stay") == "tab\tand\nnewline stay"


def test_a_lone_surrogate_is_shown_as_a_replacement_and_escaped_in_json():
    from citebot.cli import json_text
    assert safe("x\ud800y") == "x\ufffdy"
    text = json_text({"a": "x\udcffy"})
    assert text.isascii() and json.loads(text) == {"a": "x\udcffy"}  # exact for a script, writable anywhere


@pytest.fixture(scope="module")
def hostile(tmp_path_factory, embedder):
    folder = tmp_path_factory.mktemp("hostile")
    evil = "".join(HOSTILE)
    # YAML writes control characters as escapes (\\e is ESC, \\a is BEL); the body holds them raw.
    write(folder / f"ref{evil[:5]}unds.md", "---\ntitle: \"Refunds\\e[2J\\e]0;owned\\a\"\n---\n# Refunds\n\n"
          f"Refunds{evil} go to the original card within 14 days.\n")
    cfg = Config(embed_model="packaged", index=str(folder / "idx"), use_rerank=False, data_dir=str(folder / "data"))
    ingest(folder, cfg, embedder=embedder)
    return cfg


def test_chat_sources_show_why_and_model_text_are_shown_not_obeyed(hostile, embedder, monkeypatch):
    server = FakeOpenAI()
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    try:
        cfg = hostile.replace(use_gate=False)  # this test is about what is printed, not whether to answer
        e = Engine(open_index(cfg), cfg, Models(embedder, None), llm.LLM("m", timeout=5, retries=0))
        convo = Conversation(e, Scope())
        out = io.StringIO()
        chat = Chat(convo, out=out)
        server.script = ["Refunds go to the card [1]. \x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J"]
        chat.ask("how long do refunds take?")
        server.script = ["refunds\x1b]0;title\x07 and \x9b31m colour", "Within 14 days [1]."]
        chat.ask("and how long?")  # condensed by the model into a hostile query
        for cmd in ("/sources", "/show 1", "/why"):
            chat.command(cmd)
        text = out.getvalue()
        assert "Refunds go to the card [1]." in text and "(also searched: refunds" in text
        # The file name is shown as one can find it on disk, its controls written as escapes.
        assert "ref\\x1b[2J\\x1bunds.md" in text
        assert clean(text), repr([c for c in text if ord(c) < 32 and c not in "\n\t" or 0x7f <= ord(c) <= 0x9f])
        # The model's rewrite is searched without its escapes, and --json says what was searched.
        data = render.turn_json(chat.last)
        assert "refunds and colour" in data["queries"] and not any("\x1b" in q or "\x9b" in q for q in data["queries"])
    finally:
        server.close()


def test_retrieve_and_ingest_print_no_control_sequences(hostile):
    r = subprocess.run([sys.executable, str(ROOT / "retrieve.py"), "refunds", "--index", hostile.index],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "Refunds" in r.stdout and clean(r.stdout) and clean(r.stderr)
    assert "ref\\x1b[2J\\x1bunds.md, line 6" in r.stdout
    # --json is exact (the characters are there, escaped), and escapes the C1 controls JSON leaves raw.
    r = subprocess.run([sys.executable, str(ROOT / "retrieve.py"), "refunds", "--index", hostile.index, "--json"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and clean(r.stdout) and "\\u009b2J" in r.stdout
    assert "\x9b2J" in json.loads(r.stdout)["hits"][0]["text"]


def test_show_takes_ascii_digits_only(sample_engine):
    turn = sample_engine.ask("how long do refunds take?")
    n = len(turn.context.shown)
    assert render.show_text(turn, "²") == f"Usage: /show N, with N from 1 to {n}."
    assert render.show_text(turn, "1").startswith("[1] ")


def test_an_identifier_outside_the_scope_is_refused_like_one_that_does_not_exist(sample_engine):
    e = sample_engine.configured(sample_engine.cfg.replace(use_gate=False))
    exists_for_staff = e.ask("what is the discount code STAFF30 for?", [], Scope())
    nowhere = e.ask("what is the discount code STAFF31 for?", [], Scope())
    assert exists_for_staff.refused and nowhere.refused
    assert exists_for_staff.refusal_reason.replace("staff30", "X") == nowhere.refusal_reason.replace("staff31", "X")
    staff = e.ask("what is the discount code STAFF30 for?", [], Scope.build(audience="staff"))
    assert not staff.refused and "STAFF30" in staff.answer


def test_colour_only_on_a_terminal_that_draws_it_and_never_under_no_color(monkeypatch):
    from citebot.terminal import dim

    class Tty(io.StringIO):
        def isatty(self):
            return True
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    assert dim("note", Tty()) == "\x1b[2mnote\x1b[0m"
    assert dim("note", io.StringIO()) == "note"  # a file or a pipe
    monkeypatch.setenv("NO_COLOR", "1")  # https://no-color.org
    assert dim("note", Tty()) == "note"
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("TERM", "dumb")  # it drew "[2m" around every note
    assert dim("note", Tty()) == "note"

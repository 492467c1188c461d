"""Odd lines typed into the chat and odd questions on the command line: a
clear message where it belongs, never a traceback."""
import io
import os
import subprocess
import sys

from citebot.chat import render
from citebot.chat.repl import Chat, Conversation
from citebot.schema import Scope

from conftest import ROOT


def convo(sample_engine, tmp_path) -> Conversation:
    e = sample_engine.configured(sample_engine.cfg.replace(data_dir=str(tmp_path)))
    e.llm = None
    return Conversation(e, Scope())


def test_show_with_a_number_of_thousands_of_digits_is_a_usage_message(sample_engine, tmp_path):
    # int() refuses more than 4300 digits: "/show 999...9" ended the chat with a ValueError traceback
    turn = convo(sample_engine, tmp_path).ask("how long do refunds take?")
    n = len(turn.context.shown)
    assert render.show_text(turn, "9" * 5000) == f"Usage: /show N, with N from 1 to {n}."
    assert render.show_text(turn, "0" * 5000 + "1").startswith("[1] ")  # leading zeros still name a source
    assert render.show_text(turn, "0").startswith("Usage")


def test_searching_a_bare_acknowledgement_says_no_hits(sample_index, tmp_path):
    # "thanks" is searched for nothing, so no timings: the summary line raised KeyError: 'total'
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CITEBOT_", "OPENAI_"))}
    env.update({"CITEBOT_EMBED_MODEL": "packaged", "CITEBOT_DATA_DIR": str(tmp_path), "CITEBOT_USE_RERANK": "0"})
    r = subprocess.run([sys.executable, str(ROOT / "retrieve.py"), "thanks", "--index", sample_index.index],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert r.stdout.startswith("no hits") and "rerank off" in r.stdout


def test_problems_with_piped_lines_go_to_stderr_not_among_the_answers(sample_engine, tmp_path, capsys):
    out = io.StringIO()
    code = Chat(convo(sample_engine, tmp_path), out=out, lines=["x" * 5000, "/bogus"]).run()
    err = capsys.readouterr().err
    # The turn too long to ask got no answer, so the run fails (exit 1), as the README says of a piped chat.
    assert code == 1 and out.getvalue() == ""
    assert "ask in at most 4,000" in err and "unknown command /bogus" in err
    assert Chat(convo(sample_engine, tmp_path), out=io.StringIO(), lines=["/bogus", ""]).run() == 0

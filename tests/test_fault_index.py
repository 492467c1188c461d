"""Concurrent writers, readers racing a writer, and every kind of index damage:
nothing lost, nothing crashes, and the advised command works."""
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from citebot.config import Config
from citebot.index import lock
from citebot.index.local import LocalIndex
from citebot.index.store import IndexError_
from citebot.schema import Scope
from citebot.terminal import script

from conftest import ROOT, write

WORKER = str(ROOT / "tests" / "ingest_worker.py")
sys.path.insert(0, str(ROOT / "tests"))
from ingest_worker import HashEmbedder  # noqa: E402


def docs(tmp_path: Path, n: int = 6, name: str = "docs") -> Path:
    folder = tmp_path / name
    for i in range(n):
        write(folder / f"d{i}.md", f"# Page {i}\n\nRefund rule number {i} for tents and stoves.\n")
    return folder


def worker(*args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, WORKER, *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_two_ingests_at_once_never_lose_the_index(tmp_path):
    folder, index = docs(tmp_path), tmp_path / "idx"
    trials = 15
    for trial in range(trials):
        procs = [worker(folder, index, "--rebuild"), worker(folder, index, "--rebuild")]
        results = [(p.wait(timeout=120), p.stderr.read()) for p in procs]
        assert all(rc == 0 for rc, _ in results), (trial, results)
        idx = LocalIndex.load(index)  # CURRENT names a generation that is there
        assert len(idx) == 6 and {c.source for c in idx.scan(Scope.everything())} == {f"d{i}.md" for i in range(6)}
        assert len(list(index.glob("gen-*"))) <= 2  # the live one and the one before it


def test_a_later_incremental_ingest_is_not_overwritten_by_an_older_rebuild(tmp_path):
    folder, index = docs(tmp_path), tmp_path / "idx"
    assert worker(folder, index).wait(timeout=120) == 0
    for trial in range(5):
        marker = tmp_path / f"embedding{trial}"
        # New text, so the rebuild has something to embed (it keeps the vectors of unchanged text).
        write(folder / "d0.md", f"# Page 0\n\nRefund rule, trial {trial}.\n")
        slow = worker(folder, index, "--rebuild", "--sleep", "1", "--marker", marker)  # holds the lock as it embeds
        while not marker.exists():  # the rebuild has listed the folder: the new file is not in it
            assert slow.poll() is None, slow.stderr.read()
            time.sleep(0.02)
        new = folder / f"new{trial}.md"
        write(new, f"# New {trial}\n\nAdded while a rebuild runs.\n")
        quick = worker(folder, index)  # waits for the rebuild, then adds the file
        assert slow.wait(timeout=120) == 0 and quick.wait(timeout=120) == 0
        sources = {c.source for c in LocalIndex.load(index).scan(Scope.everything())}
        assert new.name in sources, (trial, sources)


def test_readers_never_crash_while_writers_switch_generations(tmp_path):
    folder, index = docs(tmp_path), tmp_path / "idx"
    assert worker(folder, index).wait(timeout=120) == 0
    reader = worker(folder, index, "--search", "400")
    for i in range(20):  # 20 switches while the reader loads and searches 400 times
        write(folder / "d0.md", f"# Page 0\n\nRefund rule, version {i}.\n")
        assert worker(folder, index).wait(timeout=120) == 0
    assert reader.wait(timeout=300) == 0, reader.stderr.read()


def test_a_second_writer_that_will_not_wait_is_told_who_holds_the_lock(tmp_path):
    index = tmp_path / "idx"
    with lock.writer(index):
        with pytest.raises(IndexError_, match=r"is being written by pid \d+"):
            with lock.writer(index, wait=False):
                pass
    with lock.writer(index, wait=False):  # released
        pass


def build(tmp_path) -> tuple[Path, Config, Path]:
    from citebot.index.build import ingest
    folder = docs(tmp_path)
    cfg = Config(index=str(tmp_path / "idx"), embed_model="test/hash-8")
    ingest(folder, cfg, embedder=HashEmbedder(), log=lambda m: None)
    return folder, cfg, LocalIndex.live_dir(Path(cfg.index))


def cut_chunks(gen):
    data = (gen / "chunks.jsonl").read_bytes()
    (gen / "chunks.jsonl").write_bytes(data[: len(data) - 30])


DAMAGE = {
    "chunks.jsonl cut mid-line": cut_chunks,
    "chunks.jsonl empty": lambda gen: (gen / "chunks.jsonl").write_bytes(b""),
    "a chunk line lacks a field": lambda gen: (gen / "chunks.jsonl").write_text(
        "\n".join(json.dumps({k: v for k, v in json.loads(line).items() if k != "text"})
                  for line in (gen / "chunks.jsonl").read_text().splitlines()) + "\n"),
    "embeddings.npy missing": lambda gen: (gen / "embeddings.npy").unlink(),
    "embeddings.npy garbage": lambda gen: (gen / "embeddings.npy").write_bytes(b"not numpy at all"),
    "embeddings.npy wrong size": lambda gen: np.save(gen / "embeddings.npy", np.zeros((2, 8), np.float32)),
    "embeddings.npy wrong dimension": lambda gen: np.save(gen / "embeddings.npy", np.zeros((6, 5), np.float32)),
    "manifest.json bad": lambda gen: (gen / "manifest.json").write_text("{not json"),
    "manifest.json a list": lambda gen: (gen / "manifest.json").write_text("[1, 2]"),
    "format from an older citebot": lambda gen: (gen / "manifest.json").write_text(
        json.dumps(dict(json.loads((gen / "manifest.json").read_text()), format=1))),
    "postings garbage": lambda gen: (gen / "postings.npz").write_bytes(b"PK\x03\x04 broken"),
    "terms.txt missing": lambda gen: (gen / "terms.txt").unlink(),
    "rows.json wrong length": lambda gen: (gen / "rows.json").write_text(json.dumps({"ids": []})),
    "CURRENT binary": lambda gen: (gen.parent / "CURRENT").write_bytes(b"\xff\xfe\x00garbage"),
    "CURRENT names nothing": lambda gen: (gen.parent / "CURRENT").write_text("gen-1"),
    "CURRENT missing": lambda gen: (gen.parent / "CURRENT").unlink(),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_damage_is_a_message_with_a_rebuild_that_works(tmp_path, damage):
    from citebot.index.build import ingest
    folder, cfg, gen = build(tmp_path)
    DAMAGE[damage](gen)
    with pytest.raises(IndexError_) as e:
        idx = LocalIndex.load(cfg.index)
        list(idx.scan(Scope.everything()))  # chunk text is read on demand
    msg = str(e.value)
    assert f"Rebuild it: {script('ingest.py')}" in msg or "no index at" in msg, msg
    assert "--rebuild" in msg or "Build one first" in msg
    if "Rebuild it" in msg and "manifest.json" not in damage:
        assert str(folder) in msg  # the command names the folder, even when CURRENT is what broke
    elif "Rebuild it" in msg:
        assert "ingest.py FOLDER --index" in msg  # the manifest that named it is what broke
    assert "no index at" not in msg  # generations are there: damaged, not absent
    # The advised command works whatever state the index is in, and keeps the vectors a readable
    # generation still holds (it re-embedded everything when CURRENT was gone).
    report = ingest(folder, cfg, rebuild=True, embedder=HashEmbedder(), log=lambda m: None)
    assert report.written and len(LocalIndex.load(cfg.index)) == 6
    if damage.startswith("CURRENT"):
        assert report.reused == 6


def test_an_index_from_a_newer_citebot_or_a_documents_folder_is_named_as_such(tmp_path):
    folder, cfg, gen = build(tmp_path)
    (gen / "manifest.json").write_text(json.dumps(dict(json.loads((gen / "manifest.json").read_text()), format=99)))
    with pytest.raises(IndexError_, match="built by a newer citebot") as e:
        LocalIndex.load(cfg.index)
    assert "--rebuild" not in str(e.value)  # it told the user to overwrite the newer citebot's index
    # A documents folder as --index: "Build one first: ingest.py FOLDER --index <it>", which ingest then refused.
    with pytest.raises(IndexError_, match="holds other files") as e:
        LocalIndex.load(folder)
    assert "--index NEW-FOLDER" in str(e.value)


def test_an_incremental_ingest_refuses_vectors_of_another_dimension(tmp_path):
    from citebot.index.build import ingest
    folder, cfg, gen = build(tmp_path)
    write(folder / "extra.md", "# Extra\n\nOne more page.\n")

    class Other(HashEmbedder):
        dim = 4
    with pytest.raises(IndexError_, match="8-dimensional vectors but test/hash-8 makes 4"):
        ingest(folder, cfg, embedder=Other(), log=lambda m: None)


def test_a_cut_checkpoint_is_embedded_again_not_a_crash(tmp_path):
    from citebot.index.build import ingest
    folder = docs(tmp_path)
    cfg = Config(index=str(tmp_path / "idx"), embed_model="test/hash-8")
    partial = Path(cfg.index) / ".partial"
    partial.mkdir(parents=True)
    (partial / "aaaa.npz").write_bytes(b"PK\x03\x04 cut off")  # a SIGKILL during np.savez
    (partial / "bbbb.npz").write_bytes(b"")
    (partial / "cccc.tmp.npz").write_bytes(b"half a batch")  # the disk filled mid-write
    report = ingest(folder, cfg, embedder=HashEmbedder(), log=lambda m: None)
    assert report.written and len(LocalIndex.load(cfg.index)) == 6 and not partial.exists()


def test_the_rebuild_command_repeats_the_settings_the_asker_gave(tmp_path):
    from citebot.index.build import ingest
    from citebot.index.store import open_index
    folder = docs(tmp_path, name="my docs")
    cfg = Config(index=str(tmp_path / "the idx"), embed_model="test/hash-8")
    ingest(folder, cfg, embedder=HashEmbedder(), log=lambda m: None)
    asked = cfg.replace(chunk_tokens=100, bm25_k1=0.9)
    with pytest.raises(IndexError_) as e:
        open_index(asked)
    # The other way out, without re-embedding: the settings it was built with.
    assert "To use it as built, give --set chunk_tokens=220 --set bm25_k1=1.2. Rebuild it: " in str(e.value)
    command = str(e.value).split("Rebuild it: ")[1]
    assert command == (f"{script('ingest.py')} '{folder}' --index '{tmp_path / 'the idx'}' --set embed_model=test/hash-8 "
                       "--set chunk_tokens=100 --set bm25_k1=0.9 --rebuild")
    ingest(folder, asked, rebuild=True, embedder=HashEmbedder(), log=lambda m: None)  # what that command runs
    assert len(open_index(asked)) == 6


def test_a_fifo_in_the_folder_is_skipped_not_read_forever(tmp_path):
    import os

    from citebot.index.build import ingest
    folder = docs(tmp_path)
    os.mkfifo(folder / "pipe.md")
    cfg = Config(index=str(tmp_path / "idx"), embed_model="test/hash-8")
    report = ingest(folder, cfg, embedder=HashEmbedder(), log=lambda m: None)
    assert ("pipe.md", "not a regular file") in report.skipped and len(LocalIndex.load(cfg.index)) == 6


def test_a_damaged_index_is_rebuilt_with_the_settings_that_built_it(tmp_path):
    from citebot.index.build import ingest
    folder = docs(tmp_path)
    cfg = Config(index=str(tmp_path / "idx"), embed_model="test/hash-8", chunk_tokens=100, bm25_b=0.5)
    ingest(folder, cfg, embedder=HashEmbedder(), log=lambda m: None)
    (Path(cfg.index) / "CURRENT").unlink()
    with pytest.raises(IndexError_, match="CURRENT is missing") as e:
        LocalIndex.load(cfg.index)
    # No settings at hand where the index is read: the manifest's own (defaults left out: bm25_k1 1.5).
    assert str(e.value).split("Rebuild it: ")[1] == (
        f"{script('ingest.py')} {folder} --index {cfg.index} --set embed_model=test/hash-8 "
        "--set chunk_tokens=100 --set bm25_b=0.5 --rebuild")
    ingest(folder, cfg, rebuild=True, embedder=HashEmbedder(), log=lambda m: None)  # what that command runs
    assert len(LocalIndex.load(cfg.index)) == 6


def test_the_rebuild_command_repeats_a_default_the_environment_sets_otherwise(tmp_path, monkeypatch):
    # CITEBOT_CHUNK_TOKENS=100 built the index; "--set chunk_tokens=220" (the default) is refused, and
    # the command left 220 out: run in that shell it rebuilt with 100, and the same refusal came back.
    import shlex

    from citebot import config
    from citebot.index.build import ingest
    from citebot.index.store import open_index
    monkeypatch.setenv("CITEBOT_CHUNK_TOKENS", "100")
    folder = docs(tmp_path)
    built = config.load({"index": str(tmp_path / "idx"), "embed_model": "test/hash-8"})
    ingest(folder, built, embedder=HashEmbedder(), log=lambda m: None)
    asked = built.replace(chunk_tokens=220)
    with pytest.raises(IndexError_) as e:
        open_index(asked)
    words = shlex.split(str(e.value).split("Rebuild it: ")[1])
    flags = dict(words[i + 1].split("=", 1) for i, w in enumerate(words) if w == "--set")
    assert config.load(flags).chunk_tokens == 220  # what that command runs with, in the same shell


def test_a_model_folder_is_stamped_by_where_it_is_not_as_typed(tmp_path, monkeypatch):
    # "./model" typed in two project folders names two models; stamped as typed, an index
    # embedded by one passed the settings check when searched with the other.
    from citebot.index.store import expected_stamp

    for name in ("a", "b"):
        (tmp_path / name / "model").mkdir(parents=True)
    stamps = []
    for name in ("a", "b"):
        monkeypatch.chdir(tmp_path / name)
        stamps.append(expected_stamp(Config(embed_model="./model"))["embed_model"])
    assert stamps == [str(tmp_path / "a" / "model"), str(tmp_path / "b" / "model")]
    assert expected_stamp(Config(embed_model="org/some-model"))["embed_model"] == "org/some-model"  # a hub id as given


def test_an_ingest_never_removes_a_users_folder_named_like_a_generation(tmp_path):
    from citebot.index.build import ingest
    from citebot.index.store import NotAFolder
    folder = docs(tmp_path)
    # A folder of the user's given as --index: refused, nothing written, nothing removed.
    work = tmp_path / "work"
    write(work / "gen-z-drafts" / "chapter1.md", "important\n")
    write(work / "gen-2" / "draft.txt", "draft\n")
    with pytest.raises(NotAFolder, match=r"already holds 2 other .*gen-2, gen-z-drafts.*no citebot index"):
        ingest(folder, Config(index=str(work), embed_model="test/hash-8"), embedder=HashEmbedder(), log=print)
    assert sorted(p.name for p in work.iterdir()) == ["gen-2", "gen-z-drafts"]
    assert (work / "gen-z-drafts" / "chapter1.md").read_text() == "important\n"
    # Files put into an index folder later are kept by every later ingest (old generations go).
    cfg = Config(index=str(tmp_path / "idx"), embed_model="test/hash-8")
    ingest(folder, cfg, embedder=HashEmbedder(), log=lambda m: None)
    write(Path(cfg.index) / "gen-9" / "keep.md", "mine\n")
    write(Path(cfg.index) / "notes.txt", "mine\n")
    for i in range(2):
        write(folder / "d0.md", f"# Page 0\n\nRefund rule changed {i}.\n")
        ingest(folder, cfg, embedder=HashEmbedder(), log=lambda m: None)
    names = sorted(p.name for p in Path(cfg.index).iterdir() if not p.name.startswith("gen-1"))
    assert names == [".lock", ".partial", "CURRENT", "gen-9", "notes.txt"] or \
        names == [".lock", "CURRENT", "gen-9", "notes.txt"]
    assert (Path(cfg.index) / "gen-9" / "keep.md").read_text() == "mine\n"
    assert len(LocalIndex.load(cfg.index)) == 6
    # A folder holding only hidden files (a .gitkeep) or a volume's lost+found is empty to its user.
    write(tmp_path / "kept" / ".gitkeep", "")
    (tmp_path / "kept" / "lost+found").mkdir()
    ingest(folder, Config(index=str(tmp_path / "kept"), embed_model="test/hash-8"), embedder=HashEmbedder(),
           log=lambda m: None)
    assert len(LocalIndex.load(tmp_path / "kept")) == 6


def test_an_index_folder_that_holds_documents_is_refused(tmp_path):
    from citebot.index.build import ingest
    from citebot.index.store import NotAFolder
    folder = docs(tmp_path)
    write(folder / "manuals" / "errors.md", "# Errors\n\nE4032 means the card was declined.\n")
    cfg = Config(index=str(folder / "manuals"), embed_model="test/hash-8")
    # It used to take manuals/ as its own folder: errors.md was left out, silently, from then on.
    with pytest.raises(NotAFolder, match="errors.md"):
        ingest(folder, cfg, embedder=HashEmbedder(), log=lambda m: None)
    assert sorted(p.name for p in (folder / "manuals").iterdir()) == ["errors.md"]
    # A new folder inside the documents folder is a fine place for the index (it is not read).
    ingest(folder, Config(index=str(folder / ".idx"), embed_model="test/hash-8"), embedder=HashEmbedder(),
           log=lambda m: None)
    assert {"manuals/errors.md", "d0.md"} <= set(LocalIndex.load(folder / ".idx").manifest["sources"])


def test_a_read_only_index_folder_says_ingest_needs_write_access(tmp_path, monkeypatch):
    # Run as root, chmod cannot make the folder read-only here: the open is refused as the OS would.
    def refused(*a, **k):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(lock, "open", refused, raising=False)
    write(tmp_path / "idx" / "CURRENT", "gen-1")
    with pytest.raises(IndexError_, match=r"cannot write to the index folder .*an ingest needs write access there "
                                          r"\(chats over it still work\)"):
        with lock.writer(tmp_path / "idx"):
            pass
    # No index there: no chat works over it either, so none is promised.
    with pytest.raises(IndexError_, match=r"an ingest needs write access there, or give another --index"):
        with lock.writer(tmp_path / "new"):
            pass


def test_the_commands_in_messages_run_with_this_interpreter_from_here(tmp_path, monkeypatch):
    import sys

    from citebot.terminal import script
    # "python ingest.py" meant whatever python the shell finds: without the venv activated it
    # lacked citebot's packages (ModuleNotFoundError) when pasted.
    monkeypatch.chdir(ROOT)
    here = Path(sys.executable)
    python = str(here.relative_to(ROOT)) if here.is_relative_to(ROOT) else str(here)
    assert script("ingest.py") == f"{python} ingest.py"
    monkeypatch.chdir(tmp_path)  # elsewhere: the script by its full path
    assert script("ingest.py").endswith(f" {ROOT / 'ingest.py'}")
    with pytest.raises(IndexError_, match=f"Build one first: {re.escape(script('ingest.py'))} FOLDER"):
        LocalIndex.load(tmp_path / "none")

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from citebot.index import documents
from citebot.index.build import ingest
from citebot.index.local import LocalIndex
from citebot.index.store import IndexError_, open_index
from citebot.schema import Scope

from conftest import ROOT, write


def chunks_of(cfg):
    return list(LocalIndex.load(cfg.index).scan(Scope.everything()))


def make_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    write(folder / "returns.md", "---\ntitle: Returns\n---\n# Returns\n\nRefunds go to the original card within 14 days.\n\n## Exchanges\n\nExchanges are free in store.\n")
    write(folder / "shipping.txt", "Shipping\n\nOrders ship within two business days.\n")
    write(folder / "hours.html", "<html><head><title>Hours</title></head><body><main><p>Open daily from 9 to 5.</p></main></body></html>")
    return folder


def test_incremental_ingest_reembeds_only_changed_text(tmp_path, cfg, counting):
    folder = make_folder(tmp_path)
    first = ingest(folder, cfg, embedder=counting)
    assert sorted(first.added) == ["hours.html", "returns.md", "shipping.txt"]
    n_chunks = first.chunks
    assert counting.embedded == n_chunks

    counting.calls.clear()
    again = ingest(folder, cfg, embedder=counting)
    assert counting.embedded == 0 and again.unchanged == 3 and again.reused == n_chunks

    write(folder / "shipping.txt", "Shipping\n\nOrders ship within three business days.\n")
    counting.calls.clear()
    changed = ingest(folder, cfg, embedder=counting)
    assert changed.changed == ["shipping.txt"] and changed.added == [] and changed.removed == []
    assert counting.calls == [[c.search_text for c in chunks_of(cfg) if c.source == "shipping.txt"]]

    (folder / "hours.html").unlink()
    removed = ingest(folder, cfg, embedder=counting)
    assert removed.removed == ["hours.html"]
    idx = LocalIndex.load(cfg.index)
    chunks = chunks_of(cfg)
    assert {c.source for c in chunks} == {"returns.md", "shipping.txt"}
    vectors = idx.vectors([c.id for c in chunks])
    assert vectors.shape == (len(chunks), counting.dim)
    # The reused vectors are the ones the model makes for that text.
    fresh = counting.inner.encode([c.search_text for c in chunks])
    assert np.allclose(fresh, vectors, atol=1e-5)


def test_unreadable_and_unsupported_files_are_reported_and_skipped(tmp_path, cfg, counting, capsys):
    folder = make_folder(tmp_path)
    (folder / "broken.pdf").write_bytes(b"not a pdf at all")
    (folder / "notes.docx").write_bytes(b"PK\x03\x04")
    (folder / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (folder / "red\x1b[31m.docx").write_bytes(b"PK\x03\x04")
    (folder / "red\x1b[31m.txt").write_bytes("caf\xe9".encode("latin-1"))
    report = ingest(folder, cfg, embedder=counting)
    skipped = dict(report.skipped)
    assert set(skipped) == {"broken.pdf", "notes.docx", "latin1.txt", "red\x1b[31m.docx", "red\x1b[31m.txt"}
    assert "UTF-8" in skipped["latin1.txt"] and "unsupported" in skipped["notes.docx"]
    err = capsys.readouterr().err
    # Files of a type citebot does not read are one line, by type; the others a line each, by name.
    assert "skipped broken.pdf" in err and "skipped 2 file(s) of a type citebot does not read: .docx (2)" in err
    assert "skipped red\\x1b[31m.txt" in err and "\x1b" not in err  # findable, not obeyed
    assert {c.source for c in chunks_of(cfg)} == {"returns.md", "shipping.txt", "hours.html"}


def test_a_reader_that_fails_on_one_file_skips_that_file_not_the_ingest(tmp_path, cfg, counting, capsys, monkeypatch):
    # A reader's bug on one odd file (an rst footnote once raised TypeError) used to stop the whole ingest.
    from citebot.index import documents
    folder = make_folder(tmp_path)
    write(folder / "odd.rst", "Odd\n===\n\n.. [#]\n   text\n")

    def broken(path, rel, data):
        raise TypeError("'NoneType' object is not subscriptable")
    monkeypatch.setitem(documents.LOADERS, ".rst", broken)
    report = ingest(folder, cfg, embedder=counting)
    why = dict(report.skipped)["odd.rst"]
    assert "TypeError" in why and "citebot's bug" in why
    assert "skipped odd.rst: citebot failed on it" in capsys.readouterr().err
    assert {c.source for c in chunks_of(cfg)} == {"returns.md", "shipping.txt", "hours.html"}


def test_a_fault_of_the_machine_stops_the_ingest_and_leaves_the_index_as_it_was(tmp_path, cfg, counting, monkeypatch):
    # A read-only token cache fails every file alike: skipped one by one as "citebot's bug", a
    # --rebuild emptied the index.
    from citebot import tokens
    folder = make_folder(tmp_path)
    ingest(folder, cfg, embedder=counting)

    def read_only(*_args, **_kwargs):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(tokens, "count", read_only)
    with pytest.raises(PermissionError):
        ingest(folder, cfg, rebuild=True, embedder=counting)
    assert {c.source for c in chunks_of(cfg)} == {"returns.md", "shipping.txt", "hours.html"}


def test_index_from_another_model_is_refused_with_the_fix(tmp_path, cfg, counting):
    folder = make_folder(tmp_path)
    ingest(folder, cfg, embedder=counting)
    gen = LocalIndex.live_dir(Path(cfg.index))
    manifest = json.loads((gen / "manifest.json").read_text())
    manifest["embed_model"] = "intfloat/multilingual-e5-small"
    (gen / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IndexError_) as e:
        ingest(folder, cfg, embedder=counting)
    # The command repeats the model the asker set, so it rebuilds what the settings ask for.
    assert f"python ingest.py {folder.resolve()} --index {cfg.index} --set embed_model=packaged --rebuild" in str(e.value)
    with pytest.raises(IndexError_, match="--rebuild"):
        open_index(cfg)
    # --rebuild fixes it, and re-embeds everything: those vectors came from another model.
    before = counting.embedded
    ingest(folder, cfg, rebuild=True, embedder=counting)
    assert open_index(cfg).manifest["embed_model"] == counting.name
    assert counting.embedded - before == len(chunks_of(cfg))


def test_a_rebuild_keeps_the_vectors_the_same_model_made(tmp_path, cfg, counting):
    """A new chunker or analyzer version forces --rebuild; unchanged text
    need not be embedded again (an hour of e5 on a big folder)."""
    folder = make_folder(tmp_path)
    ingest(folder, cfg, embedder=counting)
    first = counting.embedded
    assert first == len(chunks_of(cfg)) > 0
    (folder / "returns.md").write_text("# Returns\n\nReturns are accepted within 45 days.\n", encoding="utf-8")
    report = ingest(folder, cfg, rebuild=True, embedder=counting)
    assert counting.embedded - first == report.embedded == 1  # only the changed chunk
    # Reported against the index it replaced: one file changed, not every file added.
    assert (report.added, report.changed, report.removed, report.unchanged) == ([], ["returns.md"], [], 2)
    assert any("45 days" in c.text for c in chunks_of(cfg))
    # ... and it says every file was read anew ("0 changed, 3 unchanged" read as nothing redone).
    assert report.summary().endswith("; --rebuild read all 3 files anew with the current settings")
    assert "anew" not in ingest(folder, cfg, embedder=counting).summary()  # an update re-reads no file


def test_other_chunker_settings_are_refused(tmp_path, cfg, counting):
    folder = make_folder(tmp_path)
    ingest(folder, cfg, embedder=counting)
    with pytest.raises(IndexError_, match="chunk_tokens"):
        ingest(folder, cfg.replace(chunk_tokens=100), embedder=counting)


def test_crash_mid_write_leaves_previous_index_usable(tmp_path, cfg, counting, monkeypatch):
    folder = make_folder(tmp_path)
    ingest(folder, cfg, embedder=counting)
    before = [c.id for c in chunks_of(cfg)]
    write(folder / "new.md", "# New\n\nA new document.\n")

    def boom(*a, **k):
        raise OSError("disk full")
    monkeypatch.setattr(np, "save", boom)
    with pytest.raises(IndexError_, match=r"could not write the index .* \(disk full\); the previous index is untouched"):
        ingest(folder, cfg, embedder=counting)
    assert [c.id for c in chunks_of(cfg)] == before


def test_manifest_is_stamped_with_settings(tmp_path, cfg, counting):
    ingest(make_folder(tmp_path), cfg, embedder=counting)
    gen = LocalIndex.live_dir(Path(cfg.index))
    m = json.loads((gen / "manifest.json").read_text())
    assert m["embed_model"] == "sentence-transformers/all-MiniLM-L6-v2" and m["embed_dim"] == 384
    assert m["chunker"]["chunk_tokens"] == cfg.chunk_tokens
    assert m["bm25"] == {"variant": "okapi-lucene-idf", "k1": 1.2, "b": 0.75}
    from citebot.search.bm25 import Postings
    p = Postings.load(gen / "postings.npz", gen / "terms.txt")
    assert p.n_docs == m["n_chunks"] and len(p.rows_of("refund")) == 1 and not (gen / "bm25.json").exists()


def test_cli_missing_folder_and_bad_setting_are_usage_errors(tmp_path):
    def run(*a):
        return subprocess.run([sys.executable, str(ROOT / "ingest.py"), *a], capture_output=True, text=True,
                              env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    r = run(str(tmp_path / "nope"), "--index", str(tmp_path / "i"))
    assert r.returncode == 2 and "not a folder" in r.stderr and not (tmp_path / "i").exists()
    r = run(str(tmp_path), "--set", "final_k=zero")
    assert r.returncode == 2 and "final_k" in r.stderr


def test_another_folder_is_refused_when_it_would_remove_documents_and_rebuild_replaces(tmp_path, cfg, counting):
    folder = make_folder(tmp_path)
    ingest(folder, cfg, embedder=counting)
    before = sorted(c.id for c in chunks_of(cfg))
    other = tmp_path / "more"
    write(other / "faq.md", "# FAQ\n\nAsk us anything.\n")
    with pytest.raises(IndexError_, match=r"was built from .*docs; this run would remove 3 of its 3 documents "
                                          r"that it does not read \(hours.html, returns.md, shipping.txt\)\. "
                                          r"Nothing was changed\. .*add --rebuild"):
        ingest(other, cfg, embedder=counting)
    assert sorted(c.id for c in chunks_of(cfg)) == before
    # Narrowing the same folder with --include is the same loss.
    with pytest.raises(IndexError_, match=r"built from this folder with no --include; this run would remove 2 of "
                                          r"its 3 documents that it does not read \(hours.html, shipping.txt\)"):
        ingest(folder, cfg, embedder=counting, include=["returns*"])
    # The folder moved: every document is still read, so it is an update, not a loss.
    moved = folder.rename(tmp_path / "moved")
    assert ingest(moved, cfg, embedder=counting).removed == []
    replaced = ingest(other, cfg, embedder=counting, rebuild=True)
    assert replaced.added == ["faq.md"] and {c.source for c in chunks_of(cfg)} == {"faq.md"}
    # The rebuild reports what it removed from the index it replaced (it said "0 removed").
    assert replaced.removed == ["hours.html", "returns.md", "shipping.txt"] and replaced.unchanged == 0


def test_the_index_folder_cannot_hold_the_documents_folder(tmp_path, cfg, counting):
    from citebot.index.store import NotAFolder

    folder = make_folder(tmp_path)
    for index in (folder, tmp_path):
        with pytest.raises(NotAFolder, match="holds the documents folder .*; give the index a folder of its own"):
            ingest(folder, cfg.replace(index=str(index)), embedder=counting)
    r = subprocess.run([sys.executable, str(ROOT / "ingest.py"), str(folder), "--index", str(folder)],
                       capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert r.returncode == 2 and "give the index a folder of its own" in r.stderr
    assert not any(p.name.startswith("gen-") for p in folder.iterdir())


def test_empty_folder_warns_and_builds_an_empty_index(tmp_path, cfg, counting, capsys):
    (tmp_path / "empty").mkdir()
    report = ingest(tmp_path / "empty", cfg, embedder=counting)
    assert report.chunks == 0 and "no readable documents" in capsys.readouterr().err
    assert chunks_of(cfg) == []


def test_include_globs_take_only_matching_files_and_the_rebuild_command_keeps_them(tmp_path, cfg, counting):
    folder = tmp_path / "docs"
    write(folder / "en" / "a.md", "# A\n\nEnglish page.\n")
    write(folder / "zh" / "a.md", "# A\n\n中文页面。\n")
    write(folder / "de" / "a.md", "# A\n\nDeutsche Seite.\n")
    report = ingest(folder, cfg, embedder=counting, include=["en/*", "zh/*"])
    assert sorted(report.added) == ["en/a.md", "zh/a.md"]
    manifest = LocalIndex.load(cfg.index).manifest
    from citebot.index.store import rebuild_command
    assert rebuild_command(manifest, cfg.index).endswith("--include 'en/*' --include 'zh/*' --rebuild")


def test_an_include_glob_that_matches_no_file_is_refused_and_nothing_is_written(tmp_path, cfg, counting):
    from citebot.index.store import NotAFolder

    folder = tmp_path / "docs"
    write(folder / "en" / "a.md", "# A\n\nEnglish page.\n")
    # It said "no readable documents", exited 0 and wrote an empty index.
    with pytest.raises(NotAFolder, match=r"--include 'zzz/\*' matched no file under .*docs .*nothing was written"):
        ingest(folder, cfg, embedder=counting, include=["en/*", "zzz/*"])
    for bad in ("", "/abs/*", "../docs/*"):  # no path inside the folder can match these
        with pytest.raises(NotAFolder, match=re.escape(f"--include {bad!r} is no pattern of paths inside the folder")):
            ingest(folder, cfg, embedder=counting, include=[bad])
    assert not Path(cfg.index).exists() and counting.embedded == 0
    r = subprocess.run([sys.executable, str(ROOT / "ingest.py"), str(folder), "--include", "zzz/*", "--index",
                        str(tmp_path / "i3")], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin",
                                                                                  "HOME": str(tmp_path)})
    assert r.returncode == 2 and "--include 'zzz/*' matched no file" in r.stderr and not (tmp_path / "i3").exists()


def test_a_golden_file_names_its_documents_and_is_skipped_when_they_are_absent(tmp_path, capsys):
    from citebot.measurement.main import main
    golden = write(tmp_path / "g.json", json.dumps({"corpus": {"root": "no-such-folder", "folders": ["en"]},
                                                    "questions": [{"id": "x", "question": "q?"}]}))
    assert main(["--golden", str(golden)]) == 0
    assert "skipped g.json: its documents" in capsys.readouterr().err


def test_a_golden_cache_of_an_older_format_is_rebuilt_not_fatal(tmp_path, cfg, counting, monkeypatch):
    from citebot.measurement import evaluate
    from citebot.search.models import Models
    monkeypatch.setattr(evaluate, "ROOT", tmp_path)  # the cache lives under ROOT/.cache/golden
    write(tmp_path / "docs" / "en" / "a.md", "# A\n\nThe tent warranty lasts five years.\n")
    golden = write(tmp_path / "g.json", json.dumps({"corpus": {"root": "docs", "folders": ["en"]},
                                                    "questions": [{"id": "x", "question": "q?"}]}))
    logs: list[str] = []
    engine = evaluate.golden_engine(cfg, golden, Models(counting), logs.append)
    root = Path(engine.cfg.index)
    gen = root / (root / "CURRENT").read_text().strip()
    manifest = json.loads((gen / "manifest.json").read_text())
    (gen / "manifest.json").write_text(json.dumps(dict(manifest, format=1)))  # what an older citebot wrote
    engine = evaluate.golden_engine(cfg, golden, Models(counting), logs.append)
    assert engine.index.manifest["format"] == manifest["format"] and len(list(engine.index.scan(Scope.everything()))) == 1
    assert any("rebuilding it" in m for m in logs)


def test_a_golden_cache_is_not_emptied_when_its_documents_are_gone(tmp_path, cfg, counting, monkeypatch):
    import shutil

    from citebot.index.store import IndexError_
    from citebot.measurement import evaluate
    from citebot.search.models import Models
    monkeypatch.setattr(evaluate, "ROOT", tmp_path)
    write(tmp_path / "docs" / "en" / "a.md", "# A\n\nThe tent warranty lasts five years.\n")
    golden = write(tmp_path / "g.json", json.dumps({"corpus": {"root": "docs", "folders": ["en"]},
                                                    "questions": [{"id": "x", "question": "q?"}]}))
    engine = evaluate.golden_engine(cfg, golden, Models(counting), print)
    shutil.rmtree(tmp_path / "docs" / "en")
    (tmp_path / "docs" / "other.md").write_text("# B\n\nNot in the golden folders.\n")
    # Its folder en/ is gone: the --include glob the golden file makes matches nothing, said before any change.
    with pytest.raises(IndexError_, match=r"--include 'en/\*' matched no file under .*nothing was written"):
        evaluate.golden_engine(cfg, golden, Models(counting), print)
    assert len(list(LocalIndex.load(engine.cfg.index).scan(Scope.everything()))) == 1


def test_a_golden_cache_is_rebuilt_when_the_golden_file_names_other_folders(tmp_path, cfg, counting, monkeypatch):
    from citebot.measurement import evaluate
    from citebot.search.models import Models
    monkeypatch.setattr(evaluate, "ROOT", tmp_path)
    write(tmp_path / "docs" / "en" / "a.md", "# A\n\nThe tent warranty lasts five years.\n")
    write(tmp_path / "docs" / "zh" / "a.md", "# A\n\n帐篷保修五年。\n")
    corpus = {"root": "docs", "folders": ["en", "zh"]}
    golden = write(tmp_path / "g.json", json.dumps({"corpus": corpus, "questions": [{"id": "x", "question": "q?"}]}))
    evaluate.golden_engine(cfg, golden, Models(counting), print)
    golden.write_text(json.dumps({"corpus": dict(corpus, folders=["en"]), "questions": [{"id": "x", "question": "q?"}]}))
    logs: list[str] = []
    engine = evaluate.golden_engine(cfg, golden, Models(counting), logs.append)
    assert {c.source for c in engine.index.scan(Scope.everything())} == {"en/a.md"}
    assert any("other settings or folders; rebuilding it" in m for m in logs)


def test_ingest_progress_into_a_log_is_a_plain_line_every_half_minute():
    # Into a pipe or a log the terminal's redrawn line is never shown: a 17-minute ingest printed nothing.
    import io

    from citebot.index import progress as progress_mod
    now = [100.0]
    out = io.StringIO()
    p = progress_mod.Progress(stream=out, clock=lambda: now[0])
    p.start(3, tick=3600)  # (the ticker, tested below, kept out of this one's way)
    now[0] = 110.0
    p.file("a.md")  # 10 s in: a short ingest adds nothing
    assert out.getvalue() == ""
    now[0] = 131.0
    p.file("b.md")
    p.chunks(40)
    p.embedding(40)
    now[0] = 150.0
    p.embedded(10)  # 19 s after the last line: nothing yet
    now[0] = 162.0
    p.embedded(10)
    assert out.getvalue().splitlines() == [
        "ingest: files 2/3 · chunks 0",
        # 20 embedded in the 31 s since embedding began: 0.65/s, the other 20 take ~31 s
        "ingest: files 2/3 · chunks 40 · embedded 20/40 (1/s, ~31 s left)"]
    # The last batch ends 10 s later: the log's last line says so (it stopped at "20/40" before).
    now[0] = 172.0
    p.embedded(20)
    p.done()
    assert out.getvalue().splitlines()[-1] == "ingest: files 2/3 · chunks 40 · embedded 40/40 (1/s, ~0 s left)"
    # A caller's log (tests, the benchmarks) gets warnings only, as before.
    quiet = io.StringIO()
    q = progress_mod.Progress(log=lambda m: None, stream=quiet, clock=lambda: now[0])
    now[0] = 500.0
    q.file("c.md")
    assert quiet.getvalue() == ""



def test_ingest_progress_into_a_log_keeps_time_while_a_batch_embeds():
    # A batch of 256 embeddings takes 30-85 s here: drawn only when one ended, a log went quiet for minutes.
    import io
    import time

    from citebot.index import progress as progress_mod
    now = [0.0]
    out = io.StringIO()
    p = progress_mod.Progress(stream=out, clock=lambda: now[0])
    p.start(1, tick=0.01)
    p.embedding(256)
    now[0] = 31.0  # nothing else happens: the ticker alone writes the line
    for _ in range(200):
        if out.getvalue():
            break
        time.sleep(0.01)
    p.done()
    assert out.getvalue().splitlines() == ["ingest: files 0/1 · chunks 0 · embedded 0/256"]
    assert p._ticker is not None and not p._ticker.is_alive()  # done() stops it


def test_a_file_that_holds_no_text_to_search_is_named_so(tmp_path, cfg, counting, capsys):
    # Flask's license.rst, a title and a literalinclude of a file outside the folder, was "added" and no
    # question could ever find it.
    folder = tmp_path / "docs"
    write(folder / "a.md", "# Returns\n\nReturn within 30 days.\n")
    write(folder / "license.rst", "License\n=======\n\n.. literalinclude:: ../../LICENSE.txt\n")
    write(tmp_path / "LICENSE.txt", "BSD-3-Clause\n")
    report = ingest(folder, cfg, embedder=counting)
    assert report.added == ["a.md", "license.rst"] and report.empty == ["license.rst"]
    assert report.included == {"license.rst": ["../../LICENSE.txt"]}  # what it would have shown
    again = ingest(folder, cfg, embedder=counting)  # unchanged: not read again, so not named again
    assert again.empty == [] and again.unchanged == 2
    # ingest.py says so beside its name
    r = subprocess.run([sys.executable, str(ROOT / "ingest.py"), str(folder), "--index", str(tmp_path / "cli")],
                       capture_output=True, text=True, timeout=300,
                       env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CITEBOT_EMBED_MODEL": "packaged"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[:2] == ["added    a.md",
                                         "added    license.rst  (no text to search; it includes ../../LICENSE.txt)"]
    # what a page says it includes, in each markup (Black's change_log.md is one MyST include)
    assert documents.includes(b"```{include} ../CHANGES.md\n```\n\n.. include:: a.rst\n.. literalinclude:: b.py\n"
                              b'--8<-- "c.md"\n{* ../docs_src/d.py hl[3] *}\n{!> e.md!}\ninclude::f.adoc[]\n'
                              b"Text that includes nothing.\n") == ["../CHANGES.md", "a.rst", "b.py", "c.md",
                                                                     "../docs_src/d.py", "e.md", "f.adoc"]


def test_a_page_that_includes_text_from_outside_the_folder_is_named_once(tmp_path, cfg, counting):
    # coverage.py's changes.rst: its own old history, then ".. include:: ../CHANGES.rst", the history
    # since 2020, which no question could find, and nothing said so.
    folder = tmp_path / "doc"
    write(folder / "changes.rst", "Changes\n=======\n\n.. include:: ../CHANGES.rst\n\nOlder: 4.5 added branches.\n")
    write(folder / "code.rst", "Code\n====\n\nIt runs.\n\n.. literalinclude:: ex.py\n.. literalinclude:: gone.py\n")
    write(folder / "ex.py", "print(1)\n")
    write(tmp_path / "CHANGES.rst", "7.6 added a report.\n")
    # ... and so is autodoc's text, which lives in the code (alembic's operations reference said nothing)
    write(folder / "api.rst", "API\n===\n\nThe operations.\n\n.. autoclass:: Operations\n   :members:\n\n"
                              ".. autofunction:: run\n\n   Runs it.\n")
    report = ingest(folder, cfg, embedder=counting)
    assert report.unread == {"changes.rst": ["../CHANGES.rst"], "code.rst": ["gone.py"]} and report.empty == []
    assert report.autodoc == {"api.rst": 2}
    # An unchanged page is not read again, and still says so: the line's "--json lists them" listed none.
    again = ingest(folder, cfg, embedder=counting)
    assert again.unchanged == 3 and again.unread == report.unread and again.autodoc == report.autodoc
    r = subprocess.run([sys.executable, str(ROOT / "ingest.py"), str(folder), "--index", str(tmp_path / "cli")],
                       capture_output=True, text=True, timeout=300,
                       env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CITEBOT_EMBED_MODEL": "packaged"})
    assert r.returncode == 0, r.stderr
    assert ("2 file(s) include text that is not searched, from a file outside the folder or missing: changes.rst "
            'includes ../CHANGES.rst; and 1 more file(s); to search it, ingest a folder that holds it (--json lists them under '
            '"unread")') in r.stdout.splitlines()
    assert ("1 file(s) hold Sphinx autodoc directives (2 in all; api.rst has 2): the docstrings they show live in "
            'the code, which is not searched; the text written around them is (--json lists them under "autodoc")'
            ) in r.stdout.splitlines()


def test_chunks_of_the_same_text_are_embedded_once_and_the_counts_add_up(tmp_path, cfg, counting):
    folder = tmp_path / "docs"
    write(folder / "a.txt", "Returns\n\nRefunds go to the original card within 14 days.\n")
    write(folder / "b.txt", "Returns\n\nRefunds go to the original card within 14 days.\n")
    report = ingest(folder, cfg, embedder=counting)
    texts = [c.search_text for c in chunks_of(cfg)]
    distinct = len(set(texts))
    assert distinct < len(texts)  # the two files' chunks are searched by the same text
    assert counting.embedded == distinct == report.embedded
    assert report.embedded + report.reused == report.chunks == len(texts)

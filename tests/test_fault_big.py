"""Big inputs: chunking is linear in the text, and an interrupted ingest resumes."""
import sys
import time

import pytest

from citebot.config import Config
from citebot.index import chunker, documents
from citebot.index.build import ingest
from citebot.index.local import LocalIndex

from conftest import ROOT, write

sys.path.insert(0, str(ROOT / "tests"))
from ingest_worker import HashEmbedder  # noqa: E402


def test_800kb_without_a_sentence_break_chunks_in_a_second_or_two(tmp_path):
    text = ("lorem ipsum dolor sit amet " * 32_000)[:800_000]
    doc = documents.load(write(tmp_path / "big.txt", "Big\n\n" + text), "big.txt")
    t0 = time.perf_counter()
    chunks = chunker.chunk_document(doc, 220)
    assert time.perf_counter() - t0 < 2.0
    assert "".join(c.text for c in chunks).replace(" ", "") == ("Big" + text).replace(" ", "")


class Interrupting(HashEmbedder):
    """Embeds two batches, then stops the ingest as Ctrl-C would."""

    def __init__(self):
        super().__init__()
        self.calls = 0
        self.texts = 0

    def encode(self, texts, progress=False):
        self.calls += 1
        self.texts += len(texts)
        if self.calls == 3:
            raise KeyboardInterrupt
        return super().encode(texts)


def test_an_interrupted_ingest_keeps_what_it_embedded(tmp_path, monkeypatch):
    from citebot.index import build
    monkeypatch.setattr(build, "EMBED_BATCH", 10)
    folder = tmp_path / "docs"
    for i in range(45):
        write(folder / f"d{i}.md", f"# Page {i}\n\nText of page {i}.\n")
    cfg = Config(index=str(tmp_path / "idx"), embed_model="test/hash-8")
    first = Interrupting()
    with pytest.raises(KeyboardInterrupt):
        ingest(folder, cfg, embedder=first, log=lambda m: None)
    assert LocalIndex.live_dir(tmp_path / "idx") is None  # nothing half-written went live
    counting = Interrupting()
    counting.calls = -100  # this one runs to the end
    report = ingest(folder, cfg, embedder=counting, log=lambda m: None)
    assert report.embedded == 25 and counting.texts == 25  # the 20 embedded before the interruption were kept
    assert len(LocalIndex.load(cfg.index)) == 45 and not (tmp_path / "idx" / ".partial").exists()


def test_an_unchanged_folder_writes_nothing_and_loads_no_model(tmp_path, monkeypatch):
    folder = tmp_path / "docs"
    write(folder / "a.md", "# A\n\nText.\n")
    cfg = Config(index=str(tmp_path / "idx"), embed_model="test/hash-8")
    ingest(folder, cfg, embedder=HashEmbedder(), log=lambda m: None)
    gens = sorted(p.name for p in (tmp_path / "idx").glob("gen-*"))
    from citebot.search import models

    def no_model(spec):
        raise AssertionError("no model should load")
    monkeypatch.setattr(models, "embedder", no_model)
    report = ingest(folder, cfg, log=lambda m: None)
    assert not report.written and report.unchanged == 1 and report.embedded == 0
    assert sorted(p.name for p in (tmp_path / "idx").glob("gen-*")) == gens

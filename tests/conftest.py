import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# Tests never touch the user's real data dir or config.
for key in list(os.environ):
    if key.startswith("CITEBOT_") or key in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        del os.environ[key]
# Most tests run on the English MiniLM (fast, and their expectations were
# worked out on it); the default multilingual model has its own tests
# (test_multilingual.py).  The variable reaches the scripts tests start.
os.environ["CITEBOT_EMBED_MODEL"] = "packaged"

from citebot import config  # noqa: E402
from citebot.search import models  # noqa: E402

SAMPLE = ROOT / "examples" / "kb"


@pytest.fixture(scope="session")
def embedder():
    return models.embedder(models.PACKAGED)


class CountingEmbedder:
    """The real embedder, counting what it is asked to embed."""

    def __init__(self, inner):
        self.inner, self.name, self.dim, self.calls = inner, inner.name, inner.dim, []

    def encode(self, texts, progress=False):
        self.calls.append(list(texts))
        return self.inner.encode(texts)

    @property
    def embedded(self):
        return sum(len(c) for c in self.calls)


@pytest.fixture
def counting(embedder):
    return CountingEmbedder(embedder)


def _ingest_sample(tmp_path_factory, name: str, embed_model: str, embedder) -> config.Config:
    from citebot.index.build import ingest

    if not SAMPLE.is_dir():
        pytest.skip("examples/kb is missing")
    cfg = config.Config(embed_model=embed_model, index=str(tmp_path_factory.mktemp(name)), use_rerank=False)
    ingest(SAMPLE, cfg, embedder=embedder)
    return cfg


@pytest.fixture(scope="session")
def sample_index(tmp_path_factory, embedder):
    """The bundled sample knowledge base, ingested once per test session."""
    return _ingest_sample(tmp_path_factory, "sample-index", "packaged", embedder)


@pytest.fixture(scope="session")
def e5_embedder():
    """The default multilingual model, for real."""
    try:
        return models.embedder(models.E5)
    except models.ModelUnavailable as e:
        pytest.skip(str(e))


@pytest.fixture(scope="session")
def sample_index_e5(tmp_path_factory, e5_embedder):
    """The sample ingested with the bot's default model, once per session."""
    return _ingest_sample(tmp_path_factory, "sample-index-e5", "e5", e5_embedder)


@pytest.fixture(scope="session")
def sample_engine(sample_index, embedder):
    """The engine over the sample index, offline (no LLM, no cross-encoder)."""
    from citebot.engine import Engine
    from citebot.index.store import open_index

    return Engine(open_index(sample_index), sample_index, models.Models(embedder, None))


@pytest.fixture
def fake(monkeypatch):
    """The scripted OpenAI-compatible server on 127.0.0.1, named by the environment."""
    from fake_openai import FakeOpenAI

    server = FakeOpenAI()
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    yield server
    server.close()


@pytest.fixture
def cfg(tmp_path):
    return config.Config(embed_model="packaged", index=str(tmp_path / "index"), use_rerank=False, data_dir=str(tmp_path / "data"))


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def write_jsonl(path: Path, rows) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def write_qrels(path: Path, rows) -> None:
    """A BEIR qrels file: header, then query-id, corpus-id, score per line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(f"{q}\t{d}\t{s}\n" for q, d, s in rows)
    path.write_text("query-id\tcorpus-id\tscore\n" + body, encoding="utf-8")


def tiny_pdf(path: Path, pages: list[list[str]], info: dict | None = None,
             outline: list[tuple[str, int, list[tuple[str, int]]]] | None = None,
             labels: str | None = None) -> Path:
    """A minimal real PDF: each page's lines as text (Helvetica), ``info`` as
    the document info dictionary (``{"Audience": "staff"}``), ``outline`` its
    bookmarks (title, page index, the bookmarks under it), ``labels`` its
    /PageLabels number tree (``"0 << /S /r >> 2 << /S /D >>"``: i, ii, then 1, 2 ...)."""
    def esc(s: str) -> str:
        return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    objs: list = [None, None, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    kids = []
    for lines in pages:
        text = "BT /F1 12 Tf 14 TL 72 720 Td " + " ".join(f"({esc(x)}) Tj T*" for x in lines) + " ET"
        objs.append(f"<< /Length {len(text)} >>\nstream\n{text}\nendstream")
        objs.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
                    f"/Contents {len(objs)} 0 R >>")
        kids.append(len(objs))
    objs[1] = f"<< /Type /Pages /Kids [{' '.join(f'{k} 0 R' for k in kids)}] /Count {len(kids)} >>"
    catalog = "/Type /Catalog /Pages 2 0 R"
    if labels:
        catalog += f" /PageLabels << /Nums [{labels}] >>"

    def items(entries, parent: int) -> list[int]:
        nums = []
        for title, page, children in entries:
            objs.append(None)
            nums.append(len(objs))
            inner = items([(t, pg, []) for t, pg in children], nums[-1])
            objs[nums[-1] - 1] = (title, page, parent, inner)
        for i, n in enumerate(nums):
            title, page, parent_, inner = objs[n - 1]
            links = (f" /Prev {nums[i - 1]} 0 R" if i else "") + (f" /Next {nums[i + 1]} 0 R" if i + 1 < len(nums) else "")
            if inner:
                links += f" /First {inner[0]} 0 R /Last {inner[-1]} 0 R /Count {len(inner)}"
            objs[n - 1] = (f"<< /Title ({esc(title)}) /Parent {parent_} 0 R /Dest [{kids[page]} 0 R /XYZ 0 792 0]"
                           f"{links} >>")
        return nums
    if outline:
        objs.append(None)
        root = len(objs)
        top = items(outline, root)
        objs[root - 1] = f"<< /Type /Outlines /First {top[0]} 0 R /Last {top[-1]} 0 R /Count {len(top)} >>"
        catalog += f" /Outlines {root} 0 R"
    objs[0] = f"<< {catalog} >>"
    objs.append("<< " + " ".join(f"/{k} ({esc(v)})" for k, v in (info or {}).items()) + " >>")
    out, offsets = b"%PDF-1.4\n", []
    for i, o in enumerate(objs, 1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n{o}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R /Info {len(objs)} 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(out)
    return path

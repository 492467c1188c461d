"""The index behind a small interface.

``SearchIndex`` is the whole contract retrieval needs: filtered sparse search,
filtered dense search, and chunk lookup.  ``LocalIndex`` keeps it in plain
files on this machine; a distributed engine (Elasticsearch/OpenSearch with a
bool filter + BM25 query and a filtered kNN query) is one new class with the
same four methods — fusion and rerank in retrieve.py stay as they are.

On-disk layout (all plain formats)::

    INDEX/CURRENT            name of the live generation (replaced atomically)
    INDEX/gen-<n>/manifest.json   settings that built it, sources and their hashes
    INDEX/gen-<n>/chunks.jsonl    one chunk per line, row order = matrix order
    INDEX/gen-<n>/bm25.json       BM25 variant, parameters, N, avgdl, document frequencies
    INDEX/gen-<n>/embeddings.npy  float32 [n_chunks, dim], L2-normalised

A write builds a new generation beside the live one and only then points
CURRENT at it, so a crash mid-ingest leaves the previous index usable.
"""
from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Protocol

import numpy as np

import lexical
from schema import Chunk, Hit, Scope

FORMAT = 1
CHUNKER_VERSION = 1


class IndexError_(RuntimeError):
    """The index is missing or was built with other settings; says what to run."""


class SearchIndex(Protocol):
    manifest: dict

    def sparse_search(self, query: str, scope: Scope, k: int) -> list[Hit]: ...
    def dense_search(self, vector: np.ndarray, scope: Scope, k: int) -> list[Hit]: ...
    def chunk(self, chunk_id: str) -> Chunk: ...
    def evidence(self, query: str, vector: np.ndarray | None, chunk_ids: list[str]) -> dict[str, dict[str, float]]: ...


def settings_stamp(cfg, embed_name: str, dim: int) -> dict:
    """Everything that changes what is in the index; a mismatch means rebuild."""
    return {
        "format": FORMAT,
        "embed_model": embed_name,
        "embed_dim": dim,
        "chunker": {"version": CHUNKER_VERSION, "chunk_tokens": cfg.chunk_tokens},
        "analyzer": "citebot-2",
        "bm25": {"variant": lexical.VARIANT, "k1": cfg.bm25_k1, "b": cfg.bm25_b},
    }


class LocalIndex:
    def __init__(self, chunks: list[Chunk], vectors: np.ndarray, manifest: dict):
        self.manifest = manifest
        self.chunks = chunks
        self.vectors = vectors
        self.row = {c.id: i for i, c in enumerate(chunks)}
        self.tokens = [lexical.analyze(c.search_text) for c in chunks]
        bm = manifest.get("bm25", {})
        self.bm25 = lexical.BM25Index(self.tokens, k1=bm.get("k1", 1.2), b=bm.get("b", 0.75))
        self._meta = [(c.status, c.audience, c.lang, c.tenant) for c in chunks]
        self._allowed: dict[Scope, np.ndarray] = {}

    # --- the contract ---------------------------------------------------
    def allowed_rows(self, scope: Scope) -> np.ndarray:
        """Rows the scope may see; each channel ranks only these (filter first)."""
        rows = self._allowed.get(scope)
        if rows is None:
            rows = np.array([i for i, c in enumerate(self.chunks) if scope.allows(c)], dtype=np.int64)
            self._allowed[scope] = rows
        return rows

    def sparse_search(self, query: str, scope: Scope, k: int) -> list[Hit]:
        found = self.bm25.search(lexical.analyze(query), self.allowed_rows(scope), k)
        return [Hit(self.chunks[r].id, rank=i, score=s, ranks={"bm25": i}, scores={"bm25": s}, chunk=self.chunks[r])
                for i, (r, s) in enumerate(found, 1)]

    def dense_search(self, vector: np.ndarray, scope: Scope, k: int) -> list[Hit]:
        rows = self.allowed_rows(scope)
        if len(rows) == 0 or self.vectors.shape[0] == 0:
            return []
        sims = self.vectors[rows] @ vector.astype(np.float32)
        keep = sims > 0  # cosine <= 0: not a hit
        rows, sims = rows[keep], sims[keep]
        order = np.lexsort((rows, -sims))[:k]
        return [Hit(self.chunks[rows[j]].id, rank=i, score=float(sims[j]), ranks={"dense": i},
                    scores={"dense": float(sims[j])}, chunk=self.chunks[rows[j]])
                for i, j in enumerate(order, 1)]

    def chunk(self, chunk_id: str) -> Chunk:
        return self.chunks[self.row[chunk_id]]

    def evidence(self, query: str, vector: np.ndarray | None, chunk_ids: list[str]) -> dict[str, dict[str, float]]:
        """Absolute evidence of each chunk for a query: idf coverage, a named
        identifier found, and cosine (the query is analyzed once for all)."""
        terms = lexical.analyze(query)
        # An identifier from the question (E5100, RD2-24) found verbatim is
        # evidence on its own, however many other words the question has.
        idents = [t for t in terms if lexical.is_identifier(t)]
        out = {}
        for cid in chunk_ids:
            r = self.row[cid]
            ev = {"coverage": self.bm25.coverage(terms, r),
                  "identifier": 1.0 if any(self.bm25.contains(r, t) for t in idents) else 0.0}
            if vector is not None and self.vectors.shape[0]:
                ev["cosine"] = float(self.vectors[r] @ vector)
            out[cid] = ev
        return out

    # --- files ----------------------------------------------------------
    @staticmethod
    def live_dir(root: Path) -> Path | None:
        current = root / "CURRENT"
        if not current.is_file():
            return None
        gen = root / current.read_text(encoding="utf-8").strip()
        return gen if (gen / "manifest.json").is_file() else None

    @classmethod
    def load(cls, root: str | Path) -> "LocalIndex":
        root = Path(root)
        gen = cls.live_dir(root)
        if gen is None:
            raise IndexError_(f"no index at {root}. Build one first: python ingest.py FOLDER --index {root}")
        manifest = json.loads((gen / "manifest.json").read_text(encoding="utf-8"))
        if manifest.get("format") != FORMAT:
            raise IndexError_(f"the index at {root} has format {manifest.get('format')}, this citebot reads {FORMAT}. "
                              f"Rebuild it: {rebuild_command(manifest, root)}")
        with open(gen / "chunks.jsonl", encoding="utf-8") as f:
            chunks = [Chunk.from_dict(json.loads(line)) for line in f if line.strip()]
        vectors = np.load(gen / "embeddings.npy")
        if vectors.shape[0] != len(chunks):
            raise IndexError_(f"the index at {root} is damaged ({len(chunks)} chunks, {vectors.shape[0]} vectors). "
                              f"Rebuild it: {rebuild_command(manifest, root)}")
        return cls(chunks, vectors, manifest)

    def save(self, root: str | Path) -> Path:
        root = Path(root)
        root.mkdir(parents=True, exist_ok=True)
        gen = root / f"gen-{time.time_ns()}"
        tmp = gen.with_name(gen.name + ".tmp")
        tmp.mkdir()
        try:
            self._write(tmp)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)  # the live generation is untouched
            raise
        os.replace(tmp, gen)
        pointer = root / "CURRENT.tmp"
        pointer.write_text(gen.name, encoding="utf-8")
        os.replace(pointer, root / "CURRENT")  # the atomic switch
        for old in root.glob("gen-*"):
            if old != gen:
                shutil.rmtree(old, ignore_errors=True)
        return gen

    def _write(self, tmp: Path) -> None:
        with open(tmp / "chunks.jsonl", "w", encoding="utf-8") as f:
            for c in self.chunks:
                f.write(json.dumps(c.to_dict(), ensure_ascii=False) + "\n")
        np.save(tmp / "embeddings.npy", self.vectors.astype(np.float32))
        (tmp / "bm25.json").write_text(json.dumps(self.bm25.stats(), ensure_ascii=False), encoding="utf-8")
        (tmp / "manifest.json").write_text(json.dumps(self.manifest, indent=2, ensure_ascii=False), encoding="utf-8")
        for p in tmp.iterdir():  # make the bytes durable before the switch
            with open(p, "rb") as f:
                os.fsync(f.fileno())


def rebuild_command(manifest: dict, root) -> str:
    folder = manifest.get("source_folder", "FOLDER")
    return f"python ingest.py {folder} --index {root} --rebuild"


def check_compatible(manifest: dict, expected: dict, root) -> None:
    """Refuse an index built with other settings, naming the command that fixes it."""
    diffs = [f"{k}: index has {manifest.get(k)!r}, settings ask for {v!r}"
             for k, v in expected.items() if manifest.get(k) != v]
    if diffs:
        raise IndexError_(f"the index at {root} was built with other settings ({'; '.join(diffs)}). "
                          f"Rebuild it: {rebuild_command(manifest, root)}")

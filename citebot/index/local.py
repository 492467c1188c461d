"""``LocalIndex``: the index in plain files on this machine.

On-disk layout (all plain formats)::

    INDEX/CURRENT                 name of the live generation (replaced atomically)
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
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from citebot.index.store import FORMAT, IndexError_, TermStat, rebuild_command
from citebot.schema import Chunk, Hit, Scope
from citebot.search import analyzer
from citebot.search.bm25 import BM25Index


class LocalIndex:
    def __init__(self, chunks: list[Chunk], vectors: np.ndarray, manifest: dict):
        self.manifest = manifest
        self._chunks = chunks
        self._vectors = vectors
        self._row = {c.id: i for i, c in enumerate(chunks)}
        bm = manifest.get("bm25", {})
        self._bm25 = BM25Index([analyzer.analyze(c.search_text) for c in chunks],
                               k1=bm.get("k1", 1.2), b=bm.get("b", 0.75))
        self._allowed: dict[Scope, np.ndarray] = {}

    def __len__(self) -> int:
        return len(self._chunks)

    # --- the contract ---------------------------------------------------
    def _allowed_rows(self, scope: Scope) -> np.ndarray:
        """Rows the scope may see; each channel ranks only these (filter first)."""
        rows = self._allowed.get(scope)
        if rows is None:
            rows = np.array([i for i, c in enumerate(self._chunks) if scope.allows(c)], dtype=np.int64)
            self._allowed[scope] = rows
        return rows

    def sparse_search(self, terms: Sequence[str], scope: Scope, k: int) -> list[Hit]:
        found = self._bm25.search(list(terms), self._allowed_rows(scope), k)
        return [Hit(self._chunks[r], rank=i, score=s, ranks={"bm25": i}, scores={"bm25": s})
                for i, (r, s) in enumerate(found, 1)]

    def dense_search(self, vector: np.ndarray, scope: Scope, k: int) -> list[Hit]:
        rows = self._allowed_rows(scope)
        if len(rows) == 0 or self._vectors.shape[0] == 0:
            return []
        sims = self._vectors[rows] @ vector.astype(np.float32)
        keep = sims > 0  # cosine <= 0: not a hit
        rows, sims = rows[keep], sims[keep]
        order = np.lexsort((rows, -sims))[:k]
        return [Hit(self._chunks[rows[j]], rank=i, score=float(sims[j]), ranks={"dense": i},
                    scores={"dense": float(sims[j])})
                for i, j in enumerate(order, 1)]

    def get(self, ids: Sequence[str]) -> list[Chunk]:
        return [self._chunks[self._row[i]] for i in ids]

    def scan(self, scope: Scope) -> Iterator[Chunk]:
        return (self._chunks[r] for r in self._allowed_rows(scope))

    def term_stats(self, terms: Sequence[str], scope: Scope) -> dict[str, TermStat]:
        allowed = set(self._allowed_rows(scope).tolist())
        return {t: TermStat(self._bm25.term_idf(t), any(r in allowed for r in self._bm25.rows_holding(t)))
                for t in dict.fromkeys(terms)}

    def terms_held(self, ids: Sequence[str], terms: Sequence[str]) -> dict[str, frozenset[str]]:
        uniq = list(dict.fromkeys(terms))
        return {i: frozenset(t for t in uniq if self._bm25.contains(self._row[i], t)) for i in ids}

    def vectors(self, ids: Sequence[str]) -> np.ndarray | None:
        if self._vectors.shape[0] == 0:
            return None
        return self._vectors[[self._row[i] for i in ids]]

    # --- files ----------------------------------------------------------
    @staticmethod
    def live_dir(root: Path) -> Path | None:
        current = root / "CURRENT"
        if not current.is_file():
            return None
        gen = root / current.read_text(encoding="utf-8").strip()
        return gen if (gen / "manifest.json").is_file() else None

    @classmethod
    def load(cls, root: str | Path) -> LocalIndex:
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
            for c in self._chunks:
                f.write(json.dumps(c.to_dict(), ensure_ascii=False) + "\n")
        np.save(tmp / "embeddings.npy", self._vectors.astype(np.float32))
        (tmp / "bm25.json").write_text(json.dumps(self._bm25.stats(), ensure_ascii=False), encoding="utf-8")
        (tmp / "manifest.json").write_text(json.dumps(self.manifest, indent=2, ensure_ascii=False), encoding="utf-8")
        for p in tmp.iterdir():  # make the bytes durable before the switch
            with open(p, "rb") as f:
                os.fsync(f.fileno())

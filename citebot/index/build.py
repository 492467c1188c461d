"""Build or update an index from a folder of documents.

Re-running on the same folder re-embeds only chunks whose text changed,
drops the chunks of deleted files, and reports what it added, changed and
removed.  Unreadable or unsupported files are reported and skipped.
"""
from __future__ import annotations

import fnmatch
import hashlib
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from citebot import cli
from citebot.config import Config
from citebot.index import chunker, documents
from citebot.index.local import LocalIndex
from citebot.index.store import IndexError_, check_compatible, settings_stamp
from citebot.schema import Chunk, Scope
from citebot.search import models


@dataclass
class Report:
    added: list[str] = field(default_factory=list)  # source paths
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    chunks: int = 0
    embedded: int = 0
    reused: int = 0
    seconds: float = 0.0
    index_bytes: int = 0

    def summary(self) -> str:
        return (f"files: {len(self.added)} added, {len(self.changed)} changed, {len(self.removed)} removed, "
                f"{self.unchanged} unchanged, {len(self.skipped)} skipped; chunks: {self.chunks} "
                f"({self.embedded} embedded, {self.reused} reused); {self.seconds:.1f}s, "
                f"{self.index_bytes / 1024:.0f} KiB")


def discover(folder: Path, include: Sequence[str] = ()) -> list[Path]:
    """Files under ``folder`` (hidden ones skipped); with ``include``, only
    those whose path relative to the folder matches one of the globs
    ("en/*" takes everything under en/)."""
    found = []
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder)
        if not p.is_file() or any(part.startswith(".") for part in rel.parts):
            continue
        if include and not any(fnmatch.fnmatch(rel.as_posix(), g) for g in include):
            continue
        found.append(p)
    return found


def text_key(c: Chunk) -> str:
    return hashlib.sha1(c.search_text.encode()).hexdigest()


@dataclass
class _Previous:
    """What the live index already holds, for an incremental update."""
    sources: dict = field(default_factory=dict)  # rel path -> {"sha1", "chunks"}
    by_source: dict[str, list[Chunk]] = field(default_factory=dict)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)  # text key -> vector


def _previous(cfg: Config, stamp: dict, rebuild: bool) -> _Previous:
    if rebuild or LocalIndex.live_dir(Path(cfg.index)) is None:
        return _Previous()
    old = LocalIndex.load(cfg.index)
    check_compatible(old.manifest, stamp, cfg.index)
    prev = _Previous(old.manifest.get("sources", {}))
    chunks = list(old.scan(Scope.everything()))
    vecs = old.vectors([c.id for c in chunks])
    for i, c in enumerate(chunks):
        prev.by_source.setdefault(c.source, []).append(c)
        if vecs is not None:
            prev.vectors[text_key(c)] = vecs[i]
    return prev


def _read_folder(folder: Path, cfg: Config, prev: _Previous, report: Report,
                 include: Sequence[str]) -> tuple[list[Chunk], dict]:
    chunks: list[Chunk] = []
    sources: dict[str, dict] = {}
    for path in discover(folder, include):
        rel = path.relative_to(folder).as_posix()
        if path.suffix.lower() not in documents.SUFFIXES:
            report.skipped.append((rel, f"unsupported file type {path.suffix or '(none)'}"))
            continue
        try:
            digest = hashlib.sha1(path.read_bytes()).hexdigest()
        except OSError as e:
            report.skipped.append((rel, f"cannot be read: {e.strerror}"))
            continue
        known = prev.sources.get(rel)
        if known and known["sha1"] == digest and rel in prev.by_source:
            doc_chunks = prev.by_source[rel]  # unchanged file: no need to parse again
            report.unchanged += 1
        else:
            try:
                doc = documents.load(path, rel)
            except documents.UnreadableDocument as e:
                report.skipped.append((rel, str(e)))
                continue
            doc_chunks = chunker.chunk_document(doc, cfg.chunk_tokens)
            (report.changed if known else report.added).append(rel)
        sources[rel] = {"sha1": digest, "chunks": len(doc_chunks)}
        chunks.extend(doc_chunks)
    return chunks, sources


def ingest(folder: str | Path, cfg: Config, rebuild: bool = False, embedder=None,
           include: Sequence[str] = ()) -> Report:
    t0 = time.perf_counter()
    folder = Path(folder).resolve()
    if not folder.is_dir():
        raise IndexError_(f"{folder} is not a folder; give the folder that holds your documents")
    emb = embedder or models.embedder(cfg.embed_model)
    stamp = settings_stamp(cfg, emb.name, emb.dim)
    prev = _previous(cfg, stamp, rebuild)

    report = Report()
    chunks, sources = _read_folder(folder, cfg, prev, report, include)
    report.removed = sorted(set(prev.sources) - set(sources))
    for rel, why in report.skipped:
        cli.warn(f"skipped {rel}: {why}")
    if not sources:
        cli.warn(f"no readable documents under {folder}; citebot reads {', '.join(documents.SUFFIXES)} "
                 "(the index is empty, so every question will be refused)")

    # Embed only text we have not embedded before.
    keys = [text_key(c) for c in chunks]
    todo = sorted({k: c.search_text for k, c in zip(keys, chunks) if k not in prev.vectors}.items())
    fresh = emb.encode([t for _, t in todo], progress=len(todo) > 64 and sys.stderr.isatty())
    vec_of = dict(prev.vectors)
    vec_of.update({k: fresh[i] for i, (k, _) in enumerate(todo)})
    vectors = np.stack([vec_of[k] for k in keys]) if chunks else np.zeros((0, emb.dim), np.float32)
    report.chunks, report.embedded = len(chunks), len(todo)
    new_keys = {k for k, _ in todo}
    report.reused = sum(1 for k in keys if k not in new_keys)

    manifest = dict(stamp, source_folder=str(folder), include=list(include), sources=sources, n_chunks=len(chunks),
                    built=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    gen = LocalIndex(chunks, vectors, manifest).save(cfg.index)
    report.index_bytes = sum(p.stat().st_size for p in gen.iterdir())
    report.seconds = time.perf_counter() - t0
    return report

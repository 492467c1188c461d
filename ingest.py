"""Build or update a citebot index from a folder of documents.

    python ingest.py FOLDER [--index DIR] [--rebuild]

Re-running on the same folder re-embeds only chunks whose text changed,
drops the chunks of deleted files, and reports what it added, changed and
removed.  Unreadable or unsupported files are reported on stderr and skipped.
"""
from __future__ import annotations

import argparse
import hashlib
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import chunker
import cli
import config
import documents
import models
import store
from schema import Chunk


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


def discover(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and not any(
        part.startswith(".") for part in p.relative_to(folder).parts))


def text_key(c: Chunk) -> str:
    return hashlib.sha1(c.search_text.encode()).hexdigest()


def ingest(folder: str | Path, cfg: config.Config, rebuild: bool = False, embedder=None) -> Report:
    t0 = time.perf_counter()
    folder = Path(folder).resolve()
    if not folder.is_dir():
        raise store.IndexError_(f"{folder} is not a folder; give the folder that holds your documents")
    emb = embedder or models.embedder(cfg.embed_model)
    stamp = store.settings_stamp(cfg, emb.name, emb.dim)

    old = None
    if store.LocalIndex.live_dir(Path(cfg.index)) is not None:
        old = store.LocalIndex.load(cfg.index)
        if not rebuild:
            store.check_compatible(old.manifest, stamp, cfg.index)
    old_sources = old.manifest.get("sources", {}) if old and not rebuild else {}
    old_by_source: dict[str, list[Chunk]] = {}
    old_vectors: dict[str, np.ndarray] = {}
    if old and not rebuild:
        for i, c in enumerate(old.chunks):
            old_by_source.setdefault(c.source, []).append(c)
            old_vectors[text_key(c)] = old.vectors[i]

    report = Report()
    chunks: list[Chunk] = []
    sources: dict[str, dict] = {}
    for path in discover(folder):
        rel = path.relative_to(folder).as_posix()
        if path.suffix.lower() not in documents.SUFFIXES:
            report.skipped.append((rel, f"unsupported file type {path.suffix or '(none)'}"))
            continue
        try:
            digest = hashlib.sha1(path.read_bytes()).hexdigest()
        except OSError as e:
            report.skipped.append((rel, f"cannot be read: {e.strerror}"))
            continue
        prev = old_sources.get(rel)
        if prev and prev["sha1"] == digest and rel in old_by_source:
            doc_chunks = old_by_source[rel]  # unchanged file: no need to parse again
            report.unchanged += 1
        else:
            try:
                doc = documents.load(path, rel)
            except documents.UnreadableDocument as e:
                report.skipped.append((rel, str(e)))
                continue
            doc_chunks = chunker.chunk_document(doc, cfg.chunk_tokens)
            (report.changed if prev else report.added).append(rel)
        sources[rel] = {"sha1": digest, "chunks": len(doc_chunks)}
        chunks.extend(doc_chunks)
    report.removed = sorted(set(old_sources) - set(sources))
    for rel, why in report.skipped:
        cli.warn(f"skipped {rel}: {why}")
    if not sources:
        cli.warn(f"no readable documents under {folder}; citebot reads {', '.join(documents.SUFFIXES)} "
                 "(the index is empty, so every question will be refused)")

    # Embed only text we have not embedded before.
    keys = [text_key(c) for c in chunks]
    todo = sorted({k: c.search_text for k, c in zip(keys, chunks) if k not in old_vectors}.items())
    fresh = emb.encode([t for _, t in todo], progress=len(todo) > 64 and sys.stderr.isatty())
    vec_of = dict(old_vectors)
    vec_of.update({k: fresh[i] for i, (k, _) in enumerate(todo)})
    vectors = np.stack([vec_of[k] for k in keys]) if chunks else np.zeros((0, emb.dim), np.float32)
    report.chunks, report.embedded = len(chunks), len(todo)
    report.reused = len(chunks) - sum(1 for k in keys if k in dict(todo))

    manifest = dict(stamp, source_folder=str(folder), sources=sources, n_chunks=len(chunks),
                    built=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    index = store.LocalIndex(chunks, vectors, manifest)
    gen = index.save(cfg.index)
    report.index_bytes = sum(p.stat().st_size for p in gen.iterdir())
    report.seconds = time.perf_counter() - t0
    return report


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="ingest.py", description="Build or update a citebot index from a folder.")
    p.add_argument("folder", help="folder of .md, .txt, .html, .pdf documents")
    p.add_argument("--rebuild", action="store_true", help="ignore the existing index and build from scratch")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    cli.add_config_flags(p)
    args, cfg = cli.parse(p, argv)
    try:
        report = ingest(args.folder, cfg, rebuild=args.rebuild)
    except (store.IndexError_, models.ModelUnavailable) as e:
        return cli.fail(str(e))
    if args.json:
        import json
        print(json.dumps(report.__dict__, default=list))
    else:
        for label, items in (("added", report.added), ("changed", report.changed), ("removed", report.removed)):
            for rel in items:
                print(f"{label:8} {rel}")
        print(report.summary())
        print(f"index: {cfg.index}")
    return cli.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())

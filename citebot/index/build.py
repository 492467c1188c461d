"""Build or update an index from a folder of documents.

Re-running on the same folder re-embeds only chunks whose text changed,
re-analyses only new text, drops the chunks of deleted files, and reports
what it added, changed and removed; an unchanged folder writes nothing and
loads no model.  Unreadable or unsupported files, links that lead out of the
folder and folders that cannot be listed are reported and skipped.  One
writer at a time holds the index's lock.  Embeddings are checkpointed as they
are made, so an interrupted ingest of a big folder resumes where it stopped.
"""
from __future__ import annotations

import fnmatch
import hashlib
import os
import zipfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from citebot.config import Config
from citebot.index import chunker, documents, lock
from citebot.index.local import LocalIndex, foreign, holds_index
from citebot.index.progress import Progress
from citebot.index.store import (
    IndexError_,
    NotAFolder,
    OtherDocuments,
    another_index,
    check_compatible,
    expected_stamp,
    index_where,
    scope_values,
    settings_stamp,
)
from citebot.schema import Chunk
from citebot.search import analyzer, models
from citebot.terminal import safe_name

EMBED_BATCH = 256


class InterruptedInPlace(KeyboardInterrupt):
    """Ctrl-C while a Milvus collection was being updated in place: it may hold part of the run."""


@dataclass
class Report:
    added: list[str] = field(default_factory=list)  # source paths
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    # read this run and holding no text to search (a page of a title and an include from outside
    # the folder: Flask's license.rst was "added" and never found)
    empty: list[str] = field(default_factory=list)
    included: dict[str, list[str]] = field(default_factory=dict)  # what an empty one says it includes
    # what a page read this run includes from outside the folder (or from no file): text it shows that
    # no chunk holds (coverage.py's changes.rst includes ../CHANGES.rst, the history since 2020)
    unread: dict[str, list[str]] = field(default_factory=dict)
    # how many autodoc directives each page holds: their docstrings live in the code, not here
    # (alembic's operations reference is "autoclass:: Operations :members:", and nothing said so)
    autodoc: dict[str, int] = field(default_factory=dict)
    chunks: int = 0
    embedded: int = 0
    reused: int = 0
    written: bool = False  # False: nothing changed, the index was left as it was
    seconds: float = 0.0
    index_bytes: int = 0  # of the generation written (local only; 0: not measured)
    rebuilt: int = 0  # --rebuild: the files read anew (the counts above compare with the replaced index)

    def summary(self) -> str:
        size = f", {self.index_bytes / 1024:.0f} KiB" if self.index_bytes else ""  # Milvus said "0 KiB"
        return (f"files: {len(self.added)} added, {len(self.changed)} changed, {len(self.removed)} removed, "
                f"{self.unchanged} unchanged, {len(self.skipped)} skipped; chunks: {self.chunks} "
                f"({self.embedded} embedded, {self.reused} reused); {self.seconds:.1f}s"
                + size + ("" if self.written else "; nothing changed")
                # "0 changed, 5 unchanged" after --rebuild read as "nothing was redone" (three reviews)
                + (f"; --rebuild read all {self.rebuilt} files anew with the current settings" if self.rebuilt else ""))


UNSUPPORTED = "unsupported file type "


def _sphinx_sources(d: Path) -> bool:
    """``_sources`` of a Sphinx HTML build (its search index beside it)."""
    return d.name == "_sources" and (d.parent / "searchindex.js").is_file()


def _packages(d: Path) -> bool:
    """A folder of installed packages: npm's node_modules, or a Python virtualenv (it holds pyvenv.cfg)."""
    return d.name == "node_modules" or (d / "pyvenv.cfg").is_file()


def discover(folder: Path, include: Sequence[str] = (), follow_links: bool = False,
             skipped: list[tuple[str, str]] | None = None, exclude: Sequence[Path] = ()) -> list[Path]:
    """Files under ``folder`` (hidden ones skipped); with ``include``, only
    those whose path relative to the folder matches one of the globs ("en/*"
    takes everything under en/).  A link that resolves outside the folder is
    skipped unless ``follow_links``; so is a folder that cannot be listed.
    ``exclude``: paths never read (the index itself, when it sits inside the
    folder: it would index its own files, more of them every run)."""
    skipped = skipped if skipped is not None else []
    root = folder.resolve()
    found = []
    left_out = [Path(x).resolve() for x in exclude]

    def real(p: Path) -> Path | None:
        """Where a link leads; None for one that loops (Python 3.11 raises RuntimeError there)."""
        try:
            return p.resolve(strict=False)
        except (RuntimeError, OSError):
            return None

    def excluded(p: Path) -> bool:
        r = real(p) if p.is_symlink() else p.absolute()
        return r is not None and any(r == x or r.is_relative_to(x) for x in left_out)

    def unreadable(e: OSError) -> None:
        where = Path(e.filename).relative_to(folder).as_posix() if e.filename else "?"
        skipped.append((where + "/", f"folder cannot be listed: {e.strerror}"))
    seen: set[str] = set()  # folders already read, by real path: a followed link back up would loop
    for dirpath, dirnames, filenames in os.walk(folder, onerror=unreadable, followlinks=follow_links):
        here = os.path.realpath(dirpath)
        if here in seen:
            dirnames[:] = []
            skipped.append((Path(dirpath).relative_to(folder).as_posix() + "/",
                            "a link to a folder already read; read once"))
            continue
        seen.add(here)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and not excluded(Path(dirpath) / d))
        if not follow_links:  # os.walk passes such a link by without a word: its pages were missing, unreported
            for sub in (Path(dirpath) / d for d in dirnames):
                target = real(sub) if sub.is_symlink() else None
                if target is not None and not target.is_relative_to(root):
                    skipped.append((sub.relative_to(folder).as_posix() + "/",
                                    "a link to a folder outside the folder (--follow-links reads it)"))
        for d in [d for d in dirnames if _packages(Path(dirpath) / d)]:
            # Third-party packages (a project folder's node_modules, a virtualenv): thousands of other
            # people's READMEs among the asker's pages. An --include that names the folder reads it.
            rel_dir = (Path(dirpath) / d).relative_to(folder).as_posix() + "/"
            # Named by a glob ("node_modules/*", "*/node_modules/*", "node_modules"): read as asked.
            if not any(g.startswith(rel_dir) or d in g for g in include):
                dirnames.remove(d)
                skipped.append((rel_dir, "installed packages (node_modules, a virtualenv), not your documents; "
                                         f"--include '{rel_dir}*' reads them"))
        for d in [d for d in dirnames if _sphinx_sources(Path(dirpath) / d)]:
            # The reStructuredText a Sphinx HTML build keeps for its "Show Source" links: every page
            # would be read twice, once as the HTML page and once as its source.
            rel_dir = (Path(dirpath) / d).relative_to(folder).as_posix() + "/"
            if not any(g.startswith(rel_dir) for g in include):
                dirnames.remove(d)
                skipped.append((rel_dir, "a Sphinx build's copy of its pages' sources; the HTML pages are read "
                                         f"(--include '{rel_dir}*' reads it)"))
        for d in [d for d in dirnames if holds_index(Path(dirpath) / d)]:
            # Another citebot index (an older one, another model's): its terms.txt lists every
            # chunk's words, restricted ones too, and would be served as a public page.
            dirnames.remove(d)
            skipped.append(((Path(dirpath) / d).relative_to(folder).as_posix() + "/",
                            "a citebot index; never read as documents"))
        for name in sorted(filenames):
            p = Path(dirpath) / name
            rel = p.relative_to(folder)
            if any(part.startswith(".") for part in rel.parts) or excluded(p):
                continue
            try:
                rel.as_posix().encode("utf-8")
            except UnicodeEncodeError:
                skipped.append((ascii(rel.as_posix()), "file name is not valid UTF-8; rename it"))
                continue
            if include and not any(fnmatch.fnmatch(rel.as_posix(), g) for g in include):
                continue
            if p.is_symlink():
                target = real(p)
                if target is None:
                    skipped.append((rel.as_posix(), "a link that loops back on itself"))
                    continue
                if not target.exists():  # before "outside the folder": --follow-links cannot read it either
                    skipped.append((rel.as_posix(), f"a broken link: {safe_name(os.readlink(p))} is not there"))
                    continue
                if not follow_links and not target.is_relative_to(root):
                    skipped.append((rel.as_posix(), "a link to a file outside the folder (--follow-links reads it)"))
                    continue
            if not p.is_file():  # a FIFO or a device would block the read forever
                skipped.append((rel.as_posix(), "not a regular file"))
                continue
            found.append(p)
    return sorted(found)


PATH_MAX = 2000  # bytes of a document's path under the folder


def text_key(c: Chunk) -> str:
    return hashlib.sha1(c.search_text.encode()).hexdigest()


@dataclass
class _Previous:
    """What the live index already holds, for an incremental update."""
    sources: dict = field(default_factory=dict)  # rel path -> {"sha1", "chunks"[, "unread"]}
    by_source: dict[str, list[Chunk]] = field(default_factory=dict)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)  # text key -> vector
    counts: dict[str, dict[str, int]] = field(default_factory=dict)  # text key -> analysed term counts
    manifest: dict = field(default_factory=dict)
    n_chunks: int = 0
    index: object = None  # the live index itself (Milvus updates it in place)
    before: dict = field(default_factory=dict)  # --rebuild: the replaced index's sources, for the report alone


def _live(cfg: Config):
    """The index an incremental ingest updates, or None when there is none."""
    if cfg.backend == "milvus":
        from citebot.index.milvus import MilvusIndex, connect

        client = connect(cfg)
        return MilvusIndex.open(cfg, client) if client.has_collection(cfg.milvus_collection) else None
    return LocalIndex.load(cfg.index) if LocalIndex.live_dir(Path(cfg.index)) is not None else None


def _previous(cfg: Config, rebuild: bool) -> _Previous:
    """The live index, checked against the settings.  When rebuilding,
    whatever state the old index is in, --rebuild replaces it; only the
    vectors it holds are kept, when the configured model made them (a new
    chunker or analyzer need not cost a re-embedding of unchanged text)."""
    if rebuild:
        return _reusable_vectors(cfg)
    old = _live(cfg)
    if old is None:
        return _Previous()
    check_compatible(old.manifest, expected_stamp(cfg), index_where(cfg), cfg)
    chunks, vecs, counts = old.contents()
    prev = _Previous(old.manifest.get("sources", {}), manifest=old.manifest, n_chunks=len(chunks), index=old)
    for i, c in enumerate(chunks):
        prev.by_source.setdefault(c.source, []).append(c)
        key = text_key(c)
        prev.counts[key] = counts[i]
        if vecs.shape[0]:
            prev.vectors[key] = vecs[i]
    return prev


def _reusable_vectors(cfg: Config) -> _Previous:
    prev = _Previous()
    try:
        old = _live(cfg)
    except Exception:  # noqa: BLE001 - an unreadable old index is exactly what --rebuild is for
        old = LocalIndex.newest_readable(Path(cfg.index)) if cfg.backend == "local" else None
    try:
        if old is None or old.manifest.get("embed_model") != expected_stamp(cfg)["embed_model"]:
            return prev
        chunks, vecs, _ = old.contents()
    except Exception:  # noqa: BLE001
        return prev
    if vecs.shape[0] == len(chunks):
        prev.vectors = {text_key(c): vecs[i] for i, c in enumerate(chunks)}
    prev.before = dict(old.manifest.get("sources") or {})
    return prev


# What a reader's bug raises on an odd file.  Not OSError, MemoryError or ImportError: a read-only cache
# or a missing package fails every file alike, and skipping each as "citebot's bug" emptied the index.
_READER_BUGS = (ArithmeticError, AssertionError, AttributeError, LookupError, RecursionError, TypeError, ValueError)


def _read_folder(folder: Path, cfg: Config, prev: _Previous, report: Report, paths: list[Path],
                 progress: Progress) -> tuple[list[Chunk], dict]:
    with documents.reading_folder(paths):
        return _read_files(folder, cfg, prev, report, paths, progress)


def _read_files(folder: Path, cfg: Config, prev: _Previous, report: Report, paths: list[Path],
                progress: Progress) -> tuple[list[Chunk], dict]:
    chunks: list[Chunk] = []
    sources: dict[str, dict] = {}
    for path in paths:
        unread: list[str] = []
        rel = path.relative_to(folder).as_posix()
        progress.file(rel)
        if len(rel.encode("utf-8")) > PATH_MAX:  # an index stores it whole (Milvus: a 2,048-byte column)
            report.skipped.append((rel[:80] + "…", f"its path is longer than {PATH_MAX} bytes; shorten it"))
            continue
        if documents.file_type(path) not in documents.SUFFIXES:
            report.skipped.append((rel, f"{UNSUPPORTED}{path.suffix or '(none)'}"))
            continue
        try:
            data = path.read_bytes()  # hashed and parsed both: one read, one version of the file
        except OSError as e:
            report.skipped.append((rel, f"cannot be read: {e.strerror}"))
            continue
        digest = hashlib.sha1(data).hexdigest()
        known = prev.sources.get(rel)
        # Unchanged file: no need to parse again (one that gave no chunks, an
        # empty page, is unchanged too, not "changed" on every run).
        if known and known["sha1"] == digest and (rel in prev.by_source or known.get("chunks") == 0):
            doc_chunks = prev.by_source.get(rel, [])
            report.unchanged += 1
            unread = known.get("unread") or []  # still not searched: said again, not only when it was read
            if unread:
                report.unread[rel] = unread
            auto = known.get("autodoc", 0)
        else:
            try:
                doc = documents.load(path, rel, data)
                doc_chunks = chunker.chunk_document(doc, cfg.chunk_tokens)
            except documents.UnreadableDocument as e:
                report.skipped.append((rel, str(e)))
                continue
            except _READER_BUGS as e:  # a reader's bug on one odd file must not stop the other thousand
                report.skipped.append((rel, f"citebot failed on it ({type(e).__name__}: {str(e)[:200]}); this is citebot's "
                                            "bug: please report it with the file. The rest of the folder is ingested"))
                continue
            (report.changed if known else report.added).append(rel)
            named = documents.includes(data)
            if not doc_chunks:
                report.empty.append(rel)
                if named:  # (a file outside the folder is not read)
                    report.included[rel] = named
            elif unread := documents.unread(path, folder, named):
                report.unread[rel] = unread
            auto = documents.autodoc(data)
        if auto:
            report.autodoc[rel] = auto
        sources[rel] = {"sha1": digest, "chunks": len(doc_chunks), **({"unread": unread} if unread else {}),
                        **({"autodoc": auto} if auto else {})}
        chunks.extend(doc_chunks)
        progress.chunks(len(chunks))
    return chunks, sources


def ingest(folder: str | Path, cfg: Config, rebuild: bool = False, embedder=None, include: Sequence[str] = (),
           follow_links: bool = False, wait: bool = True, log: Callable[[str], None] | None = None) -> Report:
    """Build or update the index at ``cfg.index`` from ``folder``; ``log``
    receives warnings (default: stderr, with a progress line on a terminal)."""
    folder = Path(folder).resolve()
    if not folder.is_dir():
        raise NotAFolder(f"{folder} is not a folder; give the folder that holds your documents")
    if cfg.backend == "local" and folder.is_relative_to(Path(cfg.index).resolve()):
        # The index's own folder is never read as documents, so every document would be left out.
        raise NotAFolder(f"the index folder {cfg.index} holds the documents folder {folder}; give the index a "
                         "folder of its own with --index (one inside the documents folder is fine)")
    if cfg.backend == "local":
        _own_folder(Path(cfg.index))
    if include:
        _check_include(folder, list(include), follow_links, _own_paths(cfg))
    progress = Progress(log)
    # Local: the index folder's lock.  milvus-lite lets one process open its
    # file (a second fails at once, with a message); a server has no lock here.
    try:
        with lock.writer(_state_dir(cfg), wait=wait, log=progress.warn, other=another_index(cfg)):
            report = _ingest(folder, cfg, rebuild, embedder, list(include), follow_links, progress)
    finally:
        progress.done()  # (its ticker stops, however the ingest ends)
    return report


def _own_paths(cfg: Config) -> list[Path]:
    """What an ingest writes, never read as documents."""
    lite = cfg.backend == "milvus" and cfg.milvus_lite
    return [_state_dir(cfg)] + ([Path(cfg.milvus_uri), Path(cfg.milvus_uri + ".citebot")] if lite else [])


def _check_include(folder: Path, include: list[str], follow_links: bool, own: list[Path]) -> None:
    """Refuse --include globs that can match nothing, before the index is
    touched: one that matched no file wrote an empty index with exit 0 and a
    note about "no readable documents", which hid the typo."""
    for g in include:
        if not g.strip() or g.startswith(("/", "~")) or ".." in Path(g).parts:
            raise NotAFolder(f"--include {g!r} is no pattern of paths inside the folder; give one relative to "
                             f"{folder}, such as --include 'en/*'; nothing was written")
    rels = [p.relative_to(folder).as_posix() for p in discover(folder, include, follow_links, exclude=own)]
    if none := [g for g in include if not any(fnmatch.fnmatch(r, g) for r in rels)]:
        raise NotAFolder(" and ".join(f"--include {g!r}" for g in none) + f" matched no file under {folder} "
                         "(a pattern matches the path inside that folder, such as 'en/*' or '*.md'); nothing "
                         "was written")


def _first_names(names: list[str]) -> str:
    """The first three file names, escaped as every file name shown is, and "..." for more."""
    return ", ".join(safe_name(x) for x in names[:3]) + (", ..." if len(names) > 3 else "")


def _own_folder(root: Path) -> None:
    """Refuse an index folder that holds other things and no index: an
    ingest writes its files among them, and every later ingest of a folder
    above it skips that folder as an index (``--index docs/manuals`` left
    manuals' documents out of every index).  An index folder with files of
    the user's added later is still an index: they are kept, never read."""
    if not root.is_dir() or (root / "CURRENT").exists() or holds_index(root):
        return
    other = foreign(root)
    if other:
        raise NotAFolder(f"the index folder {root} already holds {len(other)} other file(s) or folder(s) "
                         f"({_first_names(other)}) and no citebot index; nothing was changed. Give --index an "
                         "empty or new folder")


def _state_dir(cfg: Config) -> Path:
    """Where an ingest's lock and checkpoint live: the index folder, or for
    Milvus beside a milvus-lite file (a server's in the data folder)."""
    if cfg.backend == "local":
        return Path(cfg.index)
    uri = cfg.milvus_uri
    # One folder per collection: two collections in one file must not share (and clear) a checkpoint.
    return (Path(uri + ".citebot") / cfg.milvus_collection if cfg.milvus_lite
            else Path(cfg.data_dir) / f"milvus-{cfg.milvus_collection}")


def _same_documents(prev: _Previous, folder: Path, include: list[str], follow_links: bool, paths: list[Path],
                    cfg: Config, same_place: bool) -> None:
    """Refuse an ingest that would remove documents only because it reads
    another folder (or other --include globs) than the one the index was
    built from: an index mirrors one folder, and `ingest ~/more-docs` must
    not quietly empty it of ~/docs (and cost their embeddings).
    ``same_place``: the same folder read the same way (a document it lacks now was deleted)."""
    before = prev.manifest.get("source_folder")
    if before is None or same_place:  # a fresh index, --rebuild, or one from before the folder was stamped
        return
    was_include, was_links = prev.manifest.get("include", []), bool(prev.manifest.get("follow_links"))
    lost = sorted(set(prev.sources) - {p.relative_to(folder).as_posix() for p in paths})
    if not lost:
        return  # the folder moved, or the new globs still take every document
    how = [f"from {before}" if before != str(folder) else "from this folder"]
    if was_include != include:
        how.append("with " + (" ".join(f"--include {g!r}" for g in was_include) or "no --include"))
    if was_links != follow_links:
        how.append("with" + ("" if was_links else "out") + " --follow-links")
    raise OtherDocuments(f"the index at {index_where(cfg)} was built {' '.join(how)}; this run would remove {len(lost)} of its "
                         f"{len(prev.sources)} documents that it does not read ({_first_names(lost)}). Nothing was "
                         "changed. To replace the index with what this run reads, add --rebuild (vectors of unchanged "
                         f"text are kept); to keep both, give this folder its own {another_index(cfg)}, or ingest a "
                         "folder that holds both")


def _ingest(folder: Path, cfg: Config, rebuild: bool, embedder, include: list[str], follow_links: bool,
            progress: Progress) -> Report:
    report = Report()
    prev = _previous(cfg, rebuild)
    paths = discover(folder, include, follow_links, report.skipped, exclude=_own_paths(cfg))
    progress.start(len(paths))
    chunks, sources = _read_folder(folder, cfg, prev, report, paths, progress)
    report.removed = sorted(set(prev.sources) - set(sources))
    if rebuild:
        report.rebuilt = len(sources)
    if rebuild and prev.before:  # read anew, but reported against the index it replaces ("0 removed" hid them)
        was = prev.before
        report.added = [r for r in sources if r not in was]
        report.changed = [r for r in sources if r in was and was[r].get("sha1") != sources[r]["sha1"]]
        report.unchanged = len(sources) - len(report.added) - len(report.changed)
        report.removed = sorted(set(was) - set(sources))
    # Files of a type citebot does not read are one line a run, by type: a line each (30 pictures, every
    # run) buried the warnings that matter, a staff page skipped for its broken front matter.
    kinds = Counter(why for _, why in report.skipped if why.startswith(UNSUPPORTED))
    for rel, why in report.skipped:
        if not why.startswith(UNSUPPORTED):
            progress.warn(f"skipped {safe_name(rel)}: {why}")  # a name one can find
    if kinds:
        listed = ", ".join(f"{safe_name(why[len(UNSUPPORTED):])} ({n})" for why, n in kinds.most_common())
        progress.warn(f"skipped {sum(kinds.values())} file(s) of a type citebot does not read: {listed}; "
                      f"it reads {' '.join(documents.SUFFIXES)}")
    # A folder with no documents at all (an unmounted drive) never empties a
    # full index; documents that are there but unreadable are removed like
    # any unreadable file (fail closed: a page its author just marked staff
    # with a broken line must not stay public).
    found_documents = any(documents.file_type(p) in documents.SUFFIXES for p in paths)
    if not sources and prev.n_chunks and not found_documents:
        raise IndexError_(f"{folder} holds no readable documents, but the index at {index_where(cfg)} holds "
                          f"{prev.n_chunks} chunks; nothing was changed. To empty the index, ingest with --rebuild")
    same_place = (prev.manifest.get("source_folder") == str(folder) and prev.manifest.get("include", []) == include
                  and bool(prev.manifest.get("follow_links")) == follow_links)
    _same_documents(prev, folder, include, follow_links, paths, cfg, same_place)
    if not sources:
        progress.warn(f"no readable documents under {folder}; citebot reads {', '.join(documents.SUFFIXES)} "
                      "(the index is empty, so every question will be refused)")
    # Milvus fixes a collection's dense index type when it is made: another one
    # takes a fresh collection (the vectors of unchanged text are kept).
    retype = (cfg.backend == "milvus" and bool(prev.manifest) and not rebuild
              and prev.manifest.get("milvus_index") != cfg.milvus_index)
    if retype:
        progress.warn(f"the Milvus collection's dense index is {prev.manifest.get('milvus_index') or 'not stamped'} "
                      f"and milvus_index is {cfg.milvus_index}: writing a fresh collection")
    if prev.manifest and same_place and not retype and not (report.added or report.changed or report.removed):
        report.chunks = report.reused = len(chunks)
        report.seconds = progress.elapsed()
        return report  # nothing changed: no model to load, nothing to write
    keys = [text_key(c) for c in chunks]
    vectors, emb = _vectors(cfg, chunks, keys, prev, embedder, report, progress)
    counts = [prev.counts.get(k) or Counter(analyzer.analyze(c.search_text)) for k, c in zip(keys, chunks)]
    stamp = settings_stamp(cfg, emb.name if emb else prev.manifest["embed_model"],
                           emb.dim if emb else prev.manifest["embed_dim"])
    manifest = dict(stamp, source_folder=str(folder), include=include, follow_links=follow_links, sources=sources,
                    scopes=scope_values(chunks))
    if cfg.backend == "milvus":
        from citebot.index import milvus

        manifest.update(backend="milvus", milvus_uri=cfg.milvus_uri, milvus_collection=cfg.milvus_collection,
                        milvus_index=cfg.milvus_index)
        in_place = None if rebuild or retype else prev.index
        try:
            milvus.write(cfg, chunks, vectors, counts, manifest, in_place,  # type: ignore[arg-type]
                         set(report.added) | set(report.changed), {c.id for cs in prev.by_source.values() for c in cs})
        except KeyboardInterrupt:
            if in_place is not None:  # a fresh collection is switched to at the end; this one is written as it goes
                raise InterruptedInPlace() from None
            raise
    else:
        try:
            gen = LocalIndex(chunks, vectors, manifest, counts=counts).save(cfg.index)
        except OSError as e:
            raise IndexError_(f"could not write the index at {cfg.index} ({e.strerror or e}); "
                              "the previous index is untouched") from None
        report.index_bytes = sum(p.stat().st_size for p in gen.iterdir())
    _Checkpoint(_state_dir(cfg)).clear()
    report.written = True
    report.seconds = progress.elapsed()
    return report


def _vectors(cfg: Config, chunks: list[Chunk], keys: list[str], prev: _Previous, embedder, report: Report,
             progress: Progress):
    """Every chunk's vector: reused, checkpointed by an interrupted run, or
    embedded now (the model is loaded only when something needs embedding)."""
    ckpt = _Checkpoint(_state_dir(cfg))
    known = dict(prev.vectors)
    todo_keys = [k for k in dict.fromkeys(keys) if k not in known]
    emb = None
    if todo_keys or not prev.manifest:
        emb = embedder or models.embedder(cfg.embed_model)
        dim = prev.manifest.get("embed_dim")
        if dim is not None and dim != emb.dim:
            raise IndexError_(f"the index holds {dim}-dimensional vectors but {emb.name} makes {emb.dim}; "
                              "rebuild it with --rebuild")
        known.update(ckpt.load(emb.name, emb.dim))
    text_of = dict(zip(keys, (c.search_text for c in chunks)))
    todo = [k for k in todo_keys if k not in known]
    progress.embedding(len(todo))
    for i in range(0, len(todo), EMBED_BATCH):
        batch = todo[i:i + EMBED_BATCH]
        assert emb is not None
        fresh = np.asarray(emb.encode([text_of[k] for k in batch]), dtype=np.float32)
        ckpt.save(emb.name, batch, fresh)
        known.update(zip(batch, fresh))
        progress.embedded(len(batch))
    report.chunks, report.embedded = len(chunks), len(todo)
    # Every chunk not embedded this run reused a vector, a second chunk of the same text included
    # (pymdown-extensions' "577 chunks (576 embedded, 0 reused)" left one chunk unaccounted for).
    report.reused = len(keys) - len(todo)
    dim = emb.dim if emb else prev.manifest["embed_dim"]
    vectors = np.stack([known[k] for k in keys]).astype(np.float32) if chunks else np.zeros((0, dim), np.float32)
    return vectors, emb


class _Checkpoint:
    """Embeddings made by a run that may not finish: INDEX/.partial/*.npz,
    one file per batch, cleared once the index is written."""

    def __init__(self, root: Path):
        self.dir = root / ".partial"

    def load(self, model: str, dim: int) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for f in sorted(self.dir.glob("*.npz")) if self.dir.is_dir() else []:
            if f.name.endswith(".tmp.npz"):
                f.unlink(missing_ok=True)  # a batch whose write never finished
                continue
            try:
                with np.load(f, allow_pickle=False) as z:
                    if str(z["model"]) == model and z["vectors"].shape[1:] == (dim,):
                        out.update(zip(z["keys"].tolist(), z["vectors"]))
            except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
                continue  # a batch cut off by the interruption: embed it again
        return out

    def save(self, model: str, keys: list[str], vectors: np.ndarray) -> None:
        self.dir.mkdir(exist_ok=True)
        tmp = self.dir / f"{keys[0]}.tmp.npz"
        try:
            np.savez(tmp, model=np.array(model), keys=np.array(keys), vectors=vectors)
            os.replace(tmp, self.dir / f"{keys[0]}.npz")
        except OSError as e:
            tmp.unlink(missing_ok=True)
            raise IndexError_(f"cannot save the embeddings made so far in {self.dir} ({e.strerror or e}); "
                              "free some space and ingest again (the index was not changed)") from None

    def clear(self) -> None:
        if self.dir.is_dir():
            for f in self.dir.iterdir():
                f.unlink(missing_ok=True)
            self.dir.rmdir()

"""``LocalIndex``: the index in plain files on this machine.

On-disk layout (plain formats, one folder per generation)::

    INDEX/CURRENT                   name of the live generation (replaced atomically)
    INDEX/.lock                     held by the one writer (index/lock.py)
    INDEX/gen-<n>/manifest.json     settings that built it, sources and their hashes, row count
    INDEX/gen-<n>/chunks.jsonl      one chunk per line, row order
    INDEX/gen-<n>/rows.json         per row: chunk id, status, audience, lang, tenant, byte offset in chunks.jsonl
    INDEX/gen-<n>/terms.txt         the analyzed vocabulary, one term per line (line i = term i)
    INDEX/gen-<n>/postings.npz      BM25 term x chunk matrix in CSR form: indptr, rows, tf; doc lengths
    INDEX/gen-<n>/embeddings.npy    float32 [rows, dim], L2-normalised (memory-mapped when read)

Loading analyses nothing: the terms were analysed once at ingest, so a
query costs the postings of its terms, not a pass over every chunk.  Chunk
text is read from chunks.jsonl only for the rows a caller asks for.

A write builds a new generation beside the live one and only then points
CURRENT at it, so a crash mid-ingest leaves the previous index usable; the
previous generation is kept until the next write, so a reader that opened it
just before the switch can finish, and a reader that races the switch
retries once on the new generation.  Damage of any kind is an
``IndexError_`` naming the rebuild command, never a traceback.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import threading
import time
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from citebot.index.store import FORMAT, IndexError_, TermStat, rebuild_command
from citebot.schema import Chunk, Hit, Scope
from citebot.search import bm25
from citebot.terminal import script

FILES = ("manifest.json", "chunks.jsonl", "rows.json", "terms.txt", "postings.npz", "embeddings.npy")
_GEN = re.compile(r"gen-\d+")


class LocalIndex:
    def __init__(self, chunks: Sequence[Chunk] | None, vectors: np.ndarray, manifest: dict, *,
                 counts: Sequence[dict[str, int]] | None = None, matrix: bm25.Postings | None = None,
                 rows: dict | None = None, chunks_path: Path | None = None):
        """From chunks in memory (ingest, benchmarks; ``counts``: each chunk's
        analysed term counts when known, else the text is analysed), or from a
        generation's files (``load``): then ``chunks`` is None and text is read
        on demand."""
        self.manifest = manifest
        self._vectors = vectors
        if chunks is not None:
            chunks = list(chunks)
            rows = {"ids": [c.id for c in chunks], "status": [c.status for c in chunks],
                    "audience": [c.audience for c in chunks], "lang": [c.lang for c in chunks],
                    "tenant": [c.tenant for c in chunks]}
            matrix = (bm25.Postings.from_counts(counts) if counts is not None
                      else bm25.Postings.build([c.search_text for c in chunks]))
        assert rows is not None and matrix is not None
        self._cached: dict[int, Chunk] = dict(enumerate(chunks)) if chunks is not None else {}
        self._rows = rows
        self._ids: list[str] = rows["ids"]
        self._row = {cid: i for i, cid in enumerate(self._ids)}
        self._offsets = rows.get("offsets")
        self._chunks_path = chunks_path
        # Held open for the index's life: a generation a later write removes
        # stays readable to a reader that opened it (the memory map of the
        # vectors does the same).
        self._chunks_file = open(chunks_path, "rb") if chunks_path is not None else None
        self._read_lock = threading.Lock()
        self._postings = matrix
        bm = manifest.get("bm25", {})
        self._k1, self._b = float(bm.get("k1", 1.2)), float(bm.get("b", 0.75))
        self._allowed: dict[Scope, np.ndarray] = {}
        self._tie: np.ndarray | None = None
        self._where: tuple[Path, tuple] | None = None  # (root, the generation's signature) when loaded from files

    def __len__(self) -> int:
        return len(self._ids)

    # --- the contract ---------------------------------------------------
    def _mask(self, scope: Scope) -> np.ndarray:
        """Rows the scope may see; each channel ranks only these (filter first)."""
        mask = self._allowed.get(scope)
        if mask is None:
            r = self._rows
            mask = np.fromiter((scope.admits(*row) for row in zip(r["status"], r["audience"], r["lang"], r["tenant"])),
                               dtype=bool, count=len(self._ids))
            self._allowed[scope] = mask
        return mask

    def _id_order(self) -> np.ndarray:
        """Each row's place in chunk-id order: ties break by chunk id, as on
        Milvus (by row, the two backends ranked tied chunks differently)."""
        if self._tie is None:
            self._tie = np.argsort(np.argsort(np.array(self._ids, dtype=str), kind="stable"), kind="stable")
        return self._tie

    def sparse_search(self, terms: Sequence[str], scope: Scope, k: int) -> list[Hit]:
        found = bm25.top_k(self._postings, list(terms), self._mask(scope), k, self._k1, self._b, self._id_order())
        chunks = self._lazy([r for r, _ in found])
        return [Hit(c, rank=i, score=s, ranks={"bm25": i}, scores={"bm25": s})
                for i, (c, (_, s)) in enumerate(zip(chunks, found), 1)]

    def dense_search(self, vector: np.ndarray, scope: Scope, k: int) -> list[Hit]:
        mask = self._mask(scope)
        n_allowed = int(mask.sum())
        if n_allowed == 0 or self._vectors.shape[0] == 0:
            return []
        q = np.asarray(vector, dtype=np.float32)
        if n_allowed * 8 < len(mask):  # few rows: score only those (a gather beats a full pass)
            rows = np.flatnonzero(mask)
            sims = self._vectors[rows] @ q
        else:  # most rows: one pass over the matrix in place, then mask out what the scope forbids
            sims = np.asarray(self._vectors @ q)
            if n_allowed < len(mask):
                sims = np.where(mask, sims, -np.inf)
            rows = None
        hit = sims > 0  # cosine <= 0: not a hit
        rows = np.flatnonzero(hit) if rows is None else rows[hit]
        rows, sims = bm25.best_k(rows, sims[hit], k, self._id_order())
        chunks = self._lazy([int(r) for r in rows])
        return [Hit(c, rank=i, score=float(v), ranks={"dense": i}, scores={"dense": float(v)})
                for i, (c, v) in enumerate(zip(chunks, sims), 1)]

    def get(self, ids: Sequence[str]) -> list[Chunk]:
        return self._get_rows([self._row[i] for i in ids])

    def scan(self, scope: Scope) -> Iterator[Chunk]:
        rows = np.flatnonzero(self._mask(scope)).tolist()
        for start in range(0, len(rows), 1000):
            yield from self._get_rows(rows[start:start + 1000])

    def term_stats(self, terms: Sequence[str], scope: Scope) -> dict[str, TermStat]:
        mask = self._mask(scope)
        p = self._postings
        out = {}
        for t in dict.fromkeys(terms):
            rows = p.rows_of(t)
            held = bool(mask[rows].any()) if len(rows) else False
            # A term only chunks outside the scope hold reads as a term no chunk holds: its idf
            # must not tell that a restricted page has it (store.TermStat).
            out[t] = TermStat(bm25.idf(p.n_docs, len(rows) if held else 0), held)
        return out

    def terms_held(self, ids: Sequence[str], terms: Sequence[str]) -> dict[str, frozenset[str]]:
        uniq = list(dict.fromkeys(terms))
        rows = {i: self._row[i] for i in ids}
        held: dict[str, set[str]] = {i: set() for i in ids}
        for t in uniq:
            postings = self._postings.rows_of(t)
            if not len(postings):
                continue
            for i, r in rows.items():
                j = np.searchsorted(postings, r)
                if j < len(postings) and postings[j] == r:
                    held[i].add(t)
        return {i: frozenset(s) for i, s in held.items()}

    def vectors(self, ids: Sequence[str]) -> np.ndarray | None:
        if self._vectors.shape[0] == 0:
            return None
        return np.asarray(self._vectors[[self._row[i] for i in ids]])

    # --- what an incremental ingest reuses ------------------------------------
    def contents(self) -> tuple[list[Chunk], np.ndarray, list[dict[str, int]]]:
        """Every chunk in row order, its vector, its analysed term counts."""
        return self._get_rows(range(len(self))), np.asarray(self._vectors), self._postings.counts()

    # --- chunk text ---------------------------------------------------------
    def _lazy(self, rows: Sequence[int]) -> list[Chunk]:
        """Chunks for hits: read from disk when something reads them (most
        of a channel's 50 hits are only ranked and fused, never read)."""
        return [self._cached[r] if r in self._cached else LazyChunk(self, r) for r in rows]  # type: ignore[misc]

    def _get_rows(self, rows: Sequence[int]) -> list[Chunk]:
        missing = [r for r in rows if r not in self._cached]
        if missing:
            assert self._chunks_file is not None and self._chunks_path is not None and self._offsets is not None
            with self._read_lock:
                for r in sorted(missing):
                    self._chunks_file.seek(self._offsets[r])
                    self._cached[r] = _chunk(self._chunks_file.readline(), self._chunks_path, self.manifest)
        return [self._cached[r] for r in rows]

    # --- files ----------------------------------------------------------
    @staticmethod
    def live_dir(root: Path) -> Path | None:
        """The live generation's folder, or None when there is no index."""
        try:
            name = (root / "CURRENT").read_bytes().decode("ascii").strip()
        except (FileNotFoundError, NotADirectoryError):
            # Generations without the pointer are a damaged index, not no index: an ingest that
            # took it for none would embed everything again and delete the generations.
            if _generations(root):
                raise _damaged(root, "CURRENT is missing", known_manifest(root)) from None
            return None
        except (OSError, UnicodeDecodeError):
            raise _damaged(root, "CURRENT is unreadable", known_manifest(root)) from None
        if not _GEN.fullmatch(name):
            raise _damaged(root, f"CURRENT names {name[:40]!r}", known_manifest(root))
        gen = root / name
        if not gen.is_dir():
            raise _damaged(root, f"CURRENT names {name}, which is not there", known_manifest(root))
        return gen

    @classmethod
    def newest_readable(cls, root: Path) -> LocalIndex | None:
        """The newest generation that still loads, whatever CURRENT says
        (``--rebuild`` of a damaged index keeps its vectors from it)."""
        for gen in _generations(root):
            try:
                return cls._load(root, gen)
            except (IndexError_, OSError, ValueError):
                continue
        return None

    @classmethod
    def load(cls, root: str | Path) -> LocalIndex:
        """The live generation; a reader that races a writer's switch (its
        generation vanished as it read) retries once on the new one."""
        root = Path(root)
        for attempt in (1, 2):
            try:
                gen = cls.live_dir(root)
            except IndexError_:
                if attempt == 1:
                    continue  # a writer may have switched CURRENT and removed the old generation: read it again
                raise
            if gen is None:
                if root.exists() and not root.is_dir():
                    raise IndexError_(f"{root} is a file, not an index folder; give the folder an ingest built "
                                      "with --index (or CITEBOT_INDEX)")
                if Path(str(root) + ".citebot").is_dir():  # milvus-lite's database, with citebot's folder beside it
                    raise IndexError_(f"{root} is a milvus-lite database, not a local index: instead of --index, "
                                      f"give --set backend=milvus --set milvus_uri={root}")
                if foreign(root):  # a documents folder given as the index: building there is refused too
                    raise IndexError_(f"no index at {root}: it holds other files (documents?) and no citebot index. "
                                      f"Give --index the folder an ingest built, or build one in a new folder: "
                                      f"{script('ingest.py')} FOLDER --index NEW-FOLDER")
                raise IndexError_(f"no index at {root}. Build one first: {script('ingest.py')} FOLDER --index {root}")
            try:
                return cls._load(root, gen)
            except FileNotFoundError as e:
                if attempt == 2 or cls.live_dir(root) == gen:
                    what = Path(e.filename).name if e.filename else "a file"
                    raise _damaged(root, f"{gen.name} lacks {what}", known_manifest(root)) from None
        raise AssertionError("unreachable")

    @classmethod
    def _load(cls, root: Path, gen: Path) -> LocalIndex:
        manifest = _json(gen / "manifest.json", root, dict)

        def damaged(what: str) -> IndexError_:
            return _damaged(root, what, manifest)
        if manifest.get("format") != FORMAT:
            found = manifest.get("format")
            if isinstance(found, int) and not isinstance(found, bool) and found > FORMAT:
                # Rebuilding would overwrite what a newer citebot made for this one's sake.
                raise IndexError_(f"the index at {root} was built by a newer citebot (format {found}; this one reads "
                                  f"{FORMAT}): use that citebot, or upgrade this one")
            raise IndexError_(f"the index at {root} has format {found!r}, this citebot reads "
                              f"{FORMAT}. Rebuild it: {rebuild_command(manifest, root)}")
        rows = _json(gen / "rows.json", root, dict, manifest)
        n = manifest.get("n_chunks")
        cols = ("ids", "status", "audience", "lang", "tenant", "offsets")
        if not isinstance(n, int) or any(not isinstance(rows.get(c), list) or len(rows[c]) != n for c in cols):
            raise damaged("rows.json does not match the manifest")
        try:
            vectors = np.load(gen / "embeddings.npy", mmap_mode="r")
            postings = bm25.Postings.load(gen / "postings.npz", gen / "terms.txt")
        except FileNotFoundError:
            raise
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:
            raise damaged(f"{type(e).__name__} reading its arrays") from None
        dim = manifest.get("embed_dim")
        if vectors.ndim != 2 or vectors.shape[0] != n or (dim is not None and vectors.shape[1] != dim):
            raise damaged(f"embeddings.npy holds {vectors.shape}, the manifest says {n} x {dim}")
        if postings.n_docs != n or (gen / "chunks.jsonl").stat().st_size < (rows["offsets"][-1] if n else 0):
            raise damaged("postings or chunks.jsonl do not match the manifest")
        index = cls(None, vectors, manifest, matrix=postings, rows=rows, chunks_path=gen / "chunks.jsonl")
        index._where = (root, _signature(gen))
        return index

    def live(self) -> LocalIndex:
        """This reader while CURRENT still names the generation it read (one
        small read and a stat a question), else the one live now.  An index
        built in memory has no files to follow."""
        if self._where is None:
            return self
        root, seen = self._where
        try:
            gen = self.live_dir(root)
            if gen is not None and _signature(gen) == seen:
                return self
        except (IndexError_, OSError):
            pass  # damaged or gone: loading says which, with the command that fixes it
        return LocalIndex.load(root)

    def save(self, root: str | Path) -> Path:
        """Write a new generation and switch to it; the caller holds the
        writer lock.  Keeps the generation that was live until now."""
        root = Path(root)
        root.mkdir(parents=True, exist_ok=True)
        try:
            previous = self.live_dir(root)
        except IndexError_:
            previous = None  # a damaged pointer is being replaced
        gen = root / f"gen-{time.time_ns()}"
        tmp = gen.with_name(gen.name + ".tmp")
        tmp.mkdir()
        try:
            self._write(tmp)
            os.replace(tmp, gen)
            pointer = root / "CURRENT.tmp"
            pointer.write_text(gen.name, encoding="ascii")
            _fsync(pointer)
            os.replace(pointer, root / "CURRENT")  # the atomic switch
            _fsync(root)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)  # the live generation is untouched
            raise
        for old in root.iterdir():  # older generations and the leftovers of crashed writers, nothing else:
            if old not in (gen, previous) and is_generation(old):  # a user's "gen-z-drafts" folder is theirs
                shutil.rmtree(old, ignore_errors=True)
        return gen

    def _write(self, tmp: Path) -> None:
        offsets = []
        with open(tmp / "chunks.jsonl", "wb") as f:
            for c in self._get_rows(range(len(self))):
                offsets.append(f.tell())
                f.write((json.dumps(c.to_dict(), ensure_ascii=False) + "\n").encode("utf-8"))
        rows = {k: self._rows[k] for k in ("ids", "status", "audience", "lang", "tenant")}
        (tmp / "rows.json").write_text(json.dumps(dict(rows, offsets=offsets), ensure_ascii=False), encoding="utf-8")
        self._postings.save(tmp / "postings.npz", tmp / "terms.txt")
        np.save(tmp / "embeddings.npy", np.asarray(self._vectors, dtype=np.float32))
        manifest = dict(self.manifest, n_chunks=len(self))
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False), encoding="utf-8")
        for p in tmp.iterdir():  # make the bytes durable before the switch
            _fsync(p)


class LazyChunk:
    """A chunk whose id is known and whose text is read on first use."""

    __slots__ = ("id", "_index", "_row")

    def __init__(self, index: LocalIndex, row: int):
        self.id, self._index, self._row = index._ids[row], index, row

    def __getattr__(self, name: str):
        return getattr(self._index._get_rows([self._row])[0], name)

    def __eq__(self, other) -> bool:
        return getattr(other, "id", None) == self.id and getattr(other, "text", None) == self.text

    def __hash__(self) -> int:
        return hash(self.id)


def _signature(gen: Path) -> tuple:
    """What tells one generation from another of the same name (an index
    folder deleted and built again starts at gen-1 again)."""
    st = (gen / "manifest.json").stat()
    return gen.name, st.st_ino, st.st_mtime_ns


def is_generation(path: Path) -> bool:
    """Whether ``path`` is a generation folder an ingest wrote: ``gen-<n>``
    holding any of the index's files, or one an interrupted ingest left
    (``gen-<n>.tmp``).  A folder of the user's that is merely named so
    ("gen-2" with drafts in it) is not, and is never removed."""
    try:
        if not (path.is_dir() and _GEN.fullmatch(path.name.removesuffix(".tmp"))):
            return False
        return path.name.endswith(".tmp") or _holds_files(path)
    except OSError:
        return False


def _holds_files(gen: Path) -> bool:
    return any((gen / f).is_file() for f in FILES)


# What an index folder holds besides its generations (lock.py, build.py's checkpoint).
INDEX_ENTRIES = frozenset({"CURRENT", "CURRENT.tmp", ".lock", ".partial"})


def foreign(root: Path) -> list[str]:
    """The names in ``root`` that no ingest put there, sorted ([] when
    ``root`` is not a folder)."""
    try:
        # Hidden files (.gitkeep, .DS_Store) and a volume's lost+found leave a folder empty to its user.
        return sorted(p.name for p in root.iterdir() if p.name not in INDEX_ENTRIES and not is_generation(p)
                      and not p.name.startswith(".") and p.name != "lost+found")
    except OSError:
        return []


def _generations(root: Path) -> list[Path]:
    """The generation folders under ``root`` (finished or not loadable,
    never ``.tmp``), newest first."""
    if not root.is_dir():
        return []
    return sorted((g for g in root.iterdir() if _GEN.fullmatch(g.name) and is_generation(g)), reverse=True)


def holds_index(path: Path) -> bool:
    """Whether ``path`` holds a local citebot index: a generation folder,
    finished or one an interrupted ingest left half-written (``.tmp``), with
    any of the index's files (a folder that merely holds a file named
    CURRENT is documents)."""
    try:
        return any(is_generation(g) and _holds_files(g) for g in path.glob("gen-*"))
    except OSError:
        return False


def known_manifest(root: Path) -> dict:
    """The newest readable manifest of any generation (the rebuild command
    names its folder even when CURRENT itself is damaged); {} if none."""
    for gen in sorted(root.glob("gen-*"), reverse=True):
        try:
            m = json.loads((gen / "manifest.json").read_bytes())
            if isinstance(m, dict) and "source_folder" in m:
                return m
        except (OSError, ValueError):
            continue
    return {}


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _damaged(root: Path, what: str, manifest: dict) -> IndexError_:
    """The one message for a damaged index: what is wrong, and the command that fixes it."""
    return IndexError_(f"the index at {root} is damaged ({what}). Rebuild it: {rebuild_command(manifest, root)}")


def _json(path: Path, root: Path, kind: type, manifest: dict | None = None):
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as e:
        raise _damaged(root, f"{path.name}: {type(e).__name__}", manifest or {}) from None
    if not isinstance(data, kind):
        raise _damaged(root, f"{path.name} is not a JSON {kind.__name__}", manifest or {})
    return data


def _chunk(line: bytes, path: Path, manifest: dict) -> Chunk:
    try:
        d = json.loads(line)
        return Chunk.from_dict(d)
    except (ValueError, TypeError, AttributeError):
        root = path.parent.parent
        raise _damaged(root, "a line of chunks.jsonl is cut or lacks a field", manifest) from None

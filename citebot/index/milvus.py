"""``MilvusIndex``: the same ``SearchIndex`` contract on Milvus, through pymilvus.

One client code path from an embedded file (milvus-lite: ``milvus_uri =
"./citebot.db"``, for tests and CI) to Milvus Standalone, a cluster or Zilliz
Cloud (``milvus_uri = "http://host:19530"`` and ``CITEBOT_MILVUS_TOKEN``).

* Filters before ranking: the scope becomes a filter expression inside every
  search request; values are escaped literals (milvus-lite parses no
  ``filter_params`` templates), so a tenant named ``x" or tenant != "`` is a
  tenant name, not a wider scope.  The tenant is the partition key.
* The keyword channel sees citebot's own terms and ranks as the local one
  does: each chunk is stored with a sparse vector of its analysed terms
  weighted ``tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))``, a query
  carries each term's idf, and Milvus ranks by their inner product — BM25
  exactly, with statistics over the whole collection.  (Milvus's own BM25
  function was measured first: fed the same terms, milvus-lite keeps its
  statistics per segment, and segments per tenant partition, which moved
  BM25-only hit@5 on the golden set by 0.025.)  Terms, their ids and document
  frequencies live in a second collection beside the chunks.  Which terms a
  chunk holds (the answerer's evidence) is read from its text with the same
  analyzer, so it means the same on both backends; no chunk is cut to fit a
  column (the chunker keeps every chunk within ``chunker.MAX_BYTES``).
* Every hit keeps each channel's rank and raw score, so /why and the
  evaluation read the same on both.
* The settings that built the index are stamped in the collection's
  properties; a full rebuild fills a new collection and then switches the
  alias the bot reads, so a crash mid-rebuild leaves the old one live.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shlex
import time
from collections import Counter
from collections.abc import Iterator, Sequence, Set
from pathlib import Path

import numpy as np

from citebot.index.chunker import MAX_BYTES
from citebot.index.metadata import LONGEST
from citebot.index.store import IndexError_, TermStat, rebuild_command
from citebot.schema import Chunk, Hit, Scope
from citebot.search import analyzer
from citebot.search.bm25 import idf, tf_part
from citebot.terminal import script
from citebot.tokens import cut_bytes

TEXT_MAX = MAX_BYTES  # bytes: VARCHAR is capped at 65,535 bytes on a Milvus server
TITLE_MAX = 4096  # bytes: the title column (shown with citations; a text file's first line can be any length)
SOURCE_MAX = 2048  # bytes: the source column; a longer path is skipped at ingest (build.PATH_MAX)
MANIFEST = "citebot.manifest"
TIE_SLACK = 16  # hits asked for beyond k, so that a tie at the k-th place is usually seen whole at once
TOPK_MAX = 16384  # the most a Milvus search returns
FIELDS = ["id", "source", "title", "headings", "body", "start", "end", "page", "end_page", "status", "audience", "lang",
          "tenant"]


def term_key(term: str) -> str:
    """A term's primary key in the terms collection (VARCHAR, 1,024 bytes at
    most): the term, or for a longer one (a hex key in a code block; the
    analyzer keeps runs whole) a digest that no analysed term can equal."""
    if len(term.encode("utf-8")) <= 1000:
        return term
    return "\x00" + hashlib.sha1(term.encode("utf-8")).hexdigest()


def lit(value: str) -> str:
    """A string literal for a filter expression (the grammar's own escapes only)."""
    out = (str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
           .replace("\t", "\\t"))
    if any(ord(ch) < 32 for ch in out):
        raise ValueError("a control character cannot be part of a filter value")
    return f'"{out}"'


def scope_filter(scope: Scope) -> str:
    """The scope as a filter expression; every value an escaped literal."""
    parts = [f"status in [{', '.join(map(lit, sorted(scope.statuses)))}]",
             f"audience in [{', '.join(map(lit, sorted(scope.audiences)))}]"]
    if scope.langs is not None:
        parts.append(f"lang in [{', '.join(map(lit, sorted(scope.langs)))}]")
    if not scope.all_tenants:
        parts.append("(tenant is null" + (f" or tenant == {lit(scope.tenant)})" if scope.tenant else ")"))
    return " and ".join(parts)


def connect(cfg):
    """A client for ``cfg.milvus_uri`` (a local file starts milvus-lite)."""
    try:
        from pymilvus import MilvusClient
    except ImportError:
        raise IndexError_("the Milvus backend needs pymilvus: pip install pymilvus milvus-lite") from None
    for name in ("pymilvus", "milvus_lite"):  # each logs a traceback for a failed call; citebot says what failed
        logging.getLogger(name).setLevel(logging.CRITICAL)
    # milvus-lite serves the file from a thread of this process; a second client made after a long
    # embedding run sometimes found its shared channel unhealthy and failed at once (a retry recovers it).
    attempts = 3 if cfg.milvus_lite else 1
    for attempt in range(1, attempts + 1):
        try:
            return MilvusClient(uri=cfg.milvus_uri, token=cfg.milvus_token or "")
        except Exception as e:  # noqa: BLE001 - connection and lock failures come in many types
            if attempt < attempts:
                time.sleep(attempt)
                continue
            if cfg.milvus_lite and _read_only(Path(cfg.milvus_uri)):
                raise IndexError_(f"cannot open the milvus-lite database {cfg.milvus_uri}: milvus-lite needs write "
                                  "access to it even to search (a read-only copy cannot be opened); copy it where "
                                  "this user may write, or serve it from a Milvus server") from None
            raise IndexError_(f"cannot open Milvus at {cfg.milvus_uri} ({type(e).__name__}: {str(e)[:160]}); "
                              "is another citebot process holding this milvus-lite file, or is the server down?") from None
    raise AssertionError("unreachable")


def _identity(cfg) -> tuple[int, int] | None:
    """Which milvus-lite database file is at the settings' path (None: none is)."""
    try:
        st = Path(cfg.milvus_uri).stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _release(uri: str, client) -> None:
    """Stop this process's milvus-lite server for ``uri``, so the next client reads the file anew."""
    try:
        client.close()
    except Exception:  # noqa: BLE001 - already closed, or its server gone
        pass
    try:
        from milvus_lite.server_manager import server_manager_instance

        server_manager_instance.release_server(uri)
    except Exception:  # noqa: BLE001 - another milvus-lite: opening again says what is wrong
        pass


def _read_only(path: Path) -> bool:
    """Whether a milvus-lite database (a file or folder) or the folder it would be made in cannot be written."""
    target = path if path.exists() else path.parent
    return target.exists() and not os.access(target, os.W_OK)


def bm25_weights(counts: dict[str, int], tid: dict[str, int], avgdl: float, k1: float, b: float) -> dict[int, float]:
    """A chunk's sparse vector: each term's BM25 tf part (the query supplies the idf)."""
    dl = sum(counts.values())
    return {tid[t]: tf_part(tf, dl, avgdl, k1, b) for t, tf in counts.items()}


def _row(c: Chunk, vector: np.ndarray, sparse: dict[int, float]) -> dict:
    return {"id": c.id, "source": c.source, "title": cut_bytes(c.title, TITLE_MAX), "headings": list(c.headings),
            "body": cut_bytes(c.text, TEXT_MAX), "start": c.start, "end": c.end, "page": c.page,
            "end_page": c.end_page, "status": c.status,
            "audience": c.audience, "lang": c.lang, "tenant": c.tenant, "sparse": sparse or {0: 0.0},
            "dense": np.asarray(vector, dtype=np.float32).tolist()}


def _chunk(r: dict) -> Chunk:
    return Chunk(id=r["id"], source=r["source"], title=r["title"], headings=tuple(r.get("headings") or ()),
                 text=r["body"], start=int(r["start"]), end=int(r["end"]), status=r["status"],
                 audience=r["audience"], lang=r["lang"], tenant=r.get("tenant"), page=r.get("page"),
                 end_page=r.get("end_page"))


class MilvusIndex:
    def __init__(self, client, collection: str, manifest: dict):
        self.client, self.collection, self.manifest = client, collection, manifest
        self._cfg = None  # the settings it was opened with (``live`` opens the same place again)
        self._file: tuple[int, int] | None = None  # the milvus-lite database file it read (device, inode)
        self.terms_collection = manifest["terms_collection"]
        self._n = int(manifest.get("n_chunks", 0))
        self._known: dict[str, tuple[int, int] | None] = {}

    @classmethod
    def open(cls, cfg, client=None) -> MilvusIndex:
        """``client``: a connection the caller holds (one per process is enough)."""
        name = cfg.milvus_collection
        # A milvus-lite file that is not there is no index; connecting would create it.
        missing = client is None and cfg.milvus_lite and not Path(cfg.milvus_uri).exists()
        client = client if client is not None or missing else connect(cfg)
        if missing or not client.has_collection(name):
            raise IndexError_(f"no index in Milvus collection {name!r} at {cfg.milvus_uri}. Build one first: "
                              f"{script('ingest.py')} FOLDER --set backend=milvus --set milvus_uri={shlex.quote(cfg.milvus_uri)}"
                              + (f" --set milvus_collection={shlex.quote(name)}" if name != "citebot" else ""))
        where = {"backend": "milvus", "milvus_uri": cfg.milvus_uri, "milvus_collection": name}
        try:
            props = client.describe_collection(name).get("properties", {})
            manifest = json.loads(props[MANIFEST])
        except (KeyError, ValueError, TypeError):
            raise IndexError_(f"the Milvus collection {name!r} holds no citebot manifest. Rebuild it: "
                              + rebuild_command(where, name)) from None
        try:
            client.load_collection(name)
            client.load_collection(manifest["terms_collection"])
        except Exception as e:  # noqa: BLE001 - MilvusException and its kin: a collection gone or unloadable
            raise IndexError_(f"the Milvus collection {name!r} is damaged ({type(e).__name__}: {str(e)[:160]}). "
                              f"Rebuild it: {rebuild_command({**manifest, **where}, name)}") from None
        index = cls(client, name, manifest)
        index._cfg = cfg
        index._file = _identity(cfg) if cfg.milvus_lite else None
        return index

    def live(self) -> MilvusIndex:
        """This reader while the collection's stamped manifest is the one it
        read (an in-place update restamps it, a rebuild switches the alias to
        another collection), else one opened again: its term statistics and
        terms collection belong to the index live now."""
        if self._cfg is None:
            return self
        if self._cfg.milvus_lite and _identity(self._cfg) != self._file:
            # The database was deleted (or deleted and made again by an ingest): this process's
            # milvus-lite still served the old one from memory, so the chat kept answering from it.
            _release(self._cfg.milvus_uri, self.client)
            return MilvusIndex.open(self._cfg)
        try:
            now = json.loads(self.client.describe_collection(self.collection).get("properties", {})[MANIFEST])
        except Exception:  # noqa: BLE001 - gone or unreadable: opening again says which
            now = None
        return self if now == self.manifest else MilvusIndex.open(self._cfg, self.client)

    def __len__(self) -> int:
        return self._n

    # --- the contract ---------------------------------------------------
    def sparse_search(self, terms: Sequence[str], scope: Scope, k: int) -> list[Hit]:
        known = self._terms(list(terms))
        query: dict[int, float] = {}
        for t in terms:  # every occurrence counts, as in rank-bm25
            if t in known:
                tid, df = known[t]
                query[tid] = query.get(tid, 0.0) + idf(self._n, df)
        if not query:
            return []
        found = self._search(k, data=[query], anns_field="sparse", filter=scope_filter(scope),
                             search_params={"metric_type": "IP"})
        return [Hit(_chunk(e), rank=i, score=s, ranks={"bm25": i}, scores={"bm25": s})
                for i, (s, e) in enumerate(found, 1)]

    def dense_search(self, vector: np.ndarray, scope: Scope, k: int) -> list[Hit]:
        found = self._search(k, data=[np.asarray(vector, dtype=np.float32).tolist()], anns_field="dense",
                             filter=scope_filter(scope),
                             search_params={"metric_type": "COSINE", "params": {"ef": max(64, 4 * min(k, TOPK_MAX))}})
        return [Hit(_chunk(e), rank=i, score=s, ranks={"dense": i}, scores={"dense": s})
                for i, (s, e) in enumerate(found, 1)]

    def _search(self, k: int, **request) -> list[tuple[float, dict]]:
        """The k best (score, entity) with a score above 0, ties by chunk id.
        Milvus cuts at the limit before that order is applied, so the limit
        grows until the k-th score's tie group ends inside what came back (a
        cut at k picked an arbitrary tied chunk: the top hit at k = 1 was not
        the one at k = 10)."""
        k = min(k, TOPK_MAX)  # a larger k (sparse_k = 10**20) was sent on, and Milvus raised
        limit = min(k + TIE_SLACK, TOPK_MAX)
        params = request.pop("search_params")
        while True:
            if "ef" in params.get("params", {}):  # HNSW's ef must be at least the limit
                params = {**params, "params": {**params["params"], "ef": max(params["params"]["ef"], limit)}}
            res = self.client.search(self.collection, limit=limit, output_fields=FIELDS, search_params=params,
                                     **request)[0]
            found = sorted(((float(h["distance"]), h["entity"]) for h in res if float(h["distance"]) > 0),
                           key=lambda p: (-p[0], p[1]["id"]))
            if (len(res) < limit or len(found) < len(res) or len(found) <= k or found[-1][0] < found[k - 1][0]
                    or limit >= TOPK_MAX):
                return found[:k]
            limit = min(4 * limit, TOPK_MAX)

    def get(self, ids: Sequence[str]) -> list[Chunk]:
        if not ids:
            return []
        by_id = {r["id"]: _chunk(r) for r in self.client.get(self.collection, ids=list(ids), output_fields=FIELDS)}
        return [by_id[i] for i in ids]

    def scan(self, scope: Scope) -> Iterator[Chunk]:
        for batch in self._iterate(scope_filter(scope), FIELDS):
            yield from (_chunk(r) for r in batch)

    def term_stats(self, terms: Sequence[str], scope: Scope) -> dict[str, TermStat]:
        uniq = list(dict.fromkeys(terms))
        known = self._terms(uniq)
        present = [t for t in uniq if t in known]
        in_scope: dict[str, bool] = {}
        if present:  # one single-term search per term, in one request: a hit means a chunk in scope holds it
            res = self.client.search(self.collection, data=[{known[t][0]: 1.0} for t in present], anns_field="sparse",
                                     limit=1, filter=scope_filter(scope), search_params={"metric_type": "IP"},
                                     output_fields=["id"])
            in_scope = {t: bool(len(hits)) and float(hits[0]["distance"]) > 0 for t, hits in zip(present, res)}
        # A term only chunks outside the scope hold reads as one no chunk holds (store.TermStat).
        return {t: TermStat(idf(self._n, known[t][1] if in_scope.get(t) else 0), in_scope.get(t, False))
                for t in uniq}

    def terms_held(self, ids: Sequence[str], terms: Sequence[str]) -> dict[str, frozenset[str]]:
        wanted = set(terms)
        return {c.id: frozenset(wanted.intersection(analyzer.analyze(c.search_text))) for c in self.get(ids)}

    def vectors(self, ids: Sequence[str]) -> np.ndarray | None:
        if not ids:
            return None
        by_id = {r["id"]: r["dense"] for r in self.client.get(self.collection, ids=list(ids), output_fields=["dense"])}
        return np.asarray([by_id[i] for i in ids], dtype=np.float32)

    # --- what an incremental ingest reuses --------------------------------------
    def contents(self) -> tuple[list[Chunk], np.ndarray, list[dict[str, int]]]:
        chunks, vectors, counts = [], [], []
        for batch in self._iterate("", FIELDS + ["dense"]):
            for r in batch:
                chunks.append(_chunk(r))
                vectors.append(r["dense"])
                counts.append(dict(Counter(analyzer.analyze(chunks[-1].search_text))))  # as the ingest counted them
        dim = int(self.manifest.get("embed_dim") or 0)
        return chunks, np.asarray(vectors, dtype=np.float32).reshape(len(chunks), dim), counts

    # --- helpers ------------------------------------------------------------
    def _iterate(self, flt: str, fields: list[str]) -> Iterator[list[dict]]:
        it = self.client.query_iterator(self.collection, batch_size=1000, filter=flt, output_fields=fields)
        try:
            while batch := it.next():
                yield batch
        finally:
            it.close()

    def _terms(self, terms: list[str]) -> dict[str, tuple[int, int]]:
        """(sparse dimension, document frequency) of each term the collection holds."""
        todo = [t for t in dict.fromkeys(terms) if t not in self._known]
        if todo:
            rows = self.client.get(self.terms_collection, ids=[term_key(t) for t in todo],
                                   output_fields=["term", "tid", "df"])
            found = {r["term"]: (int(r["tid"]), int(r["df"])) for r in rows}
            self._known.update({t: found.get(term_key(t)) for t in todo})
        return {t: v for t in terms if (v := self._known[t]) is not None}


# --- writing ---------------------------------------------------------------------
def _schema(client, dim: int):
    from pymilvus import DataType

    s = client.create_schema(auto_id=False, enable_dynamic_field=False)
    s.add_field("id", DataType.VARCHAR, is_primary=True, max_length=64)
    s.add_field("source", DataType.VARCHAR, max_length=SOURCE_MAX)
    s.add_field("title", DataType.VARCHAR, max_length=TITLE_MAX)
    s.add_field("headings", DataType.JSON)
    s.add_field("body", DataType.VARCHAR, max_length=65535)
    s.add_field("start", DataType.INT64)
    s.add_field("end", DataType.INT64)
    s.add_field("page", DataType.INT64, nullable=True)
    s.add_field("end_page", DataType.INT64, nullable=True)
    s.add_field("status", DataType.VARCHAR, max_length=LONGEST["status"])
    s.add_field("audience", DataType.VARCHAR, max_length=LONGEST["audience"])
    s.add_field("lang", DataType.VARCHAR, max_length=LONGEST["lang"])
    s.add_field("tenant", DataType.VARCHAR, max_length=LONGEST["tenant"], nullable=True, is_partition_key=True)
    s.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    s.add_field("dense", DataType.FLOAT_VECTOR, dim=dim)
    return s


def _index_params(client, cfg):
    ip = client.prepare_index_params()
    ip.add_index(field_name="sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="IP")
    # milvus-lite reads build parameters only under "params"; a server reads them flat: give both.
    dense = {"M": 16, "efConstruction": 200} if cfg.milvus_index == "HNSW" else {}
    ip.add_index(field_name="dense", index_type=cfg.milvus_index, metric_type="COSINE",
                 params={**dense, "params": dense})
    return ip


def _terms_schema(client):
    from pymilvus import DataType

    s = client.create_schema(auto_id=False, enable_dynamic_field=False)
    s.add_field("term", DataType.VARCHAR, is_primary=True, max_length=1024)
    s.add_field("tid", DataType.INT64)  # the term's dimension in the sparse vectors
    s.add_field("df", DataType.INT64)
    s.add_field("v", DataType.FLOAT_VECTOR, dim=2)  # Milvus wants a vector in every collection
    return s


def _insert(client, name: str, rows: list[dict], batch: int = 1000) -> None:
    for i in range(0, len(rows), batch):
        client.upsert(name, rows[i:i + batch])


REWEIGH = 0.01  # re-weigh every chunk once the average chunk length has moved this much


def write(cfg, chunks: list[Chunk], vectors: np.ndarray, counts: list[dict[str, int]], manifest: dict,
          previous: MilvusIndex | None, changed: Set[str] = frozenset(), old_ids: Set[str] | None = None) -> str:
    """Rebuild into a fresh collection and switch the alias (``previous``
    None), or update the live collection in place: upsert the chunks of new
    and changed files (``changed``: their paths; metadata may have changed
    with the text unchanged), delete the chunks no file holds any more,
    refresh the term statistics, and stamp the manifest last (first, a stamp
    that vouches only for the files left alone, so after a crash the next
    ingest reads every touched file again, even one put back as it was).  BM25
    weights are exact after a rebuild; in place, every chunk is re-weighed
    once the average chunk length has moved by more than ``REWEIGH``.
    ``old_ids``: the ids the live collection holds, when the caller has read
    them already (an ingest has); else they are read here."""
    client = previous.client if previous is not None else connect(cfg)
    df = Counter(t for c in counts for t in c)  # each chunk's terms once: document frequencies
    avgdl = sum(sum(c.values()) for c in counts) / len(counts) if counts else 0.0
    by_key = dict(_iterate_terms(client, previous.terms_collection)) if previous is not None else {}
    old_keys = set(by_key)
    # A term keeps its dimension; a new one takes the next free one (0 is never used).
    next_id = max(by_key.values(), default=0) + 1
    for t in sorted(df):
        if term_key(t) not in by_key:
            by_key[term_key(t)], next_id = next_id, next_id + 1
    tid = {t: by_key[term_key(t)] for t in df}
    manifest = dict(manifest, n_chunks=len(chunks), avgdl=avgdl)
    terms = [{"term": term_key(t), "tid": tid[t], "df": n, "v": [0.0, 0.0]} for t, n in df.items()]

    def rows(which) -> list[dict]:
        return [_row(c, v, bm25_weights(cnt, tid, avgdl, cfg.bm25_k1, cfg.bm25_b))
                for c, v, cnt in zip(chunks, vectors, counts) if which(c)]
    if previous is None:
        _drop_orphans(client, cfg.milvus_collection)  # what earlier failed rebuilds left behind
        name = _create(client, cfg, int(manifest["embed_dim"]))
        terms_name = terms_of(name)
        try:
            _insert(client, name, rows(lambda c: True))
            _insert(client, terms_name, terms, 5000)
            client.flush(name)
            client.flush(terms_name)
            manifest["terms_collection"] = terms_name
            _stamp(client, name, manifest)
            _switch(client, cfg.milvus_collection, name)
        except BaseException:
            # The alias still names the old collection; the half-built copy goes (best effort).
            for n in (name, terms_name):
                try:
                    client.drop_collection(n)
                except Exception:  # noqa: BLE001, S110 - the server that failed the write may fail this too
                    pass
            raise
        return name
    live = previous.collection
    # Before any row changes, a manifest that vouches only for the files this update leaves
    # alone: a crash midway left the old one, whose hashes then vouched for rows already
    # rewritten, and a page put back as it was (staff again) kept the half-written public row.
    old_sources = previous.manifest.get("sources", {})
    keep = {rel: v for rel, v in old_sources.items() if rel in manifest.get("sources", {}) and rel not in changed}
    if keep != old_sources:
        _stamp(client, live, dict(previous.manifest, sources=keep))
    if old_ids is None:
        old_ids = {c.id for c in previous.scan(Scope.everything())}
    gone = sorted(old_ids - {c.id for c in chunks})
    if gone:
        client.delete(live, ids=gone)
    before = float(previous.manifest.get("avgdl") or 0.0)
    reweigh = not before or abs(avgdl - before) > REWEIGH * before
    _insert(client, live, rows(lambda c: reweigh or c.id not in old_ids or c.source in changed))
    _insert(client, previous.terms_collection, terms, 5000)
    stale = sorted(old_keys - {term_key(t) for t in df})
    if stale:
        client.delete(previous.terms_collection, ids=stale)
    client.flush(live)
    client.flush(previous.terms_collection)
    manifest["terms_collection"] = previous.terms_collection
    if not reweigh:
        manifest["avgdl"] = before  # the weights on disk were made with this one
    _stamp(client, live, manifest)
    return live


def _stamp(client, name: str, manifest: dict) -> None:
    """Write ``manifest`` into the collection's properties, where :func:`open` reads it."""
    client.alter_collection_properties(name, properties={MANIFEST: json.dumps(manifest, ensure_ascii=False)})


def _create(client, cfg, dim: int) -> str:
    """A new chunk collection and its terms collection; the name of the first."""
    stamp = time.strftime("%Y%m%d%H%M%S") + f"{time.time_ns() % 1_000_000:06d}"
    name = f"{cfg.milvus_collection}__{stamp}"
    client.create_collection(name, schema=_schema(client, dim), index_params=_index_params(client, cfg))
    tip = client.prepare_index_params()
    tip.add_index(field_name="v", index_type="FLAT", metric_type="L2")
    client.create_collection(terms_of(name), schema=_terms_schema(client), index_params=tip)
    return name


def _iterate_terms(client, name: str) -> Iterator[tuple[str, int]]:
    it = client.query_iterator(name, batch_size=5000, filter="", output_fields=["term", "tid"])
    try:
        while batch := it.next():
            yield from ((r["term"], int(r["tid"])) for r in batch)
    finally:
        it.close()


def _switch(client, alias: str, target: str) -> None:
    """Point ``alias`` at ``target`` (the atomic step of a rebuild), then drop
    the collections it pointed at before."""
    if client.has_collection(alias) and alias not in client.list_aliases(target).get("aliases", []):
        try:
            old = client.describe_alias(alias)["collection_name"]
        except Exception:  # noqa: BLE001 - a plain collection under the alias name: not one of ours
            raise IndexError_(f"a Milvus collection named {alias!r} exists and is not citebot's alias; "
                              "set milvus_collection to another name") from None
        client.alter_alias(target, alias)
        _drop_old(client, old)
    else:
        client.create_alias(target, alias)


def _drop_orphans(client, alias: str) -> None:
    """Drop ``alias__<stamp>`` collections the alias does not name (and their
    terms collections): copies a crashed rebuild left."""
    try:
        live = client.describe_alias(alias)["collection_name"] if client.has_collection(alias) else None
    except Exception:  # noqa: BLE001 - a plain collection under that name: _switch says so
        return
    keep = {live, terms_of(live)} if live else set()
    # Exactly this alias's generation names: "kb__eu" (a name the config allows) is another index.
    ours = re.compile(re.escape(alias) + r"__\d{20}(?:_terms)?")
    for n in client.list_collections():
        if ours.fullmatch(n) and n not in keep:
            client.drop_collection(n)


def terms_of(name: str) -> str:
    """The name of a chunk collection's terms collection."""
    return name + "_terms"


def _drop_old(client, name: str) -> None:
    try:
        props = client.describe_collection(name).get("properties", {})
        terms = json.loads(props[MANIFEST]).get("terms_collection")
    except Exception:  # noqa: BLE001 - an older collection without a readable manifest
        terms = terms_of(name)  # found by its name (without it, the rebuild left it behind)
    client.drop_collection(name)
    if terms and client.has_collection(terms):
        client.drop_collection(terms)

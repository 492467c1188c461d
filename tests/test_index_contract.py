"""The SearchIndex contract: every implementation must pass this suite.

The corpus is six hand-made chunks with 3-dimensional unit vectors, so every
rank, cosine and idf below is worked out by hand.  Add an implementation by
adding a builder to ``BUILDERS``.
"""
import dataclasses
import math

import numpy as np
import pytest

from citebot.config import Config
from citebot.index.local import LocalIndex
from citebot.index.store import settings_stamp
from citebot.schema import Chunk, Scope
from citebot.search.analyzer import analyze


def chunk(i, text, **meta):
    return Chunk(id=f"c{i}", source=f"doc{i}.md", title="", headings=(), text=text, start=1, end=1, **meta)


CHUNKS = [
    chunk(1, "refund refund card"),
    chunk(2, "refund voucher"),
    chunk(3, "tent pole repair"),
    chunk(4, "staff refund goodwill", audience="staff"),
    chunk(5, "old refund policy refund refund", status="superseded"),
    chunk(6, "acme rental refund", tenant="acme"),
]
V = {  # unit vectors: cosine with a query vector is a dot product
    "c1": [1, 0, 0], "c2": [0.6, 0.8, 0], "c3": [0, 0, 1], "c4": [1, 0, 0], "c5": [0.8, 0.6, 0], "c6": [0, 1, 0],
}


def local(chunks, vectors, manifest, tmp_path):
    return LocalIndex(chunks, vectors, manifest)


def milvus(chunks, vectors, manifest, tmp_path):
    """The same chunks in milvus-lite, through the writer ingest uses."""
    from collections import Counter

    from citebot.index import milvus as mv
    cfg = Config(backend="milvus", milvus_uri=str(tmp_path / "contract.db"), milvus_collection="contract")
    counts = [Counter(analyze(c.search_text)) for c in chunks]
    mv.write(cfg, chunks, vectors, counts, dict(manifest, source_folder="contract", sources={}), None)
    return mv.MilvusIndex.open(cfg)


BUILDERS = {"local": local, "milvus": milvus}


@pytest.fixture(params=list(BUILDERS))
def index(request, tmp_path):
    vectors = np.array([V[c.id] for c in CHUNKS], dtype=np.float32)
    return BUILDERS[request.param](CHUNKS, vectors, settings_stamp(Config(), "test/3d", 3), tmp_path)


def ids(hits):
    return [h.id for h in hits]


def idf(n, df):
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


PUBLIC = Scope()


def test_sparse_ranks_only_what_the_scope_allows(index):
    # "refund" is in c1 (tf 2), c2, c4 (staff), c5 (superseded, tf 3), c6 (tenant acme).
    hits = index.sparse_search(["refund"], PUBLIC, 10)
    assert ids(hits) == ["c1", "c2"]  # c1: tf 2 in 3 terms beats c2: tf 1 in 2
    assert [h.rank for h in hits] == [1, 2] and [h.ranks for h in hits] == [{"bm25": 1}, {"bm25": 2}]
    assert hits[0].score > hits[1].score > 0 and hits[0].scores == {"bm25": hits[0].score}
    everything = ids(index.sparse_search(["refund"], Scope.everything(), 10))
    assert everything[0] == "c5" and set(everything) == {"c1", "c2", "c4", "c5", "c6"}
    # c2 and c6 both hold "refund" once; c2 is the shorter chunk (2 terms against 3).
    assert ids(index.sparse_search(["refund"], Scope.build(tenant="acme"), 10)) == ["c1", "c2", "c6"]


def test_filter_runs_before_the_cut(index):
    # Unfiltered, c5 is the best "refund" chunk; k = 1 in the public scope still gives a public chunk.
    assert ids(index.sparse_search(["refund"], PUBLIC, 1)) == ["c1"]
    assert ids(index.dense_search(np.array([1, 0, 0], np.float32), PUBLIC, 1)) == ["c1"]


def test_sparse_needs_a_matching_term(index):
    assert index.sparse_search(["nothing"], Scope.everything(), 10) == []
    assert index.sparse_search([], Scope.everything(), 10) == []
    assert ids(index.sparse_search(analyze("Tent repair"), PUBLIC, 10)) == ["c3"]


def test_dense_orders_by_cosine_and_drops_non_positive(index):
    q = np.array([0.6, 0.8, 0], np.float32)
    hits = index.dense_search(q, PUBLIC, 10)
    # c2: 1.0, c1: 0.6; c3 is orthogonal (cosine 0): not a hit; c4-c6 out of scope.
    assert ids(hits) == ["c2", "c1"] and [round(h.score, 6) for h in hits] == [1.0, 0.6]
    assert hits[0].ranks == {"dense": 1} and hits[1].scores == {"dense": pytest.approx(0.6)}
    assert ids(index.dense_search(q, Scope.build(tenant="acme"), 10)) == ["c2", "c6", "c1"]


@pytest.mark.parametrize("kind", list(BUILDERS))
def test_ties_break_by_chunk_id_on_every_backend(kind, tmp_path):
    # Rows zz, mm, aa: zz and aa are equal in both channels (same text, same
    # vector); the tie goes to the smaller chunk id, aa, though zz is the first row.
    tied = [dataclasses.replace(chunk(0, t), id=i) for i, t in
            (("zz", "refund policy"), ("mm", "refund window"), ("aa", "refund policy"))]
    vectors = np.array([[1, 0, 0], [0.6, 0.8, 0], [1, 0, 0]], dtype=np.float32)
    ix = BUILDERS[kind](tied, vectors, settings_stamp(Config(), "test/3d", 3), tmp_path)
    assert ids(ix.sparse_search(["refund"], PUBLIC, 1)) == ["aa"]  # all three hold it once in two terms
    assert ids(ix.sparse_search(["refund"], PUBLIC, 3)) == ["aa", "mm", "zz"]
    assert ids(ix.dense_search(np.array([1, 0, 0], np.float32), PUBLIC, 3)) == ["aa", "zz", "mm"]


def test_get_scan_and_vectors(index):
    assert [c.text for c in index.get(["c3", "c1"])] == ["tent pole repair", "refund refund card"]
    assert {c.id for c in index.scan(PUBLIC)} == {"c1", "c2", "c3"}
    assert {c.id for c in index.scan(Scope.build(audience="staff", include_superseded=True))} == \
        {"c1", "c2", "c3", "c4", "c5"}
    # Front matter's values are read lower-cased: "--audience Staff" is staff.
    assert {c.id for c in index.scan(Scope.build(audience=" Staff ", include_superseded=True))} == \
        {"c1", "c2", "c3", "c4", "c5"}
    assert {c.id for c in index.scan(Scope.everything())} == {c.id for c in CHUNKS}
    assert np.allclose(index.vectors(["c2", "c6"]), [[0.6, 0.8, 0], [0, 1, 0]])


GOODWILL = analyze("goodwill")[0]  # terms are analyzed: "goodwil"


def test_term_stats_idf_over_the_index_presence_within_the_scope(index):
    stats = index.term_stats(["refund", GOODWILL, "tent", "absent"], PUBLIC)
    assert stats["refund"].idf == pytest.approx(idf(6, 5))
    # "goodwill" exists only in the staff chunk: a public asker's scope does not hold it, and its idf
    # is that of a word no chunk holds, so no number tells a restricted page has it.
    assert stats[GOODWILL].idf == pytest.approx(idf(6, 0)) == stats["absent"].idf
    assert [stats[t].in_scope for t in ("refund", GOODWILL, "tent", "absent")] == [True, False, True, False]
    staff = index.term_stats([GOODWILL], Scope.build(audience="staff"))[GOODWILL]
    assert staff.in_scope and staff.idf == pytest.approx(idf(6, 1))


def test_terms_held(index):
    held = index.terms_held(["c1", "c3"], ["refund", "card", "tent", "absent"])
    assert held == {"c1": frozenset({"refund", "card"}), "c3": frozenset({"tent"})}


def test_manifest_is_the_stamp(index):
    assert index.manifest["embed_model"] == "test/3d" and index.manifest["embed_dim"] == 3
    assert index.manifest["bm25"] == {"variant": "okapi-lucene-idf", "k1": 1.2, "b": 0.75}


def stored_local(tmp_path):
    root = tmp_path / "idx"
    return (lambda chunks, vectors, manifest: LocalIndex(chunks, vectors, manifest).save(root),
            lambda: LocalIndex.load(root))


def stored_milvus(tmp_path, in_place: bool):
    """Milvus written as ingest writes it: a rebuild into a new collection
    behind the alias, or an update of the live collection in place."""
    from collections import Counter

    from citebot.index import milvus as mv
    cfg = Config(backend="milvus", milvus_uri=str(tmp_path / "live.db"), milvus_collection="live")

    def write(chunks, vectors, manifest):
        previous = mv.MilvusIndex.open(cfg) if in_place and mv.connect(cfg).has_collection("live") else None
        counts = [Counter(analyze(c.search_text)) for c in chunks]
        mv.write(cfg, chunks, vectors, counts, dict(manifest, source_folder="contract", sources={}), previous,
                 changed={c.source for c in chunks})
    return write, lambda: mv.MilvusIndex.open(cfg)


STORES = {"local": stored_local, "milvus rebuild": lambda p: stored_milvus(p, False),
          "milvus in place": lambda p: stored_milvus(p, True)}


@pytest.mark.parametrize("kind", list(STORES))
def test_a_reader_follows_the_write_that_made_another_index_live(kind, tmp_path):
    # A chat opens the index once and runs for hours: after an ingest re-marks c1 staff and
    # drops c2, the reader it holds must not go on serving either.
    write, open_ = STORES[kind](tmp_path)
    manifest = settings_stamp(Config(), "test/3d", 3)
    write(CHUNKS, np.array([V[c.id] for c in CHUNKS], dtype=np.float32), manifest)
    reader = open_()
    assert reader.live() is reader  # nothing written since: the same reader, nothing reloaded
    assert ids(reader.sparse_search(["refund"], PUBLIC, 10)) == ["c1", "c2"]
    later = [dataclasses.replace(CHUNKS[0], audience="staff")] + CHUNKS[2:]
    write(later, np.array([V[c.id] for c in later], dtype=np.float32), manifest)
    now = reader.live()
    assert now is not reader and now.live() is now
    assert ids(now.sparse_search(["refund"], PUBLIC, 10)) == []  # c1 is staff now, c2 is gone
    assert {c.id for c in now.scan(PUBLIC)} == {"c3"}
    assert ids(now.sparse_search(["refund"], Scope.build(audience="staff"), 10)) == ["c1", "c4"]


def test_a_misspelling_is_corrected_through_the_door_within_the_scope(index):
    from citebot.search import spelling

    assert spelling.correct("where is my vouchr?", index, PUBLIC) == "where is my voucher?"
    # "staff" only a staff chunk holds, "rental" only tenant acme's: never offered outside them
    assert spelling.correct("a satff refund", index, PUBLIC) is None
    assert spelling.correct("a satff refund", index, Scope(audiences=frozenset({"public", "staff"}))) \
        == "a staff refund"
    assert spelling.correct("a rentl refund", index, PUBLIC) is None
    assert spelling.correct("a rentl refund", index, Scope(tenant="acme")) == "a rental refund"

"""The Milvus backend (milvus-lite, in CI): the checks the local backend
passes, with only the backend setting changed."""
import json
from collections import Counter

import numpy as np
import pytest

from citebot.config import Config
from citebot.engine import Engine
from citebot.index import milvus as mv
from citebot.index.build import ingest
from citebot.index.store import IndexError_, open_index
from citebot.measurement import evaluate
from citebot.measurement.golden import Judge, load_golden
from citebot.schema import Chunk, Scope
from citebot.search.analyzer import analyze
from citebot.search.models import Models

from conftest import ROOT, SAMPLE, write


@pytest.fixture(scope="session")
def milvus_sample(tmp_path_factory, embedder, sample_index):
    root = tmp_path_factory.mktemp("milvus")
    cfg = Config(embed_model="packaged", backend="milvus", milvus_uri=str(root / "sample.db"), milvus_collection="sample", use_rerank=False,
                 data_dir=str(root))
    ingest(SAMPLE, cfg, embedder=embedder, log=lambda m: None)
    return Engine(open_index(cfg), cfg, Models(embedder, None))


def spy_on_search(idx) -> list[tuple[int, int | None]]:
    """(limit, ef) of every search request the index sends to Milvus from now on."""
    asked: list[tuple[int, int | None]] = []
    real = idx.client.search

    def spy(*a, **kw):
        asked.append((kw["limit"], kw["search_params"].get("params", {}).get("ef")))
        return real(*a, **kw)
    idx.client.search = spy
    return asked


def test_tied_hits_are_the_same_whatever_k_is(tmp_path):
    cfg = Config(backend="milvus", milvus_uri=str(tmp_path / "k.db"), milvus_collection="k")
    ids = [f"c{i:02d}" for i in range(30)]
    chunks = [Chunk(cid, f"{cid}.md", "", (), "the same refund words", 1, 1) for cid in reversed(ids)]
    vec = np.tile(np.eye(1, 8, dtype=np.float32), (30, 1))
    mv.write(cfg, chunks, vec, [Counter(analyze(c.search_text)) for c in chunks],
             {"embed_model": "x", "embed_dim": 8, "source_folder": "t", "sources": {}}, None)
    idx = mv.MilvusIndex.open(cfg)
    # Thirty tied chunks: ties go by chunk id, and the first k are the first k of the longer list.
    for search, q in ((idx.sparse_search, analyze("refund")), (idx.dense_search, vec[0])):
        assert [h.id for h in search(q, Scope(), 10)] == ids[:10]
        assert [h.id for h in search(q, Scope(), 1)] == ids[:1]
    asked = spy_on_search(idx)
    idx.dense_search(vec[0], Scope(), 10)
    # The limit grew past the 30 ties (26, then 104); HNSW's ef grew with it (it must be >= the limit).
    assert asked == [(26, 64), (104, 104)]
    idx.client.close()


def test_a_tenant_name_cannot_widen_the_scope(tmp_path, embedder):
    cfg = Config(backend="milvus", milvus_uri=str(tmp_path / "t.db"), milvus_collection="t")
    chunks = [Chunk(f"c{i}", f"d{i}.md", "", (), f"refund rule {i}", 1, 1, tenant=t)
              for i, t in enumerate([None, "acme", "globex", 'x" or tenant != "'])]
    vec = np.eye(4, 8, dtype=np.float32)
    mv.write(cfg, chunks, vec, [Counter(analyze(c.search_text)) for c in chunks],
             {"embed_model": "x", "embed_dim": 8, "source_folder": "t", "sources": {}}, None)
    idx = mv.MilvusIndex.open(cfg)
    hostile = Scope.build(tenant='x" or tenant != "')
    assert 'tenant == "x\\" or tenant != \\""' in mv.scope_filter(hostile)
    assert sorted(h.chunk.tenant or "-" for h in idx.sparse_search(["refund"], hostile, 10)) == ["-", 'x" or tenant != "']
    assert sorted(h.chunk.tenant or "-" for h in idx.sparse_search(["refund"], Scope(), 10)) == ["-"]
    assert {c.tenant for c in idx.scan(Scope.build(tenant="acme"))} == {None, "acme"}


@pytest.mark.parametrize("q,held", [("what does E4032 mean", "E4032"), ("RD2-24 recall", "RD2-24"),
                                      ("帐篷保修期多长", "保修"), ("ফেরত কত দিনের মধ্যে", "ফেরত"),
                                      ("guaranteed for how long", "guarantee")])
def test_identifiers_cjk_bengali_and_stems_reach_milvus_whole(milvus_sample, sample_engine, q, held):
    # The same terms give the same ranking (ties go by chunk id on both), and the first hit holds the term whole.
    terms = analyze(q)
    local = sample_engine.index.sparse_search(terms, Scope(), 5)
    remote = milvus_sample.index.sparse_search(terms, Scope(), 5)
    assert [h.id for h in remote] == [h.id for h in local] and held.lower() in remote[0].chunk.search_text.lower()


@pytest.mark.parametrize("k", [1, 3, 5, 20])
def test_no_leak_on_milvus_through_any_channel(milvus_sample, k):
    from test_leaks import all_queries, forbidden
    e = milvus_sample.configured(milvus_sample.cfg.replace(final_k=k, rerank_pool=max(k, 20)))
    queries = all_queries()
    vectors = e.embed()(queries)
    for q, v in zip(queries, vectors):
        _, hybrid = e.search(q, [], Scope())
        for h in (e.index.sparse_search(analyze(q), Scope(), k) + e.index.dense_search(v, Scope(), k)
                  + hybrid.hits + hybrid.fused):
            assert not forbidden(h.chunk), (q, h.chunk.source)


def test_the_golden_ablation_on_milvus_is_within_002_of_local(milvus_sample, sample_engine):
    qs = load_golden(ROOT / "golden.json").questions
    for name in ("bm25", "dense", "hybrid", "+followups"):
        rows = {}
        for label, e in (("local", sample_engine), ("milvus", milvus_sample)):
            rows[label] = evaluate.summarize(qs, evaluate.run_config(e, name, qs, Judge(e.index)))
        for metric in ("hit@5", "ndcg@10"):
            assert abs(rows["local"][metric] - rows["milvus"][metric]) <= 0.02, (name, metric, rows)
        assert rows["milvus"]["leaks"] == 0


def test_incremental_ingest_on_milvus(tmp_path, counting):
    folder = tmp_path / "docs"
    write(folder / "a.md", "# A\n\nRefunds go to the card.\n")
    write(folder / "b.md", "# B\n\nShipping takes two days.\n")
    cfg = Config(embed_model="packaged", backend="milvus", milvus_uri=str(tmp_path / "i.db"), milvus_collection="inc", use_rerank=False)
    first = ingest(folder, cfg, embedder=counting, log=lambda m: None)
    assert sorted(first.added) == ["a.md", "b.md"] and counting.embedded == 2
    counting.calls.clear()
    write(folder / "b.md", "---\naudience: staff\n---\n# B\n\nShipping takes two days.\n")  # metadata only
    write(folder / "c.md", "# C\n\nGift cards never expire.\n")
    (folder / "a.md").unlink()
    report = ingest(folder, cfg, embedder=counting, log=lambda m: None)
    assert report.added == ["c.md"] and report.changed == ["b.md"] and report.removed == ["a.md"]
    assert counting.embedded == 1  # b's text is unchanged: only c is embedded
    idx = mv.MilvusIndex.open(cfg)
    assert {c.source: c.audience for c in idx.scan(Scope.everything())} == {"b.md": "staff", "c.md": "public"}
    assert [h.chunk.source for h in idx.sparse_search(analyze("shipping"), Scope(), 5)] == []  # now staff only
    assert idx.term_stats(analyze("refunds"), Scope())[analyze("refunds")[0]].in_scope is False  # a.md is gone


def test_a_model_mismatch_is_refused_with_the_command_that_fixes_it(milvus_sample):
    cfg = milvus_sample.cfg.replace(embed_model="/some/other/model")
    with pytest.raises(IndexError_) as e:
        open_index(cfg)
    msg = str(e.value)
    assert "embed_model" in msg and "--set backend=milvus" in msg and "--rebuild" in msg


def one_page(tmp_path, counting, collection: str, **settings) -> tuple:
    """A milvus-lite index of one page (a.md, about refunds): its folder and settings."""
    folder = tmp_path / "docs"
    write(folder / "a.md", "# A\n\nRefunds go to the card.\n")
    cfg = Config(embed_model="packaged", backend="milvus", milvus_uri=str(tmp_path / f"{collection}.db"),
                 milvus_collection=collection, use_rerank=False, **settings)
    ingest(folder, cfg, embedder=counting, log=lambda m: None)
    return folder, cfg


def test_a_crash_mid_rebuild_leaves_the_old_collection_live(tmp_path, counting, monkeypatch):
    folder, cfg = one_page(tmp_path, counting, "live")
    write(folder / "b.md", "# B\n\nShipping takes two days.\n")
    real = mv._insert

    def crash(client, name, rows, batch=1000):
        real(client, name, rows[:1], batch)
        raise RuntimeError("killed mid-rebuild")
    monkeypatch.setattr(mv, "_insert", crash)
    with pytest.raises(RuntimeError):
        ingest(folder, cfg, rebuild=True, embedder=counting, log=lambda m: None)
    idx = mv.MilvusIndex.open(cfg)  # the alias still names the complete old collection
    assert {c.source for c in idx.scan(Scope.everything())} == {"a.md"}
    assert json.loads(idx.client.describe_collection("live")["properties"][mv.MANIFEST])["sources"].keys() == {"a.md"}
    live = idx.client.describe_alias("live")["collection_name"]
    # The half-built copy is gone: only the live collection and its terms remain.
    assert sorted(idx.client.list_collections()) == sorted([live, f"{live}_terms"])
    idx.client.close()
    monkeypatch.setattr(mv, "_insert", real)
    ingest(folder, cfg, rebuild=True, embedder=counting, log=lambda m: None)
    idx = mv.MilvusIndex.open(cfg)
    assert {c.source for c in idx.scan(Scope.everything())} == {"a.md", "b.md"}
    assert len(idx.client.list_collections()) == 2


def test_another_dense_index_type_takes_a_fresh_collection_and_is_stamped(tmp_path, counting):
    folder, cfg = one_page(tmp_path, counting, "kind")

    def dense_index(cfg) -> tuple[str, str]:
        idx = mv.MilvusIndex.open(cfg)
        try:
            live = idx.client.describe_alias("kind")["collection_name"]
            return idx.client.describe_index(live, "dense")["index_type"], idx.manifest["milvus_index"]
        finally:
            idx.client.close()
    assert dense_index(cfg) == ("FLAT", "FLAT")
    # Nothing in the folder changed, but the index type is fixed when a collection is
    # made: updated in place, the collection stayed FLAT while the setting said HNSW.
    ingest(folder, cfg.replace(milvus_index="HNSW"), embedder=counting, log=lambda m: None)
    assert dense_index(cfg) == ("HNSW", "HNSW")
    assert counting.embedded == 1  # the page's vector was kept, not made again


def test_a_rebuild_drops_its_own_leftovers_only(tmp_path, counting):
    folder, eu = one_page(tmp_path, counting, "kb__eu")
    ingest(folder, eu.replace(milvus_collection="kb"), embedder=counting, log=lambda m: None)  # a first build of "kb"
    idx = mv.MilvusIndex.open(eu)  # "kb__eu__<stamp>" began with "kb__": it was dropped as kb's leftover
    assert {c.source for c in idx.scan(Scope.everything())} == {"a.md"}
    assert len(idx.client.list_collections()) == 4
    idx.client.close()


def test_a_lost_terms_collection_is_a_damaged_index_with_the_command_that_fixes_it(tmp_path, counting):
    _, cfg = one_page(tmp_path, counting, "dm", chunk_tokens=150)
    idx = mv.MilvusIndex.open(cfg)
    idx.client.drop_collection(idx.terms_collection)
    with pytest.raises(IndexError_, match="is damaged") as e:  # it was a raw MilvusException
        mv.MilvusIndex.open(cfg, idx.client)
    assert str(e.value).split("Rebuild it: ")[1].endswith("--set chunk_tokens=150 --rebuild")
    idx.client.close()


def test_a_value_too_long_to_store_fails_its_document_closed_and_the_rest_are_written(tmp_path, counting):
    folder, cfg = one_page(tmp_path, counting, "ln")
    write(folder / "a.md", "---\naudience: staff\n---\n# A\n\nRefunds go to the card.\n")  # now staff only
    write(folder / "z.md", "---\nlang: English (United Kingdom), British usage\n---\n# Z\n\nZebra text.\n")
    key = "f" * 2560  # one analysed term longer than the terms collection's key
    write(folder / "k.md", f"# K\n\n```\n{key}\n```\n")
    report = ingest(folder, cfg, embedder=counting, log=lambda m: None)  # a Milvus error failed the whole write
    assert [(rel, why.split(" (")[0]) for rel, why in report.skipped] == [
        ("z.md", "its lang is 39 characters long")]
    idx = mv.MilvusIndex.open(cfg)
    assert {c.source: c.audience for c in idx.scan(Scope.everything())} == {"a.md": "staff", "k.md": "public"}
    assert idx.sparse_search(analyze("refunds card"), Scope(), 5) == []  # the page marked staff is not public
    assert [h.chunk.source for h in idx.sparse_search([key], Scope(), 5)] == ["k.md"]
    assert idx.term_stats([key], Scope())[key].in_scope
    idx.client.close()


def test_a_chunk_too_long_for_a_column_is_whole_on_both_backends(tmp_path, counting):
    # Milvus cut a chunk's text (and its term list) at 60,000 bytes: citations showed the cut text and
    # coverage missed every word after it.  Now no chunk is over chunker.MAX_BYTES on any backend.
    folder = tmp_path / "docs"
    code = "\n".join(f"my_var_{i} = 1" for i in range(6000))  # 90,000 bytes in one code block
    write(folder / "big.md", f"# Big\n\n```\n{code}\n```\n")
    write(folder / "cjk.md", "# 长\n\n" + "退货政策说明。" * 4000 + "\n")  # 84,000 bytes in 28,000 characters
    settings = dict(embed_model="packaged", use_rerank=False, chunk_tokens=100000)
    mcfg = Config(backend="milvus", milvus_uri=str(tmp_path / "b.db"), milvus_collection="b", **settings)
    lcfg = Config(index=str(tmp_path / "local"), **settings)
    ingest(folder, mcfg, embedder=counting, log=lambda m: None)  # the CJK body failed the write
    ingest(folder, lcfg, embedder=counting, log=lambda m: None)
    idx, local = mv.MilvusIndex.open(mcfg), open_index(lcfg)
    chunks = sorted(idx.scan(Scope.everything()), key=lambda c: c.id)
    assert [(c.id, c.text) for c in chunks] == sorted((c.id, c.text) for c in local.scan(Scope.everything()))
    big = [c for c in chunks if c.source == "big.md"]
    assert len(big) == 2 and all(c.text.startswith("```\n") and c.text.endswith("\n```") for c in big)
    last = next(c for c in big if "my_var_5999 = 1" in c.text)  # a word beyond the old cut is held
    wanted = ["my_var_5999", "my_var_0"]
    assert idx.terms_held([last.id], wanted) == local.terms_held([last.id], wanted) == {last.id: frozenset({"my_var_5999"})}
    write(folder / "b.md", "# B\n\nMore.\n")
    ingest(folder, mcfg, embedder=counting, log=lambda m: None)  # an update re-counts the stored chunks' terms
    assert [h.chunk.source for h in mv.MilvusIndex.open(mcfg).sparse_search(["my_var_5999"], Scope(), 5)] == ["big.md"]
    idx.client.close()


def test_no_collection_names_the_command_with_its_collection(tmp_path):
    cfg = Config(embed_model="packaged", backend="milvus", milvus_uri=str(tmp_path / "c.db"), milvus_collection="nope")
    with pytest.raises(IndexError_, match="--set milvus_collection=nope"):
        open_index(cfg)
    assert not (tmp_path / "c.db").exists()  # asking for a missing milvus-lite file does not create one


def test_every_command_works_on_milvus_with_only_the_backend_setting_changed(tmp_path):
    import subprocess
    import sys

    def run(script, *args, backend):
        env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CITEBOT_DATA_DIR": str(tmp_path),
               "CITEBOT_USE_RERANK": "0", "CITEBOT_INDEX": str(tmp_path / "local-idx")}
        if backend == "milvus":
            env.update(CITEBOT_BACKEND="milvus", CITEBOT_MILVUS_URI=str(tmp_path / "cli.db"))
        r = subprocess.run([sys.executable, str(ROOT / script), *args], capture_output=True, text=True, env=env,
                           timeout=600, cwd=tmp_path)
        assert r.returncode == 0, (script, backend, r.stderr[-2000:])
        return r.stdout
    out = {}
    for backend in ("local", "milvus"):
        run("ingest.py", str(SAMPLE), backend=backend)
        hits = json.loads(run("retrieve.py", "what does E4032 mean", "--json", backend=backend))["hits"]
        answer = json.loads(run("bot.py", "--ask", "do gift cards expire?", "--json", backend=backend))
        ev = json.loads(run("evaluate.py", "--limit", "8", "--configs", "bm25,hybrid", "--json",
                            "--golden", str(ROOT / "golden.json"), backend=backend))
        # Top-1 only: lower ranks can swap on float32 near-ties between the two stores.
        out[backend] = (hits[0]["id"], answer["answer"], ev["configs"]["bm25"]["hit@5"])
    assert out["milvus"] == out["local"]


def test_the_evaluation_header_names_the_milvus_collection_and_never_the_token():
    from citebot.measurement.evaluate import index_label
    cfg = Config(backend="milvus", milvus_uri="/tmp/x.db", milvus_collection="golden", milvus_token="s3cret")
    assert index_label(cfg) == "Milvus collection golden at /tmp/x.db"
    assert index_label(Config(index="/tmp/idx")) == "/tmp/idx"


def test_a_k_beyond_what_milvus_returns_is_capped_not_a_crash(tmp_path):
    # --set sparse_k=10**20 works on the local backend; Milvus got limit k + 16 and raised.
    cfg = Config(backend="milvus", milvus_uri=str(tmp_path / "big.db"), milvus_collection="big")
    chunks = [Chunk(f"c{i}", f"d{i}.md", "", (), f"refund rule {i}", 1, 1) for i in range(3)]
    vec = np.tile(np.eye(1, 8, dtype=np.float32), (3, 1))
    mv.write(cfg, chunks, vec, [Counter(analyze(c.search_text)) for c in chunks],
             {"embed_model": "x", "embed_dim": 8, "source_folder": "t", "sources": {}}, None)
    idx = mv.MilvusIndex.open(cfg)
    asked = spy_on_search(idx)
    for k in (10 ** 20, mv.TOPK_MAX):
        assert [h.id for h in idx.sparse_search(["refund"], Scope(), k)] == ["c0", "c1", "c2"]
        assert [h.id for h in idx.dense_search(vec[0], Scope(), k)] == ["c0", "c1", "c2"]
    assert all(limit <= mv.TOPK_MAX and (ef is None or ef <= 4 * mv.TOPK_MAX) for limit, ef in asked)
    idx.client.close()


def test_an_update_cut_off_before_its_stamp_is_redone_when_the_page_goes_back(tmp_path, counting, monkeypatch):
    # a.md is staff; an edit publishes it, and the in-place update dies after upserting the
    # public row but before stamping the manifest; the author puts the staff page back.
    folder = tmp_path / "docs"
    staff = "---\naudience: staff\n---\n# A\n\nThe zorbulator code is 4471.\n"
    write(folder / "a.md", staff)
    write(folder / "b.md", "# B\n\nShipping takes two days.\n")
    cfg = Config(embed_model="packaged", backend="milvus", milvus_uri=str(tmp_path / "x.db"), milvus_collection="x",
                 use_rerank=False)
    ingest(folder, cfg, embedder=counting, log=lambda m: None)
    write(folder / "a.md", "# A\n\nThe zorbulator code is 4471.\n")  # published: same text
    real = mv._insert

    def crash(client, name, rows, batch=1000):
        if name.endswith("_terms"):
            raise RuntimeError("killed before the stamp")
        real(client, name, rows, batch)
    monkeypatch.setattr(mv, "_insert", crash)
    with pytest.raises(RuntimeError):
        ingest(folder, cfg, embedder=counting, log=lambda m: None)
    monkeypatch.setattr(mv, "_insert", real)
    write(folder / "a.md", staff)  # the very bytes the stamped manifest names
    ingest(folder, cfg, embedder=counting, log=lambda m: None)
    idx = mv.MilvusIndex.open(cfg)
    assert {c.source: c.audience for c in idx.scan(Scope.everything())} == {"a.md": "staff", "b.md": "public"}
    assert [h.chunk.source for h in idx.sparse_search(analyze("zorbulator"), Scope(), 5)] == []


def test_index_flag_with_the_milvus_backend_is_a_usage_error(tmp_path):
    # Ignored, an ingest meant for a new index wrote into the collection already there.
    import subprocess
    import sys

    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CITEBOT_DATA_DIR": str(tmp_path),
           "CITEBOT_BACKEND": "milvus", "CITEBOT_MILVUS_URI": str(tmp_path / "x.db")}
    for script, args in (("ingest.py", [str(SAMPLE)]), ("bot.py", ["--ask", "hi there"]), ("retrieve.py", ["E4032"])):
        r = subprocess.run([sys.executable, str(ROOT / script), *args, "--index", str(tmp_path / "idx")],
                           capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == 2 and "give --set milvus_collection=NAME instead" in r.stderr, (script, r.stderr)
    assert not (tmp_path / "x.db").exists()


def test_the_ingest_summary_gives_a_size_only_when_it_measured_one():
    from citebot.index.build import Report
    assert Report(written=True).summary().endswith("(0 embedded, 0 reused); 0.0s")
    assert Report(written=True, index_bytes=4096).summary().endswith("0.0s, 4 KiB")


def test_a_chat_over_a_milvus_lite_file_deleted_and_built_again_reads_the_new_one(tmp_path, counting):
    # This process's milvus-lite kept serving the deleted database from memory: the chat answered from
    # pages no index held any more, and never saw the one an ingest had built in its place.
    import shutil
    import subprocess
    import sys
    folder, cfg = one_page(tmp_path, counting, "kb")
    idx = mv.MilvusIndex.open(cfg)
    assert [h.chunk.source for h in idx.sparse_search(analyze("refunds"), Scope(), 5)] == ["a.md"]
    shutil.rmtree(cfg.milvus_uri)
    shutil.rmtree(cfg.milvus_uri + ".citebot", ignore_errors=True)
    with pytest.raises(IndexError_, match="no index in Milvus collection"):
        idx.live()
    other = tmp_path / "other"
    write(other / "b.md", "# B\n\nRefunds take 14 days.\n")
    r = subprocess.run([sys.executable, str(ROOT / "ingest.py"), str(other), "--set", "backend=milvus",
                        "--set", f"milvus_uri={cfg.milvus_uri}", "--set", "milvus_collection=kb"],
                       capture_output=True, text=True, timeout=300,
                       env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CITEBOT_EMBED_MODEL": "packaged"})
    assert r.returncode == 0, r.stderr
    now = idx.live()
    assert [h.chunk.source for h in now.sparse_search(analyze("refunds"), Scope(), 5)] == ["b.md"]
    now.client.close()


def test_milvus_messages_name_milvus_settings_and_a_rebuild_over_a_bad_manifest_leaves_nothing(tmp_path, counting):
    from citebot.index.store import OtherDocuments
    folder, cfg = one_page(tmp_path, counting, "kb")
    other = tmp_path / "other"
    write(other / "b.md", "# B\n\nRefunds take 14 days.\n")
    with pytest.raises(OtherDocuments) as e:  # it advised --index, a usage error on Milvus
        ingest(other, cfg, embedder=counting, log=lambda m: None)
    assert "its own --set milvus_collection=NAME" in str(e.value) and "Milvus collection kb" in str(e.value)
    # A manifest that cannot be read: the rebuild dropped the collection and left its terms collection behind.
    idx = mv.MilvusIndex.open(cfg)
    live = idx.client.describe_collection("kb")["collection_name"]
    idx.client.alter_collection_properties(live, properties={mv.MANIFEST: "{not json"})
    idx.client.close()
    ingest(folder, cfg, rebuild=True, embedder=counting, log=lambda m: None)
    idx = mv.MilvusIndex.open(cfg)
    assert len(idx.client.list_collections()) == 2  # the new generation and its terms, nothing of the old
    idx.client.close()


def test_a_milvus_lite_database_given_as_index_or_a_long_collection_name_says_what_to_do(tmp_path, counting):
    from citebot.index.local import LocalIndex
    _, cfg = one_page(tmp_path, counting, "kb")
    with pytest.raises(IndexError_, match="is a milvus-lite database, not a local index: instead of --index, give "
                                          "--set backend=milvus"):
        LocalIndex.load(cfg.milvus_uri)
    with pytest.raises(ValueError, match="201"):  # it said "must be letters, digits and _"
        Config(milvus_collection="k" + "x" * 240)

"""No superseded, staff or other-tenant chunk is ever returned under the
default scope, through any channel, at any depth."""
import json
import subprocess
import sys

import pytest

from citebot.index.store import scope_notes
from citebot.measurement.golden import load_golden
from citebot.schema import Chunk, Scope
from citebot.search.analyzer import analyze

from conftest import ROOT

ATTACKS = [
    "staff goodwill refund",
    "goodwill refund up to $50 without manager approval",
    "internal discount codes STAFF30 FRIENDS15",
    "escalation runbook on-call extension 4417",
    "refunded as store credit only",  # the superseded policy's wording
    "Return policy (2023) restocking fee 15% on bikes",
    "return authorization number by phone",
    "Acme Rentals late fee per hour deposit",
    "rental credit valid 12 months",
    "$100 gift card as an apology for the RD2-24 recall",
]


def all_queries():
    qs = load_golden(ROOT / "golden.json").questions
    return [t for q in qs for t in q.turns] + ATTACKS


def forbidden(c) -> bool:
    return c.status != "current" or c.audience != "public" or c.tenant is not None


def test_sample_has_the_restricted_documents_to_leak(sample_engine):
    chunks = list(sample_engine.index.scan(Scope.everything()))
    assert any(c.status == "superseded" for c in chunks)
    assert any(c.audience == "staff" for c in chunks)
    assert any(c.tenant for c in chunks)
    # Without the filter the attacks do reach them, so the test below can fail.
    unfiltered = [h.chunk for q in ATTACKS for h in sample_engine.index.sparse_search(analyze(q), Scope.everything(), 5)]
    assert sum(forbidden(c) for c in unfiltered) >= len(ATTACKS) // 2


@pytest.mark.parametrize("k", [1, 3, 5, 20])
def test_no_leak_through_sparse_dense_or_hybrid(sample_engine, k):
    scope = Scope()
    e = sample_engine.configured(sample_engine.cfg.replace(final_k=k, rerank_pool=max(k, 20), use_rerank=False))
    queries = all_queries()
    vectors = e.embed()(queries)
    for q, v in zip(queries, vectors):
        sparse = e.index.sparse_search(analyze(q), scope, k)
        dense = e.index.dense_search(v, scope, k)
        _, hybrid = e.search(q, [], scope)
        for h in sparse + dense + hybrid.hits + hybrid.fused:
            assert not forbidden(h.chunk), (q, h.chunk.source)
        assert all(not forbidden(c) for c in e.index.get([h.id for h in hybrid.fused]))


def test_staff_and_tenant_scopes_see_their_documents(sample_engine):
    idx = sample_engine.index
    staff = idx.sparse_search(analyze("goodwill refund manager approval"), Scope.build(audience="staff"), 5)
    assert staff and staff[0].chunk.audience == "staff"
    acme = idx.sparse_search(analyze("rental late fee"), Scope.build(tenant="acme-rentals"), 5)
    assert acme and acme[0].chunk.tenant == "acme-rentals"
    other = idx.sparse_search(analyze("rental late fee"), Scope.build(tenant="other-co"), 20)
    assert all(h.chunk.tenant is None for h in other)


def test_retrieve_cli_json(sample_index):
    r = subprocess.run([sys.executable, str(ROOT / "retrieve.py"), "what does E4032 mean", "--json",
                        "--index", sample_index.index, "--set", "use_rerank=false"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["query"] == "what does E4032 mean"
    hit = data["hits"][0]
    assert {"id", "source", "lines", "title", "text", "ranks", "scores", "evidence"} <= set(hit)
    assert hit["source"] == "troubleshooting/app-error-codes.md" and hit["ranks"]["bm25"] == 1
    assert hit["evidence"]["identifier"] is True
    assert [h["rank"] for h in data["hits"]] == list(range(1, len(data["hits"]) + 1))


def test_a_word_only_a_restricted_page_holds_reads_like_a_word_nothing_holds(sample_engine):
    """The numbers a public asker sees (refusal reason, P(answerable), coverage) are the same whether
    the staff runbook holds a word or no document does."""
    lexical = sample_engine.configured(sample_engine.cfg.replace(use_dense=False))  # two questions embed apart

    def seen(q):
        turn = lexical.ask(q)
        return turn.refused, turn.refusal_reason, round(turn.p_answerable or 0, 6), \
            [round(e.coverage, 6) for e in turn.retrieval.evidence.values()]
    runbook = " ".join(c.text for c in sample_engine.index.scan(Scope.build(audience="staff")))
    assert "4417" in runbook  # the staff-only extension number exists, so the pair below can differ
    public = " ".join(c.text for c in sample_engine.index.scan(Scope()))
    assert "4417" not in public and "4418" not in public + runbook
    assert seen("who do I call on extension 4417 about refunds?") == seen("who do I call on extension 4418 about refunds?")


def test_an_identifier_written_with_a_hyphen_finds_the_page(sample_engine):
    plain, hyphen = sample_engine.ask("what does E4032 mean?"), sample_engine.ask("what does E-4032 mean?")
    assert not hyphen.refused and plain.retrieval.hits[0].id in [h.id for h in hyphen.retrieval.hits[:3]]


def test_a_running_chat_stops_serving_a_page_an_ingest_re_marked_staff_or_removed(tmp_path, embedder):
    # The chat opens the index once; an ingest meanwhile switches CURRENT.  The open engine kept
    # quoting the old generation (read from its open file and memory map) until restarted.
    from citebot.config import Config
    from citebot.engine import Engine
    from citebot.index.build import ingest
    from citebot.index.store import open_index
    from citebot.search.models import Models

    from conftest import write
    folder = tmp_path / "docs"
    kiwi = "# Kiwi\n\nThe kiwi launch date is 12 March, under the code name MANGROVE-9.\n"
    write(folder / "k.md", kiwi)
    write(folder / "t.md", "# Tents\n\nOur tents are waterproof to 3,000 mm.\n")
    cfg = Config(embed_model="packaged", index=str(tmp_path / "idx"), use_rerank=False)
    ingest(folder, cfg, embedder=embedder, log=lambda m: None)
    engine = Engine(open_index(cfg), cfg, Models(embedder, None))
    question = "When is the kiwi launch date?"
    assert "MANGROVE-9" in engine.ask(question).answer
    write(folder / "k.md", "---\naudience: staff\n---\n" + kiwi)
    ingest(folder, cfg, embedder=embedder, log=lambda m: None)
    turn = engine.ask(question)
    assert "MANGROVE-9" not in turn.answer and turn.refused
    assert all(h.chunk.source == "t.md" for h in turn.retrieval.hits)
    assert "MANGROVE-9" in engine.ask(question, scope=Scope.build(audience="staff")).answer
    (folder / "k.md").unlink()
    ingest(folder, cfg, embedder=embedder, log=lambda m: None)
    assert "MANGROVE-9" not in engine.ask(question, scope=Scope.build(audience="staff")).answer


def test_a_scope_flag_no_document_matches_is_named_and_no_tenant_is_listed(sample_engine):
    notes = scope_notes(sample_engine.index.manifest, Scope.build(audience="staf", tenant="acme", lang="en,xx"))
    assert notes == [
        "--audience staf: no document in this index is for audience 'staf', so the public ones alone are "
        "searched (audiences here: public, staff)",
        "--lang: no document in this index is in 'xx' (languages here: bn, en, zh)",
        "--tenant: no document in this index belongs to tenant 'acme', so the shared ones alone are searched"]
    assert "acme-rentals" not in " ".join(notes)
    assert scope_notes(sample_engine.index.manifest, Scope.build(audience="Staff", tenant="acme-rentals",
                                                                 lang="zh")) == []
    assert scope_notes({}, Scope.build(audience="staf")) == []  # an index stamped before the values were kept


def test_retrieve_says_when_the_audience_matches_no_document(sample_index):
    r = subprocess.run([sys.executable, str(ROOT / "retrieve.py"), "refunds", "--audience", "staf",
                        "--index", sample_index.index, "--set", "use_rerank=false"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "citebot: --audience staf: no document in this index is for audience 'staf'" in r.stderr


def test_scope_notes_list_no_other_tenants_audiences_or_languages():
    from citebot.index.store import scope_values
    chunks = [Chunk(id="a", source="pub.md", title="", headings=(), text="x", start=1, end=1, audience="public", lang="en"),
              Chunk(id="b", source="t.md", title="", headings=(), text="x", start=1, end=1, audience="acme-board", lang="de",
                    tenant="Acme")]
    manifest = {"scopes": scope_values(chunks)}
    assert scope_notes(manifest, Scope.build(audience="staf", tenant="zz", lang="xx")) == [
        "--audience staf: no document in this index is for audience 'staf', so the public ones alone are "
        "searched (audiences here: public)",
        "--lang: no document in this index is in 'xx' (languages here: en)",
        "--tenant: no document in this index belongs to tenant 'zz', so the shared ones alone are searched"]
    # Acme's asker sees Acme's values; its audience is no typo for it.
    assert scope_notes(manifest, Scope.build(audience="staf", tenant="Acme", lang="de"))[0].endswith(
        "(audiences here: acme-board, public)")
    assert scope_notes(manifest, Scope.build(audience="acme-board", tenant="Acme", lang="de")) == []
    # An index stamped before the values were kept per tenant: its lists mix every tenant's, so none is shown.
    old = {"scopes": {"audience": ["acme-board", "public"], "lang": ["de", "en"], "tenant": ["Acme"]}}
    assert scope_notes(old, Scope.build(audience="staf", tenant="zz")) == [
        "--audience staf: no document in this index is for audience 'staf', so the public ones alone are searched",
        "--tenant: no document in this index belongs to tenant 'zz', so the shared ones alone are searched"]

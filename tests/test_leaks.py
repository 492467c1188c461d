"""No superseded, staff or other-tenant chunk is ever returned under the
default scope, through any channel, at any depth."""
import json
import subprocess
import sys

import pytest

import evaluate
from conftest import ROOT
from retrieve import Retriever, open_index
from schema import Scope

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


@pytest.fixture(scope="module")
def retriever(sample_index, embedder):
    return Retriever(open_index(sample_index), sample_index, embedder=embedder)


def all_queries():
    qs = evaluate.load_golden(ROOT / "golden.json")
    return [t for q in qs for t in evaluate.turns_of(q)] + ATTACKS


def forbidden(c) -> bool:
    return c.status != "current" or c.audience != "public" or c.tenant is not None


def test_sample_has_the_restricted_documents_to_leak(retriever):
    chunks = retriever.index.chunks
    assert any(c.status == "superseded" for c in chunks)
    assert any(c.audience == "staff" for c in chunks)
    assert any(c.tenant for c in chunks)
    # Without the filter the attacks do reach them, so the test below can fail.
    unfiltered = [h.chunk for q in ATTACKS for h in retriever.index.sparse_search(q, Scope.everything(), 5)]
    assert sum(forbidden(c) for c in unfiltered) >= len(ATTACKS) // 2


@pytest.mark.parametrize("k", [1, 3, 5, 20])
def test_no_leak_through_sparse_dense_or_hybrid(retriever, k):
    scope = Scope()
    cfg = retriever.cfg.replace(final_k=k, rerank_pool=max(k, 20), use_rerank=False)
    vectors = retriever.embedder.encode(all_queries())
    for q, v in zip(all_queries(), vectors):
        sparse = retriever.index.sparse_search(q, scope, k)
        dense = retriever.index.dense_search(v, scope, k)
        hybrid = retriever.search([q], scope, cfg)
        for h in sparse + dense + hybrid.hits + hybrid.fused:
            assert not forbidden(h.chunk), (q, h.chunk.source)


def test_staff_and_tenant_scopes_see_their_documents(retriever):
    staff = retriever.index.sparse_search("goodwill refund manager approval", Scope.build(audience="staff"), 5)
    assert staff and staff[0].chunk.audience == "staff"
    acme = retriever.index.sparse_search("rental late fee", Scope.build(tenant="acme-rentals"), 5)
    assert acme and acme[0].chunk.tenant == "acme-rentals"
    other = retriever.index.sparse_search("rental late fee", Scope.build(tenant="other-co"), 20)
    assert all(h.chunk.tenant is None for h in other)


def test_retrieve_cli_json(sample_index):
    r = subprocess.run([sys.executable, str(ROOT / "retrieve.py"), "what does E4032 mean", "--json",
                        "--index", sample_index.index, "--set", "use_rerank=false"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["query"] == "what does E4032 mean"
    hit = data["hits"][0]
    assert {"id", "source", "lines", "title", "text", "ranks", "scores"} <= set(hit)
    assert hit["source"] == "troubleshooting/app-error-codes.md" and hit["ranks"]["bm25"] == 1
    assert [h["rank"] for h in data["hits"]] == list(range(1, len(data["hits"]) + 1))

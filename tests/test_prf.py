"""Dense pseudo-relevance feedback (Rocchio) in the retriever, by hand in
three dimensions: the query is searched again as q + beta * mean(the
feedback chunks' vectors), normalized."""
import numpy as np
import pytest

from citebot.config import Config
from citebot.index.local import LocalIndex
from citebot.schema import Chunk, Scope
from citebot.search.retriever import retrieve

VECS = {"a": (1.0, 0.0, 0.0), "b": (0.0, 1.0, 0.0), "e": (0.6, 0.0, 0.8)}
Q = np.array([[0.8, 0.6, 0.0]], dtype=np.float32)


@pytest.fixture
def index():
    chunks = [Chunk(d, f"{d}.md", "", (), f"text of {d}", 1, 1) for d in VECS]
    return LocalIndex(chunks, np.array(list(VECS.values()), dtype=np.float32), {})


def run(index, **kw):
    cfg = Config(use_sparse=False, dense_k=2, final_k=2, rerank_pool=2, use_expansion=False, **kw)
    return retrieve(index, ["anything"], Scope(), cfg, embed=lambda qs: Q)


def test_without_feedback_the_query_vector_ranks_alone(index):
    # cosines: a 0.8, b 0.6, e 0.48; two per channel
    out = run(index, prf_beta=0.0)
    assert [h.id for h in out.hits] == ["a", "b"]
    assert out.hits[1].scores["dense"] == pytest.approx(0.6)


def test_feedback_moves_the_query_towards_the_top_fused_chunk(index):
    # q' = (0.8, 0.6, 0) + 1 * a = (1.8, 0.6, 0), |q'| = sqrt(3.6):
    # a 1.8/1.897 = 0.949, e 1.08/1.897 = 0.569, b 0.6/1.897 = 0.316
    out = run(index, prf_beta=1.0, prf_docs=1)
    assert [h.id for h in out.hits] == ["a", "e"]
    assert out.hits[1].scores["dense"] == pytest.approx(1.08 / 3.6 ** 0.5, abs=1e-6)
    # Evidence and the gate read the typed query's own vector, not the moved one.
    assert np.allclose(out.vectors, Q)


def test_feedback_over_two_chunks_uses_their_mean(index):
    # centre of a and b = (0.5, 0.5, 0); q' = (1.3, 1.1, 0): a 1.3, b 1.1, e 0.78 (over |q'|)
    out = run(index, prf_beta=1.0, prf_docs=2)
    assert [h.id for h in out.hits] == ["a", "b"]
    norm = (1.3 ** 2 + 1.1 ** 2) ** 0.5
    assert out.hits[1].scores["dense"] == pytest.approx(1.1 / norm, abs=1e-6)


def test_feedback_settings_are_validated():
    from citebot.config import ConfigError
    with pytest.raises(ConfigError, match="prf_beta"):
        Config(prf_beta=-0.5)
    with pytest.raises(ConfigError, match="prf_docs"):
        Config(prf_docs=0)

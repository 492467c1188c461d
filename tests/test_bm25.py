"""BM25 from the term x chunk matrix, by hand and against rank-bm25 (the reference)."""
import math
import random
from collections import Counter

import numpy as np
import pytest

from citebot.search import bm25


def postings(docs):
    return bm25.Postings.from_counts([Counter(d) for d in docs])


def test_bm25_by_hand_three_documents():
    p = postings([["refund", "card"], ["refund", "refund", "voucher"], ["tent", "pole", "torque", "chart"]])
    hits = dict(bm25.top_k(p, ["refund"], np.ones(3, bool), k=10))
    # N = 3, df = 2 -> idf = ln(1 + (3 - 2 + 0.5) / (2 + 0.5)) = ln 1.6 ; avgdl = 9 / 3 = 3
    idf = math.log(1.6)
    # d0: tf 1, dl 2: K = 1.2 * (0.25 + 0.75 * 2/3) = 0.9 -> idf * 1 * 2.2 / 1.9
    assert hits[0] == pytest.approx(idf * 2.2 / 1.9, abs=1e-12)
    # d1: tf 2, dl 3: K = 1.2 -> idf * 2 * 2.2 / 3.2
    assert hits[1] == pytest.approx(idf * 4.4 / 3.2, abs=1e-12)
    assert 2 not in hits  # zero score: not a hit
    assert [r for r, _ in bm25.top_k(p, ["refund"], np.ones(3, bool), k=10)] == [1, 0]
    assert bm25.top_k(p, ["nothing"], np.ones(3, bool), k=10) == []


def test_term_in_exactly_half_the_chunks_still_counts():
    # rank-bm25's own Okapi idf would be ln(2.5 / 2.5) = 0 here; Lucene's is ln 2.
    p = postings([["refund"], ["refund"], ["tent"], ["stove"]])
    assert bm25.idf(p.n_docs, len(p.rows_of("refund"))) == pytest.approx(math.log(2))
    assert [r for r, _ in bm25.top_k(p, ["refund"], np.ones(4, bool), k=10)] == [0, 1]


def test_ties_at_the_cut_go_to_the_first_rows():
    p = postings([["alpha"], ["alpha"], ["beta"], ["alpha", "beta"]])
    # N 4, avgdl 1.25, idf(alpha, df 3) = ln(1 + 1.5 / 3.5) = 0.3567: rows 0 and 1 tie at
    # 0.3567 * 2.2 / (1 + 1.2 * (0.25 + 0.75 / 1.25)) = 0.3885; row 3 (both terms) and row 2 (beta, df 2,
    # so a higher idf) lead.  k = 3 cuts the tie: row 0 stays.
    assert [r for r, _ in bm25.top_k(p, ["alpha", "beta"], np.ones(4, bool), k=3)] == [3, 2, 0]
    rng = np.random.default_rng(0)
    for _ in range(200):  # any cut of any tied scores: the sorted list's first k
        s = rng.integers(0, 4, 40).astype(float)
        rows, _ = bm25.best_k(np.arange(40), s, 7)
        assert list(rows) == sorted(range(40), key=lambda r: (-s[r], r))[:7]


def test_filtered_rows_only_are_ranked():
    p = postings([["refund"], ["refund", "refund"], ["tent"]])
    assert [r for r, _ in bm25.top_k(p, ["refund"], np.array([True, False, True]), k=10)] == [0]


def test_the_matrix_gives_rank_bm25s_scores_to_1e_9():
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(60)]
    docs = [[rng.choice(vocab[: rng.randint(5, 60)]) for _ in range(rng.randint(1, 40))] for _ in range(300)]
    docs[5] = []  # an empty chunk too
    p = postings(docs)
    for _ in range(30):
        query = [rng.choice(vocab) for _ in range(rng.randint(1, 6))] + ["unknown-term"]
        for k1, b in ((1.2, 0.75), (0.9, 0.4)):
            fast = bm25.scores(p, query, k1, b)
            ref = bm25.reference_scores(docs, query, range(len(docs)), k1, b)
            assert np.max(np.abs(fast - ref)) < 1e-9


def test_counts_round_trip_and_files(tmp_path):
    docs = [["b", "a", "a"], [], ["c"]]
    p = postings(docs)
    assert p.counts() == [{"a": 2, "b": 1}, {}, {"c": 1}]
    p.save(tmp_path / "p.npz", tmp_path / "t.txt")
    q = bm25.Postings.load(tmp_path / "p.npz", tmp_path / "t.txt")
    assert q.terms == ["a", "b", "c"] and q.counts() == p.counts() and list(q.dl) == [3.0, 0.0, 1.0]
    (tmp_path / "t.txt").write_text("a\nb")  # one term short of the matrix
    with pytest.raises(ValueError):
        bm25.Postings.load(tmp_path / "p.npz", tmp_path / "t.txt")

"""Hand-computed checks for metrics.py (arithmetic in the comments)."""
import math

import pytest

from citebot.measurement.metrics import (
    hit_at_k,
    mean,
    ndcg_at_k,
    percentile,
    recall_at_k,
    reciprocal_rank,
    refusal_scores,
)

L2_3 = math.log2(3)  # discount at rank 2
# discount at rank r is log2(1 + r): r=1 -> 1, r=2 -> log2(3), r=3 -> 2, r=4 -> log2(5)


# ---------------------------------------------------------------- hit@k

def test_hit_at_k_basic():
    ranked = ["a", "b", "c"]
    assert hit_at_k(ranked, {"c": 1}, 3) == 1.0   # c at rank 3 <= 3
    assert hit_at_k(ranked, {"c": 1}, 2) == 0.0   # c beyond k=2
    assert hit_at_k(ranked, {"a": 1}, 1) == 1.0


def test_hit_at_k_edge_cases():
    assert hit_at_k(["a", "b"], {}, 5) == 0.0               # no relevant at all
    assert hit_at_k(["a", "b"], {"a": 0}, 5) == 0.0         # grade 0 is not relevant
    assert hit_at_k([], {"a": 1}, 5) == 0.0                 # empty ranking
    assert hit_at_k(["a"], {"a": 1}, 10) == 1.0             # k larger than the list
    # duplicates are dropped before the cut: [a, a, b] -> [a, b], b is rank 2
    assert hit_at_k(["a", "a", "b"], {"b": 1}, 2) == 1.0


def test_bad_k_rejected():
    for f in (hit_at_k, recall_at_k, ndcg_at_k):
        with pytest.raises(ValueError):
            f(["a"], {"a": 1}, 0)
    with pytest.raises(ValueError):
        reciprocal_rank(["a"], {"a": 1}, 0)


# ---------------------------------------------------------------- recall@k

def test_recall_at_k():
    ranked = ["a", "b", "c", "d"]
    rel = {"b": 1, "d": 1, "z": 1}  # 3 relevant, z never retrieved
    assert recall_at_k(ranked, rel, 2) == pytest.approx(1 / 3)   # only b in top 2
    assert recall_at_k(ranked, rel, 4) == pytest.approx(2 / 3)   # b and d
    assert recall_at_k(ranked, rel, 100) == pytest.approx(2 / 3)


def test_recall_at_k_edge_cases():
    # no relevant documents: defined as 0.0 (callers skip unanswerable queries)
    assert recall_at_k(["a"], {}, 10) == 0.0
    assert recall_at_k(["a"], {"a": 0}, 10) == 0.0
    # relevant beyond k
    assert recall_at_k(["a", "b", "c"], {"c": 1}, 2) == 0.0
    # duplicates count once: [b, b, b] finds 1 of 2, not 3 of 2
    assert recall_at_k(["b", "b", "b"], {"b": 1, "c": 1}, 3) == pytest.approx(0.5)
    # and do not use up slots: [b, b, c] -> [b, c], both found at k=2
    assert recall_at_k(["b", "b", "c"], {"b": 1, "c": 1}, 2) == 1.0
    # graded: a grade-2 doc counts the same as grade-1 for recall
    assert recall_at_k(["a"], {"a": 2, "b": 1}, 1) == pytest.approx(0.5)


# ---------------------------------------------------------------- reciprocal rank

def test_reciprocal_rank():
    ranked = ["a", "b", "c", "d"]
    assert reciprocal_rank(ranked, {"c": 1, "d": 1}) == pytest.approx(1 / 3)  # first hit c at 3
    assert reciprocal_rank(ranked, {"a": 1}) == 1.0
    assert reciprocal_rank(ranked, {"c": 1}, k=2) == 0.0        # beyond k
    assert reciprocal_rank(ranked, {"c": 1}, k=3) == pytest.approx(1 / 3)
    assert reciprocal_rank(ranked, {"d": 1}, k=None) == pytest.approx(1 / 4)


def test_reciprocal_rank_edge_cases():
    assert reciprocal_rank(["a", "b"], {}) == 0.0
    assert reciprocal_rank([], {"a": 1}) == 0.0
    assert reciprocal_rank(["a", "b"], {"a": 0, "b": 1}) == pytest.approx(1 / 2)  # grade 0 skipped
    # duplicates: [x, x, x, r] -> [x, r], so r is rank 2 -> 1/2
    assert reciprocal_rank(["x", "x", "x", "r"], {"r": 1}) == pytest.approx(1 / 2)
    assert reciprocal_rank(["x", "x", "x", "r"], {"r": 1}, k=2) == pytest.approx(1 / 2)


# ---------------------------------------------------------------- nDCG

def test_ndcg_graded_exp_gain():
    # ranked [a, b, c], rel {a: 1, c: 2}, k = 3
    # DCG  = (2^1-1)/log2(2) + 0 + (2^2-1)/log2(4) = 1 + 3/2 = 2.5
    # IDCG = ideal order [c(2), a(1)]: (2^2-1)/log2(2) + (2^1-1)/log2(3) = 3 + 1/log2(3)
    dcg = 2.5
    idcg = 3 + 1 / L2_3  # = 3.6309...
    assert ndcg_at_k(["a", "b", "c"], {"a": 1, "c": 2}, 3) == pytest.approx(dcg / idcg)
    assert ndcg_at_k(["a", "b", "c"], {"a": 1, "c": 2}, 3) == pytest.approx(0.68852, abs=1e-5)


def test_ndcg_graded_linear_gain():
    # same, gain = grade (pytrec_eval / BEIR):
    # DCG  = 1/1 + 2/2 = 2
    # IDCG = 2/1 + 1/log2(3) = 2.6309...
    expected = 2 / (2 + 1 / L2_3)
    assert ndcg_at_k(["a", "b", "c"], {"a": 1, "c": 2}, 3, gain="linear") == pytest.approx(expected)
    assert expected == pytest.approx(0.76018, abs=1e-5)


def test_ndcg_binary_exp_equals_linear():
    # binary qrels: 2^1-1 == 1, so both gains agree.
    # ranked [x, a, y, b], rel {a, b, c}, k = 4
    # DCG  = 1/log2(3) + 1/log2(5)
    # IDCG = 1/1 + 1/log2(3) + 1/2   (3 relevant, all fit in k=4)
    ranked, rel = ["x", "a", "y", "b"], {"a": 1, "b": 1, "c": 1}
    expected = (1 / L2_3 + 1 / math.log2(5)) / (1 + 1 / L2_3 + 0.5)
    assert ndcg_at_k(ranked, rel, 4) == pytest.approx(expected)
    assert ndcg_at_k(ranked, rel, 4, gain="linear") == pytest.approx(expected)


def test_ndcg_ideal_uses_all_relevant_cut_to_k():
    # ranked [a, x], rel {a, b, c} binary, k = 2
    # DCG = 1 ; IDCG@2 = 1 + 1/log2(3) (only two ideal slots, not three)
    assert ndcg_at_k(["a", "x"], {"a": 1, "b": 1, "c": 1}, 2) == pytest.approx(1 / (1 + 1 / L2_3))
    # a relevant doc that was never retrieved still lowers the score:
    # ranked [a], rel {a, b}, k = 10: DCG = 1 ; IDCG = 1 + 1/log2(3)
    assert ndcg_at_k(["a"], {"a": 1, "b": 1}, 10) == pytest.approx(1 / (1 + 1 / L2_3))


def test_ndcg_edge_cases():
    assert ndcg_at_k(["a", "b"], {"a": 1}, 2) == 1.0               # perfect
    assert ndcg_at_k(["a", "b"], {}, 2) == 0.0                     # no relevant
    assert ndcg_at_k(["a", "b"], {"a": 0}, 2) == 0.0               # only grade 0
    assert ndcg_at_k(["a", "b", "c"], {"c": 1}, 2) == 0.0          # beyond k
    # duplicate of a relevant doc earns nothing twice:
    # [a, a] -> [a]: DCG = 1, IDCG = 1 -> 1.0 (not 1 + 1/log2(3))
    assert ndcg_at_k(["a", "a"], {"a": 1}, 2) == 1.0
    # [x, x, a] -> [x, a]: a at rank 2 within k=2 -> 1/log2(3)
    assert ndcg_at_k(["x", "x", "a"], {"a": 1}, 2) == pytest.approx(1 / L2_3)
    with pytest.raises(ValueError):
        ndcg_at_k(["a"], {"a": 1}, 1, gain="log")


# ---------------------------------------------------------------- refusal

def test_refusal_scores():
    pairs = [
        (True, True),    # tp
        (True, True),    # tp
        (True, False),   # fn: answered an unanswerable question
        (False, True),   # fp: refused an answerable one
        (False, False),  # tn
        (False, False),  # tn
        (False, False),  # tn
    ]
    s = refusal_scores(pairs)
    assert (s["tp"], s["fp"], s["fn"], s["tn"]) == (2, 1, 1, 3)
    assert s["refusal_precision"] == pytest.approx(2 / 3)   # 2 / (2 + 1)
    assert s["refusal_recall"] == pytest.approx(2 / 3)      # 2 / (2 + 1)
    assert s["refusal_accuracy"] == pytest.approx(5 / 7)    # (2 + 3) / 7


def test_refusal_scores_undefined():
    s = refusal_scores([])
    assert s["refusal_precision"] is None and s["refusal_recall"] is None
    assert s["refusal_accuracy"] is None
    assert (s["tp"], s["fp"], s["fn"], s["tn"]) == (0, 0, 0, 0)
    # never refused: precision undefined (0/0), recall 0/2 = 0
    s = refusal_scores([(True, False), (True, False), (False, False)])
    assert s["refusal_precision"] is None
    assert s["refusal_recall"] == 0.0
    assert s["refusal_accuracy"] == pytest.approx(1 / 3)
    # nothing should be refused: recall undefined, precision 0/1
    s = refusal_scores([(False, True), (False, False)])
    assert s["refusal_recall"] is None
    assert s["refusal_precision"] == 0.0
    assert s["refusal_accuracy"] == 0.5


# ---------------------------------------------------------------- percentile / mean

def test_percentile_hand_values():
    xs = [15, 20, 35, 40, 50]  # sorted already; positions 0..4
    assert percentile(xs, 0) == 15
    assert percentile(xs, 100) == 50
    assert percentile(xs, 50) == 35              # pos 4*0.5 = 2 -> 35
    assert percentile(xs, 40) == pytest.approx(29)  # pos 1.6: 20 + 0.6*(35-20) = 29
    assert percentile(xs, 90) == pytest.approx(46)  # pos 3.6: 40 + 0.6*(50-40) = 46
    assert percentile([4, 1, 3, 2], 50) == pytest.approx(2.5)  # unsorted; pos 1.5 -> 2.5
    assert percentile([7], 95) == 7
    assert percentile([], 50) is None
    with pytest.raises(ValueError):
        percentile([1], 101)


def test_percentile_matches_numpy():
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(0)
    xs = list(rng.random(37) * 100)
    for p in (0, 1, 5, 25, 50, 66.6, 90, 95, 99, 100):
        assert percentile(xs, p) == pytest.approx(float(np.percentile(xs, p)))


def test_mean():
    assert mean([1, 2, 3, 4]) == 2.5
    assert mean(x for x in [0.5]) == 0.5
    assert mean([]) is None

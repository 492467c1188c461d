"""The refusal gate: its arithmetic by hand, and that it refuses before any model call."""
import json
import math

import pytest

from citebot.answer import gate, llm
from citebot.config import REFUSAL
from citebot.measurement import refusal
from citebot.schema import Scope

from fake_openai import FakeOpenAI

S = gate.Signals(top=0.6, cosine=0.7, coverage=0.5, unknown=0.0, answer=0.4, kind=0.0, margin=0.1)
PARAMS = {"features": list(gate.FEATURES), "mean": [0.5] * 7, "scale": [0.1] * 7,
          "coef": [1.0, 0, 0, 0, -2.0, 0, 0], "intercept": 0.5}


def test_probability_by_hand():
    # z = 0.5 + 1.0 * (0.6 - 0.5) / 0.1 - 2.0 * (0.4 - 0.5) / 0.1 = 0.5 + 1 + 2 = 3.5
    assert gate.probability(S, PARAMS) == pytest.approx(1 / (1 + math.exp(-3.5)))
    assert gate.probability(S) == pytest.approx(gate.probability(S, gate.model()))


def test_every_shipped_fit_is_stamped_with_its_model_and_tuning_data():
    fits = json.loads(gate.MODEL.read_text())["models"]
    assert gate.DEFAULT_MODEL in fits
    for name, m in fits.items():
        assert m["model"] == name and m["features"] == list(gate.FEATURES) and len(m["coef"]) == len(gate.FEATURES)
        assert all("tune half" in v for v in m["fitted_on"].values())
        assert m["command"].startswith("python evaluate.py --refusal --fit")
    # A model no fit was made for gets the packaged model's.
    assert gate.model("/some/local/model") == fits[gate.DEFAULT_MODEL]


def test_unknown_mass_is_the_least_over_the_question_forms():
    from citebot.index.store import TermStat
    stats = {"2fa": TermStat(3.0, False), "setup": TermStat(1.0, True), "two": TermStat(1.0, True),
             "factor": TermStat(2.0, True)}
    assert gate.unknown_mass([["2fa", "setup"]], stats) == pytest.approx(0.75)
    assert gate.unknown_mass([["2fa", "setup"], ["two", "factor", "setup"]], stats) == 0.0


def test_fit_separates_and_the_operating_point_meets_targets_first():
    def case(src, i, ans, x):
        s = gate.Signals(top=x, cosine=x, coverage=x, unknown=0.0, answer=x, kind=0.0, margin=0.0)
        return refusal.Case(src, f"{src}{i}", "tune", ans, s)
    cases = [case("golden_fastapi", i, i % 2 == 0, 0.8 if i % 2 == 0 else 0.2) for i in range(20)]
    params = refusal.fit(cases)
    assert gate.probability(cases[0].signals, params) > 0.9 > 0.1 > gate.probability(cases[1].signals, params)
    t = refusal.choose(cases, params)
    s = refusal.scores(cases, params, t)
    assert (s["precision"], s["recall"]) == (1.0, 1.0)


def test_weak_evidence_is_refused_by_the_gate_without_a_model_call(sample_engine, tmp_path, monkeypatch):
    server = FakeOpenAI()
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    try:
        e = sample_engine.configured(sample_engine.cfg.replace(gate_threshold=0.99, data_dir=str(tmp_path)))
        e.llm = llm.LLM("m", timeout=5, retries=0)
        pieces = []
        turn = e.ask("do gift cards expire?", [], Scope(), on_text=pieces.append)
        assert turn.refused and turn.answer == REFUSAL and "".join(pieces) == REFUSAL
        assert turn.refusal_reason.startswith("the evidence is too weak (P(answerable)")
        assert turn.model_calls == 0 and server.requests == []
        # With the fitted operating point the same question is answered, through the model.
        server.script = ["Gift cards never expire [1]."]
        e.cfg = e.cfg.replace(gate_threshold=0.35)
        turn = e.ask("do gift cards expire?", [], Scope())
        assert not turn.refused and turn.p_answerable >= 0.35 and len(server.requests) == 1
    finally:
        server.close()


def test_shortfall_by_hand():
    # precision 0.75 is 0.05 short of 0.8, recall 0.5 is 0.1 short of 0.6
    assert refusal.shortfall({"precision": 0.75, "recall": 0.5}, (0.8, 0.6)) == pytest.approx(0.15)
    assert refusal.shortfall({"precision": 0.9, "recall": 0.7}, (0.8, 0.6)) == 0.0
    assert refusal.shortfall({"precision": None, "recall": 0.0}, (0.7, 0.5)) == pytest.approx(1.2)


def test_the_operating_point_falls_least_short_of_the_targets_over_all_sources():
    # P(answerable) = sigmoid(top): the cases carry the probabilities below.
    params = {"features": list(gate.FEATURES), "mean": [0.0] * 7, "scale": [1.0] * 7,
              "coef": [1.0] + [0.0] * 6, "intercept": 0.0}

    def case(src, i, ans, p):
        x = math.log(p / (1 - p))
        return refusal.Case(src, f"{src}{i}", "tune", ans, gate.Signals(x, 0, 0, 0, 0, 0, 0))
    fastapi = [case("golden_fastapi", i, False, p) for i, p in enumerate([0.12, 0.22, 0.32, 0.44])]
    fastapi += [case("golden_fastapi", 10 + i, True, p) for i, p in enumerate([0.42, 0.47, 0.62, 0.72, 0.82])]
    squad = [case("squad2", i, False, p) for i, p in enumerate([0.47, 0.48, 0.49, 0.9])]
    squad += [case("squad2", 10 + i, True, p) for i, p in enumerate([0.46, 0.46, 0.95])]
    # At 0.45 FastAPI meets its target (P 4/5 = 0.8, R 1) but SQuAD refuses
    # nothing (short 0.7 + 0.5 = 1.2).  At 0.50 FastAPI has P 4/6 (0.133 short)
    # and SQuAD P 3/5 = 0.6 (0.1 short) with R 0.75: 0.233 in all, the least.  0.55 and
    # 0.60 refuse the same cases (same shortfall, same F1): the lower threshold wins the tie.
    t = refusal.choose(fastapi + squad, params)
    assert t == 0.5
    assert refusal.scores(squad, params, t)["precision"] == pytest.approx(0.6)

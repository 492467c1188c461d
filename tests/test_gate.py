"""The refusal gate: its arithmetic by hand, and that it refuses before any model call."""
import json
import math

import pytest

from citebot.answer import gate, llm
from citebot.config import REFUSAL, Config
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


def test_without_a_cosine_the_cosine_features_count_as_the_fits_mean():
    s = gate.Signals(top=0.0, cosine=0.0, coverage=0.5, unknown=0.0, answer=0.4, kind=0.0, margin=0.1, dense=False)
    # top reads as its mean 0.5, not 0 (which is -5 sd): z = 0.5 - 2.0 * (0.4 - 0.5) / 0.1 = 2.5
    assert gate.probability(s, PARAMS) == pytest.approx(1 / (1 + math.exp(-2.5)))
    # The shipped MiniLM fit with the best lexical signals there are: it refused (0.335 < 0.35) every such
    # question while a missing cosine read as 0; read as the mean, they are far above the 0.35 operating point.
    best = gate.Signals(top=0.0, cosine=0.0, coverage=1.0, unknown=0.0, answer=1.15, kind=0.0, margin=1.15, dense=False)
    assert gate.probability(best, gate.model(gate.DEFAULT_MODEL)) > 0.8
    assert "cosine" not in gate.reason(s, 0.1, 0.35) and "dense" not in s.as_dict()


def test_a_refusal_reason_shows_p_with_the_digits_that_tell_it_from_the_threshold():
    # A review read "P(answerable) 0.35 < gate_threshold 0.35" as a refusal made by mistake.
    s = gate.Signals(top=0.5, cosine=0.5, coverage=0.5, unknown=0.0, answer=0.4, kind=0.0, margin=0.1)
    assert "(P(answerable) 0.32 < gate_threshold 0.35)" in gate.reason(s, 0.3213, 0.35)
    assert "(P(answerable) 0.348 < gate_threshold 0.35)" in gate.reason(s, 0.3481, 0.35)
    assert "(P(answerable) 0.3499 < gate_threshold 0.35)" in gate.reason(s, 0.34991, 0.35)

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


# --- the cross-encoder's score as a signal ------------------------------------
WITH_CE = {"features": list(gate.FEATURES) + [gate.RERANK], "mean": [0.5] * 7 + [0.0], "scale": [0.1] * 7 + [2.0],
           "coef": [1.0, 0, 0, 0, -2.0, 0, 0, 0.5], "intercept": 0.5}


def test_probability_reads_the_features_its_fit_names():
    s = gate.Signals(**{**S.as_dict(), "rerank": 3.0})
    # z = 3.5 (as above) + 0.5 * (3.0 - 0.0) / 2.0 = 4.25
    assert gate.probability(s, WITH_CE) == pytest.approx(1 / (1 + math.exp(-4.25)))
    assert gate.probability(s, PARAMS) == pytest.approx(1 / (1 + math.exp(-3.5)))  # a fit without it ignores it
    with pytest.raises(ValueError, match="rerank"):
        gate.probability(S, WITH_CE)  # no rerank this turn: that fit cannot be used
    assert "rerank" not in S.as_dict() and s.as_dict()["rerank"] == 3.0


def test_a_fit_made_with_a_cross_encoder_is_used_only_with_that_cross_encoder(monkeypatch):
    own, ce = dict(PARAMS, model="e"), dict(WITH_CE, model="e + rerank /ce")
    monkeypatch.setattr(gate, "_fits", lambda: {gate.DEFAULT_MODEL: PARAMS, "e": own, gate.key("e", "/ce"): ce})
    assert gate.key("e", "/ce") == "e + rerank /ce" and gate.key("e") == "e"
    assert gate.model("e", "/ce") is ce
    assert gate.model("e", "/other-ce") is own and gate.model("e") is own


def test_the_fit_takes_the_rerank_score_when_every_case_has_one():
    def case(i, ans, rerank):
        s = gate.Signals(top=0.5, cosine=0.5, coverage=0.5, unknown=0.0, answer=0.5, kind=0.0, margin=0.0,
                         rerank=rerank)
        return refusal.Case("golden_fastapi", f"q{i}", "tune", ans, s)
    # Only the cross-encoder tells the classes apart.
    cases = [case(i, i % 2 == 0, 4.0 if i % 2 == 0 else -4.0) for i in range(20)]
    params = refusal.fit(cases)
    assert params["features"] == list(gate.FEATURES) + ["rerank"] and params["coef"][-1] > 0
    assert gate.probability(cases[0].signals, params) > 0.8 > 0.2 > gate.probability(cases[1].signals, params)
    # One case without a rerank score: the fit cannot read it.
    cases[3] = refusal.Case("golden_fastapi", "q3", "tune", False, gate.Signals(0.5, 0.5, 0.5, 0.0, 0.5, 0.0, 0.0))
    assert refusal.fit(cases)["features"] == list(gate.FEATURES)


def test_a_fit_with_a_cross_encoder_is_saved_under_its_own_key(tmp_path, monkeypatch):
    monkeypatch.setattr(gate, "MODEL", tmp_path / "gate.json")
    gate._fits.cache_clear()
    try:
        cases = [refusal.Case("golden", "q1", "tune", True, None)]
        name = refusal.save(dict(WITH_CE), 0.35, cases, "e5-model", 0.35, "e5", "/models/ce")
        plain = refusal.save(dict(PARAMS), 0.35, cases, "e5-model", 0.35, "e5", "/models/ce")  # reads no rerank
        fits = json.loads((tmp_path / "gate.json").read_text())["models"]
        assert name == "e5-model + rerank /models/ce" and plain == "e5-model" and set(fits) == {name, plain}
        assert fits[name]["command"] == "python evaluate.py --refusal --fit --set rerank_model=/models/ce"
        assert fits[plain]["command"] == "python evaluate.py --refusal --fit"
        assert gate.model("e5-model", "/models/ce")["features"][-1] == "rerank"
    finally:
        gate._fits.cache_clear()


def test_a_budget_too_small_for_any_chunk_says_so(sample_engine):
    turn = sample_engine.configured(sample_engine.cfg.replace(context_tokens=10)).ask("how long do refunds take?")
    assert turn.refused and turn.refusal_reason == "no chunk fits the context budget (context_tokens 10); raise it"
    # A budget smaller than the strongest chunk: that chunk is cut to fit, and answered from.
    from citebot.answer.context import CUT_NOTE
    turn = sample_engine.configured(sample_engine.cfg.replace(context_tokens=90, use_gate=False)).ask(
        "how long do refunds take?")
    assert turn.context.shown and turn.context.shown[-1].chunk.text.endswith(CUT_NOTE)


def test_a_bare_thanks_is_not_searched_and_the_next_turn_keeps_its_context(sample_engine):
    # "thanks" was joined to the last question and re-quoted its answer (and "Thank you for choosing ...").
    asked = "what does error E4032 mean?"
    turn = sample_engine.ask("thanks!", [asked])
    assert turn.refused and "asks nothing" in turn.refusal_reason and turn.retrieval.hits == []
    assert turn.plan.queries == [] and turn.plan.method == "ack" and turn.retrieval.queries == [] and turn.model_calls == 0
    turn = sample_engine.ask("and how do I fix it?", [asked, "thanks!"])
    assert not turn.refused and turn.retrieval.queries[1] == f"{asked} and how do I fix it?"


def test_the_fit_never_reads_the_report_half():
    def case(i, split, ans, x):
        return refusal.Case("golden_fastapi", f"q{i}", split, ans, gate.Signals(x, x, x, 0.0, x, 0.0, 0.0))
    tune = [case(i, "tune", i % 2 == 0, 0.8 if i % 2 == 0 else 0.2) for i in range(20)]
    # A report half that says the opposite: a fit that read it would not separate the tune cases.
    report = [case(100 + i, "report", i % 2 == 1, 0.8 if i % 2 == 0 else 0.2) for i in range(200)]
    assert refusal.fit(tune + report) == refusal.fit(tune)


def test_a_case_without_a_cosine_is_fitted_as_the_gate_reads_it_at_the_mean():
    def case(i, ans, x, dense=True):
        s = gate.Signals(x if dense else 0.0, x if dense else 0.0, x, 0.0, x, 0.0, 0.0, dense=dense)
        return refusal.Case("golden_fastapi", f"q{i}", "tune", ans, s)
    # Answerable cases with no cosine measured (a language the model does not read)
    # carried top = cosine = 0 into the fit, the value of the weakest unanswerable.
    cases = [case(i, i % 2 == 0, 0.8 if i % 2 == 0 else 0.2) for i in range(20)]
    cases += [case(20 + i, True, 0.8, dense=False) for i in range(10)]
    params = refusal.fit(cases)
    # The dense cases' mean (0.5), not one pulled down by ten zeros (1/3), is what
    # probability() reads for a case without a cosine.
    assert params["mean"][:2] == [0.5, 0.5]
    assert gate.probability(cases[-1].signals, params) > 0.9


def test_squad_and_mtrag_halves_keep_a_paragraph_or_conversation_together():
    paragraph = {f"q{i}": "sq-shared" for i in range(30)}
    assert len({refusal.squad_half(q, paragraph) for q in paragraph}) == 1
    assert refusal.squad_half("q1", {}) == refusal.half("q1")  # no paragraph known: the question's own


def test_refitting_without_every_source_is_refused_and_the_shipped_fit_kept(tmp_path, monkeypatch):
    # Without ../shared a refit ran on the sample alone and overwrote gate.json for every user.
    from citebot.config import Config

    monkeypatch.setenv("CITEBOT_BENCHMARKS", str(tmp_path))
    before = gate.MODEL.read_bytes()
    with pytest.raises(ValueError, match=r"lacks .*squad2 .*mtrag-un .*The shipped fit is kept"):
        refusal.run(Config(), True, None, lambda m: None)
    assert gate.MODEL.read_bytes() == before


def test_a_fit_records_the_settings_it_was_made_at_in_its_command(tmp_path, monkeypatch):
    # MiniLM runs at weight_dense 0.5: a fit made there must say so, or its rerun fits at 1.
    monkeypatch.setattr(gate, "MODEL", tmp_path / "gate.json")
    gate._fits.cache_clear()
    try:
        cfg = Config().replace(embed_model="packaged", weight_dense=0.5, use_expansion=False, use_gate=False,
                               model="other-llm")  # neither the gate switch nor the LLM moves a signal
        settings = refusal.fit_settings(cfg)
        assert settings == {"weight_dense": 0.5, "use_expansion": False}
        cases = [refusal.Case("golden", "q1", "tune", True, None)]
        name = refusal.save(dict(PARAMS), 0.35, cases, "mini", 0.35, "packaged", None, settings)
        fit = json.loads((tmp_path / "gate.json").read_text())["models"][name]
        assert fit["command"] == ("python evaluate.py --refusal --fit --set embed_model=packaged"
                                  " --set weight_dense=0.5 --set use_expansion=false")
        assert fit["settings"] == {"weight_dense": 0.5, "use_expansion": False}
    finally:
        gate._fits.cache_clear()

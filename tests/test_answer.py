import pytest

import answer
import config
import tokens
from config import REFUSAL
from schema import Chunk, Hit


def hit(i, text, cosine=0.9, coverage=0.0, title="Doc"):
    c = Chunk(id=f"c{i}", source=f"d{i}.md", title=title, headings=("H",), text=text, start=i, end=i + 2)
    return Hit(c.id, rank=i, score=1.0 / i, scores={"cosine": cosine, "coverage": coverage}, chunk=c)


CFG = config.Config(index="/nonexistent", min_cosine=0.35, min_coverage=0.5)


def test_citation_forms_and_stripping():
    text, cited, stripped = answer.clean_citations("A [1]. B [2, 9]. C [4-7]. D [9]. E [3–2].", n_shown=5)
    # [2, 9] -> [2]; [4-7] -> 4, 5 kept, 6, 7 stripped; [9] gone; a reversed [3–2] reads as 3 and 2
    assert text.startswith("A [1]. B [2]. C [4, 5]. D.")
    assert cited[:3] == [1, 2, 4]
    assert stripped == 1 + 2 + 1


def test_all_citations_invalid_means_no_cited():
    text, cited, stripped = answer.clean_citations("Refunds take 60 days [8].", n_shown=5)
    assert text == "Refunds take 60 days." and cited == [] and stripped == 1


def test_stream_cleaner_never_prints_an_invalid_number():
    sc = answer.StreamCleaner(3)
    out = "".join(sc.feed(p) for p in ["Refunds [", "1", "] and credit [", "9", "]", " done [2"]) + sc.flush()
    assert out == "Refunds [1] and credit  done [2" and sc.stripped == 1


def test_context_floor_dedup_budget_and_strongest_last():
    hits = [hit(1, "Refunds go to the original card within 60 days."),
            hit(2, "Refunds go to the original card within 60 days!"),  # near duplicate of 1
            hit(3, "Store hours are nine to five.", cosine=0.1, coverage=0.1),  # below both floors
            hit(4, "Exchanges are free in every store.", cosine=0.2, coverage=0.8),  # lexical evidence
            hit(5, "Gift cards never expire.")]
    ctx = answer.select_context(hits, CFG)
    assert [h.id for h in ctx.shown] == ["c5", "c4", "c1"]  # strongest (c1) last
    assert dict((h.id, why) for h, why in ctx.dropped) == {"c2": "duplicate", "c3": "floor"}
    system, user = answer.build_prompt("how do refunds work?", ctx)
    assert user.index("[3] Doc > H (d1.md, lines 1-3)") > user.index("[1] Doc > H (d5.md")
    assert user.rstrip().endswith("Answer with citations:") and "Question: how do refunds work?" in user
    assert REFUSAL in system


def test_context_respects_token_budget():
    long = " ".join(f"word{i}" for i in range(300))
    hits = [hit(1, "Short first chunk about refunds."), hit(2, long), hit(3, "Another short chunk about tents.")]
    budget = tokens.count(answer.source_block(0, hits[0])) + tokens.count(answer.source_block(0, hits[2])) + 5
    ctx = answer.select_context(hits, CFG.replace(context_tokens=budget))
    assert [h.id for h in ctx.shown] == ["c3", "c1"]
    assert ("c2", "budget") in [(h.id, why) for h, why in ctx.dropped]
    _, user = answer.build_prompt("q", ctx)
    assert sum(tokens.count(answer.source_block(n, h)) for n, h in enumerate(ctx.shown, 1)) <= budget


def test_refusal_detection():
    assert answer.is_refusal(REFUSAL)
    assert answer.is_refusal("I'm sorry, the sources do not contain information about that.")
    assert not answer.is_refusal("Refunds take 60 days [1]. The sources do not mention gift cards [2].")
    assert not answer.is_refusal("Refunds take 60 days [1].")


def test_units_table_rows_read_with_header_and_code_whole():
    text = "Pick a size.\n\n| Size | Height |\n|---|---|\n| M | 165-178 cm |\n| L | 178-188 cm |\n\n```\nrun a\nrun b\n```"
    u = answer.units(text)
    assert u == ["Pick a size.", "Size: M; Height: 165-178 cm", "Size: L; Height: 178-188 cm", "```\nrun a\nrun b\n```"]


def test_extractive_quotes_best_sentence_with_its_number():
    ctx = answer.Context([hit(2, "Shipping is free over $50. Orders ship in two days."),
                          hit(1, "Refunds go to the original card within 60 days. Exchanges are free.")])
    ex = answer.extractive("how long until refunds reach my card?", ctx, idf=lambda t: 1.0, min_score=0.3)
    assert ex.text.startswith("Refunds go to the original card within 60 days. [2]")
    assert ex.cited[0] == 2


def test_extractive_refuses_when_nothing_matches():
    ctx = answer.Context([hit(1, "Shipping is free over $50.")])
    ex = answer.extractive("what is the warranty on stoves?", ctx, idf=lambda t: 1.0, min_score=0.3)
    assert ex.text == REFUSAL and ex.cited == []

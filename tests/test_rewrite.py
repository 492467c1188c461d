"""Follow-up rewriting and synonym expansion (rewrite.py), hand-written expectations."""
import json
from pathlib import Path

import pytest

import prompts
import rewrite
from rewrite import Rewrite, condense_llm, expand, is_followup, load_synonyms, rewrite_rules

ROOT = Path(__file__).resolve().parent.parent

# (history of user turns, follow-up turn, exact standalone rewrite)
FOLLOWUPS = [
    (["What is the frame size for size M?"], "and for size L?",
     "What is the frame size for size L?"),
    (["What is athlete's foot?"], "is it treatable?",
     "Is athlete's foot treatable?"),
    (["What is the return policy?"], "what about the old policy?",
     "What is the old return policy?"),
    (["What is the return policy?"], "and the old one?",
     "What is the old return policy?"),
    (["How do I reset my password?"], "how long does that take?",
     "How long does it take to reset my password?"),
    (["How do I return the Summit jacket?"], "is it covered by warranty?",
     "Is the Summit jacket covered by warranty?"),
    (["What sizes does the Summit jacket come in?"], "what about for kids?",
     "What sizes does the Summit jacket come in for kids?"),
    (["Is the user manual available in English?"], "and in Chinese?",
     "Is the user manual available in Chinese?"),
    (["Is the user manual available?"], "and in Chinese?",
     "Is the user manual available in Chinese?"),
    (["What is the warranty on the Trailhead 2 tent?"], "what about the stove?",
     "What is the warranty on the stove?"),
    (["What is the warranty on the Trailhead 2 tent?"], "and for the stove?",
     "What is the warranty on the stove?"),
    (["Do you ship to Germany?"], "what about Canada?",
     "Do you ship to Canada?"),
    (["How long does shipping to the US take?"], "and to Canada?",
     "How long does shipping to Canada take?"),
    (["How do I return the Summit jacket?"], "what if I lost the receipt?",
     "How do I return the Summit jacket if I lost the receipt?"),
    (["How do I clean my sleeping bag?"], "can I machine wash it?",
     "Can I machine wash my sleeping bag?"),
    (["Is the Summit GPS waterproof?"], "what is its battery life?",
     "What is the Summit GPS's battery life?"),
    (["Where is the Portland store?"], "how do I get there?",
     "How do I get to the Portland store?"),
    (["Do you ship to Canada?"], "how much does it cost?",
     "How much does it cost to ship to Canada?"),
    (["Do you ship to Canada?"], "is it free?",
     "Is it free to ship to Canada?"),
    (["How do I reset my password?"], "can I do that in the app?",
     "Can I reset my password in the app?"),
    (["How do I reset my password?"], "what about for the app?",
     "How do I reset my password for the app?"),
    (["What does error E4032 mean?"], "how do I fix it?",
     "How do I fix error E4032?"),
    (["What does error E4032 mean?"], "what about E5?",
     "What does error E5 mean?"),
    (["What is 2FA?"], "how do I turn it on?",
     "How do I turn 2FA on?"),
    (["Is the Summit jacket waterproof?"], "size L?",
     "Is the Summit jacket waterproof in size L?"),
    (["Does the Summit jacket come in size M?"], "in red?",
     "Does the Summit jacket come in red?"),
    (["Is the Summit jacket available in blue?"], "and the red one?",
     "Is the Summit jacket available in red?"),
    (["Can I return a tent after 30 days?"], "what about 60 days?",
     "Can I return a tent after 60 days?"),
    (["What are the store hours in Portland?"], "and Seattle?",
     "What are the store hours in Seattle?"),
    (["Can I return a bike?"], "If I cancel it, do I get a refund?",
     "If I cancel the bike, do I get a refund?"),
    (['What is "store credit"?'], "does it expire?",
     "Does store credit expire?"),
    (["How do I sign in?"], "what about on mobile?",
     "How do I sign in on mobile?"),
    (["What is the restocking fee?"], "does it apply to bikes?",
     "Does the restocking fee apply to bikes?"),
    (["Do you sell replacement tent poles?"], "where can I buy them?",
     "Where can I buy replacement tent poles?"),
    (["What is the frame size for size M?"], "is it adjustable?",
     "Is the frame size adjustable?"),
    (["What is the price of the tent?"], "does it come in green?",
     "Does the tent come in green?"),
    (["How long is the warranty on bikes?"], "and on stoves?",
     "How long is the warranty on stoves?"),
    (["How do I cancel my order?"], "and is it free?",
     "Is it free to cancel my order?"),
    (["What was the return policy in 2023?"], "and in 2024?",
     "What was the return policy in 2024?"),
    (["What is athlete's foot"], "is it treatable",
     "Is athlete's foot treatable?"),
    # "what about" + a full question: the question itself, minus the opener
    (["Why do you think I can not apply a subscription code?"], "what about why can't I apply a feature code?",
     "Why can't I apply a feature code?"),
    # an object pronoun in the same clause as the turn's own noun points back
    (["What is throat cancer?"], "What is the first sign of it?",
     "What is the first sign of throat cancer?"),
    # it/they follow the conversation's topic past a generic turn ("the symptoms")
    (["What is anemia?", "What are the symptoms?"], "Can it go away?",
     "Can anemia go away?"),
    (["What is a 529 plan?", "What are the main advantages?"], "How does it work?",
     "How does the 529 plan work?"),
    (["Tell me about makos."], "Where do they live?",
     "Where do makos live?"),
    (["What is a genre?"], "What are the most important ones?",
     "What are the most important genres?"),
]

# Cases where several phrasings would do: required words, case-insensitive.
LENIENT = [
    (["How do I return my order?"], "what about exchanging it?", {"return", "order", "exchanging"}),
    (["What tents do you sell?"], "which one is lightest?", {"tents", "lightest"}),
]

HISTORY = ["What is the warranty on the Trailhead 2 tent?"]

STANDALONE = [
    "How do I reset my password if I forgot it?",
    "How long does it take to get a refund?",
    "What is the return policy and how do I start a return?",
    "Is it possible to change my delivery address?",
    "How much does it cost to ship to Canada?",
    "Is there a fee for returns?",
    "And how do I cancel my order?",
    "I bought a tent and it leaks, what should I do?",
    "What does this error code mean?",
    "Can I return sale items if they are damaged?",
    "Does the app work offline?",
    "refund policy?",
    "Thanks!",
    # the turn names its own subject, or "there" is existential
    "Speaking about vaccines, how are they made?",
    "What is mortadella and where is it from?",
    "Great!  there certainly are scientists who care about violent culture in the US!",
    "Is the stove worth it?",
]


@pytest.mark.parametrize("history,turn,expected", FOLLOWUPS, ids=[t for _, t, _ in FOLLOWUPS])
def test_followup_rewrites(history, turn, expected):
    assert is_followup(turn, history)
    assert rewrite_rules(turn, history) == expected


@pytest.mark.parametrize("history,turn,words", LENIENT, ids=[t for _, t, _ in LENIENT])
def test_lenient_followups(history, turn, words):
    assert is_followup(turn, history)
    out = rewrite_rules(turn, history)
    assert out != turn
    assert words <= set(out.lower().replace("?", " ").replace(",", " ").split())


@pytest.mark.parametrize("turn", STANDALONE)
def test_standalone_turns_are_left_alone(turn):
    assert not is_followup(turn, HISTORY)
    assert rewrite_rules(turn, HISTORY) == turn
    rw = rewrite.rewrite(turn, HISTORY)
    assert (rw.standalone, rw.rewritten, rw.method) == (turn, False, "none")


def test_not_every_turn_is_rewritten():
    flagged = [t for t in STANDALONE if is_followup(t, HISTORY)]
    assert flagged == []


@pytest.mark.parametrize("history", [[], [""], ["   "], ["thanks", "ok"]])
def test_no_history_means_no_followup(history):
    for turn in ("is it treatable?", "and for size L?", "what about the stove?", "size L?"):
        assert not is_followup(turn, history)
        assert rewrite_rules(turn, history) == turn
        rw = rewrite.rewrite(turn, history)
        assert (rw.standalone, rw.rewritten, rw.method) == (turn, False, "none")


def test_empty_turns():
    for turn in ("", "   ", "?"):
        assert not is_followup(turn, HISTORY)
        assert rewrite_rules(turn, HISTORY) == turn


def test_acknowledgements_are_skipped_in_history():
    history = ["How do I reset my password?", "thanks", "ok got it"]
    assert rewrite_rules("how long does that take?", history) == "How long does it take to reset my password?"


def test_multi_hop_chain():
    history = ["What is the warranty on the Trailhead 2 tent?", "what about the stove?"]
    assert rewrite_rules("is it covered for water damage?", history) == "Is the stove covered for water damage?"
    history = ["What is the frame size for size M?", "and for size L?"]
    assert rewrite_rules("and for size XL?", history) == "What is the frame size for size XL?"
    history = ["How do I reset my password?", "how long does that take?"]
    assert rewrite_rules("is it possible in the app?", history) == \
        "Is it possible to reset my password in the app?"


def test_chain_resets_on_a_new_standalone_question():
    history = ["What is the frame size for size M?", "and for size L?", "Where is the Portland store?"]
    assert rewrite_rules("how do I get there?", history) == "How do I get to the Portland store?"


# Follow-ups the rules cannot resolve safely: left unchanged (the original
# turn is searched anyway) rather than made worse.
UNSURE = [
    (["Is there a vaccine for Herper, how can it be prevent?"], "Speaking about vaccines, how are they made?"),
    (["What items should I keep?"], "Is it the same for earthquakes?"),          # "it" is no plural
    (["Where do they come from?"], "are they safe?"),                            # no plural antecedent
    (["What are the scientific objectives of NASA's Deep Impact Extended Mission?"],
     "what about the goal of Deep Impact mission?"),                             # names its own subject
    (["What were the similarities and differences between the studies?"],
     "What about the BBC experiment?"),                                          # no clear subject to swap
    (["How has the voting system changed over time?"],
     "What if the electors don't vote for the pledged candidate?"),              # a clause of its own
]


@pytest.mark.parametrize("history,turn", UNSURE, ids=[t for _, t in UNSURE])
def test_unsure_followups_are_left_unchanged(history, turn):
    assert rewrite_rules(turn, history) == turn


def test_rules_are_deterministic():
    history, turn, expected = FOLLOWUPS[0]
    assert {rewrite_rules(turn, list(history)) for _ in range(5)} == {expected}


# --------------------------------------------------------------------------
# Synonyms
# --------------------------------------------------------------------------

GROUPS = [("2FA", "two-factor authentication", "MFA"), ("money back", "refund"), ("voucher", "gift card")]


def test_expand_replaces_the_matched_term():
    assert expand("How do I set up 2FA?", GROUPS) == (
        "How do I set up two-factor authentication?", "How do I set up MFA?")


def test_expand_is_case_insensitive():
    assert expand("how do i set up 2fa", GROUPS) == (
        "how do i set up two-factor authentication", "how do i set up MFA")


def test_expand_matches_phrases_and_every_group():
    assert expand("Can I get my money back on a gift card?", GROUPS) == (
        "Can I get my refund on a gift card?", "Can I get my money back on a voucher?")
    assert expand("Can I get my money  back?", GROUPS) == ("Can I get my refund?",)


def test_expand_matches_whole_words_only():
    assert expand("Is the cardigan on sale?", [("card", "gift card")]) == ()
    assert expand("Is the gift cardigan on sale?", GROUPS) == ()
    assert expand("my 2FAX device", GROUPS) == ()
    assert expand("What is a refundable deposit?", GROUPS) == ()


def test_expand_without_a_match_or_groups():
    assert expand("Where is the Portland store?", GROUPS) == ()
    assert expand("How do I set up 2FA?", ()) == ()


def test_expand_prefers_the_longest_term_of_a_group():
    groups = [("card", "gift card", "voucher")]
    assert expand("lost my gift card", groups) == ("lost my card", "lost my voucher")


def test_load_synonyms_repo_file():
    groups = load_synonyms(ROOT / "synonyms.json")
    assert len(groups) >= 15
    assert all(isinstance(g, tuple) and len(g) >= 2 for g in groups)
    assert ("2FA", "two-factor authentication", "two factor authentication", "MFA") == groups[0][:4]
    assert ("money back", "refund") in groups
    assert ("voucher", "gift card") in groups
    assert ("undo a release", "rollback", "roll back") in groups
    assert "How do I set up two-factor authentication?" in expand("How do I set up 2FA?", groups)


def test_load_synonyms_accepts_a_bare_list_and_cleans_terms(tmp_path):
    p = tmp_path / "s.json"
    p.write_text(json.dumps([["  money   back ", "refund", "Refund"]]), encoding="utf-8")
    assert load_synonyms(p) == [("money back", "refund")]


@pytest.mark.parametrize("text,fragment", [
    ("{not json", "not valid JSON"),
    ('{"synonyms": []}', '"groups"'),
    ('{"groups": {"a": "b"}}', "list"),
    ('{"groups": [["only one"]]}', "group 1"),
    ('{"groups": [["a", "b"], "c"]}', "group 2"),
    ('{"groups": [["a", 2]]}', "group 1"),
])
def test_load_synonyms_bad_files(tmp_path, text, fragment):
    p = tmp_path / "bad-synonyms.json"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError) as e:
        load_synonyms(p)
    assert "bad-synonyms.json" in str(e.value)
    assert fragment in str(e.value)


def test_load_synonyms_missing_file(tmp_path):
    with pytest.raises(ValueError, match="nope.json"):
        load_synonyms(tmp_path / "nope.json")


# --------------------------------------------------------------------------
# Rewrite and queries()
# --------------------------------------------------------------------------

def test_queries_order_and_dedup():
    rw = Rewrite(original="and for size L?", standalone="What is the frame size for size L?", rewritten=True,
                 expansions=("What is the frame size for size large?", "what is the frame size for size l?",
                             "and  for size L?"), method="rules")
    assert rw.queries() == ["What is the frame size for size L?", "and for size L?",
                            "What is the frame size for size large?"]


def test_queries_without_rewrite():
    rw = rewrite.rewrite("How do I set up 2FA?", [], GROUPS)
    assert rw == Rewrite("How do I set up 2FA?", "How do I set up 2FA?", False,
                         ("How do I set up two-factor authentication?", "How do I set up MFA?"), "none")
    assert rw.queries() == ["How do I set up 2FA?", "How do I set up two-factor authentication?",
                            "How do I set up MFA?"]


def test_rewrite_followup_then_expansion_of_the_standalone():
    rw = rewrite.rewrite("is it covered by warranty?", ["How do I get my money back for the Summit jacket?"],
                         [("warranty", "guarantee")] + GROUPS)
    assert rw.standalone == "Is the Summit jacket covered by warranty?"
    assert rw.rewritten and rw.method == "rules"
    assert rw.expansions == ("Is the Summit jacket covered by guarantee?",)
    assert rw.queries() == ["Is the Summit jacket covered by warranty?", "is it covered by warranty?",
                            "Is the Summit jacket covered by guarantee?"]


def test_use_rewrite_false():
    rw = rewrite.rewrite("and for size L?", ["What is the frame size for size M?"], use_rewrite=False)
    assert rw == Rewrite("and for size L?", "and for size L?", False, (), "none")
    assert rw.queries() == ["and for size L?"]


def test_use_expansion_false():
    rw = rewrite.rewrite("what about 2FA?", ["How do I reset my password?"], GROUPS, use_expansion=False)
    assert rw.expansions == ()
    assert rw.standalone == "How do I reset 2FA?"
    rw = rewrite.rewrite("what about 2FA?", ["How do I reset my password?"], GROUPS)
    assert rw.expansions == ("How do I reset two-factor authentication?", "How do I reset MFA?")


# --------------------------------------------------------------------------
# LLM condensing
# --------------------------------------------------------------------------

class FakeModel:
    def __init__(self, reply=None, error=None):
        self.reply, self.error, self.calls = reply, error, []

    def __call__(self, system, user):
        self.calls.append((system, user))
        if self.error:
            raise self.error
        return self.reply


def test_condense_llm_uses_the_model():
    fake = FakeModel("  What is the frame size for a size L bike?\n")
    history = ["What is the frame size for size M?"]
    assert condense_llm("and for size L?", history, fake) == "What is the frame size for a size L bike?"
    (system, user), = fake.calls
    assert system == prompts.CONDENSE_SYSTEM
    assert user == prompts.CONDENSE_USER.format(history="User: What is the frame size for size M?",
                                                question="and for size L?")


def test_condense_llm_falls_back_when_the_model_raises():
    fake = FakeModel(error=TimeoutError("model down"))
    assert condense_llm("is it treatable?", ["What is athlete's foot?"], fake) == "Is athlete's foot treatable?"
    assert len(fake.calls) == 1


@pytest.mark.parametrize("reply", ["", "   \n ", None])
def test_condense_llm_falls_back_on_an_empty_answer(reply):
    fake = FakeModel(reply)
    assert condense_llm("and for size L?", ["What is the frame size for size M?"], fake) == \
        "What is the frame size for size L?"


def test_rewrite_with_a_model():
    fake = FakeModel("Is athlete's foot curable?")
    rw = rewrite.rewrite("is it treatable?", ["What is athlete's foot?"], complete=fake)
    assert (rw.standalone, rw.rewritten, rw.method) == ("Is athlete's foot curable?", True, "llm")
    broken = FakeModel(error=RuntimeError("boom"))
    rw = rewrite.rewrite("is it treatable?", ["What is athlete's foot?"], complete=broken)
    assert (rw.standalone, rw.method) == ("Is athlete's foot treatable?", "rules")


def test_model_is_only_asked_about_followups():
    fake = FakeModel("SHOULD NOT BE USED")
    rw = rewrite.rewrite("How do I reset my password if I forgot it?", HISTORY, complete=fake)
    assert (rw.standalone, rw.method) == ("How do I reset my password if I forgot it?", "none")
    rw = rewrite.rewrite("is it treatable?", ["What is athlete's foot?"], complete=fake, use_rewrite=False)
    assert rw.standalone == "is it treatable?"
    assert fake.calls == []


def test_expansion_matches_inflected_last_word_but_not_longer_words():
    groups = [("voucher", "gift card"), ("warranty", "guarantee"), ("card", "payment card")]
    assert rewrite.expand("do your vouchers expire?", groups) == ("do your gift card expire?",)
    assert rewrite.expand("how long is my tent guaranteed for?", groups) == ("how long is my tent warranty for?",)
    assert rewrite.expand("is the cardigan warm?", groups) == ()

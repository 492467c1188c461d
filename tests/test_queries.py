"""The queries a turn searches (search/queries.py): the typed turn, the
joined follow-up form or the model's condensed turn, and synonym expansion."""
import json
from pathlib import Path

import pytest

from citebot.answer import prompts
from citebot.search.queries import QueryPlan, expand, is_ack, load_synonyms, plan

ROOT = Path(__file__).resolve().parent.parent
SYNONYMS = ROOT / "citebot" / "synonyms.json"


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
        "Can I get my refund on a gift card?", "Can I get my money back on a voucher?",
        "Can I get my refund on a voucher?")  # two groups: both swapped, too
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
    groups = load_synonyms(SYNONYMS)
    assert len(groups) >= 15
    assert all(isinstance(g, tuple) and len(g) >= 2 for g in groups)
    assert ("2FA", "two-factor authentication", "two factor authentication", "MFA") == groups[0][:4]
    assert ("money back", "refund") in groups
    assert ("voucher", "gift card") in groups
    assert ("undo a release", "rollback", "roll back") in groups
    assert "How do I set up two-factor authentication?" in expand("How do I set up 2FA?", groups)
    # An operating system by its short name: pip's "MacOS:" tab answers "where is the cache on a Mac?"
    assert "where is the cache on a macOS?" in expand("where is the cache on a Mac?", groups)


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
# Follow-ups
# --------------------------------------------------------------------------

def test_no_history_searches_the_typed_turn_and_its_expansions():
    p = plan("How do I set up 2FA?", [], GROUPS)
    assert p == QueryPlan("How do I set up 2FA?", "How do I set up 2FA?", None,
                          ("How do I set up two-factor authentication?", "How do I set up MFA?"), "none")
    assert p.queries == ["How do I set up 2FA?", "How do I set up two-factor authentication?", "How do I set up MFA?"]


def test_a_turn_with_history_adds_the_joined_form():
    p = plan("and for size L?", ["what frame size for 175 cm?"])
    assert p.queries == ["and for size L?", "what frame size for 175 cm? and for size L?"]
    assert (p.standalone, p.method, p.also_searched) == ("and for size L?", "joined", p.queries[1:])


def test_acknowledgements_and_blank_turns_are_skipped():
    history = ["do gift cards expire?", "thanks!", "  ", "ok got it"]
    assert plan("can I use one online?", history).followup == "do gift cards expire? can I use one online?"
    assert plan("can I use one online?", ["thanks", ""]).followup is None
    assert is_ack("Thank you!") and is_ack("") and not is_ack("thanks, and the stove?")


def test_a_number_is_a_turn_and_a_bengali_thanks_is_an_acknowledgement():
    # A bare number is looked up (a hotline, an error code), and so is a history turn holding one.
    assert not is_ack("400-820-5566") and not is_ack("ok 4032") and not is_ack("2024?")
    assert plan("and the fee?", ["E4032", "thanks"]).followup == "E4032 and the fee?"
    # "ধন্যবাদ" read without its combining marks was three words none of which is "ধন্যবাদ".
    assert is_ack("ধন্যবাদ") and is_ack("ধন্যবাদ!")
    assert plan("and gift cards?", ["how long is the return window?", "ধন্যবাদ"]).followup == \
        "how long is the return window? and gift cards?"


def test_thanks_in_the_documents_languages_keeps_the_conversations_topic():
    # Only English, Chinese and Bengali thanks were skipped: "감사합니다" became the turn a
    # follow-up was joined to, and the follow-up lost its topic.
    for thanks in ("감사합니다", "ありがとうございます", "спасибо", "Дякую!", "धन्यवाद", "謝謝", "谢谢你",
                   "好的谢谢", "vielen Dank", "merci beaucoup", "muchas gracias", "obrigado", "teşekkürler"):
        assert is_ack(thanks), thanks
        assert plan("and allow_methods?", ["what is allow_origins?", thanks]).followup == \
            "what is allow_origins? and allow_methods?"
    # A run of such characters with anything else in it is a question.
    assert not is_ack("谢谢你的帮助是什么") and not is_ack("明白什么是依赖") and not is_ack("네트워크")
    assert not is_ack("danke für CORS?") and not is_ack("что такое Depends")
    for word in ("SIM", "sim?", "super", "gut", "vale", "bien"):  # English words too: looked up, not skipped
        assert not is_ack(word), word


def test_only_the_last_substantive_turn_is_joined():
    p = plan("and XL?", ["what is the warranty?", "what frame size for size M?"])
    assert p.followup == "what frame size for size M? and XL?"


def test_followups_off_searches_the_typed_turn_alone():
    p = plan("and for size L?", ["what frame size for 175 cm?"], followups=False)
    assert p.queries == ["and for size L?"] and p.method == "none"


def test_expansions_of_the_typed_and_the_joined_form_deduplicated():
    p = plan("and 2FA?", ["how do I get my money back?"], GROUPS)
    # The typed turn's first, then the joined form's, groups in file order.
    assert p.expansions == ("and two-factor authentication?", "and MFA?",
                            "how do I get my money back? and two-factor authentication?",
                            "how do I get my money back? and MFA?",
                            "how do I get my refund? and 2FA?",
                            "how do I get my refund? and two-factor authentication?")
    assert plan("and 2FA?", ["how do I get my money back?"], GROUPS, expansion=False).expansions == ()


def test_queries_are_deduplicated_in_order():
    p = QueryPlan("and for size L?", "and for size L?", "and  for size L?", ("AND FOR SIZE L?", "x"), "joined")
    assert p.queries == ["and for size L?", "x"]


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


def test_every_turn_with_history_is_condensed():
    fake = FakeModel("  Standalone question: \"What is the frame size for a size L bike?\"\n")
    p = plan("and for size L?", ["What is the frame size for size M?", "thanks"], condense=fake)
    assert (p.standalone, p.followup, p.method) == ("What is the frame size for a size L bike?",) * 2 + ("llm",)
    assert p.queries == ["and for size L?", "What is the frame size for a size L bike?"]
    (system, user), = fake.calls
    assert system == prompts.CONDENSE_SYSTEM
    assert user == prompts.CONDENSE_USER.format(history="User: What is the frame size for size M?\nUser: thanks",
                                                question="and for size L?")
    # A turn that stands alone goes to the model too; its prompt returns it unchanged.
    fake = FakeModel("How do I reset my password if I forgot it?")
    p = plan("How do I reset my password if I forgot it?", ["What is 2FA?"], condense=fake)
    assert len(fake.calls) == 1 and p.queries == ["How do I reset my password if I forgot it?"]


def test_no_history_or_followups_off_never_calls_the_model():
    fake = FakeModel("SHOULD NOT BE USED")
    assert plan("is it treatable?", [], condense=fake).method == "none"
    assert plan("is it treatable?", ["thanks"], condense=fake).method == "none"
    assert plan("is it treatable?", ["What is athlete's foot?"], condense=fake, followups=False).method == "none"
    assert fake.calls == []


@pytest.mark.parametrize("fake", [FakeModel(error=TimeoutError("model down")), FakeModel(""), FakeModel("  \n "),
                                  FakeModel(None), FakeModel("[1]"), FakeModel("[1, 2]\n[3]"),
                                  FakeModel("I don't know based on the available documents."),
                                  FakeModel("Is athlete's foot treatable? " * 200)])
def test_a_failing_model_falls_back_to_the_joined_form(fake):
    p = plan("is it treatable?", ["What is athlete's foot?"], condense=fake)
    assert (p.method, p.standalone) == ("llm-failed", "is it treatable?")
    assert p.queries == ["is it treatable?", "What is athlete's foot? is it treatable?"]


def test_expansion_matches_inflected_last_word_but_not_longer_words():
    groups = [("voucher", "gift card"), ("warranty", "guarantee"), ("card", "payment card")]
    assert expand("do your vouchers expire?", groups) == ("do your gift card expire?",)
    assert expand("how long is my tent guaranteed for?", groups) == ("how long is my tent warranty for?",)
    assert expand("is the cardigan warm?", groups) == ()


@pytest.mark.parametrize("reply", ["Sure! Here is the standalone question:\nIs athlete's foot treatable?",
                                   "Standalone question:\nIs athlete's foot treatable?",
                                   'Standalone question: "Is athlete\'s foot treatable?"',
                                   "Is athlete's foot [1] treatable? [2]",  # marks are no part of a question
                                   "Is athlete's \x1b[1mfoot\x1b[0m treatable?\x1b]0;t\x07"])  # nor escapes
def test_the_question_is_read_past_a_label_or_preamble(reply):
    p = plan("is it treatable?", ["What is athlete's foot?"], condense=FakeModel(reply))
    assert (p.method, p.standalone) == ("llm", "Is athlete's foot treatable?")


def test_a_turn_in_any_script_is_a_turn_and_thanks_in_more_words_is_not():
    assert plan("那运费呢？", ["中国的保修期是多久？"]).followup == "中国的保修期是多久？ 那运费呢？"
    assert plan("আর ডেলিভারি?", ["বিকাশে পেমেন্ট করেছিলাম"]).followup is not None
    for ack in ("Thank you so much!", "ok, makes sense", "谢谢", "好的，谢谢"):
        assert plan("and for size L?", ["what frame size fits 175 cm?", ack]).followup == \
            "what frame size fits 175 cm? and for size L?", ack


def test_an_acknowledgement_plans_no_query_so_rewrite_shows_what_the_bot_searches():
    # rewrite.py listed "what frame size fits 175 cm? thanks", which the bot never searched.
    calls = []
    p = plan("thanks!", ["what frame size fits 175 cm?"], condense=lambda s, u: calls.append(u) or "x")
    assert (p.method, p.queries, calls) == ("ack", [], [])


def test_two_synonym_groups_in_one_question_are_also_swapped_together():
    # "refund ... gift card", the documents' words, was never searched, and the gate refused.
    groups = [("refund", "money back", "reimbursement"), ("voucher", "gift card")]
    assert expand("can I get my money back for a voucher?", groups) == (
        "can I get my refund for a voucher?", "can I get my reimbursement for a voucher?",
        "can I get my money back for a gift card?", "can I get my refund for a gift card?")
    assert expand("do your vouchers expire?", groups) == ("do your gift card expire?",)  # one group: as before

"""Did-you-mean: a misspelt question word is searched as the documents' own
word, decided from the scope's vocabulary and the whole question."""
import numpy as np
import pytest

from citebot.engine import Engine
from citebot.index.local import LocalIndex
from citebot.schema import Chunk, Scope
from citebot.search import spelling
from citebot.search.queries import QueryPlan

TEXTS = {
    "upload": "To upload a file, declare an UploadFile parameter. The file is spooled to disk. "
              "Its class: uploadfile.py, uploadfile.pyi.",
    "model": "Each field of a model has a type. A field may have a default. Pydantic checks it.",
    "valid": "A field validator checks one field. Validation errors name the field.",
    # Only staff may read this page: its word must never be offered to the public.
    "secret": "The quixel rotation runs nightly.",
}


@pytest.fixture(scope="module")
def index():
    chunks = [Chunk(cid, f"{cid}.md", "", (), text, 1, 1, audience="staff" if cid == "secret" else "public")
              for cid, text in TEXTS.items()]
    return LocalIndex(chunks, np.zeros((len(chunks), 3), dtype=np.float32), {})


def test_edits1_is_one_deletion_transposition_replacement_or_insertion():
    near = spelling.edits1("fiel")
    assert {"fil", "iel", "file", "fuel", "field", "fiels", "afiel"} <= near
    assert "fiel" not in near
    assert "elif" not in near and "flie" not in near and "fields" not in near  # two edits away
    # a word of n letters: n deletions, n - 1 transpositions, 26n replacements, 26(n + 1) insertions, before
    # duplicates are merged; for "ab": {b, a} + {ba} + 50 new replacements + 78 insertions less the 3
    # already counted ("aab" and "abb" twice each: inserting a before or after a gives the same string)
    assert len(spelling.edits1("ab")) == 2 + 1 + 50 + 78 - 2


def test_only_words_that_may_be_misspelt_are_tried():
    tried = lambda text: [w for _, _, w, _ in spelling.words(text)]  # noqa: E731
    names = lambda text: [w for _, _, w, name in spelling.words(text) if name]  # noqa: E731
    assert tried("how do I enable CROS?") == ["CROS"]
    assert tried("Midleware for the app?") == ["Midleware"] and names("Midleware for the app?") == []
    assert names("does Djnago work with it?") == ["Djnago"]  # capitalised inside the sentence: a name
    assert names("aPKCz and UplodFile") == ["aPKCz", "UplodFile"]  # mixed case: names
    assert tried("what wasn't the ratio?") == []  # "wasn" is half of a contraction
    assert tried("the midleware's options") == ["midleware"]  # a possessive is the word
    assert tried("Help! Uplaod of a fiel") == ["Uplaod", "fiel"] and names("Help! Uplaod of a fiel") == []
    assert tried("what about a clash?") == []  # an English word the documents may lack
    assert tried("error E4099 in max_agee at /usr/lcoal python3.12") == []  # identifiers and paths are names
    assert tried("the fiel") == ["fiel"] and tried("the fie") == []  # four letters at least


@pytest.mark.parametrize("word,cand,ok", [
    ("cros", "cors", True),  # four letters: two neighbours swapped, and only that
    ("saml", "same", False), ("nuxt", "next", False), ("wget", "get", False), ("hoho", "soho", False),
    ("midleware", "middleware", True), ("recieve", "receive", True), ("databse", "database", True),
    ("glamping", "clamping", False),  # the first letter is kept ...
    ("hwoever", "however", True),  # ... unless it swapped with the second
    ("jsonb", "json", False), ("apkcz", "apkc", False),  # a letter more at the end names something else
    ("campaigh", "campaign", True),  # the last letter mistyped is a slip
])
def test_a_slip_is_a_typing_slip_not_another_word_one_edit_away(word, cand, ok):
    assert cand in spelling.edits1(word)
    assert spelling.slip(word, cand) is ok


@pytest.mark.parametrize("text,english", [
    ("how do I enable CROS?", True),
    ("does FastAPI support SAML?", True),
    ("Wie lese ich Cookies in FastAPI?", False),  # wie, lese, ich, in: German's common words outnumber
    ("Como usar middleware en FastAPI?", False),
    ("Comment utiliser un middleware avec FastAPI ?", False),
    ("¿Para qué sirve el response_model?", False),  # an accented letter: no English sentence
    ("what does the naïve datetime warning mean?", False),  # even in English: a word of another language
    ("FsatAPI 为什么默认要严格检查 JSON 请求的 Content-Type 头？", True),  # Chinese: its Latin words are names
])
def test_only_an_english_question_is_corrected(text, english):
    assert spelling.reads_english(text) is english


def test_the_question_decides_between_neighbours(index):
    # "fiels" is one slip from "files" and from "field": "field" is the commoner term (two chunks
    # against one), but a chunk holds "upload" with "file", and none "upload" with "field".
    assert spelling.correct("how do I upload the fiels?", index, Scope()) == "how do I upload the files?"
    assert spelling.correct("what type do fiels have?", index, Scope()) == "what type do field have?"


def test_the_documents_own_word_is_searched_not_a_stem(index):
    # "validatoin": the words one edit away that stem to "valid" include "validation"
    # and "validator"; only words a passage writes are offered, capitals kept.
    assert spelling.correct("how does a field validatr work?", index, Scope()) == "how does a field validator work?"
    assert spelling.correct("UPLAOD a file", index, Scope()) == "UPLOAD a file"
    assert spelling.correct("Uplaod a file", index, Scope()) == "Upload a file"
    # no passage writes "fields" (only "field"): an English word will do, but not for a mixed-case name
    assert spelling.correct("what type do fiedls have?", index, Scope()) == "what type do fields have?"
    assert spelling.correct("what type do FiEdls have?", index, Scope()) is None
    # as written: a mixed-case name as a passage writes it mixed, though "uploadfile" is written more often
    assert spelling.correct("a UplaodFile parameter", index, Scope()) == "a UploadFile parameter"
    # a name inside a sentence becomes only a name a passage writes: "Pydantic" is one, "validator" is not
    assert spelling.correct("does Pdyantic check it?", index, Scope()) == "does Pydantic check it?"
    assert spelling.correct("how does the Valdator work?", index, Scope()) is None
    assert spelling.correct("how does the valdator work?", index, Scope()) == "how does the validator work?"
    assert spelling.correct("does Djnago check it?", index, Scope()) is None  # a name no page writes
    assert spelling.correct("a uplaodfile parameter", index, Scope()) == "a uploadfile parameter"


def test_nothing_to_correct(index):
    assert spelling.correct("how do I upload a file?", index, Scope()) is None
    assert spelling.correct("how do I bake bread?", index, Scope()) is None  # English words, absent
    assert spelling.correct("Wie lade ich eine fiel hoch?", index, Scope()) is None  # not read as English
    assert spelling.correct("uplaod", index, Scope()) == "upload"  # a word alone
    assert spelling.correct("fiel", index, Scope()) is None  # a common Spanish word: "fiel" alone reads Spanish


def test_a_word_only_a_restricted_page_holds_is_never_offered(index):
    assert spelling.correct("when does the quixle rotation run?", index, Scope()) is None
    staff = Scope(audiences=frozenset({"public", "staff"}))
    assert spelling.correct("when does the quixle rotation run?", index, staff) == "when does the quixel rotation run?"


def test_the_corrected_turn_is_searched_beside_the_typed_one_and_widens_it():
    plan = QueryPlan("enable CROS", "enable CROS", None, ("x",), "none", spelled="enable CORS")
    assert plan.queries == ["enable CROS", "enable CORS", "x"]
    assert plan.core == 1  # not a core query: the gate's first hit without it is kept too
    assert plan.widened == ("enable CORS", "x")
    assert plan.also_searched == ["enable CORS", "x"]


@pytest.mark.parametrize("spell", [True, False])
def test_a_misspelt_question_is_answered_from_the_page_the_right_spelling_finds(sample_index, embedder, spell):
    from citebot.index.store import open_index
    from citebot.search.models import Models

    cfg = sample_index.replace(use_rerank=False, use_spelling=spell)
    engine = Engine(open_index(cfg), cfg, Models(embedder, None))
    right = engine.ask("how long is the warranty on a tent?")
    turn = engine.ask("how long is the waranty on a tent?")
    if not spell:  # the typed turn alone: "waranty" is in no document
        assert turn.plan.spelled is None and turn.refused
        return
    assert turn.plan.spelled == "how long is the warranty on a tent?"
    from citebot.chat.render import turn_json
    assert turn_json(turn)["trace"]["spelled"] == "how long is the warranty on a tent?"  # --json says so
    from citebot.chat.render import why_text
    assert "\nspelled:  how long is the warranty on a tent?\nsearched: how long is the guarantee on a tent?\n" \
        in why_text(turn)  # and /why
    # the corrected turn's synonym expansion too (warranty = guarantee in synonyms.json)
    assert turn.retrieval.queries == ["how long is the waranty on a tent?", "how long is the warranty on a tent?",
                                      "how long is the guarantee on a tent?"]
    assert not turn.refused and not right.refused
    quoted = lambda t: {t.context.shown[n - 1].id for n in t.quoted}  # noqa: E731
    assert quoted(turn) == quoted(right) and len(quoted(turn)) == 1  # the warranty's periods, either way


def test_a_follow_up_searches_its_joined_form_corrected_in_place(index):
    from citebot.config import Config
    from citebot.search import queries as qmod
    from citebot.search.models import Models

    engine = Engine(index, Config(use_expansion=False), Models(None, None))
    plan = engine._spell(qmod.plan("and its defalt?", ["how do I uplaod a fiel?"]), Scope())
    assert plan.typed == "and its defalt?" and plan.spelled == "and its default?"
    # the joined form is no typed text: it ends in the corrected turn instead; the earlier turn stays
    # as typed (a wrong correction of it would stand alone, with nothing searched beside it)
    assert plan.followup == "how do I uplaod a fiel? and its default?"
    assert plan.queries == ["and its defalt?", "how do I uplaod a fiel? and its default?", "and its default?"]
    assert plan.earlier == "how do I uplaod a fiel?"  # what the answerer's follow-up focus subtracts
    assert engine._focus(plan) == frozenset({"default"})
    # nothing misspelt: the plan as it was
    clean = qmod.plan("and its default?", ["how do I upload a file?"])
    assert engine._spell(clean, Scope()) is clean


def test_each_word_is_tried_once_and_only_the_first_few(index):
    assert spelling.MAX_WORDS == 4
    # five misspelt words: the first four are corrected, "moedl" is left (a pasted log is no typo)
    assert spelling.correct("uplaod the fiel to dsik, a defualt moedl", index, Scope()) \
        == "upload the file to disk, a default moedl"
    assert spelling.correct("uplaod the flie, uplaod the flie", index, Scope()) == "upload the file, upload the file"

from fractions import Fraction

from citebot.schema import Chunk, Hit
from citebot.search.fusion import rerank, rrf, rrf_exact


def chunk(d):
    return Chunk(d, f"{d}.md", "", (), f"text of {d}", 1, 1)


def ranked(name, ids):
    return (name, [Hit(chunk(d), rank=i, score=100.0 - i, ranks={name: i}, scores={name: 100.0 - i})
                   for i, d in enumerate(ids, 1)])


def test_rrf_by_hand_d1_then_d3():
    fused = rrf([ranked("bm25", ["d1", "d2", "d3"]), ranked("dense", ["d3", "d1", "d4"])], k=60)
    assert [h.id for h in fused] == ["d1", "d3", "d2", "d4"]
    exact = rrf_exact([["d1", "d2", "d3"], ["d3", "d1", "d4"]], k=60)
    assert exact["d1"] == Fraction(1, 61) + Fraction(1, 62)
    assert exact["d3"] == Fraction(1, 61) + Fraction(1, 63)
    assert fused[0].score == float(Fraction(1, 61) + Fraction(1, 62))
    # Every fused hit keeps each channel's rank and raw score.
    d3 = fused[1]
    assert d3.ranks == {"bm25": 3, "dense": 1, "rrf": 2}
    assert d3.scores["bm25"] == 97.0 and d3.scores["dense"] == 99.0


def test_rrf_exact_tie_broken_by_best_rank_then_id():
    # a: 1/61 + 1/63, c: 1/63 + 1/61 -> an exact tie; both have best rank 1,
    # so the smaller id wins: a before c.
    fused = rrf([ranked("bm25", ["a", "b", "c"]), ranked("dense", ["c", "d", "a"])], k=60)
    exact = rrf_exact([["a", "b", "c"], ["c", "d", "a"]])
    assert exact["a"] == exact["c"]
    assert [h.id for h in fused[:2]] == ["a", "c"]
    # b (rank 2) and d (rank 2) also tie exactly: b < d.
    assert [h.id for h in fused[2:]] == ["b", "d"]


def test_rrf_tie_prefers_better_single_rank_over_id():
    # k = 2: "zz" at rank 2 in one list = 1/4; "aa" at rank 6 in both = 1/8 + 1/8 = 1/4.
    # Exact tie; "zz" has the better single rank (2 < 6), so it wins although "aa" < "zz".
    one = ("l1", [Hit(chunk(i)) for i in ["p1", "zz", "p3", "p4", "p5", "aa"]])
    two = ("l2", [Hit(chunk(i)) for i in ["q1", "q2", "q3", "q4", "q5", "aa"]])
    exact = rrf_exact([[h.id for h in one[1]], [h.id for h in two[1]]], k=2)
    assert exact["zz"] == exact["aa"] == Fraction(1, 4)
    order = [h.id for h in rrf([one, two], k=2)]
    assert order.index("zz") == order.index("aa") - 1


def test_small_k_rewards_a_single_first_place_large_k_rewards_agreement():
    lists = [ranked("l1", ["solo", "p1", "p2", "both"]), ranked("l2", ["q1", "q2", "q3", "both"])]
    # k = 1: solo = 1/2 = 0.5 ; both = 1/5 + 1/5 = 0.4 -> solo first among them
    order = [h.id for h in rrf(lists, k=1)]
    assert order.index("solo") < order.index("both")
    # k = 60: solo = 1/61 ~ .01639 ; both = 2/64 = .03125 -> agreement wins
    order = [h.id for h in rrf(lists, k=60)]
    assert order.index("both") < order.index("solo")
    assert order[0] == "both"


def test_rrf_empty_lists():
    assert rrf([("bm25", []), ("dense", [])]) == []


def test_rerank_orders_by_scores_and_keeps_fused_ranks():
    fused = rrf([ranked("bm25", ["a", "b", "c"]), ranked("dense", ["b", "c", "a"])])
    # b = 1/61 + 1/62 > a = 1/61 + 1/63 > c = 1/62 + 1/63
    assert [h.id for h in fused] == ["b", "a", "c"]
    out = rerank(fused, [0.1, 0.9, 0.5], keep=2)  # b 0.1, a 0.9, c 0.5
    assert [h.id for h in out] == ["a", "c"]
    assert [h.ranks["rerank"] for h in out] == [1, 2]
    assert out[0].ranks["rrf"] == 2 and out[0].ranks["bm25"] == 1 and out[0].ranks["dense"] == 3
    assert out[0].scores["rerank"] == 0.9 and out[0].score == 0.9


def test_no_stage_changes_the_hits_of_another_list():
    bm25, dense = ranked("bm25", ["a", "b", "c"]), ranked("dense", ["b", "c", "a"])
    before = [(h.id, dict(h.ranks), dict(h.scores)) for h in bm25[1] + dense[1]]
    fused = rrf([bm25, dense])
    fused_before = [(h.id, h.rank, dict(h.ranks), dict(h.scores)) for h in fused]
    out = rerank(fused, [0.1, 0.9, 0.5], keep=2)
    # The channel lists and the fused list are as they were; only the reranked hits carry "rerank".
    assert [(h.id, dict(h.ranks), dict(h.scores)) for h in bm25[1] + dense[1]] == before
    assert [(h.id, h.rank, dict(h.ranks), dict(h.scores)) for h in fused] == fused_before
    assert all("rerank" not in h.ranks for h in fused) and all("rerank" in h.ranks for h in out)


def test_weighted_rrf_by_hand():
    # bm25 weight 1, dense weight 1/2, k = 60:
    # d1 = 1/61 + (1/2)/62 = 0.016393 + 0.008065 = 0.024458; d3 = 1/63 + (1/2)/61 = 0.015873 + 0.008197 = 0.024070
    # d2 = 1/62 = 0.016129; d4 = (1/2)/63 = 0.007937
    lists = [ranked("bm25", ["d1", "d2", "d3"]), ranked("dense", ["d3", "d1", "d4"])]
    exact = rrf_exact([["d1", "d2", "d3"], ["d3", "d1", "d4"]], k=60, weights=[1.0, 0.5])
    assert exact["d1"] == Fraction(1, 61) + Fraction(1, 124) and exact["d4"] == Fraction(1, 126)
    assert [h.id for h in rrf(lists, 60, {"bm25": 1.0, "dense": 0.5})] == ["d1", "d3", "d2", "d4"]
    # With dense at weight 2, d3 (dense rank 1) overtakes d1: 1/63 + 2/61 > 1/61 + 2/62.
    assert [h.id for h in rrf(lists, 60, {"bm25": 1.0, "dense": 2.0})][:2] == ["d3", "d1"]
    # A variant list ("bm25@2") takes its channel's weight.
    two = [ranked("bm25", ["a"]), ranked("bm25@2", ["b"]), ranked("dense", ["b"])]
    assert rrf_exact([["a"], ["b"], ["b"]], 60, [0.0, 0.0, 1.0])["a"] == 0
    assert [h.id for h in rrf(two, 60, {"bm25": 0.0})] == ["b", "a"]


def paged(paths):
    """Fused hits for chunks of these sources, in this order (ids c1, c2, …)."""
    return [Hit(Chunk(f"c{i}", src, "", (), "t", 1, 1), rank=i, score=1.0 / i, ranks={"rrf": i}, scores={"rrf": 1.0 / i})
            for i, src in enumerate(paths, 1)]


def test_translation_and_language_folder():
    from citebot.index.documents import lang_folder, translation

    assert translation("zh/tutorial/cors.md") == ("tutorial/cors.md", "zh")
    assert translation("en/tutorial/cors.md") == ("tutorial/cors.md", "en")
    assert translation("docs/zh-hant/a.md") == ("docs/a.md", "zh-hant") and lang_folder("docs/zh-hant/a.md") == (1, "zh-hant")
    assert lang_folder("pt_BR/a.md") == (0, "pt-br")
    # No language folder: not a translation.  "it" is more often IT than Italian; a file name is not a folder.
    assert translation("policies/returns.md") is None
    assert translation("it/vpn.md") is None and translation("de.md") is None


def test_one_language_per_page_keeps_the_best_ranked_translation():
    from citebot.search.fusion import one_language_per_page

    hits = paged(["en/a.md", "zh/a.md", "faq.md", "de/a.md", "en/a.md", "zh/b.md"])
    out = one_language_per_page(hits)
    # Page a's best chunk is English: its zh and de chunks go, its second English chunk (c5) moves up
    # into the place the zh chunk held; faq.md has no language folder; page b has one translation.
    assert [h.id for h in out] == ["c1", "c5", "c3", "c6"]
    assert [h.ranks["pages"] for h in out] == [1, 2, 3, 4] and out[1].ranks["rrf"] == 5


def test_one_language_per_page_prefers_the_question_language():
    from citebot.search.fusion import one_language_per_page

    hits = paged(["en/a.md", "zh-hant/a.md", "zh/a.md", "en/b.md"])
    # A Chinese question: page a is shown in Chinese, in page a's first place; zh beats zh-hant exactly.
    assert [h.id for h in one_language_per_page(hits, "zh")] == ["c3", "c4"]
    # Only the traditional translation was found: the base language matches.
    assert [h.id for h in one_language_per_page(paged(["en/a.md", "zh-hant/a.md"]), "zh")] == ["c2"]
    # A traditional-script question: zh-hant exactly, else the simplified copy (same base language).
    assert [h.id for h in one_language_per_page(hits, "zh-hant")] == ["c2", "c4"]
    assert [h.id for h in one_language_per_page(paged(["en/a.md", "zh/a.md"]), "zh-hant")] == ["c2"]
    # A language no translation is in: the best-ranked translation.
    assert [h.id for h in one_language_per_page(hits, "bn")] == ["c1", "c4"]


def test_question_language_counts_words_not_letters():
    from citebot.index.documents import guess_lang, question_lang

    q = "CORSMiddleware 的 max_age 是多少秒？"  # 3 Latin words, 5 Chinese characters
    assert question_lang(q) == "zh" and guess_lang(q) == "en"  # (most of its letters are Latin)
    assert question_lang("what does 顺达 mean?") == "en"  # 3 words against 2 characters
    assert question_lang("ঢাকা স্টোর কি শুক্রবার খোলা থাকে?") == "bn"
    assert question_lang("App のエラー E4032") == "ja"
    # Traditional characters name the traditional script; shared characters (的, 是) say nothing.
    assert question_lang("這個設定是什麼意思？") == "zh-hant" and question_lang("这个设定是什么意思？") == "zh"
    assert question_lang("什麼是依賴注入？") == question_lang("退貨要多久？") == "zh-hant"
    assert question_lang("what does 這個 mean?") == "en"


def test_ukrainian_is_told_from_russian_and_more_scripts_are_named():
    from citebot.index.documents import guess_lang, question_lang

    # No Ukrainian-only letter in the first: its words tell (як, для мого); labelled ru, the
    # Russian translation of every page was shown instead of the Ukrainian one.
    assert question_lang("Як дозволити CORS для мого фронтенду?") == "uk"
    assert question_lang("Як запустити фонові задачі?") == "uk"  # і
    assert question_lang("Как разрешить CORS для моего фронтенда?") == "ru"
    assert question_lang("Что такое Depends?") == "ru" and question_lang("Depends?") == "en"
    assert guess_lang("Щоб увімкнути статичні файли, імпортуйте StaticFiles і змонтуйте їх.") == "uk"
    assert guess_lang("Чтобы подключить статические файлы, импортируйте StaticFiles.") == "ru"
    assert guess_lang("ניתן לקבל החזר כספי מלא תוך 30 יום") == "he"  # was "en"
    assert question_lang("Πώς χρησιμοποιώ το Depends;") == "el"
    assert question_lang("Та настройка важна для сервера.") == "ru"  # "та" is Russian too


def test_chinese_tags_name_their_script_by_region_too():
    from citebot.schema import lang_tag

    # zh-TW searched the Simplified pages (region dropped) and zh-Hans matched no page at all.
    assert [lang_tag(t) for t in ("zh-TW", "zh_HK", "zh-Hant-TW", "zh-MO")] == ["zh-hant"] * 4
    assert [lang_tag(t) for t in ("zh-Hans", "zh-CN", "zh-Hans-CN", "zh", "ZH")] == ["zh"] * 5
    assert lang_tag("pt-BR") == "pt" and lang_tag("sr-Latn") == "sr-latn"


def test_a_list_named_in_the_weights_takes_its_own_weight_over_its_channels():
    # The follow-up form's list ("bm25@2") at weight 0.5, the typed turn's at the channel's 1, k = 5:
    # a = 1/6 + 0.5/7 = 20/84, b = 1/7 + 0.5/6 = 19/84.
    lists = [ranked("bm25", ["a", "b"]), ranked("bm25@2", ["b", "a"])]
    assert rrf_exact([["a", "b"], ["b", "a"]], k=5, weights=[1, 0.5]) == {"a": Fraction(20, 84), "b": Fraction(19, 84)}
    assert [h.id for h in rrf(lists, k=5, weights={"bm25": 1.0, "bm25@2": 0.5})] == ["a", "b"]
    # At 2: a = 1/6 + 2/7 = 19/42, b = 1/7 + 2/6 = 20/42 (at the channel's 1 alone they would tie).
    assert [h.id for h in rrf(lists, k=5, weights={"bm25": 1.0, "bm25@2": 2.0})] == ["b", "a"]

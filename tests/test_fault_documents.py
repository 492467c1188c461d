"""Bad input never publishes what its author restricted, and nothing is lost:
metadata that cannot be read fails closed, links out of the folder are not
followed, and every skipped file or folder is reported."""
import os
import re
from pathlib import Path

import pytest

from citebot.config import Config
from citebot.index import chunker, documents
from citebot.index.build import ingest
from citebot.index.local import LocalIndex
from citebot.index.store import IndexError_
from citebot.schema import Chunk, Scope

from conftest import write

sys_path = Path(__file__).resolve().parent
import sys  # noqa: E402

sys.path.insert(0, str(sys_path))
from ingest_worker import HashEmbedder  # noqa: E402


def load(tmp_path, name, text):
    return documents.load(write(tmp_path / name, text), name)


@pytest.mark.parametrize("text,where", [
    ("---\naudience: staff\n\n# Never closed\n\nSecret.\n", "line 1: front matter opened with --- is never closed"),
    ("---\naudience: [staff\n---\nSecret.\n", "line 2: front matter is not valid YAML"),
    ("---\nstatus: [1, 2]\n---\nSecret.\n", "line 2: status must be text, got list"),
    ("---\ntitle: x\ntenant: 42\n---\nSecret.\n", 'line 3: tenant must be text, got int 42; write tenant: "42"'),
    ("---\naudience: staff\nAudience: public\n---\nSecret.\n", "line 3: audience is given twice"),
    # The same key twice, as written: YAML would keep the last one and publish the page.
    ("---\naudience: staff\ntitle: Payroll\naudience: public\n---\nSecret.\n", "line 4: audience is given twice"),
    ("---\naudience: yes\n---\nSecret.\n", "line 2: audience must be text, got bool"),
    ("---\n- audience\n- staff\n---\nSecret.\n", "line 2: front matter must be key: value lines"),
    ("+++\naudience = 'staff\n+++\nSecret.\n", "front matter is not valid TOML"),
    # A scope key misspelt would read as no audience, and publish the page.
    ("---\ntitle: Payroll\naudiance: staff\n---\nSecret.\n", "line 3: unknown key 'audiance'; did you mean 'audience'?"),
    ("---\ntennant: acme\n---\nSecret.\n", "did you mean 'tenant'?"),
    ("---\nstatsu: superseded\n---\nOld.\n", "did you mean 'status'?"),
    # Front matter opened the way another tool reads it: as text, "----" and the key line read as a setext
    # heading, and the page was public.
    ("----\naudience: staff\n----\nSecret.\n", "line 1: front matter opens with '----', which citebot does not"),
    ("--- # front matter\naudience: staff\n---\nSecret.\n", "line 1: front matter opens with '--- # front matter'"),
    ("%YAML 1.2\n---\naudience: staff\n---\nSecret.\n", "line 1: front matter opens with '%YAML 1.2'"),
    ("\n----\ntitle: Pay\naudiance: staff\n----\nSecret.\n", "line 2: front matter opens with '----'"),
    # Directives, a comment or a blank line before the document's "---"; a quoted key, a list item, a flow
    # mapping, a zero-width space before the key (a review found each published the page).
    *[(t, "front matter opens with '%YAML 1.2'") for t in (
        "%YAML 1.2\n\n---\naudience: staff\n...\nSecret.\n", "%YAML 1.2\n# c\n---\naudience: staff\n...\nSecret.\n",
        "%YAML 1.2\n%TAG ! tag:x,2000:\n---\naudience: staff\n---\nSecret.\n")],
    *[(t, "front matter opens with '----'") for t in (
        '----\n"audience": staff\n----\nSecret.\n', "----\n{audience: staff}\n----\nSecret.\n",
        "----\n- audience: staff\n----\nSecret.\n", "----\n\u200baudience: staff\n----\nSecret.\n")],
])
def test_metadata_that_cannot_be_read_makes_the_file_unreadable(tmp_path, text, where):
    with pytest.raises(documents.UnreadableDocument) as e:
        load(tmp_path, "a.md", text)
    assert where in str(e.value)


def test_a_rule_or_a_near_fence_naming_no_scope_key_is_text(tmp_path):
    # A page that opens with a rule, or with "----" around keys that are not scope, reads as before.
    assert any("Intro: welcome." in b.text for b in load(tmp_path, "a.md", "----\nIntro: welcome.\n\nText.\n").blocks)
    doc = load(tmp_path, "b.md", "----\ntitle: Pay\n----\nText: audience: staff is set elsewhere.\n")
    assert doc.meta["audience"] == "public"  # the key after the block is text
    # Never closed, or with a code block inside: page text, as every tool reads it.
    for text in ("----\n# API\n\nThe response:\n\n```\nstatus: 404\n```\n", "%YAML is a directive\nstatus: ok\n",
                 "----\n# API\n```\nstatus: 404\n```\n---\n"):
        assert load(tmp_path, "c.md", text).meta["audience"] == "public"


def test_a_misspelt_scope_key_in_a_meta_tag_or_a_pdfs_info_fails_closed_too(tmp_path):
    from conftest import tiny_pdf
    with pytest.raises(documents.UnreadableDocument, match="unknown key 'audiance'; did you mean 'audience'"):
        load(tmp_path, "a.html", '<html><head><meta name="viewport" content="width=device-width">'
                                 '<meta name="audiance" content="staff"></head><body><p>Secret.</p></body></html>')
    with pytest.raises(documents.UnreadableDocument, match="did you mean 'audience'"):
        documents.load(tiny_pdf(tmp_path / "a.pdf", [["Secret."]], {"Title": "Plan", "Audiance": "staff"}), "a.pdf")
    # A PDF has no lines, and front matter's advice is no use there: it says where, and what a PDF needs.
    path = tiny_pdf(tmp_path / "b.pdf", [["Secret."]], {"Audience": "staff"})
    path.write_bytes(path.read_bytes().replace(b"/Audience (staff)", b"/Audience 5"))
    with pytest.raises(documents.UnreadableDocument) as e:
        documents.load(path, "b.pdf")
    assert str(e.value) == ("its PDF document info: audience must be text, got NumberObject 5; "
                            "give /Audience as a text string, (5)")


@pytest.mark.parametrize("front", ["statu: archived", "stauts: [draft]", "Satus: deprecated", "statsu: Retired"])
def test_a_misspelt_status_fails_closed_whatever_status_it_names(tmp_path, front):
    # Only current/superseded/draft counted as a status, so "statu: archived" published the page.
    with pytest.raises(documents.UnreadableDocument, match="did you mean 'status'"):
        load(tmp_path, "a.md", f"---\n{front}\n---\n# Old tariff\n\nThe archived tariff was 140 euros.\n")


@pytest.mark.parametrize("meta", ['<meta name="audience" content="staff" content="public">',
                                  '<meta content="staff" name="audience" name="generator">',
                                  '<meta name="generator" name="audience" content="staff">'])
def test_a_meta_tag_giving_an_attribute_twice_fails_closed(tmp_path, meta):
    # The parser kept the last value ("public", "generator"), so these staff pages were published.
    with pytest.raises(documents.UnreadableDocument, match="twice; keep one"):
        load(tmp_path, "a.html", f"<html><head>{meta}</head><body><p>Rota code 3312.</p></body></html>")


def test_an_attribute_given_twice_elsewhere_keeps_its_first_value(tmp_path):
    doc = load(tmp_path, "a.html", '<html><head><meta name="viewport" content="a" content="b">'
                                   '<meta name="audience" content="staff"></head>'
                                   '<body><p class="x" class="y">Rota code 3312.</p></body></html>')
    assert doc.meta["audience"] == "staff" and [b.text for b in doc.blocks] == ["Rota code 3312."]


@pytest.mark.parametrize("old,new", [
    (b"/Audience (staff)", b"/Audience (public) /Audience (staff)"),  # a key twice: pypdf kept one silently
    (b"/Audience (staff)", b"/Audience <zz>"),  # a value pypdf cannot parse, dropped
    (b"/Audience (staff)", b"/Audience (staff"),  # a string never closed
])
def test_a_pdf_whose_info_cannot_be_read_fails_closed(tmp_path, old, new):
    from conftest import tiny_pdf
    path = tiny_pdf(tmp_path / "a.pdf", [["Rota code 3312."]], {"Audience": "staff"})
    assert old in path.read_bytes()
    path.write_bytes(path.read_bytes().replace(old, new))
    with pytest.raises(documents.UnreadableDocument, match="document info that cannot be read"):
        documents.load(path, "a.pdf")


def test_a_pdf_whose_info_names_a_missing_object_fails_closed(tmp_path):
    from conftest import tiny_pdf
    path = tiny_pdf(tmp_path / "a.pdf", [["Rota code 3312."]], {"Audience": "staff"})
    data = path.read_bytes()
    ref = re.search(rb"/Info (\d+) 0 R", data)
    path.write_bytes(data.replace(ref.group(0), b"/Info 999 0 R"))
    with pytest.raises(documents.UnreadableDocument, match="document info that cannot be read"):
        documents.load(path, "a.pdf")
    assert documents.load(tiny_pdf(tmp_path / "b.pdf", [["Rota code 3312."]]), "b.pdf").meta["audience"] == "public"


@pytest.mark.parametrize("info", [
    b"/Info << /Audience (public) /Audience (staff) >>",  # written in the trailer: pypdf parses it on opening
    b"/Info << /Audience <zz> >>",
    b"/Info %d 0 R /Info << /Audience (staff) >>",  # /Info itself twice
])
def test_a_pdf_whose_trailer_cannot_be_read_fails_closed(tmp_path, info):
    from conftest import tiny_pdf
    path = tiny_pdf(tmp_path / "a.pdf", [["Rota code 3312."]], {"Audience": "public"})
    data = path.read_bytes()
    ref = re.search(rb"/Info (\d+) 0 R", data)
    path.write_bytes(data.replace(ref.group(0), info.replace(b"%d", ref.group(1))))
    with pytest.raises(documents.UnreadableDocument, match="document info that cannot be read"):
        documents.load(path, "a.pdf")  # it read as public


def update(data: bytes, info: bytes, cut: int = 0) -> bytes:
    """``data`` with an incremental update that replaces its info object by ``info``,
    the update's last ``cut`` bytes gone."""
    n = int(re.search(rb"/Info (\d+) 0 R", data).group(1))
    prev = int(re.findall(rb"startxref\s+(\d+)", data)[-1])
    at = len(data)
    body = b"%d 0 obj\n%s\nendobj\n" % (n, info)
    xref = at + len(body)
    tail = (b"xref\n%d 1\n%010d 00000 n \ntrailer\n<< /Size %d /Root 1 0 R /Info %d 0 R /Prev %d >>\n"
            b"startxref\n%d\n%%%%EOF\n" % (n, at, n + 1, n, prev, xref))
    out = data + body + tail
    return out[:len(out) - cut] if cut else out


def test_a_pdf_whose_last_update_was_cut_off_fails_closed(tmp_path):
    from conftest import tiny_pdf
    path = tiny_pdf(tmp_path / "a.pdf", [["Rota code 3312."]], {"Audience": "public"})
    public = path.read_bytes()
    path.write_bytes(update(public, b"<< /Audience (staff) >>"))
    assert documents.load(path, "a.pdf").meta["audience"] == "staff"  # a whole update is read
    path.write_bytes(update(public, b"<< /Audience (staff) >>", cut=30))  # pypdf read the older, public revision
    with pytest.raises(documents.UnreadableDocument, match="cut off"):
        documents.load(path, "a.pdf")


def test_pypdf_never_writes_a_pdfs_escape_sequences_to_the_terminal(tmp_path):
    import subprocess

    from conftest import tiny_pdf
    path = tiny_pdf(tmp_path / "a.pdf", [["Rota code 3312."]])
    path.write_bytes(path.read_bytes().replace(b"/BaseFont /Helvetica >>",
                                               b"/BaseFont /Helvetica /Encoding /X#1b#5d0;PWNED#07#1b#5b2J >>"))
    # A process of its own: pytest's log capture would stand in for the last-resort handler that printed it.
    run = subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; from citebot.index import "
                          "documents; print(documents.load(Path(sys.argv[1]), 'a.pdf').blocks[0].text)", str(path)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and "3312" in run.stdout
    assert "\x1b" not in run.stdout + run.stderr and "PWNED" not in run.stderr, run.stderr[:200]


def test_pdf_words_broken_at_a_line_end_are_joined(tmp_path):
    from conftest import tiny_pdf
    path = tiny_pdf(tmp_path / "a.pdf", [["Set the connec-", "tion pool size to 40 for the repli-", "cation worker.",
                                          "A well-", "Known name."]])
    text = " ".join(b.text for b in documents.load(path, "a.pdf").blocks)
    # "connec- tion" indexed "connec" + "tion", and "connection" found nothing; a capital starts a new word.
    assert "connection pool size to 40 for the replication worker." in text and "A well- Known name." in text


def test_pdf_scope_values_written_as_names_or_utf16_with_a_terminator_are_read(tmp_path):
    from conftest import tiny_pdf
    path = tiny_pdf(tmp_path / "a.pdf", [["Rota code 3312."]], {"Status": "current", "Audience": "staff"})
    data = path.read_bytes().replace(b"/Status (current)", b"/Status /Current")
    path.write_bytes(data.replace(b"/Audience (staff)", b"/Audience <FEFF00730074006100660066 0000>"))
    meta = documents.load(path, "a.pdf").meta
    assert (meta["status"], meta["audience"]) == ("current", "staff")  # were "/current" and "staff\x00": no one's


def test_a_pdfs_language_from_its_info_or_its_catalog(tmp_path):
    from conftest import tiny_pdf
    assert documents.load(tiny_pdf(tmp_path / "a.pdf", [["Rota code 3312."]], {"Lang": "en-US"}),
                          "a.pdf").meta["lang"] == "en"  # as <html lang="en-US">
    path = tiny_pdf(tmp_path / "b.pdf", [["Dienstplan 3312 gilt ab Montag für alle."]])
    path.write_bytes(path.read_bytes().replace(b"<< /Type /Catalog /Pages 2 0 R >>",
                                               b"<< /Type /Catalog /Pages 2 0 R /Lang (de-DE) >>"))
    assert documents.load(path, "b.pdf").meta["lang"] == "de"
    path.write_bytes(path.read_bytes().replace(b"/Lang (de-DE)", b"/Lang (" + b"x" * 200 + b")"))
    assert documents.load(path, "b.pdf").meta["lang"] == "en"  # no tag: guessed from the script, as without one


def test_a_scope_key_on_the_fence_line_fails_closed_and_a_diff_is_text(tmp_path):
    with pytest.raises(documents.UnreadableDocument, match="alone on its line"):
        load(tmp_path, "a.md", "--- {audience: staff}\n# Vault\n\nSecret.\n")
    doc = load(tmp_path, "p.txt", "--- a/app.py\t2024-05-01 10:00:00\n+++ b/app.py\n@@ -1 +1 @@\n-x\n+y\n")
    assert doc.meta["audience"] == "public" and "a/app.py" in doc.blocks[0].text


def test_a_pdfs_info_given_by_reference_is_read(tmp_path):
    from conftest import tiny_pdf
    path = tiny_pdf(tmp_path / "a.pdf", [["Secret."]], {"Producer": "x"})
    # Rewrite the info dictionary to hold its audience as an indirect object (7 0 R), as many writers do.
    import pypdf
    w = pypdf.PdfWriter(clone_from=pypdf.PdfReader(str(path)))
    w._info.get_object()[pypdf.generic.NameObject("/Audience")] = w._add_object(
        pypdf.generic.TextStringObject("staff"))
    w.write(str(path))
    assert documents.load(path, "a.pdf").meta["audience"] == "staff"


def test_a_file_with_old_mac_line_ends_is_read_line_by_line(tmp_path):
    doc = load(tmp_path, "cr.md", "# CR only\r\rIntro.\r\r## Later\r\rThe zibble level is 6.\r")
    assert [(b.text, b.start) for b in doc.blocks if "zibble" in b.text] == [("The zibble level is 6.", 7)]
    # One "\n" at the end does not make the rest one line: the front matter still restricts the page.
    doc = load(tmp_path, "mixed.md", "---\raudience: staff\r---\r\r# Secret\r\rThe blorfcode is 4242.\r\n")
    assert doc.meta["audience"] == "staff" and [b.start for b in doc.blocks if "blorfcode" in b.text] == [7]


def test_other_front_matter_keys_are_the_documents_own_business(tmp_path):
    doc = load(tmp_path, "a.md", "---\nauthor: Ana\ntags: [a, b]\ndate: 2024-05-01\ndraft: false\n---\n# A\n\nText.\n")
    assert doc.meta["audience"] == "public" and doc.meta["title"] == "A"
    # Keys a letter from a scope key that are words of their own (a camping shop's "tent", a store's "long").
    doc = load(tmp_path, "b.md", "---\nlat: 47.6\nlong: -122.3\ntent: dome\nstats: 5\nstates: [WA]\ntenancy: x\n"
                                 "---\n# B\n\nText.\n")
    assert doc.meta["audience"] == "public"


@pytest.mark.parametrize("name,text", [
    ("a.md", "\n\n---\naudience: staff\n---\n# Staff page\n\nSecret.\n"),  # blank lines before ---
    ("a.md", "\ufeff---\nAudience: Staff\n---\nSecret.\n"),  # a BOM, keys and values in any case
    ("a.md", "+++\naudience = 'staff'\n+++\nSecret.\n"),  # TOML front matter
    ("a.txt", "---\nAUDIENCE: staff\n---\nSecret.\n"),
    ("a.html", '<html><head><meta name="Audience" content="Staff"></head><body><p>Secret.</p></body></html>'),
])
def test_metadata_keys_and_forms_are_read_whatever_their_case(tmp_path, name, text):
    assert load(tmp_path, name, text).meta["audience"] == "staff"


def test_a_broken_front_matter_skips_the_file_with_its_line_and_publishes_nothing(tmp_path):
    folder = tmp_path / "docs"
    write(folder / "ok.md", "# Fine\n\nA public page.\n")
    write(folder / "staff.md", "---\naudience: staff\n# forgot the closing line\n\nSecret goodwill limit.\n")
    cfg = Config(index=str(tmp_path / "idx"), embed_model="test/hash-8")
    seen = []
    report = ingest(folder, cfg, embedder=HashEmbedder(), log=seen.append)
    assert dict(report.skipped)["staff.md"].startswith("line 1: front matter opened with --- is never closed")
    assert any("skipped staff.md: line 1" in m for m in seen)
    assert {c.source for c in LocalIndex.load(cfg.index).scan(Scope.everything())} == {"ok.md"}


def test_links_out_of_the_folder_are_skipped_unless_asked(tmp_path):
    folder = tmp_path / "docs"
    write(folder / "ok.md", "# Fine\n\nA page.\n")
    secret = write(tmp_path / "outside" / "passwd.txt", "root:x:0:0\n")
    os.symlink(secret, folder / "passwd.txt")
    os.symlink(folder / "ok.md", folder / "alias.md")  # a link inside the folder is fine
    os.symlink(tmp_path / "outside", folder / "linked-dir")
    cfg = Config(index=str(tmp_path / "idx"), embed_model="test/hash-8")
    report = ingest(folder, cfg, embedder=HashEmbedder(), log=lambda m: None)
    assert dict(report.skipped)["passwd.txt"].startswith("a link to a file outside the folder")
    # A linked folder was passed by without a word: its pages were missing and no one was told.
    assert dict(report.skipped)["linked-dir/"] == "a link to a folder outside the folder (--follow-links reads it)"
    assert {c.source for c in LocalIndex.load(cfg.index).scan(Scope.everything())} == {"ok.md", "alias.md"}
    report = ingest(folder, cfg, embedder=HashEmbedder(), follow_links=True, log=lambda m: None)
    assert "passwd.txt" in report.added and "linked-dir/passwd.txt" in report.added


def test_a_looping_link_is_skipped_and_a_link_back_up_is_read_once(tmp_path):
    folder = tmp_path / "docs"
    write(folder / "sub" / "a.md", "# A\n\nThe plimflux value is 7.\n")
    os.symlink("loopb.md", folder / "loopa.md")
    os.symlink("loopa.md", folder / "loopb.md")
    os.symlink("..", folder / "sub" / "up")
    cfg = Config(index=str(tmp_path / "idx"), embed_model="test/hash-8")
    report = ingest(folder, cfg, embedder=HashEmbedder(), follow_links=True, log=lambda m: None)
    assert report.added == ["sub/a.md"]
    assert dict(report.skipped) == {"loopa.md": "a link that loops back on itself",
                                    "loopb.md": "a link that loops back on itself",
                                    "sub/up/": "a link to a folder already read; read once"}


def test_a_broken_link_is_named_as_broken_with_or_without_follow_links(tmp_path):
    folder = tmp_path / "docs"
    write(folder / "ok.md", "# Fine\n\nA page.\n")
    os.symlink("/nonexistent/file.md", folder / "away.md")
    os.symlink("gone.md", folder / "near.md")
    # It said "a link to a file outside the folder (--follow-links reads it)", which it cannot,
    # and with --follow-links (or for a link inside the folder) "not a regular file".
    for follow in (False, True):
        cfg = Config(index=str(tmp_path / f"idx{follow}"), embed_model="test/hash-8")
        report = ingest(folder, cfg, embedder=HashEmbedder(), follow_links=follow, log=lambda m: None)
        assert dict(report.skipped) == {"away.md": "a broken link: /nonexistent/file.md is not there",
                                        "near.md": "a broken link: gone.md is not there"}


def test_odd_names_unreadable_folders_utf16_and_loose_html_text(tmp_path, monkeypatch):
    folder = tmp_path / "docs"
    write(folder / "ok.md", "# Fine\n\nA page.\n")
    bad = os.fsencode(str(folder)) + b"/caf\xe9.md"
    with open(bad, "wb") as f:
        f.write(b"# Latin-1 name\n\nText.\n")
    (folder / "locked").mkdir()
    write(folder / "locked" / "x.md", "# Hidden\n\nText.\n")
    os.chmod(folder / "locked", 0)
    real_scandir = os.scandir

    def scandir(path="."):  # root reads any folder: make "locked" fail as it would for anyone else
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)
    monkeypatch.setattr(os, "scandir", scandir)
    (folder / "utf16.txt").write_bytes("Refunds take 14 days.".encode("utf-16"))
    write(folder / "loose.html", "<html><body>Plain body text.<div>Div text <span>and a span</span>.</div></body></html>")
    cfg = Config(index=str(tmp_path / "idx"), embed_model="test/hash-8")
    try:
        report = ingest(folder, cfg, embedder=HashEmbedder(), log=lambda m: None)
    finally:
        os.chmod(folder / "locked", 0o755)
    skipped = dict(report.skipped)
    assert skipped["locked/"] == "folder cannot be listed: Permission denied"
    assert skipped["'caf\\udce9.md'"] == "file name is not valid UTF-8; rename it"
    texts = {c.source: c.text for c in LocalIndex.load(cfg.index).scan(Scope.everything())}
    assert texts["utf16.txt"] == "Refunds take 14 days."
    assert texts["loose.html"] == "Plain body text.\n\nDiv text and a span."  # as rendered: no space before the "."


def test_an_empty_folder_never_empties_a_full_index(tmp_path):
    folder = tmp_path / "docs"
    write(folder / "ok.md", "# Fine\n\nA page.\n")
    cfg = Config(index=str(tmp_path / "idx"), embed_model="test/hash-8")
    ingest(folder, cfg, embedder=HashEmbedder(), log=lambda m: None)
    (tmp_path / "empty").mkdir()
    with pytest.raises(IndexError_, match="holds no readable documents, but the index .* holds 1 chunks; nothing "
                                          "was changed. To empty the index, ingest with --rebuild"):
        ingest(tmp_path / "empty", cfg, embedder=HashEmbedder(), log=lambda m: None)
    assert len(LocalIndex.load(cfg.index)) == 1
    ingest(tmp_path / "empty", cfg, rebuild=True, embedder=HashEmbedder(), log=lambda m: None)
    assert len(LocalIndex.load(cfg.index)) == 0


def test_every_article_of_a_page_is_read_and_an_articles_own_header_is_kept(tmp_path):
    page = ("<html><body><header><nav>Home | Shop</nav>Site banner</header>"
            "<article><header><h1>Refund policy</h1><p>Updated 2024</p></header><p>Refunds take 14 days.</p></article>"
            "<article><h2>Returns</h2><p>Press <button>Return</button> to start a return within 30 days.</p></article>"
            "<footer>Copyright</footer></body></html>")
    doc = load(tmp_path, "a.html", page)
    text = [b.text for b in doc.blocks]
    assert text == ["Refund policy", "Updated 2024", "Refunds take 14 days.", "Returns",
                    "Press Return to start a return within 30 days."]
    assert doc.meta["title"] == "Refund policy"


def test_a_loose_html_string_cites_its_own_line_and_a_script_language_is_kept(tmp_path):
    page = '<html lang="zh-Hant"><body>\n<p>First.</p>\n<div>\n\n\nLoose text.</div></body></html>'
    doc = load(tmp_path, "a.html", page)
    assert [(b.text, b.start) for b in doc.blocks] == [("First.", 2), ("Loose text.", 6)]
    assert doc.meta["lang"] == "zh-hant"
    assert load(tmp_path, "b.html", '<html lang="en-US"><body><p>x</p></body></html>').meta["lang"] == "en"


def test_every_reader_names_a_language_the_same_way_and_so_does_the_lang_filter(tmp_path):
    # Front matter's "en-US" stayed "en-us" while <html lang="en-US"> read "en", so
    # `--lang en` (and the page's own `--lang en-US`) left one of the two out.
    md = load(tmp_path, "a.md", "---\nlang: en-US\n---\n# Rota\n\nRota code 3312.\n")
    meta = load(tmp_path, "b.html", '<html><head><meta name="lang" content="en_GB"></head><body><p>x</p></body></html>')
    assert md.meta["lang"] == meta.meta["lang"] == "en"
    assert load(tmp_path, "c.md", "---\nlang: zh-Hant-TW\n---\n# 標題\n\n內容。\n").meta["lang"] == "zh-hant"
    assert documents.load(write(tmp_path / "pt_BR" / "d.md", "# Olá\n\nTexto.\n"), "pt_BR/d.md").meta["lang"] == "pt"
    chunk = Chunk("c1", "a.md", "Rota", (), "Rota code 3312.", 1, 1, lang=md.meta["lang"])
    assert Scope.build(lang="en-US").allows(chunk) and Scope.build(lang="EN").allows(chunk)
    assert Scope.build(lang="de, zh_Hant").langs == {"de", "zh-hant"}


def test_lines_are_numbered_as_grep_numbers_them(tmp_path):
    # A form feed (RFC-style page break) or U+2028 is not a line end: str.splitlines says it is.
    text = "Page one.\n\x0c\nPage two.\n\nSee\u2028here.\n\nThird page target.\n"
    doc = load(tmp_path, "a.txt", text)
    target = next(b for b in doc.blocks if b.text == "Third page target.")
    assert target.start == 7 == text.split("\n").index("Third page target.") + 1


def test_an_empty_page_is_unchanged_on_the_next_ingest(tmp_path):
    folder = tmp_path / "docs"
    write(folder / "empty.md", "")
    write(folder / "only-meta.md", "---\ntitle: Nothing yet\n---\n")
    write(folder / "a.md", "# A\n\nSome text.\n")
    cfg = Config(index=str(tmp_path / "idx"), embed_model="test/hash-8")
    ingest(folder, cfg, embedder=HashEmbedder(), log=lambda m: None)
    again = ingest(folder, cfg, embedder=HashEmbedder(), log=lambda m: None)
    assert again.changed == [] and again.added == [] and again.unchanged == 3


def test_an_index_inside_the_documents_folder_never_indexes_itself(tmp_path):
    folder = tmp_path / "docs"
    write(folder / "a.md", "# A\n\nSome text.\n")
    cfg = Config(index=str(folder / "idx"), embed_model="test/hash-8")
    ingest(folder, cfg, embedder=HashEmbedder(), log=lambda m: None)
    again = ingest(folder, cfg, embedder=HashEmbedder(), log=lambda m: None)
    assert again.added == [] and again.unchanged == 1
    assert {c.source for c in LocalIndex.load(cfg.index).scan(Scope.everything())} == {"a.md"}


def test_another_index_inside_the_documents_folder_is_never_read_and_leaks_nothing(tmp_path):
    folder = tmp_path / "docs"
    write(folder / "pub.md", "# Public\n\nOpening hours are nine to five.\n")
    write(folder / "staff.md", "---\naudience: staff\n---\n# Vault\n\nThe vault code is XQ7781.\n")
    old = Config(index=str(folder / "old-idx"), embed_model="test/hash-8")
    ingest(folder, old, embedder=HashEmbedder(), log=lambda m: None)  # an earlier index, left in the folder
    cfg = Config(index=str(tmp_path / "idx"), embed_model="test/hash-8")
    report = ingest(folder, cfg, embedder=HashEmbedder(), log=lambda m: None)
    assert ("old-idx/", "a citebot index; never read as documents") in report.skipped
    index = LocalIndex.load(cfg.index)
    assert {c.source for c in index.scan(Scope.everything())} == {"pub.md", "staff.md"}
    assert index.sparse_search(["xq7781"], Scope(), 10) == []  # its terms.txt held the staff page's words


def test_a_half_written_generation_is_an_index_too_and_a_file_named_current_is_not(tmp_path):
    folder = tmp_path / "docs"
    write(folder / "staff.md", "---\naudience: staff\n---\n# Vault\n\nThe vault code is XQ7781.\n")
    write(folder / "old-idx" / "gen-17.tmp" / "terms.txt", "vault\nxq7781\n")  # an ingest killed mid-write
    write(folder / "releases" / "CURRENT", "2.4\n")
    write(folder / "releases" / "notes.md", "# Notes\n\nRelease 2.4 adds tents.\n")
    cfg = Config(index=str(tmp_path / "idx"), embed_model="test/hash-8")
    report = ingest(folder, cfg, embedder=HashEmbedder(), log=lambda m: None)
    assert ("old-idx/", "a citebot index; never read as documents") in report.skipped
    assert {c.source for c in LocalIndex.load(cfg.index).scan(Scope.everything())} == {"staff.md", "releases/notes.md"}


def test_a_title_too_long_to_store_is_cut_and_a_path_too_long_is_skipped(tmp_path):
    doc = load(tmp_path, "export.txt", "word " * 1200 + "\n\nMore text.\n")
    assert len(doc.meta["title"].encode()) <= 4000 + 3 and doc.meta["title"].endswith("…")
    folder = tmp_path / "docs"
    deep = folder / "/".join(["d" * 200] * 11)
    write(deep / "a.md", "# A\n\nDeep.\n")
    write(folder / "b.md", "# B\n\nShallow.\n")
    cfg = Config(index=str(tmp_path / "idx"), embed_model="test/hash-8")
    report = ingest(folder, cfg, embedder=HashEmbedder(), log=lambda m: None)
    assert [why for _, why in report.skipped] == ["its path is longer than 2000 bytes; shorten it"]
    assert {c.source for c in LocalIndex.load(cfg.index).scan(Scope.everything())} == {"b.md"}


@pytest.mark.parametrize("name,text", [
    ("a.html", "---\naudience: staff\n---\n<html><body><p>Secret.</p></body></html>\n"),  # Jekyll-style HTML
    ("a.md", "<!-- internal page -->\n---\naudience: staff\n---\n# Vault\n\nSecret.\n"),  # a comment first
    ("a.md", "<!--\n  internal page\n-->\n\n---\naudience: staff\n---\nSecret.\n"),
    ("a.md", "<!-- markdownlint-disable --> <!-- prettier-ignore -->\n---\naudience: staff\n---\nSecret.\n"),
    ("a.md", "<!-- one --> <!-- two\n spans lines -->\n---\naudience: staff\n---\nSecret.\n"),
    ("a.md", "\u200b---\naudience: staff\n---\nSecret.\n"),  # a zero-width space before the fence
    ("a.md", "\u2060\n---\u200d\naudience: staff\n\u200b---\nSecret.\n"),  # and on a line of its own
    # Any character that draws nothing: a left-to-right mark, a soft hyphen, a variation selector ...
    *[("a.md", f"{c}---\naudience: staff\n---\nSecret.\n") for c in "\u200e\u00ad\u034f\u2062\u180e\ufe0f"],
])
def test_front_matter_restricts_wherever_an_author_puts_it(tmp_path, name, text):
    doc = load(tmp_path, name, text)
    assert doc.meta["audience"] == "staff"
    assert [b.start for b in doc.blocks if "Secret." in b.text] == [text.split("\n").index(
        next(x for x in text.split("\n") if "Secret." in x)) + 1]  # lines still counted from the file's top


def test_html_lists_asides_captions_and_lines_read_as_the_page_shows_them(tmp_path):
    page = ("<html><body>\n<nav>\na\nb\n</nav>\nLoose on line six\n<article><p>A</p><aside>ASIDE caveat</aside>\n"
            "<table><caption>CAPTION sizes</caption><tr><th>S</th></tr><tr><td>M</td></tr></table></article>\n<ul>\n"
            "<li><a href='x'>LINK</a> and <b>BOLD</b> <!-- COMMENT internal --><ul><li>inner</li></ul></li>\n"
            "<li><div>DIV<ul><li>DEEP</li></ul></div></li></ul>\n<div>two\nlines</div></body></html>\n")
    doc = load(tmp_path, "a.html", page)
    assert [(b.text, b.start, b.end) for b in doc.blocks] == [
        ("Loose on line six", 6, 6), ("A", 7, 7), ("ASIDE caveat", 7, 7), ("CAPTION sizes", 8, 8),
        # a nested list's items indented under their owner, as Markdown writes them (borg's "From Source,
        # either:" read its two options as siblings of the other ways to install)
        ("| S |\n|---|\n| M |", 8, 8), ("- LINK and BOLD\n  - inner\n- DIV\n  - DEEP", 10, 11), ("two lines", 12, 13)]
    # A lone "\r" ends a line, and a declared charset is read as a browser reads it.
    doc = load(tmp_path, "cr.html", "<html><body>\r<p>one</p>\r<p>two</p>\r</body></html>\r")
    assert [(b.text, b.start) for b in doc.blocks] == [("one", 2), ("two", 3)]
    (tmp_path / "l1.html").write_bytes(b'<meta charset="iso-8859-1"><p>caf\xe9</p>')
    assert [b.text for b in documents.load(tmp_path / "l1.html", "l1.html").blocks] == ["café"]


def test_html_front_matter_and_a_meta_tag_that_disagree_fail_closed(tmp_path):
    with pytest.raises(documents.UnreadableDocument, match="audience is given both"):
        load(tmp_path, "a.html", '---\naudience: staff\n---\n<html><head><meta name="audience" content="public">'
                                 "</head><body><p>x</p></body></html>")


def test_a_pdf_is_restricted_by_its_document_info(tmp_path):
    from conftest import tiny_pdf
    path = tiny_pdf(tmp_path / "h.pdf", [["Page one text."], ["Staff only: code OTTER.", "Second line."]],
                    {"Title": "Handbook", "Audience": "Staff", "Tenant": "acme"})
    doc = documents.load(path, "h.pdf")
    assert (doc.title, doc.meta["audience"], doc.meta["tenant"]) == ("Handbook", "staff", "acme")
    assert [(b.text, b.page, b.start) for b in doc.blocks] == [
        ("Page one text.", 1, 1), ("Staff only: code OTTER.", 2, 1), ("Second line.", 2, 2)]


def test_documents_that_turn_unreadable_leave_the_index_not_stay_public(tmp_path):
    folder = tmp_path / "docs"
    write(folder / "a.md", "# A\n\nIGUANA public text.\n")
    cfg = Config(index=str(tmp_path / "idx"), embed_model="test/hash-8")
    ingest(folder, cfg, embedder=HashEmbedder(), log=lambda m: None)
    write(folder / "a.md", "---\naudience: staff\naudience: staff\n---\n# A\n\nIGUANA staff text.\n")
    report = ingest(folder, cfg, embedder=HashEmbedder(), log=lambda m: None)
    assert report.removed == ["a.md"] and list(LocalIndex.load(cfg.index).scan(Scope.everything())) == []


def test_a_pdf_citation_names_its_page(tmp_path, embedder):
    from citebot.chat import render
    from citebot.engine import Engine
    from citebot.index.store import open_index
    from citebot.search.models import Models

    from conftest import tiny_pdf
    folder = tmp_path / "docs"
    folder.mkdir()
    tiny_pdf(folder / "manual.pdf", [["Cover page of the manual."], ["The doohickey pressure is 9 bar."]])
    cfg = Config(index=str(tmp_path / "idx"), embed_model="packaged", use_gate=False)
    ingest(folder, cfg, embedder=embedder, log=lambda m: None)
    turn = Engine(open_index(cfg), cfg, Models(embedder)).ask("what is the doohickey pressure?")
    # Lines are counted from 1 on each page: "line 1" alone would name both pages.
    assert [(c["source"], c["page"], c["lines"]) for c in turn.citations] == [("manual.pdf", 2, [1, 1])]
    assert "manual.pdf, p. 2, line 1" in render.sources_text(turn)
    assert "manual.pdf p. 2:1-1" in render.why_text(turn)


def test_a_damaged_pdf_or_a_utf16_file_without_its_mark_is_skipped_with_what_to_do(tmp_path):
    (tmp_path / "d.pdf").write_bytes(b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog")
    with pytest.raises(documents.UnreadableDocument, match=r"not a readable PDF .*save a repaired copy"):
        documents.load(tmp_path / "d.pdf", "d.pdf")
    (tmp_path / "u.txt").write_bytes("Rota code 3312.".encode("utf-16-le"))
    with pytest.raises(documents.UnreadableDocument, match="save it as UTF-8"):
        documents.load(tmp_path / "u.txt", "u.txt")


def test_a_pdf_that_cannot_be_opened_is_a_file_that_cannot_be_read(tmp_path):
    (tmp_path / "gone.pdf").mkdir()  # pypdf's open fails as a missing or vanished file does: with an OSError
    with pytest.raises(documents.UnreadableDocument, match="^cannot be read: "):
        documents.load(tmp_path / "gone.pdf", "gone.pdf")  # it said "is not a readable PDF (IsADirectoryError ...)"
    with pytest.raises(documents.UnreadableDocument, match="^cannot be read: "):
        documents.load(tmp_path / "never.pdf", "never.pdf")


def test_front_matter_after_an_empty_comment_restricts_the_page(tmp_path):
    # "<!-->" read as opening a comment hid the front matter up to a later comment's "-->", and the
    # text after that was published although the page says audience: staff.
    doc = load(tmp_path, "a.md", "<!-->\n---\naudience: staff\n---\n# Payroll\n\nBands.\n\n<!-- ok -->\nSecret.\n")
    assert doc.meta["audience"] == "staff"
    assert [b.text for b in doc.blocks if b.kind == "para"] == ["Bands.", "Secret."]


def test_a_file_saved_while_it_is_ingested_is_never_recorded_with_another_versions_text(tmp_path, monkeypatch):
    # The hash came from one read and the chunks from a second: a save in between recorded the
    # staff page's hash with the public draft's text, and once the staff page was back that
    # draft was "unchanged", public and searchable for good.
    folder = tmp_path / "docs"
    staff = "---\naudience: staff\n---\n# Pay\n\nIGUANA bands.\n"
    write(folder / "a.md", staff)
    cfg = Config(index=str(tmp_path / "idx"), embed_model="test/hash-8")
    real = documents.load

    def saved_meanwhile(path, rel, *args, **kw):
        write(path, "# Pay\n\nIGUANA draft.\n")  # an editor saves the public draft as the ingest reads
        return real(path, rel, *args, **kw)
    monkeypatch.setattr(documents, "load", saved_meanwhile)
    ingest(folder, cfg, embedder=HashEmbedder(), log=lambda m: None)
    monkeypatch.setattr(documents, "load", real)
    write(folder / "a.md", staff)  # and the staff page is put back
    ingest(folder, cfg, embedder=HashEmbedder(), log=lambda m: None)
    assert [(c.audience, c.text) for c in LocalIndex.load(cfg.index).scan(Scope.everything())] == \
        [("staff", "IGUANA bands.")]


def test_the_rebuild_command_of_an_index_built_through_links_follows_them_again(tmp_path):
    # The command named --include but not --follow-links: run as advised, it dropped every linked page.
    from citebot.index.store import open_index
    folder = tmp_path / "docs"
    write(folder / "ok.md", "# Fine\n\nA page.\n")
    os.symlink(write(tmp_path / "shared" / "policy.md", "# Policy\n\nWALRUS rule.\n"), folder / "policy.md")
    cfg = Config(index=str(tmp_path / "idx"), embed_model="test/hash-8")
    ingest(folder, cfg, embedder=HashEmbedder(), follow_links=True, log=lambda m: None)
    with pytest.raises(IndexError_) as e:
        open_index(cfg.replace(chunk_tokens=100))
    assert str(e.value).endswith(" --follow-links --rebuild")


@pytest.mark.parametrize("text", [
    '+++\ntitle = "Pay"\n[params]\naudience = "staff"\n+++\n# Pay\n\nBands.\n',  # Hugo
    "---\ntitle: Pay\nextra:\n  audience: staff\n---\n# Pay\n\nBands.\n",  # Zola, in YAML
])
def test_a_scope_key_in_a_site_generators_params_table_restricts_the_page(tmp_path, text):
    # Hugo keeps a page's own fields under [params]: read as no key, the page a Hugo user marked staff was public.
    assert load(tmp_path, "a.md", text).meta["audience"] == "staff"


def test_a_scope_key_given_in_params_and_at_the_top_too_is_given_twice(tmp_path):
    with pytest.raises(documents.UnreadableDocument, match="audience is given twice"):
        load(tmp_path, "a.md", '+++\naudience = "public"\n[params]\naudience = "staff"\n+++\n# Pay\n')
    with pytest.raises(documents.UnreadableDocument, match="did you mean .audience."):
        load(tmp_path, "a.md", '+++\n[params]\naudiance = "staff"\n+++\n# Pay\n')


@pytest.mark.parametrize("text,where", [
    ("Title: Partner rates\nAudience: staff\n\n# Rates\n\nThe rate is 12 percent.\n", "line 2"),  # MultiMarkdown
    ('{\n  "title": "Board notes",\n  "audience": "staff"\n}\n\n# Board\n\nApproved.\n', "line 3"),  # Hugo JSON
    ('{"params": {"tenant": "acme"}}\n\nAcme only.\n', "line 1"),
    ("Title: Old\nStatus: Deprecated\n\nThe old way.\n", "line 2"),
    ("Base Header Level: 2\nAudience: staff\n\nStaff only.\n", "line 2"),  # a key with spaces ended the header
    ("Title: X\nAudience: staff\nStaff only, no blank line.\n", "line 2"),  # text right below the keys
    ('{"status": ["archived"]}\n\nOld.\n', "line 1"),  # a status given as a list
])
def test_scope_in_a_metadata_format_not_read_fails_closed(tmp_path, text, where):
    # Read as text, these published a page its author had restricted.
    with pytest.raises(documents.UnreadableDocument, match=f"^{where}: .* write it as YAML front matter"):
        load(tmp_path, "a.md", text)


def test_a_header_that_is_text_or_names_no_scope_stays_text(tmp_path):
    for text in ("Status: open\nPriority: high\n\nThe tent leaks.\n", "Title: Notes\nAuthor: Ana\n\nText.\n",
                 "Note: audience: staff is how a page is restricted.\n", '{"audience": 1} is JSON.\n'):
        assert load(tmp_path, "a.md", text).meta["audience"] == "public"


def test_a_pdf_encrypted_with_an_empty_password_is_read_and_one_with_a_password_is_skipped(tmp_path):
    import io

    import pypdf

    from conftest import tiny_pdf

    plain = tiny_pdf(tmp_path / "plain.pdf", [["The vault code is in the safe."]], {"Audience": "staff"})
    for name, user in (("open.pdf", ""), ("locked.pdf", "secret")):
        w = pypdf.PdfWriter(clone_from=io.BytesIO(plain.read_bytes()))
        w.encrypt(user_password=user, owner_password="owner", algorithm="RC4-128")
        w.write(tmp_path / name)
    # Permissions only (every viewer opens it without asking): read, scope and all.
    doc = documents.load(tmp_path / "open.pdf", "open.pdf")
    assert [b.text for b in doc.blocks] == ["The vault code is in the safe."] and doc.meta["audience"] == "staff"
    with pytest.raises(documents.UnreadableDocument, match="is an encrypted PDF; save an unencrypted copy"):
        documents.load(tmp_path / "locked.pdf", "locked.pdf")


def test_a_pages_body_inside_a_form_is_read_and_its_controls_are_not(tmp_path):
    # ASP.NET and SharePoint pages hold the whole body in <form>: dropped, it gave no text and no warning.
    # A country list's options are no text of the page.
    page = ('<html><head><title>Leave</title></head><body><form id="f1"><div><h1>Leave Policy</h1>\n'
            "<p>Employees get 25 days of annual leave.</p>\n<select><option>Afghanistan</option>"
            "<option>Albania</option></select><datalist><option>Auto</option></datalist></div></form></body></html>")
    doc = load(tmp_path, "p.html", page)
    assert [b.text for b in doc.blocks] == ["Leave Policy", "Employees get 25 days of annual leave."]


def test_a_logs_terminal_colours_are_not_part_of_its_words(tmp_path):
    from citebot.search.analyzer import analyze

    # Searched as written, "\x1b[31mERROR\x1b[0m" was the term "31merror", and "ERROR" found nothing.
    doc = load(tmp_path, "build.txt", "Build log\n\n\x1b[31mERROR\x1b[0m: the compiler failed.\n\x1b]0;title\x07done\n")
    assert [(b.text, b.start) for b in doc.blocks] == [("Build log", 1), ("ERROR: the compiler failed.\ndone", 3)]
    assert "error" in analyze(doc.blocks[1].text)
    doc = load(tmp_path, "n.md", "# Log\n\n\x1b[1mbold\x1b[0m text.\n")
    assert doc.blocks[-1].text == "bold text."
    # A title ended by a lone "\r" (a line end) ends there: the lines after it were eaten.
    (tmp_path / "cr.txt").write_bytes(b"a\x1b]0;title\rline2\rline3\r")
    assert [(b.text, b.start, b.end) for b in documents.load(tmp_path / "cr.txt", "cr.txt").blocks] == [
        ("a\nline2\nline3", 1, 3)]


def test_an_image_pasted_as_a_data_url_reads_as_its_alt_text(tmp_path):
    import base64

    picture = base64.b64encode(bytes(range(256)) * 40).decode()
    doc = load(tmp_path, "trip.md", f"# Trip\n\nThe hotel was great.\n\n![the pool](data:image/png;base64,{picture})\n\n"
                                    "We left on Sunday.\n")
    assert [b.text for b in doc.blocks if b.kind == "para"] == ["The hotel was great.", "the pool", "We left on Sunday."]
    # With a title in single quotes or parentheses, and brackets in the alt text.
    doc = load(tmp_path, "t.md", f"![a [b] c](data:image/png;base64,{picture} 'title')\n\n"
                                 f"![d](data:image/png;base64,{picture} (title))\n")
    assert [b.text for b in doc.blocks] == ["a [b] c", "d"]


def test_files_of_a_type_citebot_does_not_read_are_one_line_a_run(tmp_path):
    # 30 pictures gave 30 "skipped" lines every run, burying a staff page skipped for broken front matter.
    folder = tmp_path / "docs"
    write(folder / "ok.md", "# Fine\n\nA page.\n")
    write(folder / "staff.md", "---\naudience: staff\n# never closed\n\nSecret.\n")
    for name in ("a.png", "b.png", "c/d.png", "e.jpg"):
        write(folder / name, "x")
    cfg = Config(index=str(tmp_path / "idx"), embed_model="test/hash-8")
    seen: list[str] = []
    report = ingest(folder, cfg, embedder=HashEmbedder(), log=seen.append)
    skipped = [m for m in seen if "skipped" in m and "chunks" not in m]
    assert skipped == ["skipped staff.md: line 1: front matter opened with --- is never closed; add a closing --- line",
                       "skipped 4 file(s) of a type citebot does not read: .png (3), .jpg (1); it reads "
                       + " ".join(documents.SUFFIXES)]
    assert len(report.skipped) == 5  # --json still lists each


def test_installed_packages_are_not_read_unless_included(tmp_path):
    folder = tmp_path / "project"
    write(folder / "docs" / "guide.md", "# Guide\n\nOur guide.\n")
    write(folder / "node_modules" / "left-pad" / "README.md", "# left-pad\n\nPads strings.\n")
    write(folder / "env" / "pyvenv.cfg", "home = /usr/bin\n")
    write(folder / "env" / "lib" / "README.md", "# A package\n\nSomeone else's page.\n")
    cfg = Config(index=str(tmp_path / "idx"), embed_model="test/hash-8")
    report = ingest(folder, cfg, embedder=HashEmbedder(), log=lambda m: None)
    assert report.added == ["docs/guide.md"]
    assert dict(report.skipped)["node_modules/"].startswith("installed packages (node_modules, a virtualenv)")
    assert "env/" in dict(report.skipped)
    # Named by --include, they are read.
    report = ingest(folder, Config(index=str(tmp_path / "idx2"), embed_model="test/hash-8"), embedder=HashEmbedder(),
                    include=["node_modules/*"], log=lambda m: None)
    assert report.added == ["node_modules/left-pad/README.md"]
    for glob in ("node_modules/left-pad/*", "*node_modules/*"):  # a glob that names the folder
        report = ingest(folder, Config(index=str(tmp_path / "idx3"), embed_model="test/hash-8"),
                        embedder=HashEmbedder(), include=[glob, "docs/*"], log=lambda m: None, rebuild=True)
        assert "node_modules/" not in dict(report.skipped), glob


def test_a_sphinx_builds_copy_of_its_sources_is_not_read_beside_its_html_pages(tmp_path):
    folder = tmp_path / "html"
    write(folder / "searchindex.js", "Search.setIndex({})")
    write(folder / "tasks.html", "<html><head><title>Tasks</title></head><body><main><p>Tasks retry.</p></main></body></html>")
    write(folder / "_sources" / "tasks.rst.txt", "Tasks\n=====\n\nTasks retry.\n")
    cfg = Config(index=str(tmp_path / "idx"), embed_model="test/hash-8")
    report = ingest(folder, cfg, embedder=HashEmbedder(), log=lambda m: None)
    assert report.added == ["tasks.html"]  # each page once
    assert dict(report.skipped)["_sources/"].startswith("a Sphinx build's copy of its pages' sources")
    # Without a Sphinx build beside it, a folder of that name is someone's documents.
    (folder / "searchindex.js").unlink()
    report = ingest(folder, cfg, embedder=HashEmbedder(), log=lambda m: None)
    assert report.added == ["_sources/tasks.rst.txt"]


def test_a_table_that_lays_out_the_page_is_read_as_the_page_not_as_one_row(tmp_path):
    # An old site's layout table became one data-table row of the whole page (9 KB, one chunk), its
    # nested table's text read twice; a quote for "paragraph 75" gave paragraphs 2-4.
    paras = "".join(f"<p>Paragraph {i} of the page.</p>" for i in range(4))
    page = (f"<html><body>\n<table><tr><td>Menu</td><td>\n<h1>Old Page</h1>{paras}\n"
            "<table><tr><th>Size</th><th>Price</th></tr><tr><td>L</td><td>$5</td></tr></table>\n</td></tr></table>"
            "</body></html>")
    doc = load(tmp_path, "old.html", page)
    assert [(b.kind, b.text, b.start) for b in doc.blocks] == [
        ("para", "Menu", 2), ("heading", "Old Page", 3),
        *[("para", f"Paragraph {i} of the page.", 3) for i in range(4)],
        ("table", "| Size | Price |\n|---|---|\n| L | $5 |", 4)]
    # Each cell of a layout table is a paragraph of its own, on its own line ("Phone555-1234Fax555-9999").
    doc = load(tmp_path, "card.html", '<html><body>\n<table role="presentation"><tr><td>Phone</td><td>555-1234</td>'
                                      "</tr>\n<tr><td>Fax</td><td>555-9999</td></tr></table></body></html>")
    assert [(b.text, b.start) for b in doc.blocks] == [("Phone", 2), ("555-1234", 2), ("Fax", 3), ("555-9999", 3)]
    # A data table whose cells each wrap their text in a <p> (Sphinx) is still a table.
    doc = load(tmp_path, "sphinx.html", "<table><tr><th><p>Size</p></th><th><p>Price</p></th></tr>"
                                         "<tr><td><p>L</p></td><td><p>$5</p></td></tr></table>")
    assert [(b.kind, b.text) for b in doc.blocks] == [("table", "| Size | Price |\n|---|---|\n| L | $5 |")]


# The shape of a page Sphinx writes (Python's own documentation): chrome marked by role, content in
# <div role="main">, permalinks, inline <code><span> markup, admonitions, footnotes in <aside>.
SPHINX = """<html><head><title>Sorting HOW TO &#8212; Python 3.11 documentation</title></head><body>
<div class="related" role="navigation"><h3>Navigation</h3><ul><li><a href="x">next</a></li></ul></div>
<div class="document"><div class="body" role="main">
<h1>Sorting HOW TO<a class="headerlink" href="#s" title="Permalink">¶</a></h1>
<p>Call <code class="docutils literal"><span class="pre">f.read(size)</span></code>, then <code>list.<span>sort</span>()</code>.<br>Next line.</p>
<div class="admonition note"><p class="admonition-title">Note</p><p>JSON files must be UTF-8.</p></div>
<ul><li><p>Use a key function:</p><div class="highlight"><pre>&gt;&gt;&gt; sorted(students, key=grades.__getitem__)
['jane', 'dave']</pre></div></li></ul>
<dl><dt>key</dt><dd><p>A function of one argument:</p><pre>key=str.lower</pre></dd></dl>
<p class="rubric">Footnotes</p>
<aside class="footnote brackets" id="id2" role="note">
<span class="label"><span class="fn-bracket">[</span><a href="#id1">1</a><span class="fn-bracket">]</span></span>
<p>Module objects have a secret attribute.</p></aside>
</div></div>
<div class="sphinxsidebar" role="navigation"><h3>This Page</h3><ul><li><a href="b">Report a Bug</a></li></ul>
<div role="search"><h3>Quick search</h3></div></div>
<div class="footer">&#169; Copyright 2001-2023. Created using Sphinx.</div>
</body></html>
"""


def test_a_sphinx_page_reads_as_its_content(tmp_path):
    doc = load(tmp_path, "sorting.html", SPHINX)
    assert doc.title == "Sorting HOW TO"  # the <h1>, not the site's name after it
    assert [(b.kind, b.text, b.start) for b in doc.blocks] == [
        ("heading", "Sorting HOW TO", 4),
        ("para", "Call f.read(size), then list.sort(). Next line.", 5),
        ("para", "Note: JSON files must be UTF-8.", 6),
        ("para", "- Use a key function:", 7),  # an item that shows code keeps its bullet
        ("code", "```\n>>> sorted(students, key=grades.__getitem__)\n['jane', 'dave']\n```", 7),
        ("para", "key: A function of one argument:", 9), ("code", "```\nkey=str.lower\n```", 9),
        ("heading", "Footnotes", 10),
        ("para", "[1] Module objects have a secret attribute.", 13)]
    # Nothing of the navigation bar, sidebar, search box or footer is read.
    assert not any(w in b.text for b in doc.blocks for w in ("Navigation", "Report a Bug", "search", "Sphinx"))
    # Without a main part the body is read, and what a role marks as chrome is still not.
    page = ('<html><body><div role="navigation">Home | Next topic</div><p>Body text.</p>'
            '<div role="search">Quick search</div><div role="contentinfo">Copyright</div></body></html>')
    assert [b.text for b in load(tmp_path, "plain.html", page).blocks] == ["Body text."]


def test_a_pdf_manual_reads_as_its_sections_without_its_running_heads_and_contents(tmp_path):
    # The shape of R's manuals (TeX): a contents page of dot leaders, running heads carrying the printed
    # page number, section headings the bookmarks name (without their numbers), console sessions.
    from citebot.index import chunker

    from conftest import tiny_pdf
    pages = [["Table of Contents", "1 Introduction . . . . . . . . . . 1", "1.1 Getting help . . . . . . . . 1",
              "2 Vectors . . . . . . . . . . . . . 2"],
             ["Chapter 1: Introduction 1", "1 Introduction", "R is a language.", "1.1 Getting help",
              "R has an inbuilt help facility. To get help on solve, the command is",
              "> help(solve)", "+ # continued", "An alternative is to see https://cran.",
              "R-project.org/manuals for more.", "1 more thing: R is free."],
             ["2 Chapter 2: Vectors", "2 Vectors", "Vectors hold numbers.", "$ 5 a month buys support.", "$ R CMD INSTALL pkg",
              "> Thanks for the manual.", "Northwind Manual - page 3 of 9"]]
    path = tiny_pdf(tmp_path / "m.pdf", pages, outline=[("Introduction", 1, [("Getting help", 1)]),
                                                        ("Vectors", 2, [])],
                    labels="0 << /S /r >> 1 << /S /D >>")
    doc = documents.load(path, "m.pdf")
    assert doc.title == "m"  # no /Title: the file name, not the first bookmark
    assert [(b.kind, b.text, b.page, b.start, b.level) for b in doc.blocks] == [
        ("heading", "1 Introduction", 2, 2, 1), ("para", "R is a language.", 2, 3, 0),
        ("heading", "1.1 Getting help", 2, 4, 2),
        ("para", "R has an inbuilt help facility. To get help on solve, the command is", 2, 5, 0),
        ("code", "```\n> help(solve)\n+ # continued\n```", 2, 6, 0),
        ("para", "An alternative is to see https://cran.R-project.org/manuals for more.", 2, 8, 0),
        ("para", "1 more thing: R is free.", 2, 10, 0),  # starts with the page's number, but a sentence
        ("heading", "2 Vectors", 3, 2, 1),
        ("para", "Vectors hold numbers. $ 5 a month buys support.", 3, 3, 0),
        ("code", "```\n$ R CMD INSTALL pkg\n```", 3, 5, 0), ("para", "> Thanks for the manual.", 3, 6, 0)]
    # Each chunk's heading path is the manual's sections.
    assert [c.headings for c in chunker.chunk_document(doc, 220)] == [
        ("1 Introduction",), ("1 Introduction", "1.1 Getting help"), ("2 Vectors",)]



BACKUP_PAGES = [["Jobs run at night.", "Each job is small.",
                 "Backups run nightly. The archive is written to a file called .RDump5 in the",
                 "current folder, and the log of each run is kept for",
                 "5 The leading dot hides the file in",
                 "listings."],
                ["thirty days before it is deleted.", "Restores take an hour."],
                ["See https://example.org/pub/.", "Please write to us.", "Keys are rotated weekly."]]


def test_a_paragraph_a_pdf_page_break_cuts_is_one_and_its_footnotes_come_apart(tmp_path):
    # A quarter of R's manuals' page breaks fall inside a sentence; read page by page, an answer
    # quoted half of it, and the footnote at the page's foot ran into the half on the next page.
    from citebot.index import chunker

    from conftest import tiny_pdf
    doc = documents.load(tiny_pdf(tmp_path / "b.pdf", BACKUP_PAGES), "b.pdf")
    assert [(b.text, b.page, b.start, b.end, b.end_page) for b in doc.blocks] == [
        ("Jobs run at night.", 1, 1, 1, None), ("Each job is small.", 1, 2, 2, None),
        ("Backups run nightly. The archive is written to a file called .RDump in the current folder, and the log "
         "of each run is kept for thirty days before it is deleted.", 1, 3, 1, 2),  # its marker "5" is gone
        ("Footnote 5: The leading dot hides the file in listings.", 1, 5, 6, None),
        ("Restores take an hour.", 2, 2, 2, None),  # a sentence ended the page: no run-on
        ("See https://example.org/pub/.", 3, 1, 1, None),  # an address that ends a sentence ends it
        ("Please write to us.", 3, 2, 2, None), ("Keys are rotated weekly.", 3, 3, 3, None)]
    assert [c.location for c in chunker.chunk_document(doc, 200)] == [
        "b.pdf, p. 1, line 1 to p. 2, line 1", "b.pdf, p. 1, lines 5-6", "b.pdf, p. 2, line 2", "b.pdf, p. 3, lines 1-3"]
    # A number opening a line of code is no footnote, though "x^2" and "word2" sit above it.
    doc = documents.load(tiny_pdf(tmp_path / "c.pdf", [["Differentiate with D. Version2 is", "newer.",
                                                         "R> D(expression(x^2), x)", "2 * x"]]), "c.pdf")
    assert not any(b.text.startswith("Footnote") for b in doc.blocks)


def test_a_long_pdf_paragraphs_pieces_cite_their_own_lines(tmp_path):
    # A PDF paragraph's lines are joined with spaces, so each piece of one too long for a chunk cited
    # the whole paragraph (226 of 744 chunks of five LaTeX manuals shared a range, 51 spanned 25+ lines).
    from citebot.index import chunker

    from conftest import tiny_pdf
    pages = [["Alpha one is first. Beta two", "is second. Gamma three is", "third. Delta four is fourth",
              "and last. Epsilon five"], ["is fifth."]]
    doc = documents.load(tiny_pdf(tmp_path / "d.pdf", pages), "d.pdf")
    # "Alpha one is first. Beta two" is 28 long: the second line begins at 29, after the space
    assert doc.blocks[0].marks == ((0, 1, 1), (29, 1, 2), (55, 1, 3), (83, 1, 4), (106, 2, 1))
    assert [(c.location, c.text) for c in chunker.chunk_document(doc, 8)] == [
        ("d.pdf, p. 1, line 1", "Alpha one is first."), ("d.pdf, p. 1, lines 1-2", "Beta two is second."),
        ("d.pdf, p. 1, lines 2-3", "Gamma three is third."), ("d.pdf, p. 1, lines 3-4", "Delta four is fourth and last."),
        ("d.pdf, p. 1, line 4 to p. 2, line 1", "Epsilon five is fifth.")]
    # a word broken at a line end begins its line where the hyphen was
    doc = documents.load(tiny_pdf(tmp_path / "e.pdf", [["Alpha one is first. Beta two is sec-", "ond."]]), "e.pdf")
    assert doc.blocks[0].marks == ((0, 1, 1), (35, 1, 2))  # "Alpha one is first. Beta two is sec" is 35 long
    assert [c.location for c in chunker.chunk_document(doc, 8)] == ["e.pdf, p. 1, line 1", "e.pdf, p. 1, lines 1-2"]

def test_a_latex_manuals_headings_are_found_as_it_prints_them_and_its_index_is_not_read(tmp_path):
    # LaTeX prints a bookmark's title with other quotes, capitals and spaces, over two lines, with a
    # footnote's mark after it: 31 of hyperref's, clsguide's and usrguide's 238 headings were missed,
    # and their sections filed under the one before.
    from conftest import tiny_pdf
    page = ["2.2 Using 'doc'", "Text about doc.", "3 Creating document commands and environ-", "ments",
            "Commands are made so.", "4 Hints7", "Some hints.", "5 LATEX 2e notes", "Notes here."]
    outline = [("2.2 Using `doc'", 0, []), ("3 Creating document commands and environments", 0, []),
               ("4 Hints", 0, []), ("5 LaTeX2e notes", 0, [])]
    index = ["Index", "alpha, 3", "beta option, 4, 7", "gamma, 2-5", "delta"]
    doc = documents.load(tiny_pdf(tmp_path / "g.pdf", [page, index], outline=outline), "g.pdf")
    assert [(b.kind, b.text, b.start, b.end) for b in doc.blocks] == [
        ("heading", "2.2 Using ’doc’", 1, 1), ("para", "Text about doc.", 2, 2),  # (Helvetica's ' reads ’)
        ("heading", "3 Creating document commands and environments", 3, 4), ("para", "Commands are made so.", 5, 5),
        ("heading", "4 Hints", 6, 6), ("para", "Some hints.", 7, 7),
        ("heading", "5 LATEX 2e notes", 8, 8), ("para", "Notes here.", 9, 9)]  # page 2, an index, is not read
    # Words the text ran together read as the bookmark has them.
    run = ["4 Preconstructingcommandnames(orotherwise", "expanding arguments)", "Text."]
    doc = documents.load(tiny_pdf(tmp_path / "r.pdf", [run], outline=[
        ("4 Preconstructing command names (or otherwise expanding arguments)", 0, [])]), "r.pdf")
    assert doc.blocks[0].text == "4 Preconstructing command names (or otherwise expanding arguments)"
    # A numbered heading low on a page, with its number glued to a word above, is no footnote.
    low = ["Text with note4 here.", "More text.", "Even more.", "4 Interfaces for authors", "Body of four."]
    doc = documents.load(tiny_pdf(tmp_path / "h.pdf", [low], outline=[("4 Interfaces for authors", 0, [])]), "h.pdf")
    assert [b.text for b in doc.blocks if b.kind == "heading"] == ["4 Interfaces for authors"]
    assert not any(b.text.startswith("Footnote") for b in doc.blocks)
    # Ligatures read as their letters, a math font's control characters as nothing.
    assert "speciﬁed \x00ﬂow".translate(documents._PDF_CHARS) == "specified flow"

def test_a_citation_of_a_paragraph_over_a_page_break_names_both_pages(tmp_path, embedder):
    from citebot.chat import render
    from citebot.engine import Engine
    from citebot.index.store import open_index
    from citebot.search.models import Models

    from conftest import tiny_pdf
    folder = tmp_path / "docs"
    folder.mkdir()
    tiny_pdf(folder / "b.pdf", BACKUP_PAGES)
    cfg = Config(index=str(tmp_path / "idx"), embed_model="packaged", use_gate=False)
    ingest(folder, cfg, embedder=embedder, log=lambda m: None)
    turn = Engine(open_index(cfg), cfg, Models(embedder)).ask("how long is the log of each run kept?")
    assert "thirty days" in turn.answer
    first = turn.citations[0]
    assert (first["page"], first["lines"], first["end_page"]) == (1, [1, 1], 2)
    assert "b.pdf, p. 1, line 1 to p. 2, line 1" in render.sources_text(turn)
    assert "b.pdf p. 1:1-p. 2:1" in render.why_text(turn)
    assert render.trace(turn)["chunks"][0]["end_page"] == 2

DOCBOOK = """<html><head><title>8.1.\u00a0Numeric Types</title></head><body>
<div class="navheader"><table width="100%"><tr><th colspan="5">8.1.\u00a0Numeric Types</th></tr>
<tr><td><a href="p.html">Prev</a></td><td><a href="u.html">Up</a></td><th>Chapter 8. Data Types</th>
<td><a href="h.html">Home</a></td><td><a href="n.html">Next</a></td></tr></table><hr></div>
<div class="sect1"><h2 class="title">8.1.\u00a0Numeric Types</h2>
<div class="toc"><dl><dt>8.1.1. Integer Types</dt><dt>8.1.2. Arbitrary Precision Numbers</dt></dl></div>
<div class="table"><p class="title"><strong>Table 8.2. Numeric Types</strong></p><div class="table-contents">
<table><tr><th>Name</th><th>Storage Size</th></tr><tr><td>bigint</td><td>8 bytes</td></tr></table></div></div>
<div class="note"><h3 class="title">Note</h3><p>The maximum precision is 1000.</p></div>
<p>Integers hold whole numbers.</p>
<ol start="3"><li><p>Create the table.</p></li><li><p>Load the rows.</p></li></ol>
</div><div class="navfooter"><table><tr><td>Prev</td><td>Home</td><td>Next</td></tr></table></div>
</body></html>
"""

ASCIIDOC = """<html><head><title>git-stash(1)</title></head><body>
<div id="header"><h1>git-stash(1) Manual Page</h1></div>
<div id="content"><div class="dlist"><dl>
<dt class="hdlist1">-u</dt><dt class="hdlist1">--include-untracked</dt><dt class="hdlist1">--no-include-untracked</dt>
<dd><p>All untracked files are also stashed.</p></dd>
<dt class="hdlist1">--keep-index.</dt><dd><p>Changes already added are left intact.</p></dd></dl></div>
<div class="admonitionblock"><table><tr><td class="icon"><div class="title">Note</div></td>
<td class="content">ORIG_HEAD is not guaranteed to point to the old tip.</td></tr></table></div></div>
<div id="footer"><div id="footer-text">Last updated 2024-05-31</div></div>
</body></html>
"""


TEXT_MANUAL = """Backup guide
============

Backups run nightly.

==============================
*02.1*\tRestoring files\t\t*restore*

Restores take an hour.

DISCARDING CHANGES

Use the revert command.

# not a heading

NOTE: KEEP A COPY.

中文的标题

See the list:
- item one
"""


def test_a_plain_text_manuals_titles_are_headings(tmp_path):
    # Vim's manual had no heading on any of its 372 chunks: a title under a rule, one underlined, one
    # in capitals are what plain text has for headings ('#' there is text, as before).
    doc = load(tmp_path, "guide.txt", TEXT_MANUAL)
    assert [(b.kind, b.text, b.start, b.end, b.level) for b in doc.blocks] == [
        ("heading", "Backup guide", 1, 2, 1), ("para", "Backups run nightly.", 4, 4, 0),
        ("heading", "02.1 Restoring files", 6, 7, 1), ("para", "Restores take an hour.", 9, 9, 0),
        ("heading", "DISCARDING CHANGES", 11, 11, 3), ("para", "Use the revert command.", 13, 13, 0),
        ("para", "# not a heading", 15, 15, 0), ("para", "NOTE: KEEP A COPY.", 17, 17, 0),  # a sentence
        ("para", "中文的标题", 19, 19, 0),  # no capitals in a script without case
        ("para", "See the list:\n- item one", 21, 22, 0)]
    assert [c.headings for c in chunker.chunk_document(doc, 200)][-1] == ("02.1 Restoring files", "DISCARDING CHANGES")
    # The title stays the first line: a section's title is no document's (every citation of Vim's
    # usr_08 read "08.1 Split a window"); an indented line in capitals is an example, not a title.
    doc = load(tmp_path, "v.txt", "usr_08 For Vim 9.0\n\n==========\n*08.1*\tSplit a window\n\nText.\n\n"
                                  "\tCTRL-W +\n\nMore text.\n")
    assert doc.title == "usr_08 For Vim 9.0"
    assert [(b.kind, b.text) for b in doc.blocks if b.kind == "heading"] == [("heading", "08.1 Split a window")]
    assert [c.headings for c in chunker.chunk_document(doc, 200)] == [(), ("08.1 Split a window",)]
    # A line that opens with "|" is a table row only when it closes with one (Vim's links cut sentences).
    doc = load(tmp_path, "l.txt", "See the list in\n|usr_30.txt|, for information.\n\n| a | b |\n| 1 | 2 |\n"
                                  "|x.txt|, for more.\n")
    assert [(b.kind, b.text) for b in doc.blocks] == [
        ("para", "See the list in\n|usr_30.txt|, for information."), ("table", "| a | b |\n| 1 | 2 |"),
        ("para", "|x.txt|, for more.")]
    doc = load(tmp_path, "o.txt", "--------\nOverview\n--------\n\nText here.\n")  # over- and underlined
    assert [(b.kind, b.text, b.start, b.end, b.level) for b in doc.blocks] == [
        ("heading", "Overview", 1, 3, 2), ("para", "Text here.", 5, 5, 0)]

MDBOOK = """<html><head><title>What is Ownership? - The Rust Programming Language</title></head><body>
<div id="menu-bar"><h1 class="menu-title">The Rust Programming Language</h1></div>
<main><h2 id="x"><a class="header" href="#x">What Is Ownership?</a></h2>
<p>An i8 holds -(2<sup>n - 1</sup>) to 2<sup>7</sup> - 1.</p>
<p>It hashes with SipHash<sup class="footnote-reference"><a href="#siphash">1</a></sup>.</p>
<pre><code class="language-rust"><span class="boring">fn main() {
</span>let x = 5;
<span class="boring">}
</span></code></pre>
</main></body></html>
"""


def test_an_mdbook_page_reads_as_it_shows(tmp_path):
    # The Rust book: "2n - 1" was quoted as an i8's range, "SipHash1" as a word, the hidden
    # "fn main() {" around every example as its code, and every citation ended in the site's name.
    doc = load(tmp_path, "own.html", MDBOOK)
    assert doc.title == "What Is Ownership?"  # the heading, not "... - The Rust Programming Language"
    assert [b.text for b in doc.blocks if b.kind != "heading"] == [
        "An i8 holds -(2^(n - 1)) to 2^7 - 1.", "It hashes with SipHash.", "```\nlet x = 5;\n```"]
    # The heading that is the title is not repeated in every chunk's heading path.
    assert [c.headings for c in chunker.chunk_document(doc, 200)] == [()]

def test_docbook_and_asciidoc_pages_read_as_their_content(tmp_path):
    doc = load(tmp_path, "numeric.html", DOCBOOK)
    assert doc.title == "8.1. Numeric Types"  # a no-break space is a space
    assert [b.text for b in doc.blocks] == [
        "8.1. Numeric Types", "Table 8.2. Numeric Types", "| Name | Storage Size |\n|---|---|\n| bigint | 8 bytes |",
        "Note: The maximum precision is 1000.", "Integers hold whole numbers.",
        "3. Create the table.\n4. Load the rows."]
    # A title above a table that does not fit starts the table's chunk with it.
    chunks = chunker.chunk_document(load(tmp_path, "n2.html", DOCBOOK.replace(
        '<div class="table">', "<p>" + "Numbers are stored in binary. " * 6 + '</p><div class="table">')), 60)
    assert any(c.text.startswith("Table 8.2. Numeric Types\n\n| Name |") for c in chunks)
    doc = load(tmp_path, "stash.html", ASCIIDOC)
    assert [b.text for b in doc.blocks] == [
        "git-stash(1) Manual Page",
        "-u, --include-untracked, --no-include-untracked: All untracked files are also stashed.",
        "--keep-index. Changes already added are left intact.",
        "Note: ORIG_HEAD is not guaranteed to point to the old tip."]
    # A long HTML table split into pieces: its rows are not source lines, so each piece cites the table.
    rows = "".join(f"<tr><td>type{i}</td><td>{i} bytes of storage for this type</td></tr>" for i in range(40))
    page = f"<html><body><p>Intro.</p>\n<table><tr><th>Name</th><th>Size</th></tr>{rows}</table>\n<p>After.</p></body></html>"
    pieces = [c for c in chunker.chunk_document(load(tmp_path, "big.html", page), 120) if "| Name |" in c.text]
    assert len(pieces) > 2 and all(c.start <= 2 <= c.end <= 3 for c in pieces)


def test_an_unclosed_paragraph_ends_at_the_next_block_as_a_browser_ends_it(tmp_path):
    # SQLite's pages never close <p>: html.parser nested the rest of the page in the first one,
    # headings and code read as one run-on paragraph cited "lines 308-2107".
    page = ("<html><body>\n<h1>Mini page</h1>\n<p>Intro never closed.\n<h2>Saving</h2>\n"
            "<pre>int main(){\n  return 0;\n}</pre>\n<p>Closing text.\n</body></html>")
    doc = load(tmp_path, "a.html", page)
    assert [(b.kind, b.text, b.start) for b in doc.blocks] == [
        ("heading", "Mini page", 2), ("para", "Intro never closed.", 3), ("heading", "Saving", 4),
        ("code", "```\nint main(){\n  return 0;\n}\n```", 5), ("para", "Closing text.", 8)]


def test_what_a_browser_does_not_show_as_text_is_not_read(tmp_path):
    page = ('<html><body><p>The pager spills dirty pages.</p>'
            '<h _id=pragma_cache_spill style="display: none"> PRAGMA cache_spill</h>'
            '<p>Syntax: <button onclick="toggle()">show</button></p><div hidden>Old menu</div>'
            '<p>Press <button>Return</button> to start.</p>'
            '<div role="tabpanel" hidden>pip install x</div><div style="display:none"><p>Linux: run it.</p></div>'
            '</body></html>')
    # a hidden panel (a tab, an accordion) is read: a click shows it
    assert [b.text for b in load(tmp_path, "a.html", page).blocks] == [
        "The pager spills dirty pages.", "Syntax:", "Press Return to start.", "pip install x", "Linux: run it."]


def test_a_box_of_nothing_but_links_is_a_menu_and_a_few_links_in_text_are_read(tmp_path):
    menu = "".join(f'<li><a href="p{i}.html">Page {i}</a></li>' for i in range(5))
    page = (f'<html><body><ul class="menu">{menu}</ul>'
            '<ul><li><a href="a.html">Install</a> the package first.</li>'
            + "".join(f'<li><a href="s{i}.html">Step {i}</a></li>' for i in range(4)) + '</ul>'
            '<p>See <a href="a">A</a>, <a href="b">B</a>, <a href="c">C</a>, <a href="d">D</a>.</p></body></html>')
    text = [b.text for b in load(tmp_path, "a.html", page).blocks]
    assert not any("Page" in t for t in text)
    assert text == ["- Install the package first.\n- Step 0\n- Step 1\n- Step 2\n- Step 3", "See A, B, C, D."]


def test_an_item_that_goes_on_after_its_own_list_is_read_in_order(tmp_path):
    page = ("<html><body><ol><li><p>The datatype must be one of:</p><ul><li>INT</li><li>TEXT</li></ul>"
            "<p>No other names are allowed.</p></li><li>Second rule.</li></ol></body></html>")
    text = "\n".join(b.text for b in load(tmp_path, "a.html", page).blocks)
    assert text.index("must be one of:") < text.index("- INT") < text.index("- TEXT") \
        < text.index("No other names") < text.index("2. Second rule.")


def test_an_xhtml_page_is_read_as_html_without_a_warning(tmp_path):
    import warnings

    # Git's AsciiDoc pages: html5lib printed a ten-line XMLParsedAsHTMLWarning for each during an ingest
    page = ('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN"\n'
            '    "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">\n'
            '<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en">\n<head>\n<title>git-stash(1)</title>\n'
            '</head><body><p>Stash the changes.</p></body>')  # (no closing html tag: bs4 warns then)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        doc = load(tmp_path, "a.html", page)
    assert [b.text for b in doc.blocks] == ["Stash the changes."]
    assert [type(w.message).__name__ for w in seen if "XML" in type(w.message).__name__] == []

"""AsciiDoc (Git's manual pages, often named .txt) read as the Markdown it renders like."""
from pathlib import Path

from citebot.index import asciidoc, documents
from citebot.index.chunker import chunk_document

PAGE = """git-clean(1)
============

NAME
----
git-clean - Remove untracked files from the working tree

OPTIONS
-------
-n::
--dry-run::
\tDon't actually remove anything, just show what would be done.
+
See linkgit:git-config[1] and 'git clean' {litdd}help.

Make `.ps` files binary:

----
*.ps -diff
----

include::includes/cmd-config-section-all.txt[]

[NOTE]
Ignored files stay.

// a comment
.An example
  $ git clean -n
"""


def test_an_asciidoc_page_reads_as_the_markdown_it_renders_like_line_for_line():
    lines = PAGE.split("\n")
    md = asciidoc.to_markdown(lines)
    assert len(md) == len(lines)  # citations keep their source lines
    assert md[0] == "# git-clean(1)" and md[3] == "## NAME" and md[7] == "## OPTIONS"
    assert md[9:14] == ["", "", "- -n, --dry-run: Don't actually remove anything, just show what would be done.", "",
                        "  See git-config(1) and git clean --help."]
    assert md[17:20] == ["```", "*.ps -diff", "```"]  # a one-line listing is code, not a title
    assert md[21] == md[23] == "" and md[24] == "Note: Ignored files stay."
    assert md[26] == "" and md[27] == "An example:" and md[28] == "      $ git clean -n"


def test_a_txt_file_in_asciidoc_is_read_as_asciidoc_and_its_meaning_stays_with_its_term(tmp_path):
    p = tmp_path / "git-clean.txt"
    p.write_text(PAGE, encoding="utf-8")
    doc = documents.load(p, p.name)
    assert doc.meta["title"] == "git-clean(1)"
    blocks = [(b.kind, b.text) for b in doc.blocks]
    assert ("heading", "OPTIONS") in blocks
    assert ("code", "```\n*.ps -diff\n```") in blocks
    assert any(k != "heading" and t.startswith("- -n, --dry-run: Don't actually remove anything") for k, t in blocks)
    assert ("para", "See git-config(1) and git clean --help.") in blocks
    text = "\n".join(c.text for c in chunk_document(doc, 220))
    assert "linkgit" not in text and "include::" not in text and "----" not in text and "//" not in text


def test_an_adoc_file_is_read_and_plain_text_with_double_colons_is_not_asciidoc(tmp_path):
    p = tmp_path / "guide.adoc"
    p.write_text("= Guide\n\n== Install\n\nRun the installer.\n", encoding="utf-8")
    assert [(b.kind, b.text) for b in documents.load(p, p.name).blocks] == [
        ("heading", "Guide"), ("heading", "Install"), ("para", "Run the installer.")]
    # reStructuredText writes "::" and rules too; without a macro, attribute line or "= Title" it is plain text
    rst = ["Usage", "=====", "", "Run it like this::", "", "    tool --go", "", "Options::", "", "----", "", "Done."]
    assert not asciidoc.looks_like(rst)
    assert asciidoc.looks_like(PAGE.split("\n"))
    # a page that writes nothing but macros, on two lines at least (gitformat-chunk.txt)
    assert asciidoc.looks_like(["Used by linkgit:gitformat-pack[5].", "", "See linkgit:git-gc[1]."])
    assert not asciidoc.looks_like(["Used by linkgit:gitformat-pack[5].", "", "See the manual."])
    assert not asciidoc.looks_like(Path(__file__).read_text().split("\n")[:3])


def test_only_listings_hold_their_lines_and_a_title_opens_a_block():
    lines = ["[NOTE]", "====", "Instead, do this:", "----", "\tmemset(&opt, 0, 1);", "----",
             "Done.", "====", "",
             "[[def_branch]]<<def_branch,branch>>::", "\tSee linkgit:git-web{litdd}browse[1].", "+", "--",
             "The mode is optional.", "--"]
    md = asciidoc.to_markdown(lines)
    assert len(md) == len(lines)
    # the example block's text is read (its [NOTE] says so) with the listing inside it as code;
    # "Done." over "====" (as long, give or take one) is a paragraph's last line, not a title
    assert md[:9] == ["", "", "Note: Instead, do this:", "```", "\tmemset(&opt, 0, 1);", "```",
                      "Done.", "", ""]
    # an anchor before a term says nothing; {litdd} is read before the macro it sits in; "--" is an
    # open block, text, not a listing
    assert md[9:] == ["", "- branch: See git-web--browse(1).", "", "", "  The mode is optional.", ""]


TABLES = """= Options

.Verbosity
[cols="1,2",options="header"]
|===
|Name |Meaning
|verbose
|Say more.
It goes on.

2+|A row across
|quiet |Say less \\| nothing.
|===

|===
|Key |Value

|a |1
|===
"""


def test_a_table_reads_as_a_table_each_row_on_the_line_it_starts_on(tmp_path):
    # Read as text, "|format |size |avg entry" (Git's reftable page) was a table with no header, and a
    # cell written over two lines two rows.
    lines = TABLES.split("\n")
    assert asciidoc.to_markdown(lines)[3:20] == [
        "", "| Name | Meaning |", "|---|---|",  # the header on the "|===" line: no line is free for the rule
        "| verbose | Say more. It goes on. |", "|---|---|", "|---|---|", "|---|---|",  # the row's other lines
        "| A row across |  |", "| quiet | Say less \\| nothing. |", "", "",
        "", "| Key | Value |", "|---|---|", "| a | 1 |", "", ""]  # a first line alone is the header
    path = tmp_path / "t.adoc"
    path.write_text(TABLES, encoding="utf-8")
    tables = [b for b in documents.load(path, "t.adoc").blocks if b.kind == "table"]
    assert [(b.start, b.end) for b in tables] == [(5, 12), (16, 18)]
    chunks = chunk_document(documents.load(path, "t.adoc"), 220)
    # rule rows between rows are no text; each row keeps its line
    assert "| verbose | Say more. It goes on. |\n| A row across |  |" in chunks[0].text
    assert asciidoc._columns('cols="2*,1"', 1) == 3 and asciidoc._columns("cols=3*", 1) == 3
    assert asciidoc._columns("", 4) == 4


ODD_TABLES = {  # what a review found: each read one line per line, and without an error
    "bare cols": '[cols=3]\n|===\n|a |b |c\n|d |e |f\n|===',
    "two rows on a line": '[cols="2*"]\n|===\n|a|b|c|d\n|===',
    "semicolons": '[cols="1;1"]\n|===\n|a |b\n|c |d\n|===',
    "a header and no rows": '[%header]\n|===\n|a|b\n|===',
    "no columns": '[cols="0*"]\n|===\n|a\n|===',
    "csv": '[format=csv]\n|===\nArtist,Track\nBaauer,Harlem Shake\n|===',
    "unclosed": '|===\n|a |b',
}


def test_odd_tables_keep_one_line_for_each_line_and_their_text():
    for name, text in ODD_TABLES.items():
        lines = text.split("\n")
        out = asciidoc.to_markdown(lines)
        assert len(out) == len(lines), name
    # three columns from a bare count, two from "1;1"
    assert asciidoc.to_markdown(ODD_TABLES["bare cols"].split("\n"))[2:4] == ["| a | b | c |", "| d | e | f |"]
    assert asciidoc._columns('cols="1;1"', 1) == 2 and asciidoc._columns('cols="0*"', 1) == 1
    # a CSV table, and two rows on one line, read as text, as before (no table loses its words)
    assert "Baauer,Harlem Shake" in asciidoc.to_markdown(ODD_TABLES["csv"].split("\n"))
    assert "|a|b|c|d" in asciidoc.to_markdown(ODD_TABLES["two rows on a line"].split("\n"))


def test_a_one_letter_cell_is_text_and_a_headerless_tables_rows_keep_their_lines():
    # "s" before "|" after whitespace would style the next cell; at a cell's start it is the cell.
    lines = ["[[http-headers]]", "|===", "|s|seconds", "|m|minutes", "|==="]
    out = asciidoc.to_markdown(lines)
    # no header ("headers" in an anchor says nothing): an empty one above "|===" and its rule on it
    assert out == ["|  |  |", "|---|---|", "| s | seconds |", "| m | minutes |", ""]

"""Documentation markup read as the rendered page (index/markdown.py)."""
import pytest

from citebot.answer.extractive import chunk_units
from citebot.index import chunker, documents, markdown

from conftest import write


def test_admonitions_become_labelled_text_and_closers_vanish():
    lines = ["/// tip", "", "Use **Annotated**.", "", "///", "/// note | Technical Details", "Starlette does it.",
             "///", '!!! warning "Careful"', "    Do not.", "/// info", "```", "x = 1", "```", "///"]
    out = markdown.clean(lines)
    assert len(out) == len(lines)  # line numbers keep pointing at the source
    assert out[:5] == ["", "", "Tip: Use **Annotated**.", "", ""]
    assert out[5:8] == ["", "Note (Technical Details): Starlette does it.", ""]
    assert out[8:10] == ["", "Warning (Careful): Do not."]  # (its body at the marker's indent)
    assert out[10:] == ["Info:", "```", "x = 1", "```", ""]  # a block opening with code: the label on its own line
    # The answerer knows each labelled line opens an aside (it does not run a quote into one).
    assert [bool(markdown.ASIDE.match(x.strip())) for x in out if x.strip()] == [True, True, True] + [False] * 4
    assert markdown.ASIDE.match("Note (注意)： 中文") and not markdown.ASIDE.match("Notes: plain text")


def test_includes_comments_and_anchors_are_dropped():
    lines = ["{* ../../docs_src/app/tutorial001.py hl[3] *}", "--8<-- \"snippet.md\"", "keep <!-- gone --> this",
             "<!-- start", "still comment", "end -->after"]
    assert markdown.clean(lines) == ["", "", "keep  this", "", "", "after"]
    assert markdown.strip_anchor("Query Parameters { #query-parameters }") == "Query Parameters"
    assert markdown.strip_anchor("Sets {1, 2}") == "Sets {1, 2}"


def test_inline_html_reads_as_its_text_but_code_stays_as_written():
    assert markdown.strip_html('An <abbr title="Asynchronous Server Gateway Interface">ASGI</abbr> app') == "An ASGI app"
    assert markdown.strip_html("<td>name</td><td>str</td>") == " name  str ".replace("  ", " ")
    assert markdown.strip_html("write `<b>bold</b>` and <b>bold</b>") == "write `<b>bold</b>` and bold"
    assert markdown.strip_html("pin fastapi>=0.112.0,<0.113.0 or <your-app>") == "pin fastapi>=0.112.0,<0.113.0 or <your-app>"
    code = ["```html", "<div>kept</div>", "```"]
    assert markdown.clean(code) == code


def test_a_documentation_page_chunks_into_clean_text(tmp_path):
    page = ("# Metadata { #metadata }\n\nYou can set the <b>title</b>.\n\n{* ../../docs_src/meta.py *}\n\n"
            "/// tip\n\nWrite Markdown in the description.\n\n///\n\n## Tags { #tags }\n\nUse tags.\n")
    doc = documents.load(write(tmp_path / "meta.md", page), "meta.md")
    chunks = chunker.chunk_document(doc, 220)
    assert doc.title == "Metadata" and chunks[0].text == "You can set the title.\n\nTip: Write Markdown in the description."
    assert chunks[-1].headings == ("Tags",) and chunks[-1].text == "Use tags." and chunks[-1].start == 15


def test_a_first_heading_below_level_one_titles_the_page_only_when_it_heads_it(tmp_path):
    # pydantic-settings' page has no "#": its first "## Installation" was the title of all 183 chunks
    # (and a word of every chunk's searched text), and no section of its own.
    doc = documents.load(write(tmp_path / "index.md", "## Installation\n\nRun it.\n\n## Usage\n\nCall it.\n"), "index.md")
    assert doc.title == "index" and [c.headings for c in chunker.chunk_document(doc, 220)] == [
        ("Installation",), ("Usage",)]
    # An "##" over "###" sections alone heads the page, as a "#" does.
    doc = documents.load(write(tmp_path / "one.md", "## Only\n\nText.\n\n### Sub\n\nMore.\n"), "one.md")
    assert doc.title == "Only" and [c.headings for c in chunker.chunk_document(doc, 220)] == [(), ("Sub",)]


def test_attrs_and_pydantic_settings_pages_read_right(tmp_path):
    # attrs: a MyST "% comment" was indexed as text, the second of "{func}`a`/{func}`b`" stayed raw and
    # a footnote mark left "for you , however"; pydantic-settings: a fence's title="..." (the file the
    # code goes in, there the setting's name) was lost.
    assert markdown.clean(["% {func} syntax does not work here.", "", "- {func}`attrs.field`/{func}`attr.ib` and",
                           "  30", "% of users.", "", "a method for you [^fn1], however", "",
                           '``` title="/var/run/database_password"', "super_secret", "```"]) == [
        "", "", "- `attrs.field`/`attr.ib` and", "  30", "% of users.", "", "a method for you, however",
        "/var/run/database_password:", "```", "super_secret", "```"]
    # An admonition's body reads at its marker's indent: after "1. ..." the note at the margin ended the
    # list (it was read as the item's, and the item became the note's heading); one in an item stays in it.
    doc = documents.load(write(tmp_path / "n.md", "# Case\n\n1. Note that x is one.\n\n!!! note\n    On Windows"
                                                  " it differs.\n\n    ```py\n    import os\n    ```\n\n"
                                                  "- item\n\n    !!! tip\n        Inside.\n"), "n.md")
    assert [(b.text, b.item) for b in doc.blocks[1:]] == [
        ("1. Note that x is one.", ""), ("Note: On Windows it differs.", ""), ("```py\nimport os\n```", ""),
        ("- item", ""), ("Tip: Inside.", "item")]
    # A MyST glossary reads as rst's does, "- term: definition" with later paragraphs in the item: five
    # chunks of attrs' "slotted classes" never said so.
    doc = documents.load(write(tmp_path / "g.md", "# Glossary\n\n:::{glossary}\nslotted classes\n  A class with"
                                                  " no dict.\n\n  Less memory.\n\nfield\n  An attribute.\n:::\n"), "g.md")
    assert [(b.text, b.item) for b in doc.blocks[1:]] == [
        ("- slotted classes: A class with no dict.", ""), ("Less memory.", "slotted classes"),
        ("- field: An attribute.", "")]
    # ... with its definitions four in, as structlog's are: a later paragraph was read as code, roles raw
    doc = documents.load(write(tmp_path / "g4.md", "# Glossary\n\n:::{glossary}\nContext\n    A dictionary.\n"
                                                   "    Bound.\n\n    Made by {func}`bind`.\n    Never changed.\n:::\n"),
                         "g4.md")
    assert [(b.kind, b.text, b.item) for b in doc.blocks[1:]] == [
        ("para", "- Context: A dictionary.\n  Bound.", ""), ("para", "Made by `bind`.\nNever changed.", "Context")]
    # A session's doctest flags are not shown in MyST either (structlog's "  # doctest: +SKIP")
    doc = documents.load(write(tmp_path / "d.md", "# D\n\n```pycon\n>>> log.info('hi')  # doctest: +SKIP\n```\n\n"
                                                  "```python\nx = 1  # doctest: +SKIP is a comment here\n```\n"), "d.md")
    assert [b.text for b in doc.blocks[1:]] == ["```pycon\n>>> log.info('hi')\n```",
                                                "```python\nx = 1  # doctest: +SKIP is a comment here\n```"]
    # An escaped "#" opens no heading: "\# of workers" read as a heading of the chunks below it
    doc = documents.load(write(tmp_path / "h.md", "# H\n\n\\# of workers is the CPU count.\n\nText.\n"), "h.md")
    assert [(b.kind, b.text) for b in doc.blocks] == [("heading", "H"), ("para", "# of workers is the CPU count."),
                                                      ("para", "Text.")]
    # "``--help``" is the code span "`--help`" (Click's pages; a span that holds a backtick keeps its two)
    assert markdown.clean(["Pass ``--help`` or `` `x` ``.", "```", "``y``", "```"]) == [
        "Pass `--help` or `` `x` ``.", "```", "``y``", "```"]
    # A thematic break is no text: attrs' index page had a chunk that read "---".
    doc = documents.load(write(tmp_path / "i.md", "# Index\n\nText.\n\n---\n\n* * *\n\n## Next\n\nMore.\n"), "i.md")
    assert [b.text for b in doc.blocks] == ["Index", "Text.", "Next", "More."]


def test_pymdown_extensions_pages_read_right():
    # pymdown-extensions' own docs: 35 chunks held only ":octicons-file-code-24:{: .source-link }", 107 an
    # inline "`#!py3 False`", 81 an "Html (div.result):" label over a wrapper, and tab titles, callouts
    # and a block's "type: warning" option were read as text.
    lines = ["[:octicons-file-code-24:][_keys]{: .source-link }", "Default is `#!py3 False`, `{: .kept }`.",
             "/// html | div.result", "Shown.", "///", "/// admonition | Title", "    type: warning", "",
             "Content.", "///", "> [!new] New in 12.0", "> The text.", '=== "Tab 1"', "    In the tab.",
             "[Sponsors](https://x){: .md-button } :material-bug:"]
    assert markdown.clean(lines) == ["", "Default is `False`, `{: .kept }`.", "", "Shown.", "", "", "", "",
                                     "Admonition (Title): Content.", "", "", "New (New in 12.0): The text.", "",
                                     "Tab (Tab 1): In the tab.", "[Sponsors](https://x) "]


def test_a_fence_closes_only_on_a_run_as_long_with_nothing_after_it(tmp_path):
    text = ("# Guide\n\n````markdown\n```bash\n# install the tool\n```\n<b>kept</b>\n````\n\n"
            "```x``` is inline code, not a fence.\n\n## Later\n\nText.\n")
    doc = documents.load(write(tmp_path / "a.md", text), "a.md")
    code = [b for b in doc.blocks if b.kind == "code"]
    assert len(code) == 1 and (code[0].start, code[0].end) == (3, 8)
    assert "# install the tool" in code[0].text and "<b>kept</b>" in code[0].text
    assert [b.text for b in doc.blocks if b.kind == "heading"] == ["Guide", "Later"]
    assert any(b.text == "```x``` is inline code, not a fence." for b in doc.blocks)


def test_nested_blocks_labels_and_their_end():
    lines = ["//// tab | Python 3.10+", "", "Use `str | None`.", "", "////",
             "/// tip", "", "{* ../../docs_src/app.py *}", "", "///", "", "Unrelated paragraph.",
             "/// note", "", "| Key | Value |", "|---|---|", "| a | 1 |", "///",
             "!!! tip", "    * first item"]
    out = markdown.clean(lines)
    assert out[2] == "Tab (Python 3.10+): Use `str | None`." and out[4] == ""
    assert out[11] == "Unrelated paragraph."  # the tip held only an include: its label goes with it
    assert out[13:17] == ["Note:", "| Key | Value |", "|---|---|", "| a | 1 |"]  # the header row stays the header
    assert out[18:] == ["Tip:", "* first item"]
    assert len(out) == len(lines)


def test_html_in_markdown_reads_as_the_rendered_page():
    lines = ["<style>", ".x { color: red }", "</style>", '<script src="a.js"></script>Newsletter',
             '<button class="btn">Subscribe</button> now', "AT&amp;T &lt;5&gt; and `&amp;` in code",
             "<h2>Html heading</h2>", "::: fastapi.encoders.jsonable_encoder",
             "```python", "{!> ../../docs_src/app.py!}", "```"]
    out = markdown.clean(lines)
    assert out[:3] == ["", "", ""] and out[3] == "Newsletter"
    assert out[4] == "Subscribe now"
    assert out[5] == "AT&T <5> and `&amp;` in code"
    assert out[6] == "## Html heading" and out[7] == "" and out[8:] == ["", "", ""]


def test_atx_closing_hashes_need_a_space_and_setext_headings_are_headings(tmp_path):
    text = "## Learn C#\n\nText.\n\nSetup Guide\n===========\n\nMore.\n\nNext part\n---\n\n- item\n---\n"
    doc = documents.load(write(tmp_path / "a.md", text), "a.md")
    heads = [(b.text, b.level, b.start, b.end) for b in doc.blocks if b.kind == "heading"]
    assert heads == [("Learn C#", 2, 1, 1), ("Setup Guide", 1, 5, 6), ("Next part", 2, 10, 11)]


def test_a_comment_hides_a_fence_inside_it_and_inline_code_opens_no_comment():
    # A fence inside a comment was kept (and searchable); "`<!--`" in inline code hid the rest of the file.
    lines = ["Visible.", "<!--", "```", "INTERNALNOTE the admin password", "```", "-->", "After."]
    assert markdown.clean(lines) == ["Visible.", "", "", "", "", "", "After."]
    lines = ["Use `<!--` to open a comment.", "", "Run `python <script>.py` to start.", "Then <!-- x --> go."]
    assert markdown.clean(lines) == ["Use `<!--` to open a comment.", "", "Run `python <script>.py` to start.",
                                     "Then  go."]


def test_vitepress_containers_are_labelled_and_a_module_directive_is_dropped():
    lines = ["::: danger Never run DROPTABLE", "in production.", ":::", "::: tip", "Use it.", ":::", "::: pkg.mod"]
    assert markdown.clean(lines) == ["", "Danger (Never run DROPTABLE): in production.", "", "", "Tip: Use it.", "",
                                     ""]


def test_an_empty_comment_closes_at_once_and_hides_nothing_after_it():
    # "<!-->" and "<!--->" are whole comments (CommonMark, HTML): read as opening one, they hid the rest of the page.
    assert markdown.clean(["Intro.", "<!-->", "## Install", "Run it."]) == ["Intro.", "", "## Install", "Run it."]
    assert markdown.clean(["Intro <!---> text.", "After."]) == ["Intro  text.", "After."]


def test_an_html_comment_in_an_indented_code_block_is_code(tmp_path):
    lines = ["Put this in the template:", "", "    <!-- header -->", "    <!-- begin", "", "The page after it."]
    assert markdown.clean(lines) == lines
    admonition = ["!!! note", "", "    <!-- hidden -->", "    Shown."]  # an admonition's body is its text
    assert markdown.clean(admonition) == ["", "", "", "Note: Shown."]
    doc = documents.load(write(tmp_path / "t.md", "# T\n\nIntro.\n\n    <!-- begin\n\n## Next\n\nKept text.\n"), "t.md")
    assert [c.text for c in chunker.chunk_document(doc, 220)] == ["Intro.\n\n```\n<!-- begin\n```", "Kept text."]


def test_a_definitions_indented_paragraph_is_its_text_not_code():
    # A definition list (MkDocs def_list): the definition's second paragraph is indented
    # four spaces under ":   ", and reads as text (its entity decoded, its tag gone).
    lines = ["`--port`", ":   The port to bind.", "", "    Defaults to 8000 &amp; up.<br>", "", "Next."]
    # (The ":" mark goes and the term takes it, as the list reads rendered: chunker 20.)
    assert markdown.clean(lines) == ["`--port`:", "The port to bind.", "", "    Defaults to 8000 & up. ", "", "Next."]


def test_an_indented_code_block_is_one_code_block_not_prose(tmp_path):
    # Read as a paragraph it was cut by sentence and token, a line of code split between chunks.
    text = "# T\n\nRun this:\n\n    x = compute(1)  # first. Then\n    y = x + 1\n\n1. A step\n\n    its own text.\n"
    doc = documents.load(write(tmp_path / "t.md", text), "t.md")
    assert [(b.kind, b.text, b.start, b.end) for b in doc.blocks] == [
        ("heading", "T", 1, 1), ("para", "Run this:", 3, 3),
        ("code", "```\nx = compute(1)  # first. Then\ny = x + 1\n```", 5, 6),
        ("para", "1. A step", 8, 8), ("para", "its own text.", 10, 10)]  # a list item's paragraph stays text
    assert any(c.text.endswith("```\nx = compute(1)  # first. Then\ny = x + 1\n```")
               for c in chunker.chunk_document(doc, 12))


def test_an_indented_block_that_shows_a_fence_gets_a_longer_fence_of_its_own(tmp_path):
    # Markdown source shown as indented code: under a plain ``` its own ``` closed the block early.
    text = "Write:\n\n    A fence:\n    ```python\n    x = 1\n    ```\n\nDone.\n"
    doc = documents.load(write(tmp_path / "t.md", text), "t.md")
    assert [(b.kind, b.text) for b in doc.blocks] == [
        ("para", "Write:"), ("code", "````\nA fence:\n```python\nx = 1\n```\n````"), ("para", "Done.")]
    assert [u.kind for u in chunk_units(1, doc.blocks[1].text)] == ["code"]  # one unit, quoted whole


def test_a_table_without_outer_pipes_is_a_table(tmp_path):
    write(tmp_path / "t.md", "# Latency\n\nOur regions:\n\nRegion | Latency | Datacenter\n--- | :---: | ---\n"
                             "eu-west | 20 ms | Dublin\nus-east | 35 ms | Virginia |\n\nThat is all.\n")
    doc = documents.load(tmp_path / "t.md", "t.md")
    # It was one paragraph, quoted as "Region | Latency | Datacenter --- | --- | --- eu-west | ...".
    assert [(b.kind, b.start, b.end) for b in doc.blocks] == [("heading", 1, 1), ("para", 3, 3), ("table", 5, 8),
                                                            ("para", 10, 10)]
    assert doc.blocks[2].text.split("\n")[2] == "| eu-west | 20 ms | Dublin |"
    rows = [u.text for u in chunk_units(1, doc.blocks[2].text)]
    assert "Region: us-east; Latency: 35 ms; Datacenter: Virginia" in rows
    # A line with a pipe over a setext underline is a heading, and pipes in a paragraph stay text.
    write(tmp_path / "h.md", "a | b\n---\n\nUse `x | y` to pipe.\nNext line.\n\nx | y\n- | -\n1 | 2\n")
    # (a one-dash delimiter row is left a paragraph: extractive's row reader wants two dashes)
    assert [b.kind for b in documents.load(tmp_path / "h.md", "h.md").blocks] == ["heading", "para", "para"]


def test_an_html_term_reads_with_its_definition(tmp_path):
    write(tmp_path / "g.html", "<html><body><h1>Glossary</h1><dl>\n<dt>Artifact</dt>\n"
                               "<dd>A file produced by the build, kept for 30 days.</dd>\n<dt>Mirror:</dt>\n"
                               "<dd>A server that copies the artifacts.</dd>\n"
                               "<dt>How long do refunds take?</dt><dd>Five business days.</dd>\n<dt>Lonely</dt>\n"
                               "</dl></body></html>")
    doc = documents.load(tmp_path / "g.html", "g.html")
    # Apart, "what is an artifact?" was answered "Artifact". (Terms one after another share the
    # definition after them: test_docbook_and_asciidoc_pages_read_as_their_content.)
    assert [(b.text, b.start, b.end) for b in doc.blocks[1:]] == [
        ("Artifact: A file produced by the build, kept for 30 days.", 2, 3),
        ("Mirror: A server that copies the artifacts.", 4, 5),
        ("How long do refunds take? Five business days.", 6, 6), ("Lonely", 7, 7)]


def test_html_table_spans_fill_their_cells_and_a_pipe_in_a_cell_stays_in_it(tmp_path):
    write(tmp_path / "t.html", '<table><tr><th>Day</th><th>Morning</th><th>Evening</th></tr>'
                               '<tr><th rowspan="2">Weekday</th><td>Alice</td><td>Bob</td></tr>'
                               '<tr><td>Carol</td><td>Dan</td></tr>'
                               '<tr><td colspan="2">Sunday closed</td><td>Eve</td></tr>'
                               '<tr><td>SEV2</td><td>1 hour | next day</td><td>x</td></tr></table>')
    table = documents.load(tmp_path / "t.html", "t.html").blocks[0].text
    # "Carol" was read under "Day", and "1 hour | next day" as two cells.
    assert [u.text for u in chunk_units(1, table)] == [
        "Day: Weekday; Morning: Alice; Evening: Bob", "Day: Weekday; Morning: Carol; Evening: Dan",
        "Day: Sunday closed; Morning: Sunday closed; Evening: Eve", "Day: SEV2; Morning: 1 hour \\| next day; Evening: x"]


def test_quote_marks_footnotes_and_definitions_read_as_rendered(tmp_path):
    write(tmp_path / "q.md", "# Archive\n\n> The archive keeps deleted projects for 90 days.\n> After that they are "
                             "purged.\n\nTenant\n:   An isolated group of users.\n\nQuota\n:   The most a tenant may "
                             "use[^1].\n\n[^1]: Quotas are reviewed yearly.\n\n```\n> not a quote [^2]\n```\n")
    blocks = documents.load(tmp_path / "q.md", "q.md").blocks
    # The quote read "> The archive keeps ... > After that", a definition "Tenant :   An isolated ...".
    assert [(b.text, b.start, b.end) for b in blocks[1:]] == [
        ("The archive keeps deleted projects for 90 days.\nAfter that they are purged.", 3, 4),
        ("Tenant:\nAn isolated group of users.", 6, 7), ("Quota:\nThe most a tenant may use.", 9, 10),
        ("Quotas are reviewed yearly.", 12, 12), ("```\n> not a quote [^2]\n```", 14, 16)]
    # MyST writes a blank line between a term and its definition: the bare term was a paragraph of its
    # own (structlog's "`structlog.processors.dict_tracebacks`", quoted alone as an answer)
    write(tmp_path / "m.md", "# P\n\nThree arguments:\n\n**logger**\n\n: Your logger.\n  It is wrapped.\n\n"
                             "Text.\nMore text.\n\n: not a term above\n")
    blocks = documents.load(tmp_path / "m.md", "m.md").blocks
    assert [(b.text, b.start, b.end) for b in blocks[1:]] == [
        ("Three arguments:", 3, 3), ("**logger**: Your logger.\n  It is wrapped.", 7, 8), ("Text.\nMore text.", 10, 11),
        ("not a term above", 13, 13)]


def test_html_table_overlapping_spans_and_rowspan_zero(tmp_path):
    # A colspan over a column a rowspan still held leaked that rowspan into the next row
    # ("| 3 | 4 | y | 5 |" under three headers); rowspan="0" (to the table's end) was read as 1.
    write(tmp_path / "o.html", '<table><tr><th>A</th><th>B</th><th>C</th></tr><tr><td>1</td><td>x</td>'
                               '<td rowspan="2">y</td></tr><tr><td colspan="3">2</td></tr>'
                               '<tr><td>3</td><td>4</td><td>5</td></tr></table>')
    assert documents.load(tmp_path / "o.html", "o.html").blocks[0].text.split("\n")[2:] == [
        "| 1 | x | y |", "| 2 | 2 | 2 |", "| 3 | 4 | 5 |"]
    write(tmp_path / "z.html", '<table><tr><th>A</th><th>B</th></tr><tr><td rowspan="0">k</td><td>1</td></tr>'
                               '<tr><td>2</td></tr><tr><td>3</td></tr></table>')
    assert documents.load(tmp_path / "z.html", "z.html").blocks[0].text.split("\n")[2:] == [
        "| k | 1 |", "| k | 2 |", "| k | 3 |"]


def test_a_link_reference_definition_never_reads_as_text(tmp_path):
    # "[//]: # (...)" is how Markdown writes a comment: it never renders, and was quoted as an answer.
    # A shortcut link ("[the docs]") reads as its text where a definition names it.
    write(tmp_path / "c.md", "# Guide\n\nThe guide explains returns.\n\n[//]: # (internal: the backup code is "
                             "pitaya2)\n[comment]: <> (internal: pin pitaya3)\n\nSee [the docs].\n\n"
                             "[the docs]: https://example.com/docs \"Docs\"\n\nA line\n[x]: y continues it.\n")
    blocks = documents.load(tmp_path / "c.md", "c.md").blocks
    assert [(b.text, b.start) for b in blocks[1:]] == [
        ("The guide explains returns.", 3), ("See the docs.", 8), ("A line\n[x]: y continues it.", 12)]



def test_a_reference_link_reads_as_its_text_and_an_escape_as_its_character():
    # Node's API docs: "[`Buffer`][]" and "{string\\[]}" were quoted as written (750 of 2,436 chunks).
    lines = ["Returns: [`Buffer`][] or [the guide][guide-link]; see {string\\[]|Buffer\\[]}.",
             "Code keeps it: `x = [a][0]`, `\\*`, and so does matrix[0][1].", "[`x`][] then `\\*`", "",
             "[guide-link]: https://x.org"]
    assert markdown.clean(lines) == ["Returns: `Buffer` or the guide; see {string[]|Buffer[]}.",
                                     "Code keeps it: `x = [a][0]`, `\\*`, and so does matrix[0][1].",
                                     "`x` then `\\*`", "", ""]

@pytest.mark.parametrize("text", [
    "<!-- x -->\n[//]: # (internal: pitaya4)\n\nText.",  # after a comment, which reads as nothing
    "```\ncode\n```\n[//]: # (internal: pitaya4)\n\nText.",  # after a fence
    "Title\n=====\n[//]: # (internal: pitaya4)\n\nText.",  # after a setext heading
    "> [//]: # (internal: pitaya4)\n\nText.",  # in a block quote
    "- item\n\n    [//]: # (internal: pitaya4)\n\nText.",  # in a list item
    "[//]: #\n\"internal: pitaya4\"\n\nText.",  # its title on the next line
    "[//]: # (internal:\npitaya4)\n\nText.",  # its title over two lines
])
def test_a_link_reference_definition_is_not_text_wherever_it_stands(tmp_path, text):
    # CommonMark renders none of these; each was indexed and could be quoted.
    write(tmp_path / "c.md", text)
    assert "pitaya4" not in " ".join(b.text for b in documents.load(tmp_path / "c.md", "c.md").blocks)


def test_a_code_block_reads_as_the_page_shows_it():
    # termynal colours a console transcript with HTML the page renders; Material for MkDocs
    # writes attributes after the fence and "# (1)!" markers the page shows as buttons.
    lines = ["```console", '$ <font color="#4E9A06">fastapi</font> run <u style="x">main.py</u>', "---> 100%",
             '<font color="#A6E22E">INFO</font>:  started [<font color="#A1EFE4"><b>27365</b></font>]', "```",
             "```{ .dockerfile .annotate hl_lines=\"2\" }", "FROM python:3.9  # (1)!", "# (2)", "```",
             '```Python hl_lines="2"', 'x = "<b>"  # (1)!', "y = 2  # (3)", "```", '```hl_lines="4"', "z", "```"]
    out = markdown.clean(lines)
    assert len(out) == len(lines)  # line numbers keep pointing at the source
    assert out[:5] == ["```console", "$ fastapi run main.py", "", "INFO:  started [27365]", "```"]
    assert out[5:9] == ["```dockerfile", "FROM python:3.9", "", "```"]
    # outside an .annotate block only the "!" form is a marker: "# (3)" may be the code's own comment
    assert out[9:] == ["```Python", 'x = "<b>"', "y = 2  # (3)", "```", "```", "z", "```"]
    # tags in a block that shows code, not a transcript, are the code
    assert markdown.clean(["```bash", 'echo "<b>hi</b>" > a.html', "```"])[1] == 'echo "<b>hi</b>" > a.html'


def test_html_definitions_inside_a_definition_are_entries_of_their_own(tmp_path):
    # Sphinx's "General:" over BORG_REPO, BORG_PASSPHRASE ... read as one line: "General: BORG_REPO When
    # set ... BORG_PASSPHRASE When set ...", and a chunk began mid-definition with the wrong variable's text.
    write(tmp_path / "e.html", '<html><body><h1>Environment</h1>\n<dl><dt>General:</dt><dd><dl>\n'
                               '<dt>BORG_REPO</dt><dd><p>When set, the default repository.</p></dd>\n'
                               '<dt>BORG_PASSPHRASE</dt><dd><p>When set, the passphrase.</p></dd>\n'
                               '</dl></dd></dl>\n<dl><dt>loads(s)</dt><dd><p>Deserialize s.</p>\n'
                               '<p>Keyword-only.</p><dl><dt>Raises:</dt><dd><p>JSONDecodeError</p></dd></dl></dd></dl>'
                               '</body></html>')
    blocks = documents.load(tmp_path / "e.html", "e.html").blocks
    # A term keeps the paragraph its definition opens with; what follows it reads as blocks.
    assert [(b.text, b.start) for b in blocks[1:]] == [
        ("General:", 2), ("BORG_REPO: When set, the default repository.", 3),
        ("BORG_PASSPHRASE: When set, the passphrase.", 4), ("loads(s): Deserialize s.", 6),
        ("Keyword-only.", 7), ("Raises: JSONDecodeError", 7)]
    # What each later block of a definition belongs to, for a chunk that starts there (a method's second
    # paragraph named no method, a method no class).
    assert [b.item for b in blocks[1:]] == ["", "General", "General", "", "loads(s)", "loads(s)"]
    chunks = chunker.chunk_document(documents.load(tmp_path / "e.html", "e.html"), budget=8)
    assert [(c.headings, c.text) for c in chunks][-2:] == [((), "loads(s): Deserialize s."),
                                                          (("loads(s)",), "Keyword-only.\n\nRaises: JSONDecodeError")]


def test_an_html_row_across_the_whole_table_labels_the_rows_below_it(tmp_path):
    # Sphinx's option tables (borg): "positional arguments" filled all three columns and, as the first
    # row, headed every option; a spacer column read "|  | -x, --one-file-system | stay ... |".
    write(tmp_path / "o.html", '<html><body><table>\n'
                               '<tr><td colspan="3"><p><strong>positional arguments</strong></p></td></tr>\n'
                               '<tr><td></td><td>ARCHIVE</td><td>name of archive</td></tr>\n'
                               '<tr><td colspan="3"><p><strong>Filesystem options</strong></p></td></tr>\n'
                               '<tr><td></td><td>-x, --one-file-system</td><td>stay in the same file system</td></tr>\n'
                               '<tr><td></td><td>--noatime</td><td>do not store atime</td></tr>\n'
                               '</table></body></html>')
    blocks = documents.load(tmp_path / "o.html", "o.html").blocks
    assert [(b.kind, b.text, b.start, b.end) for b in blocks] == [
        ("para", "positional arguments", 2, 2), ("table", "|  |  |\n|---|---|\n| ARCHIVE | name of archive |", 3, 3),
        ("para", "Filesystem options", 4, 4),
        ("table", "|  |  |\n|---|---|\n| -x, --one-file-system | stay in the same file system |\n"
                  "| --noatime | do not store atime |", 5, 6)]
    # A header-less row is quoted alone, without an empty header over it.
    assert [(u.text, u.quote) for u in chunk_units(1, blocks[3].text)][0] == (
        "-x, --one-file-system; stay in the same file system", "| -x, --one-file-system | stay in the same file system |")
    # Under a header row, each label's rows keep that header.
    write(tmp_path / "h.html", '<table><tr><th>Key</th><th>Meaning</th></tr><tr><td colspan="2">Colours</td></tr>'
                               '<tr><td>%Cred</td><td>red</td></tr><tr><td colspan="2">Names</td></tr>'
                               '<tr><td>%an</td><td>author name</td></tr></table>')
    assert [b.text for b in documents.load(tmp_path / "h.html", "h.html").blocks] == [
        "Colours", "| Key | Meaning |\n|---|---|\n| %Cred | red |", "Names", "| Key | Meaning |\n|---|---|\n| %an | author name |"]


def test_a_footer_marked_by_class_alone_is_not_read(tmp_path):
    # Sphinx's bootstrap theme (no <main>, no roles): "borg init  borg extract  © Copyright ... Created using
    # Sphinx." closed every page and was the dense channel's first hit for "what does borg compact do?".
    write(tmp_path / "f.html", '<html><body><p>Body text.</p><div class="footer-relations"><div class="pull-left">'
                               '<a href="init.html" title="previous chapter">borg init</a></div></div>'
                               '<div class="footer">&copy; Copyright 2010-2023. Created using Sphinx.</div>'
                               '<article><p>A card.</p><div class="footer">Posted in March.</div></article></body></html>')
    # A footer inside an article is the article's own.
    assert [b.text for b in documents.load(tmp_path / "f.html", "f.html").blocks] == [
        "Body text.", "A card.", "Posted in March."]


def test_sphinx_api_pages_read_their_parameter_lists_examples_and_no_source_links(tmp_path):
    # Celery's API pages: "Parameters: status (str) – Current task state. retval (Any) – ..." read as one
    # line; "[source]" followed every signature; a rubric "Example" inside one method's definition
    # headed every later method of the page.
    write(tmp_path / "t.html", '<html><body><div role="main"><h1>celery.app.task</h1>\n'
                               '<dl><dt>on_bound(app)<a href="x"><span class="viewcode-link">[source]</span></a></dt>'
                               '<dd><p>Called when the task is bound.</p>\n<dl><dt>Parameters:</dt><dd><ul>\n'
                               '<li><p>status (str) – Current task state.</p></li>\n'
                               '<li><p>retval (Any) – Task return value.</p></li></ul></dd></dl>\n'
                               '<p class="rubric">Example</p><pre>task.on_bound(app)</pre></dd></dl>\n'
                               '<dl><dt>retry()</dt><dd><p>Retry the task.</p></dd></dl></div></body></html>')
    blocks = documents.load(tmp_path / "t.html", "t.html").blocks
    assert [(b.kind, b.text, b.start) for b in blocks[1:]] == [
        ("para", "on_bound(app): Called when the task is bound.", 2), ("para", "Parameters:", 3),
        ("para", "- status (str) – Current task state.\n- retval (Any) – Task return value.", 4),
        ("para", "Example:", 6), ("code", "```\ntask.on_bound(app)\n```", 6),
        ("para", "retry(): Retry the task.", 7)]
    # A rubric outside any definition is still a heading.
    write(tmp_path / "r.html", '<html><body><p>Text.</p><p class="rubric">Footnotes</p><p>One.</p></body></html>')
    assert [(b.kind, b.text) for b in documents.load(tmp_path / "r.html", "r.html").blocks] == [
        ("para", "Text."), ("heading", "Footnotes"), ("para", "One.")]


def test_sphinx_sidebars_topics_and_drawn_formulas_read_as_the_page_shows_them(tmp_path):
    # Celery's guide: "Tip" stood alone as a paragraph over its sidebar's text, and "forming the
    # expression" ended in nothing where the page draws "(2 + 2) + 16 = 20" (imgmath's picture).
    write(tmp_path / "s.html", '<html><body><div role="main"><aside class="sidebar"><p class="sidebar-title">Tip</p>'
                               '<p>Use send_task() to call a task by name.</p></aside>'
                               '<div class="topic"><p class="topic-title">Quick Cheat Sheet</p><ul><li>T.delay()</li>'
                               '</ul></div><p>Forming the expression <img class="math" src="m.png" alt="(2 + 2) + 16 = 20"/>'
                               ' in the worker.</p></div></body></html>')
    assert [b.text for b in documents.load(tmp_path / "s.html", "s.html").blocks] == [
        "Tip: Use send_task() to call a task by name.", "Quick Cheat Sheet:", "- T.delay()",
        "Forming the expression (2 + 2) + 16 = 20 in the worker."]


def test_myst_directives_read_as_the_sphinx_page_shows_them():
    # Black's docs (MyST): "```{note}" was quoted as a code block without its label, a toctree's YAML
    # was a chunk of its own, and "{doc}`... <license>`" reached an answer as written.
    lines = ["(labels/setup)=", "```{toctree}", "---", "maxdepth: 2", "---", "a", "```",  # 0-6
             "```{note}", "Read {doc}`the license <license>` or call {py:func}`black.format_str`.", "```",  # 7-9
             ":::{warning}", ":class: dropdown", "Never as root.", ":::",  # 10-13
             "````{tip}", "Install it:", "", "```bash", "pip install black", "```", "````",  # 14-20
             "```{code-block} python", ":caption: app.py", "", "print(1)", "```",  # 21-25
             "```{admonition} Black is stable!", "```", "```{include} ../CHANGES.md", "```",  # 26-29
             "```{python}", "x = 1", "```", "```{versionadded} 24.1", "The flag.", "```"]  # 30-35
    out = markdown.clean(lines)
    assert len(out) == len(lines)  # line numbers keep pointing at the source
    assert out[:7] == [""] * 7  # a target and a table of contents show no text
    assert out[7:10] == ["", "Note: Read the license or call `black.format_str`.", ""]
    assert out[10:14] == ["", "", "Warning: Never as root.", ""]  # its options are no text
    # a directive's text is Markdown: a fence shorter than its own opens code in it
    assert out[14:21] == ["", "Tip: Install it:", "", "```bash", "pip install black", "```", ""]
    assert out[21:26] == ["app.py:", "", "```python", "print(1)", "```"]  # the caption over the code
    assert out[26:30] == ["Black is stable!", "", "", ""]  # a title over nothing is the text; an include is not here
    assert out[30:] == ["```python", "x = 1", "```", "", "New in version 24.1: The flag.", ""]  # Quarto's code cell
    # What only looks like a role or a target is text: FastAPI's "`/items/{item_id}` and `PUT`" (code), "(a)=b".
    text = ["See `/items/{item_id}` and `PUT`.", "See `{item_id}` and `PUT`.", "(a)=b"]
    assert markdown.clean(text) == text


def test_myst_tables_and_rst_read_as_the_rst_reader_reads_them(tmp_path):
    write(tmp_path / "t.md", "# Sizes\n\n```{list-table} Sizes\n:header-rows: 1\n\n* - Size\n  - Width\n* - S\n"
                             "  - 10\n```\n\n```{eval-rst}\n.. note:: From rst, with ``code``.\n```\n\n"
                             "We use [mypyc] to compile.\n\n[mypyc]:\n  https://mypyc.example\n")
    blocks = documents.load(tmp_path / "t.md", "t.md").blocks
    assert [(b.kind, b.start, b.text) for b in blocks[1:]] == [
        # (the table from its header row's line, 6: each row stands on the line it starts on)
        ("para", 3, "Sizes:"), ("table", 6, "| Size | Width |\n|---|---|\n| S | 10 |"),
        ("para", 13, "Note: From rst, with `code`."),
        # a definition whose URL stands on the line below is no text, and its shortcut link reads as its text
        ("para", 16, "We use mypyc to compile.")]


def test_myst_edge_cases_keep_the_page_and_its_lines():
    # Found by a review's fuzzing: each broke a page (a crash, a page blanked to its end, text lost).
    cases = [
        ([":::{math}", "a = b", ":::"], ["```math", "a = b", "```"]),  # a colon code block holding no backticks
        ([":::{code-block} markdown", "```", "x = 1", "```", ":::"],  # ... or some: fenced by a longer run
         ["````markdown", "```", "x = 1", "```", "````"]),
        # a "---" closed by no second one before the directive's end is a rule, not options hiding the page
        (["```{note}", "---", "The note text.", "```", "After."], ["", "", "Note: The note text.", "", "After."]),
        (["```{note}``` opens a note.", "", "More."], ["```{note}``` opens a note.", "", "More."]),  # inline code
        # "[x]:" is a definition only with its destination on the next line, and a fence is none
        (["[Unreleased]:", "```", "code", "```", "Summary"], ["[Unreleased]:", "```", "code", "```", "Summary"]),
        (["See [foo]", "", "[foo]:", ""], ["See [foo]", "", "[foo]:", ""]),
        (["> [foo]:", "> https://x.example", "> text"], ["", "", "text"]),  # in a quote too
        (["$$", "(a+b)=", "$$"], ["$$", "(a+b)=", "$$"]),  # no target: a formula's line
        # a caption stays in its item
        (["- Run it:", "", "  ```{code-block} sh", "  :caption: run.sh", "  ./run", "  ```"],
         ["- Run it:", "", "  run.sh:", "  ```sh", "  ./run", "  ```"]),
    ]
    for lines, want in cases:
        assert markdown.clean(lines) == want, lines


def test_a_myst_role_that_names_a_page_or_section_reads_its_title(tmp_path):
    # Black's "see {doc}`the_basics`" read "see the_basics": the page's name, not its title.
    write(tmp_path / "index.md", "# Getting started\n\nRead {doc}`usage/the_basics` and {ref}`the-cache`, "
                                 "or {doc}`the basics <usage/the_basics>`.\n")
    write(tmp_path / "usage" / "the_basics.md", "---\ntitle: x\n---\n# The basics\n\nSee {doc}`../index`, "
                                                "{doc}`/usage/other` and {doc}`gone`.\n\n(the-cache)=\n\n"
                                                "## Where the cache lives\n\nIn ~/.cache.\n")
    write(tmp_path / "usage" / "other.rst", "Other page\n==========\n\nText.\n")  # a project may mix them
    texts = [[b.text for b in documents.load(tmp_path / rel, rel).blocks] for rel in ("index.md", "usage/the_basics.md")]
    assert texts == [["Getting started", "Read The basics and Where the cache lives, or the basics."],
                     ["The basics", "See Getting started, Other page and gone.", "Where the cache lives",
                      "In ~/.cache."]]
    assert markdown.titles("usage/a", ["Title", "=====", "", "(x)=", "", "Section", "-------"]) == {
        "doc:usage/a": "Title", "ref:x": "Section"}


def test_pips_myst_pages_read_right():
    # A list item that opens with a fence: its code ran on over the page, and the ```{note} after
    # it was quoted as written.
    page = ["- `PIP_TIMEOUT=60` is the same as `--timeout=60`", "- ```", '  PIP_FIND_LINKS="a b"', "  ```", "",
            "  is the same as", "", "```{note}", "Empty is not false.", "```"]
    assert markdown.clean(page) == ["- `PIP_TIMEOUT=60` is the same as `--timeout=60`", "  ```", '  PIP_FIND_LINKS="a b"',
                                    "  ```", "", "  is the same as", "", "", "Note: Empty is not false.", ""]
    # A target whose label has spaces is no text ("(Hash-checking mode)=" was a chunk of its own) ...
    assert markdown.clean(["(Hash-checking mode)=", "", "# Hashes", "(a+b)="]) == ["", "", "# Hashes", "(a+b)="]
    # ... and a role's text is unescaped, as docutils does: one backslash in a Windows path.
    assert markdown.clean(["See {file}`C:\\\\ProgramData\\\\pip\\\\pip.ini`, {samp}`pip {cmd}`."]) == [
        "See `C:\\ProgramData\\pip\\pip.ini`, `pip cmd`."]
    # A role may follow a word, as markdown-it-py's myst_role reads it: pip's table cell "Any
    # compatible{sup}`1` version." reached a quote as written; a superscript reads as HTML's <sup>.
    # An unknown name after a word is left as written ("x{y}`z`" is no role anyone writes).
    assert markdown.clean(["| `~=` | Any compatible{sup}`1` version. |", "H{sub}`2`O, x{y}`z`, {sup}`1` Note."]) == [
        "| `~=` | Any compatible^1 version. |", "H2O, x{y}`z`, ^1 Note."]


def test_a_page_that_only_redirects_has_no_text(tmp_path):
    # pip's moved pages (".. meta:: / :http-equiv=refresh: 3; url=...", "You should be redirected
    # automatically in 3 seconds") took a shown slot in 10 of 36 turns.
    write(tmp_path / "moved.rst", ":orphan:\n\n.. meta::\n\n  :http-equiv=refresh: 3; url=../cli/x/\n\n"
                                  "Moved\n=====\n\nYou should be redirected automatically in 3 seconds.\n")
    write(tmp_path / "moved.html", '<html><head><meta http-equiv="Refresh" content="0; URL=new.html"></head>'
                                   "<body><p>Redirecting to new.html</p></body></html>")
    write(tmp_path / "status.html", '<html><head><meta http-equiv="refresh" content="60"></head>'
                                    "<body><p>All systems up.</p></body></html>")  # it reloads itself: text
    assert [len(documents.load(tmp_path / n, n).blocks) for n in ("moved.rst", "moved.html", "status.html")] == [0, 0, 1]
    assert documents.includes(b".. pip-news-include:: ../../NEWS.rst\n") == ["../../NEWS.rst"]

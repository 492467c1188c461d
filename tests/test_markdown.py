"""Documentation markup read as the rendered page (index/markdown.py)."""
from citebot.index import chunker, documents, markdown

from conftest import write


def test_admonitions_become_labelled_text_and_closers_vanish():
    lines = ["/// tip", "", "Use **Annotated**.", "", "///", "/// note | Technical Details", "Starlette does it.",
             "///", '!!! warning "Careful"', "    Do not.", "/// info", "```", "x = 1", "```", "///"]
    out = markdown.clean(lines)
    assert len(out) == len(lines)  # line numbers keep pointing at the source
    assert out[:5] == ["", "", "Tip: Use **Annotated**.", "", ""]
    assert out[5:8] == ["", "Note (Technical Details): Starlette does it.", ""]
    assert out[8:10] == ["", "    Warning (Careful): Do not."]
    assert out[10:] == ["Info:", "```", "x = 1", "```", ""]  # a block opening with code: the label on its own line


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

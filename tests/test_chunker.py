import re
from pathlib import Path

from citebot import tokens
from citebot.index import chunker, documents

from conftest import write

ROWS = "\n".join(f"| TP-{i:03d}-B | Spare pole section {i} with a longer description | ${i}.99 |" for i in range(60))
DOC = f"""---
title: Parts
status: current
---
# Parts

## Price list

Intro paragraph about parts.

| Part | Description | Price |
|---|---|---|
{ROWS}

## API

Use the API like this:

```python
import northwind
client = northwind.Client(token="...")

# a blank line above must not cut the block
for order in client.orders():
    print(order.id)
```

Last paragraph.
"""


def load(tmp_path: Path, text: str = DOC, name: str = "parts.md"):
    return documents.load(write(tmp_path / name, text), name)


def test_long_table_splits_and_every_piece_repeats_the_header(tmp_path):
    chunks = chunker.chunk_document(load(tmp_path), budget=200)
    table = [c for c in chunks if "| TP-" in c.text]
    assert len(table) > 2
    for c in table:
        lines = [line for line in c.text.splitlines() if line.startswith("|")]
        assert lines[0] == "| Part | Description | Price |" and lines[1] == "|---|---|---|"
        assert tokens.count(c.text) <= 200
        assert c.headings == ("Price list",)
    rows = [line for c in table for line in c.text.splitlines() if line.startswith("| TP-")]
    assert rows == ROWS.splitlines()  # every row once, in order


def test_table_piece_line_ranges_point_at_its_rows(tmp_path):
    path = tmp_path / "parts.md"
    chunks = chunker.chunk_document(load(tmp_path), budget=200)
    source = write(path, DOC).read_text().splitlines()
    for c in (c for c in chunks if "| TP-" in c.text):
        first_row = next(line for line in c.text.splitlines() if line.startswith("| TP-"))
        assert first_row in source[c.start - 1:c.end]


def test_code_block_is_never_cut(tmp_path):
    chunks = chunker.chunk_document(load(tmp_path), budget=30)
    code = [c for c in chunks if "```python" in c.text]
    assert len(code) == 1
    assert "for order in client.orders():\n    print(order.id)\n```" in code[0].text
    assert code[0].headings == ("API",)


def test_a_code_block_over_max_bytes_is_cut_at_line_ends_each_piece_fenced(tmp_path):
    # 3,000 lines of 41 bytes and one line of 70,000 bytes of a three-byte
    # character: 123,000 + 210,000 bytes, so at least 2 + 4 pieces of 60,000.
    body = [f"row_{i:05d} = '{'x' * 26}'  # 跨" for i in range(3000)] + ["s = '" + "跨" * 70_000 + "'"]
    text = "# Dump\n\n```python\n" + "\n".join(body) + "\n```\n\nAfter.\n"
    chunks = chunker.chunk_document(load(tmp_path, text, "dump.md"), budget=200)
    code = [c for c in chunks if c.text.startswith("```python\n")]
    assert len(code) >= 6
    assert all(len(c.text.encode("utf-8")) <= chunker.MAX_BYTES for c in chunks)
    assert all(c.text.endswith("\n```") for c in code)
    inner = [c.text[len("```python\n"):-len("\n```")] for c in code]
    assert "".join(inner[-4:]) == body[-1]  # the long line, cut at character boundaries, loses nothing
    assert "\n".join(inner[:-4]).split("\n") == body[:-1]  # the rest cut between lines, each line whole
    source = text.split("\n")
    for c, lines in zip(code[:-4], inner[:-4]):  # each piece cites the lines it holds
        assert source[c.start - 1:c.end] == lines.split("\n")
    assert {c.start for c in code[-4:]} == {c.end for c in code[-4:]} == {3004}
    assert chunks[-1].text == "After."

def test_ids_are_stable_and_line_ranges_recorded(tmp_path):
    a = chunker.chunk_document(load(tmp_path), budget=200)
    b = chunker.chunk_document(load(tmp_path), budget=200)
    assert [c.id for c in a] == [c.id for c in b]
    assert len({c.id for c in a}) == len(a)
    intro = next(c for c in a if "Intro paragraph" in c.text)
    assert intro.source == "parts.md" and intro.start == 9  # line 9 of the file: front matter counts
    # Editing one section keeps the ids of the others.
    c = chunker.chunk_document(load(tmp_path, DOC.replace("Last paragraph.", "Changed paragraph.")), budget=200)
    assert {x.id for x in a if "Intro" in x.text} == {x.id for x in c if "Intro" in x.text}


def test_heading_path_kept_and_paragraphs_packed(tmp_path):
    text = "# Guide\n\n## Setup\n\n### Step one\n\n" + "\n\n".join(f"Sentence number {i} of the step." for i in range(40))
    chunks = chunker.chunk_document(load(tmp_path, text, "guide.md"), budget=60)
    assert all(c.headings == ("Setup", "Step one") for c in chunks)
    assert 3 <= len(chunks) <= 12  # packed, not one chunk per paragraph
    assert all(tokens.count(c.text) <= 60 for c in chunks)


def test_html_boilerplate_stripped_and_table_kept(tmp_path):
    html = """<html lang="en"><head><title>Sizes</title><meta name="audience" content="staff"></head>
<body><nav><a href="/">Home</a> Menu</nav><header>Northwind header</header>
<main><h1>Sizes</h1><p>Pick a frame by height.</p>
<table><tr><th>Size</th><th>Height</th></tr><tr><td>M</td><td>165-178 cm</td></tr></table></main>
<footer>Copyright 2026 cookies</footer><script>var x = 1;</script></body></html>"""
    doc = documents.load(write(tmp_path / "s.html", html), "s.html")
    assert doc.title == "Sizes" and doc.meta["audience"] == "staff" and doc.meta["lang"] == "en"
    text = " ".join(b.text for b in doc.blocks)
    assert "Menu" not in text and "Copyright" not in text and "var x" not in text
    table = next(b for b in doc.blocks if b.kind == "table")
    assert table.text.splitlines()[0] == "| Size | Height |" and "| M | 165-178 cm |" in table.text


def test_front_matter_defaults_and_language_guess(tmp_path):
    doc = documents.load(write(tmp_path / "a.txt", "Store hours\n\nOpen daily 9 to 5."), "a.txt")
    assert doc.meta == {"title": "Store hours", "status": "current", "audience": "public", "lang": "en", "tenant": None}
    zh = documents.load(write(tmp_path / "z.md", "# 保修\n\n所有帐篷的保修期为两年。"), "z.md")
    assert zh.meta["lang"] == "zh"


def test_a_split_paragraph_keeps_its_list_and_each_piece_cites_its_own_lines(tmp_path):
    items = [f"* Item {i} is here. It has two sentences about topic {i}." for i in range(8)]
    text = "# List\n\n" + "\n".join(items) + "\n"
    chunks = chunker.chunk_document(load(tmp_path, text, "l.md"), budget=40)
    assert len(chunks) > 2
    source = text.split("\n")
    for c in chunks:  # its own lines: the text sits in them and spans them all
        assert c.text in "\n".join(source[c.start - 1:c.end]) and c.text.count("\n") == c.end - c.start
    assert sum("\n* Item" in c.text for c in chunks) >= 2  # the list stays a list
    assert " ".join(c.text for c in chunks).replace("\n", " ") == " ".join(items)


def test_a_numbered_item_is_never_cut_from_its_number(tmp_path):
    # "2." ends no sentence: cut there, a piece ended in a bare "2." and the next began mid-item.
    items = [f"{i}. Step {i} starts here and says a few words about topic {i}." for i in range(1, 13)]
    chunks = chunker.chunk_document(load(tmp_path, "# Steps\n\n" + "\n".join(items) + "\n", "s.md"), budget=30)
    assert len(chunks) > 2
    for c in chunks:
        assert all(re.match(r"\d+\. Step \d+ starts", line) for line in c.text.split("\n")), c.text


def test_chinese_splits_at_its_full_stops_and_token_windows_never_halve_a_character(tmp_path):
    zh = "如何配置跨域资源共享。" * 40
    chunks = chunker.chunk_document(load(tmp_path, f"# 跨域\n\n{zh}\n", "z.md"), budget=60)
    assert len(chunks) > 1 and all(c.text.endswith("。") for c in chunks)
    assert "".join(c.text for c in chunks) == zh
    odd = "🚀鑫龘靐齉" * 300  # characters of two or more tokens each, no sentence end
    pieces = tokens.windows(odd, 20)
    assert "".join(pieces) == odd and not any("\ufffd" in p for p in pieces)
    assert tokens.truncate("鑫龘靐齉", 3) == "鑫"


def test_a_long_run_without_sentence_ends_is_cut_between_words(tmp_path):
    words = [f"alpha{i}" for i in range(600)]  # "alpha7958" is two tokens: a token cut can halve it
    run = " ".join(words)
    chunks = chunker.chunk_document(load(tmp_path, f"# Codes\n\n{run}\n", "c.md"), budget=61)  # odd: mid-word
    assert len(chunks) > 10
    assert all(c.text.startswith("alpha") and set(c.text.split()) <= set(words) for c in chunks)
    assert " ".join(c.text for c in chunks) == run  # nothing lost, nothing doubled
    assert max(tokens.count(c.text) for c in chunks) <= 61 * 1.5  # a cut moved back keeps most of its window


def test_a_chunk_never_spans_two_pdf_pages():
    blocks = [documents.Block("para", "Page one text.", 1, 1, page=1),
              documents.Block("para", "Page two text.", 1, 1, page=2)]
    doc = documents.Document("d.pdf", "D", {"status": "current", "audience": "public", "lang": "en", "tenant": None},
                             blocks)
    chunks = chunker.chunk_document(doc, budget=200)
    assert [(c.text, c.page, c.start) for c in chunks] == [("Page one text.", 1, 1), ("Page two text.", 2, 1)]


def test_the_paragraph_that_introduces_a_code_block_moves_with_it(tmp_path):
    # The block does not fit after the first paragraphs, so it starts the next chunk: the sentence
    # ending in ":" goes with it, not left dangling at the end of the chunk before.
    filler = " ".join(["Settings are read from the environment."] * 6)
    code = "```console\n" + "\n".join(f"$ openssl rand -hex {n}" for n in range(8, 18)) + "\n```"
    text = f"# Keys\n\n{filler}\n\nTo generate a secure random key use the command:\n\n{code}\n\nAfter.\n"
    chunks = chunker.chunk_document(load(tmp_path, text, "keys.md"), budget=120)
    assert [c.text.split("\n\n")[0] for c in chunks] == [filler, "To generate a secure random key use the command:"]
    assert chunks[1].text.split("\n\n")[1:] == [code, "After."] and chunks[1].start == 5
    # A short paragraph alone in its chunk joins the block over the budget (marshmallow's one-sentence
    # chunk above its example), and so does one that ends in "." (the example shows what it says) ...
    intro = "To make a key, use the command:"
    alone = chunker.chunk_document(load(tmp_path, f"# Keys\n\n{intro}\n\n{code}\n", "alone.md"), budget=60)
    assert [c.text for c in alone] == [f"{intro}\n\n{code}"]
    said = "You can also make a key with OpenSSL."
    dotted = chunker.chunk_document(load(tmp_path, f"# Keys\n\n{filler}\n\n{said}\n\n{code}\n", "dot.md"), budget=120)
    assert [c.text.split("\n\n")[0] for c in dotted] == [filler, said]
    # ... but a long one stays where it is, and so does one with an include that is not here between
    # (the paragraph introduced that) ...
    long_ = " ".join(["This paragraph explains keys at length and ends with a full stop."] * 6)
    assert chunker.INTRO_OVER < tokens.count(long_) < 120
    kept = chunker.chunk_document(load(tmp_path, f"# Keys\n\n{long_}\n\n{code}\n", "long.md"), budget=120)
    assert [c.text.split("\n\n")[0] for c in kept] == [long_, code]
    # ... unless it ends in a colon and the block is too long for any chunk: alembic's long "... place a
    # hook ... which removes ... any operations:" was a chunk of its own, the hook's code the next
    told = long_[:-1] + " and then runs:"
    assert tokens.count(told) <= 82 < tokens.count(code)
    assert [c.text.split("\n\n")[0] for c in chunker.chunk_document(
        load(tmp_path, f"# Keys\n\n{told}\n\n{code}\n", "told.md"), budget=82)] == [told]
    gap = chunker.chunk_document(load(tmp_path, f"# Keys\n\n{filler}\n\n{said}\n\n{{* ../k.py *}}\n\n{code}\n",
                                      "gap.md"), budget=120)
    assert [c.text.split("\n\n")[0] for c in gap] == [filler, code]
    # ... but a label ("Windows:", a tab's; four words at most) joins its code over the budget, and
    # the list item right above it comes with it (pip's "6. Install a project ..." / "Unix/macOS:"
    # ended one chunk and their command began the next; "Windows:" stood alone between two outputs).
    labelled = chunker.chunk_document(load(tmp_path, f"# Keys\n\n{filler}\n\n2. Make a key\n\nUnix/macOS:\n\n{code}\n\n"
                                                     f"Windows:\n\n{code}\n", "labels.md"), budget=60)
    assert [c.text.split("\n\n")[:2] for c in labelled][-2:] == [["2. Make a key", "Unix/macOS:"], ["Windows:", code]]


def test_a_code_block_longer_than_two_budgets_is_cut_at_its_blank_lines(tmp_path):
    # alembic's 150-line sample alembic.ini was one chunk that filled the prompt: the sentence that
    # defines one of its settings never reached it.
    sections = [f"# section {k}: what setting_{k} does\nsetting_{k} = value_{k}\nother_{k} = more_{k}" for k in range(8)]
    text = "# Config\n\n```ini\n" + "\n\n".join(sections) + "\n```\n"
    code = "```ini\n" + "\n\n".join(sections) + "\n```"
    budget = 40
    assert tokens.count(code) > 2 * budget
    chunks = chunker.chunk_document(load(tmp_path, text, "c.ini.md"), budget=budget)
    assert len(chunks) > 1 and all(tokens.count(c.text) <= budget for c in chunks)
    assert all(c.text.startswith("```ini\n# section") and c.text.endswith("\n```") for c in chunks)
    # every line is in one piece, the pieces cut where a blank line was, and each cites its own lines
    assert "\n\n".join(c.text[len("```ini\n"):-len("\n```")] for c in chunks) == "\n\n".join(sections)
    lines = text.split("\n")
    for c in chunks:
        assert lines[c.start - 1].startswith("# section") and lines[c.end - 1].startswith("other_")


def test_a_long_list_without_full_stops_is_cut_between_its_items(tmp_path):
    # Click's environment-variable rules, items with no full stop: the list was one "sentence", cut at a
    # space, and a chunk ended "- Any other value is interpreted", the next began "as deactivating the flag".
    items = [f"   - the values of group {k} are interpreted\n     as activating the flag number {k}" for k in range(12)]
    text = "# Rules\n\nHere are the rules:\n" + "\n".join(items) + "\n"
    chunks = chunker.chunk_document(load(tmp_path, text, "rules.md"), budget=60)
    assert len(chunks) > 1
    for c in chunks:
        body = c.text.split("\n")
        assert body[-1].endswith(tuple(f"flag number {k}" for k in range(12))), c.text
        assert body[0].startswith(("Here are the rules:", "- the values", "   - the values")), c.text


def test_a_short_paragraph_that_ends_its_section_stays_with_the_chunk_before(tmp_path):
    # structlog's "Deprecated since version 23.1.0" was a chunk of its own, saying it of nothing.
    filler = " ".join(["The async logger runs every call in a thread pool."] * 8)
    assert tokens.count(filler) <= 90 < tokens.count(filler) + tokens.count("Deprecated since 23.1.")
    text = f"# Async\n\n{filler}\n\nDeprecated since 23.1.\n\n## Next\n\n{filler}\n\nA longer closing paragraph that " \
           f"goes on and on about many things for more than the few tokens a tail may take over the budget.\n"
    chunks = chunker.chunk_document(load(tmp_path, text, "async.md"), budget=90)
    assert [c.text.split("\n\n")[-1][:20] for c in chunks] == ["Deprecated since 23.", filler[:20], "A longer closing par"]


def test_the_paragraph_that_introduces_a_list_moves_with_it_unless_something_stood_between(tmp_path):
    filler = " ".join(["Settings are read from the environment."] * 6)
    items = "\n".join(f"* `--option-{n}`: what option {n} sets for the server" for n in range(6))
    text = f"# Options\n\n{filler}\n\nThe server reads these options:\n\n{items}\n"
    chunks = chunker.chunk_document(load(tmp_path, text, "opts.md"), budget=120)
    assert [c.text.split("\n\n")[0] for c in chunks] == [filler, "The server reads these options:"]
    # An include that is not here stood between (its lines read blank): the paragraph introduced
    # that, not the list, and stays.
    gap = f"# Options\n\n{filler}\n\nThe server reads these options:\n\n{{* ../src/opts.py *}}\n\n{items}\n"
    chunks = chunker.chunk_document(load(tmp_path, gap, "gap.md"), budget=120)
    assert chunks[0].text.endswith("The server reads these options:") and chunks[1].text == items


def test_a_nested_list_after_a_blank_line_stays_nested(tmp_path):
    # Stripped, its first item read as a sibling of the item holding it, and its siblings as its children.
    doc = load(tmp_path, "# Notes\n\n* Fields supported for:\n\n    * `Path()`\n    * `Query()`\n\n* Done.\n")
    assert [b.text for b in doc.blocks if b.kind == "para"] == [
        "* Fields supported for:", "    * `Path()`\n    * `Query()`", "* Done."]


def test_an_outer_item_right_after_an_items_own_paragraph_is_the_next_item(tmp_path):
    # structlog's "   You can inspect a context ..." (item 1's second paragraph) and then, with no
    # blank line, "2. A list of processors ...": item 2 was read as a line of item 1's paragraph.
    text = ("# Parts\n\n1. First item.\n   More of first.\n\n   First's own paragraph.\n2. Second item.\n\n"
            "   Second's own paragraph.\n   still second's (a lazy line)\n   - a nested item\n3. Third.\n")
    doc = load(tmp_path, text, "parts.md")
    assert [(b.text, b.item) for b in doc.blocks if b.kind == "para"] == [
        ("1. First item.\n   More of first.", ""), ("First's own paragraph.", "First item."),
        ("2. Second item.", ""), ("Second's own paragraph.\nstill second's (a lazy line)\n- a nested item",
                                  "Second item."), ("3. Third.", "")]
    # ... and an item's paragraph is shown two in on every line (its later lines went five in)
    (chunk,) = chunker.chunk_document(doc, budget=200)
    assert "\n\n  Second's own paragraph.\n  still second's (a lazy line)\n  - a nested item\n\n3. Third." in chunk.text


def test_a_chunk_that_starts_inside_a_list_item_is_headed_by_what_the_item_names(tmp_path):
    # borg's "BORG_SELFTEST=disabled can be used ..." began a chunk that named no variable.
    filler = " ".join(["Borg reads these variables at start."] * 6)
    text = (f"# Environment\n\n{filler}\n\n- BORG_SELFTEST: This can be used to influence the self-tests.\n\n"
            f"  Setting it to disabled saves some time.\n\n- BORG_RSH: The ssh command.\n\n"
            f"  * Added Crontab-like scheduling to periodic tasks. You can name a minute.\n"
            f"  * Second.\n\n    Its own paragraph.\n\nBack at the margin.\n")
    doc = load(tmp_path, text, "env.md")
    assert [b.item for b in doc.blocks if b.kind == "para"] == [
        "", "", "BORG_SELFTEST", "", "BORG_RSH", "Second.", ""]
    chunks = chunker.chunk_document(doc, budget=16)
    starts = {c.text.split("\n")[0]: c.headings for c in chunks}
    assert starts["Setting it to disabled saves some time."] == ("BORG_SELFTEST",)
    assert starts["* Added Crontab-like scheduling to periodic tasks."] == ("BORG_RSH",)  # a nested list too
    assert starts["Back at the margin."] == () and starts["- BORG_RSH: The ssh command."] == ()
    assert documents.item_name("Added Crontab-like scheduling to periodic tasks. You can name a minute.") == \
        "Added Crontab-like scheduling to periodic tasks."
    assert documents.item_name(" ".join(["word"] * 14)) == " ".join(["word"] * 12) + " …"
    # read as shown: a task box and a link's address are no words of it; code and a rule name nothing
    assert documents.item_name("[ ] Task one. Then more.") == "Task one."
    assert documents.item_name("[Install](https://x.org/i) it: with pip") == "Install it"
    assert documents.item_name("* *") == "" and documents.item_name("```sh") == ""


def test_a_paragraph_inside_a_list_item_is_shown_two_spaces_in(tmp_path):
    # Flask's "- `MAX_CONTENT_LENGTH`: Don't read more ..." and, a blank line below, "  Default: `None`":
    # shown at the margin, the chunk read it as a paragraph after the list, no part of the key's entry.
    text = ("# Config\n\n- `MAX_CONTENT_LENGTH`: Don't read more bytes.\n\n  Default: `None`\n\n"
            "  - a nested item\n\nAfter the list.\n")
    (chunk,) = chunker.chunk_document(load(tmp_path, text, "c.md"), budget=200)
    assert chunk.text == ("- `MAX_CONTENT_LENGTH`: Don't read more bytes.\n\n  Default: `None`\n\n  - a nested item\n\n"
                          "After the list.")


def test_an_oversized_list_is_cut_before_an_item_not_inside_one(tmp_path):
    # Black's blackd headers: a chunk ended "... optionally prefixed with `py`." and the next began "For
    # example, to request code compatible with Python 3.5 and 3.6, set the header to ...", never saying
    # which header.  Every piece now starts with an item when one lies past half the budget.
    items = [f"- `X-Header-{i}`: corresponds to flag {i}. If present, it does thing {i} to the code."
             for i in range(8)]
    chunks = chunker.chunk_document(load(tmp_path, "# Protocol\n\n" + "\n".join(items) + "\n", "p.md"), budget=50)
    assert len(chunks) > 2
    for c in chunks:
        assert c.text.startswith("- `X-Header-") and c.text.endswith("to the code."), c.text
    # one item over the budget is still cut by sentences (nothing else to cut at)
    long = "- `X-Long`: " + " ".join(f"Sentence {i} says a few words here." for i in range(30))
    pieces = chunker.chunk_document(load(tmp_path, "# P\n\n" + long + "\n", "q.md"), budget=50)
    assert len(pieces) > 1 and pieces[1].text.startswith("Sentence")
    # ... and a short item before it is no piece of its own (it holds less than half the budget)
    pieces = chunker.chunk_document(load(tmp_path, "# P\n\n- `X-Short`: one.\n" + long + "\n", "r.md"), budget=50)
    assert pieces[0].text.startswith("- `X-Short`: one.\n- `X-Long`: Sentence 0")

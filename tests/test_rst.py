"""reStructuredText (Sphinx manuals) read as the Markdown it renders like, line for line."""
from citebot.index import documents, rst
from citebot.index.chunker import chunk_document

PAGE = """\
=========
 Workers
=========

.. contents::
    :local:

Starting the worker
===================

Start it in the foreground:

.. code-block:: console

    $ celery -A proj worker -l INFO

For the options see :mod:`~celery.bin.worker`, or simply do::

    $ celery worker --help

.. note::

    The :setting:`worker_prefetch_multiplier` setting and ``--concurrency``
    matter here. See `the guide <https://example.org>`_ [1]_.

.. versionadded:: 5.2

    The ``--detach`` option.

Options
-------

-c, --concurrency  Number of child processes.
--pool TEXT        Pool implementation.

prefetch
    How many messages a worker reserves,
    per process.

* bullet one
  goes on
* bullet two

  - nested

:param x: the x value
:returns: nothing

.. attribute:: Celery.main

    Name of the main module.

.. _target:
.. |sub| replace:: text
"""


def test_a_sphinx_page_reads_as_the_markdown_it_renders_like_line_for_line():
    lines = PAGE.split("\n")
    md = rst.to_markdown(lines)
    assert len(md) == len(lines)  # citations keep their source lines
    # an overlined title is level 1, the first underlined style level 2, the next level 3
    assert md[0:4] == ["# Workers", "", "", ""]
    assert md[7] == "## Starting the worker" and md[29] == "### Options"
    assert md[4:6] == ["", ""]  # contents: Sphinx builds it, the file does not hold it
    assert md[12:16] == ["", "```console", "$ celery -A proj worker -l INFO", "```"]
    # "do::" says "do:" and opens a literal block (code), fenced on the blank lines around it
    assert md[16:20] == ["For the options see `worker`, or simply do:", "```", "$ celery worker --help", "```"]
    assert md[20:24] == ["", "", "Note: The `worker_prefetch_multiplier` setting and `--concurrency`",
                         "matter here. See the guide."]
    assert md[25:28] == ["", "", "New in version 5.2: The `--detach` option."]
    assert md[32:34] == ["- -c, --concurrency: Number of child processes.", "- --pool TEXT: Pool implementation."]
    assert md[35:38] == ["", "- prefetch: How many messages a worker reserves,", "per process."]
    assert md[39:44] == ["- bullet one", "  goes on", "- bullet two", "", "  - nested"]
    assert md[45:47] == ["- param x: the x value", "- returns: nothing"]
    assert md[48:51] == ["", "", "- `Celery.main`: Name of the main module."]
    assert md[52:54] == ["", ""]  # a target and a substitution never render
    # a toctree's entries name other files: Sphinx shows their titles, the file holds none of it
    assert rst.to_markdown([".. toctree::", "   :maxdepth: 2", "", "   intro", "   install", ""]) == [""] * 6


def test_tables_become_pipe_tables_whose_rows_keep_their_lines():
    grid = """\
+------+-------+
| Name | Value |
+======+=======+
| a    | long  |
|      | text  |
+------+-------+
| b    | x     |
+------+-------+""".split("\n")
    # each row on the line its text starts on (a citation names it); the lines between are rules, and so
    # are the last row's other lines and the bottom border: a citation of the last row runs to its end
    assert rst.to_markdown(grid) == ["", "| Name | Value |", "|---|---|", "| a | long text |", "|---|---|",
                                     "|---|---|", "| b | x |", "|---|---|"]
    # Cut into pieces, the last row's piece is cited to the table's bottom border, not its first line alone
    # (Flask's "**options" row was cited as line 638, its text running on to 646).
    doc = documents.Document("t.rst", "T", {"status": "current", "audience": "public", "lang": "en", "tenant": None},
                             documents.parse_markdown(rst.to_markdown(grid)))
    assert [(c.start, c.end) for c in chunk_document(doc, budget=12)] == [(4, 6), (7, 8)]
    simple = """\
=====  =====
A      B
=====  =====
1      2
       more
3      4
=====  =====
""".split("\n")
    # a row whose first column is blank goes on the row above
    assert rst.to_markdown(simple) == ["", "| A | B |", "|---|---|", "| 1 | 2 more |", "|---|---|", "| 3 | 4 |",
                                       "|---|---|", ""]
    # without a header row the table gets an empty one, as the HTML reader writes it
    assert rst.to_markdown(["===  ===", "1    2", "===  ==="]) == ["|  |  |", "|---|---|", "| 1 | 2 |"]
    # ... on the blank line above it, and its rule on the top border, when there is one: each row keeps
    # its own line (Flask's route() parameters had every row cited a line late)
    assert rst.to_markdown(["Params:", "", "===  ===", "a    1", "b    2", "     more", "===  ===", "", "Next."]) == [
        "Params:", "|  |  |", "|---|---|", "| a | 1 |", "| b | 2 more |", "|---|---|", "|---|---|", "", "Next."]
    assert rst.to_markdown(["", "+---+---+", "| a | 1 |", "+---+---+", "| b | 2 |", "+---+---+"]) == [
        "|  |  |", "|---|---|", "| a | 1 |", "|---|---|", "| b | 2 |", "|---|---|"]
    listed = """\
.. list-table:: Limits
   :header-rows: 1

   * - Name
     - Max
   * - queue
     - 10
""".split("\n")
    # a list-table's rows stand on the lines they start on, too (the title on the directive's)
    assert rst.to_markdown(listed) == ["Limits:", "", "", "| Name | Max |", "|---|---|", "| queue | 10 |", "", ""]
    # ... and one without a header row gets an empty one and its rule where there is room
    untitled = [".. list-table::", "   :widths: 1 1", "", "   * - a", "     - 1", "   * - b", "     - 2"]
    assert rst.to_markdown(untitled) == ["|  |  |", "|---|---|", "|---|---|", "| a | 1 |", "|---|---|", "| b | 2 |", ""]
    assert rst.to_markdown([untitled[0] + " T", *untitled[1:]]) == [
        "T:", "|  |  |", "|---|---|", "| a | 1 |", "|---|---|", "| b | 2 |", ""]
    csv = ['.. csv-table::', '   :header: "Key", "Meaning"', "", '   "a", "first, of two"', ""]
    assert rst.to_markdown(csv) == ["| Key | Meaning |", "|---|---|", "| a | first, of two |", "", ""]


def test_inline_markup_renders_and_a_literal_is_kept_as_written():
    assert rst.inline(":class:`~celery.app.Celery` and :func:`celery.shared_task`") == "`Celery` and `celery.shared_task`"
    assert rst.inline(":ref:`the guide <guide-label>` and :doc:`intro`") == "the guide and intro"
    assert rst.inline(":pep:`8`, `Celery <https://celeryq.dev>`_, Redis_ [#]_") == "PEP 8, Celery, Redis"
    assert rst.inline("``:ref:`x` [1]_ `y`_``") == "`:ref:`x` [1]_ `y`_`"  # a literal is not markup
    assert rst.inline("`__main__` and a \\*star\\*") == "`__main__` and a *star*"
    # a literal a line end cuts: each half is marked (coverage.py's "the comment ``#" / "pragma:
    # exclude file``." read "``# pragma: exclude file``" joined)
    assert [rst.inline(x) for x in ("the ``a`` comment ``#", "pragma: exclude file``.")] == [
        "the `a` comment `#", "pragma: exclude file`."]


def test_code_that_text_follows_without_a_blank_line_is_indented_code_and_no_line_is_added(tmp_path):
    lines = [".. code-block:: bash", "", "    export A=1", "", "    B=2", ".. _next:", "", "Text."]
    md = rst.to_markdown(lines)
    assert md == ["", "", "    export A=1", "", "    B=2", "", "", "Text."]
    p = tmp_path / "x.rst"
    p.write_text("\n".join(lines), encoding="utf-8")
    doc = documents.load(p, p.name)
    assert [(b.kind, b.start, b.end) for b in doc.blocks] == [("code", 3, 5), ("para", 8, 8)]


def test_an_rst_file_is_ingested_with_its_sections_code_and_definitions(tmp_path):
    p = tmp_path / "workers.rst"
    p.write_text(PAGE, encoding="utf-8")
    doc = documents.load(p, p.name)
    assert doc.meta["title"] == "Workers"
    blocks = [(b.kind, b.text, b.start) for b in doc.blocks]
    assert ("code", "```console\n$ celery -A proj worker -l INFO\n```", 14) in blocks
    assert ("para", "- prefetch: How many messages a worker reserves,\nper process.", 37) in blocks
    chunks = chunk_document(doc, 200)
    note = next(c for c in chunks if "worker_prefetch_multiplier" in c.text)
    assert note.headings[-1] == "Starting the worker"
    assert "Note: The `worker_prefetch_multiplier` setting" in note.text
    assert not any(".. " in c.text or ":setting:" in c.text for c in chunks)


def test_a_sphinx_include_is_ingested_as_rst_of_its_own_and_another_inc_file_is_skipped(tmp_path, cfg, counting):
    from citebot.index.build import ingest
    from citebot.index.local import LocalIndex
    from citebot.schema import Scope
    folder = tmp_path / "docs"
    (folder / "usage").mkdir(parents=True)
    (folder / "usage" / "create.rst.inc").write_text("borg create\n-----------\n\nCreates a backup archive.\n",
                                                     encoding="utf-8")
    (folder / "usage" / "defs.inc").write_text("#define A 1\n", encoding="utf-8")
    report = ingest(folder, cfg, embedder=counting)
    assert [rel for rel, _ in report.skipped] == ["usage/defs.inc"]
    chunks = list(LocalIndex.load(cfg.index).scan(Scope.everything()))
    assert [(c.source, c.title, c.text) for c in chunks] == [("usage/create.rst.inc", "borg create",
                                                             "Creates a backup archive.")]


def test_an_ingest_lists_the_folders_rst_titles_once_not_once_a_file(tmp_path, cfg, counting, monkeypatch):
    # Listing and stating every rst file for each one read: Python's 497 pages took 13.0 s, 7.0 s listed once.
    from pathlib import Path

    from citebot.index.build import ingest
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("a", "b", "c"):
        (folder / f"{name}.rst").write_text(f".. _{name}-label:\n\nPage {name}\n======\n\nSee :ref:`a-label`.\n",
                                            encoding="utf-8")
    listed = []
    rglob = Path.rglob
    monkeypatch.setattr(Path, "rglob", lambda self, pattern: listed.append(self) or rglob(self, pattern))
    ingest(folder, cfg, embedder=counting)
    assert listed.count(folder) == 1
    (folder / "a.rst").write_text(".. _a-label:\n\nRenamed\n=======\n", encoding="utf-8")
    # outside an ingest, a changed title is seen
    assert documents.load(folder / "b.rst", "b.rst").blocks[-1].text == "See Renamed."


def test_an_ingest_shows_only_included_code_it_found_itself(tmp_path, cfg, counting):
    # A file --include leaves out, or one in a folder an ingest skips (an index's own files: a page could
    # include another index's chunks.jsonl, staff text and all), is no part of a page.
    from citebot.index.build import ingest
    from citebot.index.local import LocalIndex
    from citebot.schema import Scope
    folder = tmp_path / "proj"
    (folder / "docs").mkdir(parents=True)
    (folder / "private").mkdir()
    (folder / "node_modules").mkdir()
    (folder / "docs" / "ex.py").write_text("PUBLIC = 1\n", encoding="utf-8")
    (folder / "private" / "keys.py").write_text("SECRET = 1\n", encoding="utf-8")
    (folder / "node_modules" / "lib.py").write_text("VENDORED = 1\n", encoding="utf-8")
    (folder / "docs" / "pub.rst").write_text("Pub\n===\n\n.. literalinclude:: ex.py\n\n"
                                             ".. literalinclude:: ../private/keys.py\n\n"
                                             ".. literalinclude:: ../node_modules/lib.py\n", encoding="utf-8")
    ingest(folder, cfg, embedder=counting, include=["docs/*"])
    text = " ".join(c.text for c in LocalIndex.load(cfg.index).scan(Scope.everything()))
    assert "PUBLIC = 1" in text and "SECRET" not in text and "VENDORED" not in text
    # read alone, outside an ingest, the page shows what lies in its folder
    alone = " ".join(b.text for b in documents.load(folder / "docs" / "pub.rst", "docs/pub.rst").blocks)
    assert "SECRET = 1" in alone


def test_which_files_read_as_rst():
    from pathlib import Path
    assert [documents.file_type(Path(n)) for n in ("a.rst", "b.REST", "usage/c.rst.inc", "_sources/d.rst.txt",
                                                    "e.txt", "f.inc", "g.md")] == [
        ".rst", ".rest", ".rst", ".rst", ".txt", ".inc", ".md"]


def test_only_the_web_build_is_read_and_a_style_is_no_text():
    lines = [".. only:: html", "", "   .. class:: borg-options-table", "", "   Shown on the web.", "",
             ".. only:: latex", "", "   Printed in the PDF.", ""]
    assert rst.to_markdown(lines) == ["", "", "", "", "Shown on the web.", "", "", "", "", ""]


def test_a_grid_row_of_one_cell_across_the_table_labels_the_rows_below_it_as_the_html_reader_reads_it():
    grid = ["+----+-------------+",
            "| **FS options**   |",  # no "|" at column 5: one cell across both, not cut there
            "+----+-------------+",
            "|    | ``-x``      |",
            "+----+-------------+",
            "| Archive options  |",
            "+----+-------------+",
            "|    | ``-c``      |",
            "+----+-------------+"]
    assert all(len(x) == 20 for x in grid)
    # each label a line over a table of its rows; the spacer column, empty in every row, left out
    assert rst.to_markdown(grid) == ["", "FS options", "|  |", "|---|", "| `-x` |",
                                     "Archive options", "|  |", "|---|", "| `-c` |"]


def test_definitions_follow_each_other_without_blank_lines_and_nest():
    lines = ["General:", "    BORG_REPO", "        When set, the default repository.", "    BORG_PASSPHRASE",
             "        When set, the passphrase.", "", "        See also BORG_NEW_PASSPHRASE.", "Other:",
             "    Text."]
    # each variable is an entry of its own under "General", not one run of text
    assert rst.to_markdown(lines) == ["- General:", "", "  - BORG_REPO: When set, the default repository.", "",
                                      "  - BORG_PASSPHRASE: When set, the passphrase.", "",
                                      "    See also BORG_NEW_PASSPHRASE.", "", "- Other: Text."]


def test_a_paragraph_in_a_definition_stays_in_it_so_the_items_after_it_are_no_code(tmp_path):
    # borg's BORG_WORKAROUNDS: at the margin, "Currently known strings are:" ended the list in
    # Markdown, and the nested "retry_erofs" four spaces in read as a line of indented code.
    lines = ["General:", "    BORG_WORKAROUNDS", "        A list of strings.", "",
             "        Currently known strings are:", "", "        retry_erofs", "            Retry opening.",
             "", "        basesyncfile", "            Use the simple code."]
    path = tmp_path / "env.rst"
    path.write_text("\n".join(lines) + "\n")
    blocks = documents.load(path, "env.rst").blocks
    assert [b.kind for b in blocks] == ["para"] * 5
    assert blocks[3].text == "    - retry_erofs: Retry opening." and (blocks[3].start, blocks[3].end) == (8, 8)
    assert rst.to_markdown(lines)[4] == "    Currently known strings are:"  # in the item, as CommonMark reads it


REVIEWED = """\
Worker
======
:pool support: all

1. Add it to ``settings.py``::

       INSTALLED_APPS = ('proj',)

   Note there is no dash.

3. Then restart.

#. first
#. second

- ``gzip``

    gzip suits small systems.

Run :program:`celery revoke <task_id>` or see :ref:`the
guide <guide-x>` and :class:`~@Retry`.

+--------------+-----------+
| **Example**  | **Means** |
+--------------+-----------+
| ``*/15``     | quarter   |
+--------------+-----------+

.. [*] The chapter is free:
   `The book`_. A classic.
"""


def test_what_a_review_of_celerys_pages_found_reads_as_sphinx_shows_it():
    md = rst.to_markdown(REVIEWED.split("\n"))
    assert md[2] == "- pool support: all"  # a field list right under a title
    # the item's paragraph after its literal block is the item's text, not code
    assert md[4:9] == ["1. Add it to `settings.py`:", "```", "INSTALLED_APPS = ('proj',)", "```",
                       "  Note there is no dash."]
    # an item keeps its number, and "#." counts on from the item before, as docutils numbers it
    assert md[10] == "3. Then restart." and md[12:14] == ["4. first", "5. second"]
    # a name alone as an item is said with the description under it: one item, never cut apart
    assert md[15:18] == ["", "", "- `gzip`: gzip suits small systems."]
    # a literal role's <placeholder> stays; a reference cut by a line end loses its markup; Celery's ~@Retry
    assert md[19:21] == ["Run `celery revoke <task_id>` or see the", "guide and `Retry`."]
    # a table whose first row is all bold has it as its header; each row on its own line
    assert md[22:27] == ["", "| **Example** | **Means** |", "|---|---|", "| `*/15` | quarter |", "|---|---|"]
    assert md[28:30] == ["[*] The chapter is free:", "The book. A classic."]  # a footnote's every line


def test_a_signature_on_two_lines_reads_as_one_and_a_caption_names_its_code():
    lines = [".. method:: add_queue(name, exchange=None,", "                 routing_key=None, \\*\\*options)", "",
             "   Adds a queue.", "", ".. code-block:: python", "   :caption: settings.py", "", "   X = 1", ""]
    assert rst.to_markdown(lines) == ["", "", "", "- `add_queue(name, exchange=None, routing_key=None, **options)`: "
                                      "Adds a queue.", "", "settings.py:", "", "```python", "X = 1", "```"]


def test_python_docs_descriptions_name_their_module_and_say_what_sphinx_adds():
    lines = [".. module:: logging", "", ".. class:: Handler", "", "   Sends records.", "",
             ".. coroutinefunction:: sleep(delay)", "", "   Waits.", "",
             ".. availability:: Unix, not WASI.", "", ".. deprecated-removed:: 3.9 3.14", "", "   Use X.", "",
             ">>> f()  # doctest: +SKIP", "<BLANKLINE>", ""]
    assert rst.to_markdown(lines) == ["", "", "", "", "- class `logging.Handler`: Sends records.", "",
                                      "", "", "- coroutine `logging.sleep(delay)`: Waits.", "",
                                      "Availability: Unix, not WASI.", "", "", "",
                                      "Deprecated since version 3.9, will be removed in version 3.14: Use X.",
                                      "```pycon", ">>> f()", "", "```"]  # Sphinx hides doctest flags


def test_an_autodoc_directive_reads_the_body_written_under_it():
    # attrs' API page writes its text under "autofunction::" and "autoclass::" (Sphinx shows the
    # docstring, then the body): every body was dropped, 428 of the page's 566 lines.  A body-less one,
    # whose text is all in the code, says nothing; an automodule names the module, as module:: does.
    lines = [".. automodule:: attrs", "", ".. autofunction:: evolve", "", "   Creates a new instance.", "",
             ".. autoclass:: Attribute", "   :members: evolve", "", "   Used for introspection.", "",
             ".. autodata:: NOTHING", "", ".. autosummary::", "", "   attrs.x", ""]
    assert rst.to_markdown(lines) == ["", "", "", "", "- `attrs.evolve`: Creates a new instance.", "",
                                      "", "", "", "- class `attrs.Attribute`: Used for introspection.", "",
                                      "", "", "", "", "", ""]
    # A paragraph right after a description's code is the description's too: attrs' "``evolve`` creates a
    # new instance ..." followed its example and was read at the margin, no part of attrs.evolve's entry.
    lines = [".. function:: evolve(inst)", "", "   For example::", "", "      evolve(i, y=3)", "",
             "   ``evolve`` creates a new instance.", ""]
    assert rst.to_markdown(lines)[2:] == ["- `evolve(inst)`: For example:", "```", "evolve(i, y=3)", "```",
                                          "  `evolve` creates a new instance.", ""]
    # ... and the default role's reference shows its text ("`documented on a separate page <api-attr>`")
    assert rst.inline("It is `documented elsewhere <api-attr>`, see `a <b>`_ or ``x <y>``.") == (
        "It is documented elsewhere, see a or `x <y>`.")
    # ... and a shortened one its last name (marshmallow's "`~marshmallow.Schema.dump`/`~marshmallow.Schema.load`")
    assert rst.inline("the `~marshmallow.Schema.dump`/`~marshmallow.Schema.load` method, `~f()`, `a~b`") == (
        "the `dump`/`load` method, `f()`, `a~b`")
    # ... and a name searched from the current module shows without its leading dot (alembic's 297
    # ":paramref:`.command.current.check_heads`"), but a file is as written
    assert rst.inline(":meth:`.Column.copy`, :paramref:`.x.y`, `.Op.z`, :file:`.gitignore`, ``.venv``") == (
        "`Column.copy`, `x.y`, `Op.z`, `.gitignore`, `.venv`")


def test_jinjas_class_descriptions_read_right():
    # A wrapped ":members:" list is the option's, not the class's description ("- class `Foo`: gamma, delta"),
    # and a class whose body opens with its members has them all under it (the first read as the class's
    # sibling, the second as the first's child).
    lines = [".. autoclass:: Foo()", "    :members: alpha, beta,", "              gamma, delta", "",
             "    .. attribute:: one", "", "        First.", "", "    .. attribute:: two", "", "        Second.", ""]
    assert rst.to_markdown(lines) == ["- class `Foo()`", "", "", "", "", "", "  - `one`: First.", "", "", "",
                                      "  - `two`: Second.", ""]


def test_a_descriptions_later_paragraphs_stay_in_its_item_and_a_tab_names_its_text():
    # Flask's config.rst: "Default: ``None``" read at the margin after MAX_CONTENT_LENGTH's entry, which
    # ended the list in Markdown: no part of the entry, and "what is its default?" never quoted it.
    lines = [".. py:data:: MAX_CONTENT_LENGTH", "", "    Don't read more than this many bytes. If not",
             "    set, no data is read.", "", "    Default: ``None``", "", "    .. code-block:: python", "",
             "        app.config['MAX_CONTENT_LENGTH'] = 16", "", "    - one", "", "Next paragraph.", ""]
    md = rst.to_markdown(lines)
    assert md == ["", "", "- `MAX_CONTENT_LENGTH`: Don't read more than this many bytes. If not", "set, no data is read.",
                  "", "  Default: `None`", "", "", "```python", "app.config['MAX_CONTENT_LENGTH'] = 16", "```",
                  "  - one", "", "Next paragraph.", ""]
    blocks = documents.parse_markdown(md)
    # the paragraph is the item's (a chunk that starts there is headed by it); the one after is not
    assert [(b.text[:9], b.item) for b in blocks if b.kind == "para"] == [
        ("- `MAX_CO", ""), ("Default: ", "`MAX_CONTENT_LENGTH`"), ("  - one", "`MAX_CONTENT_LENGTH`"),
        ("Next para", "")]
    # A description inside a description: its later paragraph stays two spaces in, not four (graphlib's
    # "If any cycle is detected ..." after two blank lines read as indented code).
    lines = [".. class:: Sorter", "", "   Sorts.", "", "   .. method:: order()", "", "      Returns nodes.", "",
             "      More on it.", "", "", "      If any cycle is found, it raises.", ""]
    md = rst.to_markdown(lines)
    assert md[4:] == ["", "", "  - `order()`: Returns nodes.", "", "  More on it.", "", "",
                      "  If any cycle is found, it raises.", ""]
    assert not any(b.kind == "code" for b in documents.parse_markdown(md))
    # sphinx-tabs: each tab's label opens what it holds, as a topic's title does
    lines = [".. tabs::", "", "   .. group-tab:: Bash", "", "      .. code-block:: text", "",
             "         $ export PORT=8000", "", "   .. group-tab:: Fish", "", "      Set it with set -x.", ""]
    assert rst.to_markdown(lines) == ["", "", "Bash:", "", "", "```text", "$ export PORT=8000", "```",
                                      "", "", "Fish: Set it with set -x.", ""]


def test_a_directive_citebot_does_not_know_says_its_words_but_not_a_target_it_names():
    lines = [".. audit-event:: os.chdir path os.chdir", "", ".. setting:: broker_url", "", "Text."]
    assert rst.to_markdown(lines) == ["Audit event: os.chdir path os.chdir", "", "", "", "Text."]


def test_a_cross_reference_reads_as_the_title_it_names_as_sphinx_writes_it(tmp_path):
    security = [".. _guide-security:", "", "==========", " Security", "==========", "", ".. _SSL:", "",
                "TLS options", "-----------", "", "Use TLS."]
    assert rst.titles([("userguide/security", security)]) == {
        "doc:userguide/security": "Security", "ref:guide-security": "Security", "ref:ssl": "TLS options"}
    (tmp_path / "userguide").mkdir()
    (tmp_path / "userguide" / "security.rst").write_text("\n".join(security), encoding="utf-8")
    (tmp_path / "userguide" / "tasks.rst").write_text(
        "Tasks\n=====\n\nSee :ref:`guide-security`, :ref:`ssl` and :doc:`security`; not :ref:`nowhere`.\n",
        encoding="utf-8")
    doc = documents.load(tmp_path / "userguide" / "tasks.rst", "userguide/tasks.rst")
    # a label no page defines is read as written; a :doc: names its page from the page naming it
    assert [b.text for b in doc.blocks if b.kind == "para"] == ["See Security, TLS options and Security; not nowhere."]
    # a title changed in another page is read the next time
    (tmp_path / "userguide" / "security.rst").write_text("\n".join(security).replace(" Security", " Safety"),
                                                         encoding="utf-8")
    doc = documents.load(tmp_path / "userguide" / "tasks.rst", "userguide/tasks.rst")
    assert [b.text for b in doc.blocks if b.kind == "para"] == ["See Safety, TLS options and Safety; not nowhere."]
    # A page of narrower scope lends no title: the public page would say what the staff page is called.
    (tmp_path / "userguide" / "plan.rst").write_text("---\naudience: staff\n---\n.. _plan:\n\nLayoff plan\n"
                                                     "===========\n\nText.\n", encoding="utf-8")
    (tmp_path / "userguide" / "news.rst").write_text("News\n====\n\nSee :ref:`plan` and :doc:`plan`.\n",
                                                     encoding="utf-8")
    doc = documents.load(tmp_path / "userguide" / "news.rst", "userguide/news.rst")
    assert [b.text for b in doc.blocks if b.kind == "para"] == ["See plan and plan."]
    # read as the page itself is read: a terminal escape before its front matter hides no scope
    (tmp_path / "userguide" / "plan.rst").write_text("\x1b[0m---\naudience: staff\n---\n.. _plan:\n\n"
                                                     "Layoff plan\n===========\n\nText.\n", encoding="utf-8")
    assert documents.load(tmp_path / "userguide" / "plan.rst", "userguide/plan.rst").meta["audience"] == "staff"
    doc = documents.load(tmp_path / "userguide" / "news.rst", "userguide/news.rst")
    assert [b.text for b in doc.blocks if b.kind == "para"] == ["See plan and plan."]


def test_a_substitution_reads_as_what_it_stands_for():
    lines = [".. |ver| replace:: release ``5.3``", ".. |copy| unicode:: 0xA9 .. sign", "", "At |ver|, |copy| 2009 |x|."]
    assert rst.to_markdown(lines)[3] == "At release `5.3`, © 2009 x."


def test_a_grid_tables_chunks_read_without_its_rules_and_cite_their_rows_lines(tmp_path):
    def row(a, b):
        return f"| {a:<10} | {b:<30} |\n"
    rule = "+" + "-" * 12 + "+" + "-" * 32 + "+\n"
    rows = "".join(row(f"``opt{i}``", f"Option number {i} does thing {i}") + row("", f"and goes on {i}.") + rule
                   for i in range(8))
    page = "Options\n=======\n\n" + rule + row("Name", "Meaning") + rule.replace("-", "=") + rows
    p = tmp_path / "opts.rst"
    p.write_text(page, encoding="utf-8")
    lines = page.split("\n")
    chunks = chunk_document(documents.load(p, p.name), 60)
    assert len(chunks) > 1  # split: each piece repeats the header
    for c in chunks:
        body = c.text.split("\n")[2:]
        assert c.text.startswith("| Name | Meaning |\n|---|---|\n") and all("---" not in x for x in body)
        first = body[0].split("|")[1].strip().strip("`")  # "opt3"
        assert f"``{first}``" in lines[c.start - 1]  # the piece cites the line its first row starts on
    assert "| `opt0` | Option number 0 does thing 0 and goes on 0. |" in chunks[0].text
    whole = chunk_document(documents.load(p, p.name), 500)  # one piece: no rules either
    assert len(whole) == 1 and "---" not in whole[0].text.split("\n", 2)[2] and whole[0].start == 5  # its header


def test_a_txt_file_written_in_rst_reads_as_rst_and_plain_text_stays_plain(tmp_path):
    readme = tmp_path / "README.txt"
    readme.write_text("Proj\n====\n\n.. note:: Needs Python 3.\n\nInstall::\n\n    pip install proj\n\n"
                      ".. code-block:: python\n\n    import proj\n", encoding="utf-8")
    doc = documents.load(readme, readme.name)
    assert ("code", "```\npip install proj\n```") in [(b.kind, b.text) for b in doc.blocks]
    assert ("para", "Note: Needs Python 3.") in [(b.kind, b.text) for b in doc.blocks]
    plain = tmp_path / "notes.txt"  # one directive-like line and no role: plain text, read as written
    plain.write_text("Notes\n\n.. todo:: call Bob\n\nInstall::\n\n    pip install proj\n", encoding="utf-8")
    assert any(b.text == ".. todo:: call Bob" for b in documents.load(plain, plain.name).blocks)


def test_a_footnote_whose_text_starts_on_the_next_line_is_read():
    # Python's decimal page writes ".. [#]" alone over its note: reading it raised TypeError
    assert rst.to_markdown([".. [#]", "   The note's text.", ""]) == ["[#]", "The note's text.", ""]


def test_a_literalinclude_shows_the_part_of_the_file_its_options_name():
    # Sphinx's options, in Sphinx's order: pyobject, lines, start/end, dedent.
    src = ["import os", "", "class App:", "    def run(self):", "        return 1", "", "    def stop(self):",
           "        pass", "", "# start", "    x = 1", "    y = 2", "# end"]
    assert rst.included(src, {"lines": "1,3-4,12-"}) == ["import os", "class App:", "    def run(self):",
                                                           "    y = 2", "# end"]
    assert rst.included(src, {"start-after": "# start", "end-before": "# end", "dedent": ""}) == ["x = 1", "y = 2"]
    assert rst.included(src, {"start-at": "# start", "end-at": "x = 1", "dedent": "4"}) == ["# start", "x = 1"]
    assert rst.included(src, {"pyobject": "App.run"}) == ["    def run(self):", "        return 1"]
    assert rst.included(src, {"pyobject": "Missing"}) == [] and rst.included(None, {}) == []
    assert rst.included(src, {"lines": "12-1000000000000"}) == ["    y = 2", "# end"]  # the file's lines, at once
    code: dict = {}
    md = rst.to_markdown(["Setup", "=====", "", ".. literalinclude:: app.py", "   :caption: proj/app.py",
                          "   :lines: 1", "", "Done."], include=lambda name: src if name == "app.py" else None,
                         code=code)
    # The code has no lines of its own in the page: it is given by the directive's line, whose caption stays.
    assert md == ["# Setup", "", "", "proj/app.py:", "", "", "", "Done."] and code == {3: ("py", ["import os"])}
    code = {}
    md = rst.to_markdown([".. literalinclude:: ../build/Makefile", "", "Text \ue0000\ue000."],
                         include=lambda _: ["all:"], code=code)
    assert code == {0: ("", ["all:"])}  # no suffix, no language; a page's own marker-like text names nothing
    assert md[2] == "Text 0."
    # An include with :code: (or :literal:) is code too, as docutils shows it: pytest-asyncio writes every
    # example so, and "Add the following code to the `__init__.py`:" was followed by nothing.
    for option, lang in (("   :code: python", "python"), ("   :literal:", "py")):
        code = {}
        md = rst.to_markdown(["Add this:", "", ".. include:: ex.py", option, "", "Done."],
                             include=lambda name: ["x = 1"] if name == "ex.py" else None, code=code)
        assert code == {2: (lang, ["x = 1"])} and md[-1] == "Done.", option
    code = {}
    rst.to_markdown([".. include:: part.rst", "", "Done."], include=lambda _: ["Text."], code=code)
    assert code == {}  # a plain include is rst to read in place, which citebot does not: nothing


def test_a_literalinclude_reads_a_file_inside_the_folder_and_never_one_outside(tmp_path):
    # Celery's Django setup is a literalinclude of proj/celery.py: the page said "create this module:"
    # and showed nothing.
    docs = tmp_path / "docs"
    (docs / "ex").mkdir(parents=True)
    (docs / "ex" / "celery.py").write_text("import os\n\napp = Celery('proj')\n", encoding="utf-8")
    (tmp_path / "secret.py").write_text("TOKEN = 'x'\n", encoding="utf-8")
    (docs / "ex" / "link.py").symlink_to(tmp_path / "secret.py")
    # A document citebot reads has a scope of its own, which the page's would replace; a hidden file
    # an ingest never reads.
    (docs / "staff.md").write_text("---\naudience: staff\n---\nTOKEN = 'staff'\n", encoding="utf-8")
    (docs / ".env").write_text("TOKEN=1\n", encoding="utf-8")
    (docs / "dj.rst").write_text("Django\n======\n\nCreate it:\n\n.. literalinclude:: ex/celery.py\n"
                                 "    :language: python\n    :caption: proj/celery.py\n\nThen import it.\n\n"
                                 ".. literalinclude:: ../secret.py\n\n"
                                 ".. literalinclude:: ex/link.py\n\n.. literalinclude:: /ex/celery.py\n   :lines: 3\n\n"
                                 ".. literalinclude:: staff.md\n\n.. literalinclude:: .env\n",
                                 encoding="utf-8")
    blocks = documents.load(docs / "dj.rst", "dj.rst").blocks
    assert [(b.kind, b.text, b.start, b.end) for b in blocks[1:]] == [
        ("para", "Create it:", 4, 4), ("para", "proj/celery.py:", 6, 6),
        ("code", "```python\nimport os\n\napp = Celery('proj')\n```", 6, 6),
        ("para", "Then import it.", 10, 10), ("code", "```py\napp = Celery('proj')\n```", 16, 16)]
    chunks = chunk_document(documents.load(docs / "dj.rst", "dj.rst"), 220)
    assert "TOKEN" not in "".join(c.text for c in chunks) and (chunks[0].start, chunks[0].end) == (4, 16)


def test_a_grid_table_of_a_header_alone_reads_as_its_rows():
    lines = ["+-----+-----+", "| a   | b   |", "+=====+=====+", "", "Text."]
    out = rst.to_markdown(lines)
    assert len(out) == len(lines) and "| a | b |" in out and out[-1] == "Text."


def test_odd_blocks_keep_one_line_for_each_line():
    # Found by feeding the reader random lines: a code block of options alone lost a line, and a grid
    # table never closed took one more, and every citation below moved.
    options_alone = ["Text", ".. code-block:: py", "   :caption: x.py", "   :linenos:", "", "After."]
    assert rst.to_markdown(options_alone) == ["Text", "x.py:", "", "", "", "After."]
    unclosed = ["+---+---+", "| a | b |", "   :note: x", "+---+---+"]
    out = rst.to_markdown(unclosed)
    assert len(out) == len(unclosed) and out[1] == "| a | b |"


def test_a_code_tab_is_code_under_its_caption_and_a_line_block_cell_reads_as_a_list():
    # coverage.py's config examples: "# Regexes ..." in the TOML read as a Markdown heading and
    # "c:\myproj\src" as "c:myprojsrc", when the tab's body was read as text.
    tabs = """\
.. tabs::

    .. code-tab:: toml
        :caption: pyproject.toml

        [tool.coverage.paths]
        # where the source lives
        source = ["c:\\\\myproj\\\\src"]

    .. code-tab:: python Python 3

        print(1)
""".split("\n")
    assert rst.to_markdown(tabs) == [
        "", "", "pyproject.toml:", "", "```toml", "[tool.coverage.paths]", "# where the source lives",
        'source = ["c:\\\\myproj\\\\src"]', "```", "Python 3:", "```python", "print(1)", "```"]
    # A cell's line block: "| sub/a/main.py" / "| sub/b/another.py" stacked in one cell (their bars
    # were read as column rules, six cells under a three-column header).
    listed = """\
.. list-table::
   :header-rows: 1

   * - Pattern
     - Matches
   * - ``sub/*/*.py``
     - | sub/a/main.py
       | sub/b/another.py
""".split("\n")
    assert rst.to_markdown(listed)[3:6] == [
        "| Pattern | Matches |", "|---|---|", "| `sub/*/*.py` | sub/a/main.py, sub/b/another.py |"]


def test_a_pages_file_wide_metadata_is_not_text():
    # Sphinx shows no field list that opens a page (comments may come before it): ":orphan:" was
    # the list item "- orphan:".  One after the title is the page's text.
    page = [".. Licensed under ...", ".. For details: ...", "", ":orphan:", ":tocdepth: 2", "", "Title", "=====",
            "", ":Author: someone", "", "Text."]
    assert rst.to_markdown(page) == ["", "", "", "", "", "", "# Title", "", "", "- Author: someone", "", "Text."]
    assert rst.to_markdown([".. note:: Hi", "", ":orphan:"])[2] == "- orphan:"  # not first: shown


def test_punctuation_after_a_reference_a_line_end_cut_stays_with_its_text():
    # coverage.py's ":ref:`combining path remapping" / "<cmd_combine_remapping>`.  They follow" read
    # "remapping .  They follow": the target went and the period opened the next line.
    page = ["Patterns are used for :ref:`combining path remapping", "<cmd_combine_remapping>`.  They follow.",
            "", "Read the :ref:`Optimizing Guide", "<guide-optimizing>`.", "", ".. code-block:: text", "",
            "    a", "    , kept", "", "A line", ", as the page writes it."]
    assert rst.to_markdown(page) == [
        "Patterns are used for combining path remapping.", "They follow.", "", "Read the Optimizing", "Guide.", "",
        "", "```text", "a", ", kept", "```", "A line", ", as the page writes it."]


def test_a_redirect_page_leaves_no_reading_context_behind():
    # The redirect check returned after the page's titles, includer and substitutions were set, and
    # never reset them: the next reading in that context saw the redirect page's.
    moved = [".. meta::", "", "  :http-equiv=refresh: 0; url=../new/", "", "Moved", "=====", "", "See :doc:`x`."]
    assert rst.to_markdown(moved, {"doc:x": "X"}, "a/moved") == [""] * len(moved)
    assert rst.role("doc", "/x") == "/x"  # (read outside any page: the name as written, not "X")


def test_an_unknown_directive_over_code_is_code_and_a_hash_line_is_text(tmp_path):
    # Click's ".. click:example::" over a command's source and ".. click:run::" over the call that runs
    # it were read as text: their comments became Markdown headings of 48 chunks, their indents lost.
    (tmp_path / "o.rst").write_text(
        "Options\n=======\n\nAn option:\n\n.. click:example::\n\n    # the command\n    @click.command()\n"
        "    def echo(text):\n        click.echo(text)\n\n.. click:run::\n\n    invoke(echo, args=['--help'])\n\n"
        ".. setting:: retries\n\n    # of retries before the task fails.\n    It defaults to three.\n\n"
        "# of workers is the number of CPUs.\n")
    doc = documents.load(tmp_path / "o.rst", "o.rst")
    assert [(b.kind, b.text) for b in doc.blocks] == [
        ("heading", "Options"), ("para", "An option:"),
        ("code", "```\n# the command\n@click.command()\ndef echo(text):\n    click.echo(text)\n```"),
        ("code", "```\ninvoke(echo, args=['--help'])\n```"),
        # a body of sentences stays text, and a line that opens with "#" is no heading
        ("para", "# of retries before the task fails.\nIt defaults to three."),
        ("para", "# of workers is the number of CPUs.")]


def test_the_quickstart_indices_name_no_text(tmp_path):
    # Sphinx's quickstart index ends in "Indices and tables": alembic's was a chunk, "- genindex - modindex - search"
    (tmp_path / "i.rst").write_text("Docs\n====\n\nWelcome.\n\nIndices and tables\n==================\n\n"
                                    "* :ref:`genindex`\n* :ref:`modindex`\n* :ref:`search`\n* :ref:`the API <api>`\n")
    doc = documents.load(tmp_path / "i.rst", "i.rst")
    assert [b.text for b in doc.blocks if b.kind == "para"] == ["Welcome.", "* the API"]


def test_a_doctest_block_right_after_a_literal_block_goes_on_in_its_code():
    # The literal block's closing fence stands on the one blank line between: "```pycon" was written
    # over it, and read as a line of the first block's code.
    lines = ["Also::", "", "   >>> x", "   1", "", ">>> y  # doctest: +SKIP", "2", ""]
    assert rst.to_markdown(lines) == ["Also:", "```", ">>> x", "1", "", ">>> y", "2", "```"]

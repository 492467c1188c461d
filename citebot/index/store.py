"""The one door to the index: ``SearchIndex``.

Everything above the index (retriever, answerer, evaluator) goes through
these methods and nothing else, so a second implementation (a distributed
engine) is one new class that passes ``tests/test_index_contract.py``:

  sparse_search(terms, scope, k)   BM25 over analyzed terms, only chunks the scope allows
  dense_search(vector, scope, k)   cosine over stored vectors, likewise filtered first
  get(ids)                         chunks by id
  scan(scope)                      every chunk the scope allows (the evaluator's judge)
  term_stats(terms, scope)         each term's BM25 idf, and whether a chunk the scope
                                   allows holds it (the answerer's "no document names X")
  terms_held(ids, terms)           which of the terms each chunk holds (idf coverage)
  vectors(ids)                     stored vectors of chunks (cosine for hits of BM25 only)
  live()                           this reader, or a fresh one when an ingest has switched
                                   the index since it opened (a chat runs for hours: a page
                                   re-marked staff or deleted must not stay served)

Filters run before ranking: a channel ranks only the chunks the scope allows.
"""
from __future__ import annotations

import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from citebot.schema import Chunk, Hit, Scope
from citebot.terminal import script

FORMAT = 3  # 2: BM25 postings and rows stored at ingest, no bm25.json; 3: Milvus keeps no term list per chunk
# 2: documentation markup read as rendered; 3: a language folder (en/, zh/) sets the language;
# 4: CommonMark fences, //// blocks, setext headings, per-piece lines, one PDF page per chunk, every HTML article;
# 5: front matter found behind two comments on a line and at lone "\r" line ends, a misspelt key in <meta> or a
# PDF's info fails closed (an index built before holds such pages as public: it must be re-read);
# 6: no chunk over chunker.MAX_BYTES (a longer code block is cut at line ends, where Milvus cut it mid-text);
# a misspelt status key naming any status word, a <meta> attribute or PDF info key given twice or unparseable,
# and front matter behind a zero-width space or on the fence line fail closed (such pages were public)
# 7: front matter behind any invisible character fails closed; a fence inside an HTML comment is hidden,
# inline code opens no comment (it hid the rest of a page); HTML list items keep their links, bold and
# nested lists, an aside or caption inside an article is read, loose text keeps its lines, a declared
# charset is read; VitePress containers are labelled (fastapi-docs en/zh and the sample: chunks unchanged)
# 8: a long paragraph is never cut between a numbered item's "2." and its text; 9: PDFs: a word broken
# at a line end is joined, scope values written as names or UTF-16 with a terminator are read, /Lang
# is a language tag and the catalog's /Lang counts (the sample's PDFs: chunks unchanged); 10: every
# reader's language goes through schema.lang_tag (front matter's "en-US" and a "pt-br/" folder read as
# "en", "pt", as <html lang="en-US"> did); 11: "<!-->" and "<!--->" are whole comments (they hid the rest of
# the page, and the front matter after one: a later comment's end then published the text below it), and a
# scope key in Hugo's [params] / Zola's [extra] counts (read as none, it published the page); 12: an HTML
# comment in an indented code block is code; 13: an indented code block is one code block, kept whole; 14:
# under a fence longer than any backtick run it shows; 15: a run longer than the budget without a sentence end
# is cut at a space, not inside a word (fastapi-docs en/zh and the sample: chunks unchanged); 16: a page
# without a declared language reads Ukrainian apart from Russian, and Hebrew, Greek, Thai by their scripts
# (they were "ru", "en"); "zh-TW" / "zh-HK" tags read "zh-hant", "zh-Hans" / "zh-CN" read "zh"; 17: a GFM
# table without outer pipes is a table (it was a paragraph), and an HTML <dt> reads with its <dd> as one
# sentence ("Artifact: A file ..."; the term alone was the answer); fastapi-docs en/zh and the sample have neither;
# 18: an HTML table's rowspan and colspan fill their cells, a "|" in a cell is escaped (the sample: unchanged);
# 19: a <dt> ending in "?" or "." joins its <dd> with a space, and a pipe-less table's delimiter needs "--";
# 20: Markdown reads without block-quote marks and footnote marks, a definition (":   ") after its term with
# a ":" (fastapi-docs en/zh: 8 of 4,406 chunks lose their "> "; the sample: unchanged); 21: an HTML cell
# spanning into a column a rowspan held takes it, and rowspan="0" runs to the table's end (the sample: unchanged);
# 22: a Markdown link reference definition ("[//]: # (a note)") is not text, and scope given in JSON front
# matter or a MultiMarkdown header fails closed (a rebuild re-reads every file; fastapi-docs, the sample: unchanged);
# 23: such a definition after a comment, a fence or a setext heading, in a quote or a list item, or with its
# title on the lines below, and a MultiMarkdown key with spaces or text right below the header (the same: unchanged)
# 24: front matter opened by "----", "--- # comment" or a "%YAML" line and naming a scope key fails closed; a
# <form>'s text is read (its select and textarea are not); a log's terminal escapes and a Markdown image
# given as a data: URL read as shown; a PDF encrypted with an empty password is read; a table that lays out the
# page (a cell holds a heading, a table or several paragraphs) reads as its cells' blocks (fastapi-docs, the
# sample: unchanged)
# 25: a paragraph ending in ":" moves to the next chunk with the code block, table or list it introduces; a fence's
# attributes, a console transcript's colouring tags and progress bar and Material's "# (1)!" markers are dropped
# 26: HTML: parts marked by ARIA role (navigation, search, banner, contentinfo) and heading permalinks
# are chrome, <div role="main"> is the content, inline tags join their text without spaces, an item or
# definition with code reads as blocks, admonition titles and footnote numbers open their text, a rubric is
# a heading, a <title> that is the <h1> plus the site's name gives the <h1>
# 27: PDF: bookmarks give headings, running heads/footers and contents or index pages are not read, console
# sessions are code, a broken address is joined; HTML: DocBook/AsciiDoc navigation, contents and footer are
# chrome, their note titles open the note, several <dt> over one <dd> are one term, a numbered list keeps its
# numbers, a long table's pieces cite the table; a short title above a table or code block moves with it
# 28: PDF: a paragraph a page break cuts is one paragraph, cited from its page to the next
# 29: Markdown: a reference link reads as its text, a backslash escape as its character
# 30: PDF: a bookmark's heading is found as LaTeX prints it (quotes, capitals, spaces, two lines, a footnote's
# mark after it), a back-of-book index is not read, ligatures read as their letters
# 31: HTML: a power reads 2^7, a footnote's raised number and mdBook's hidden example lines as nothing; a
# <title> that is the first heading of any level plus the site's name gives the heading, which is then no
# heading of every chunk
# 32: PDF: each piece of a paragraph too long for one chunk cites its own lines and page
# 33: plain text: a title underlined (or over- and underlined) with one repeated mark, a short line under a
# long rule, a short line in capitals after a blank one are headings
# 34: plain text keeps its first line as the title and an indented line in capitals is no title; a PDF
# heading whose printed words ran together reads as its bookmark
# 35: plain text: a line that opens with "|" is a table row only when it closes with one
# 36: HTML is parsed by HTML5's rules (html5lib); hidden labels, script buttons and boxes of nothing but
# links are not read; AsciiDoc files read as the Markdown they render like
# 37: AsciiDoc in a .txt file is found by its markup; listings and comments alone hold their lines
# 38: HTML: definitions inside a definition are entries of their own; a row of one cell across a table
# labels the rows below it (a table that opens with one has no header row), a column empty in every row
# is left out; a footer marked by class alone is chrome
# 39: HTML: a nested list's items are indented under the item that holds them
# 40: HTML: a definition holding code or a list reads its term with its first paragraph and the rest as
# blocks; an item that shows code keeps its bullet; a rubric inside a definition or an item labels what
# follows there; Sphinx's "[source]" links are not read
# 41: HTML: a sidebar's or topic's title opens its text as a note's does; a formula drawn as a picture
# reads as its alt text
# 42: reStructuredText is read (.rst, .rest, a Sphinx include .rst.inc, a copied source .rst.txt, which read
# as plain text before, and a .txt written in it); a nested list after a blank line keeps its first item's
# indent (Markdown too); rule rows between a table's rows are no text
# 43: rst: a paragraph inside a definition stays in it (borg's nested "- retry_erofs: ..." after one
# read as indented code)
# 44: a chunk that starts inside a list item (its second paragraph, a nested list) has what the item names
# as its innermost heading (borg's "BORG_SELFTEST=disabled can be used ..." named no variable)
# 45: so does one that starts inside an HTML item or definition (a method's second paragraph names the
# method, a method its class)
# 46: rst: a literalinclude shows the code of a file inside the folder, cited at the directive's line
# 47: AsciiDoc: a |=== table is a table (each row on its line, its header), not rows of text
# 48: an item named by a link or task box reads as shown, one of code or a rule names nothing; AsciiDoc
# tables keep every row on its line (a headerless one's empty header goes above "|===")
# 49: rst: a code block of options alone and a grid table never closed keep one line for each line
# 50: rst: a Sphinx description's later paragraphs stay in its item (Flask's "Default: ``None``" under
# MAX_CONTENT_LENGTH); a tab's label opens its text ("Bash:" over the command for Bash)
# 51: a paragraph inside a list item is shown two spaces in (Flask's "Default: `None`" under its key)
# 52: rst: a grid or simple table's last row runs to its bottom border (its citation named its first line alone);
# one without a header row has its empty header on the blank line above (each row was cited a line late)
# 53: a paragraph of the item a chunk starts inside stays at the margin (the item's line is in no chunk of it;
# its name heads the chunk)
# 54: MyST directives, roles and targets read as the Sphinx page shows them (a "```{note}" was code, a
# toctree's YAML a chunk); a link definition's URL on the line below, and "[label]" links, read as text
# 55: an oversized list is cut before an item, not inside one (Black's X-Python-Variant lost its name)
# 56: rst: an include with :code: or :literal: shows the file as code, as a literalinclude does
CHUNKER_VERSION = 76
ANALYZER = "citebot-8"  # 3: identifiers without hyphens, case folding, ー inside Japanese words; 4: apostrophes,
# accents; 5: no empty term from a word of combining marks alone; 6: soft hyphens and other format characters
# dropped; 7: a word ends where Hangul meets a Latin letter or digit (Korean particles: "Depends를");
# 8: contractions typed without their apostrophe ("whats", "dont") read as written with it


class IndexError_(RuntimeError):
    """The index is missing, damaged or was built with other settings; the
    message says what to run."""


class NotAFolder(IndexError_):
    """The folder to ingest is not there, or cannot be read into this index
    (a usage error at the command line, found before the index is touched)."""


class OtherDocuments(NotAFolder):
    """The ingest reads another folder (or other --include globs) than the
    index was built from and would remove documents for that alone."""


class SettingsMismatch(IndexError_):
    """The index was built with other settings (``--rebuild`` fixes it)."""


@dataclass(frozen=True)
class TermStat:
    # BM25 idf over the whole index (what the scorer uses) for a term the
    # scope holds; for one only chunks outside the scope hold, the idf of a
    # term no chunk holds: coverage, the gate and its reasons must read the
    # same whether a restricted page has the word or nothing has it.
    idf: float
    in_scope: bool  # some chunk the asker may see holds the term


class SearchIndex(Protocol):
    manifest: dict

    def sparse_search(self, terms: Sequence[str], scope: Scope, k: int) -> list[Hit]: ...
    def dense_search(self, vector: np.ndarray, scope: Scope, k: int) -> list[Hit]: ...
    def get(self, ids: Sequence[str]) -> list[Chunk]: ...
    def scan(self, scope: Scope) -> Iterator[Chunk]: ...
    def term_stats(self, terms: Sequence[str], scope: Scope) -> dict[str, TermStat]: ...
    def terms_held(self, ids: Sequence[str], terms: Sequence[str]) -> dict[str, frozenset[str]]: ...
    def vectors(self, ids: Sequence[str]) -> np.ndarray | None: ...
    def live(self) -> SearchIndex: ...


def settings_stamp(cfg, embed_name: str, dim: int) -> dict:
    """Everything that changes what is in the index; a mismatch means rebuild."""
    from citebot.search.bm25 import VARIANT

    return {
        "format": FORMAT,
        "embed_model": embed_name,
        "embed_dim": dim,
        "chunker": {"version": CHUNKER_VERSION, "chunk_tokens": cfg.chunk_tokens},
        "analyzer": ANALYZER,
        "bm25": {"variant": VARIANT, "k1": cfg.bm25_k1, "b": cfg.bm25_b},
    }


def expected_stamp(cfg) -> dict:
    """The stamp the settings ask for, without loading the embedding model
    (its dimension is checked when the model loads)."""
    from citebot.search.models import model_name

    stamp = settings_stamp(cfg, model_name(cfg.embed_model), 0)
    del stamp["embed_dim"]
    return stamp


# The settings an index is stamped with, as config keys: a rebuild command must
# repeat the ones the asker set, or it rebuilds with the defaults and the same
# refusal comes back.
STAMPED_SETTINGS = ("embed_model", "chunk_tokens", "bm25_k1", "bm25_b")


def stamped_settings(manifest: dict) -> dict:
    """The stamped settings (config keys) a manifest records, as far as it is readable."""
    from citebot.config import JOIN
    from citebot.search.models import E5, NAME_JOIN, PACKAGED, model_name

    def part(key: str) -> dict:
        v = manifest.get(key)
        return v if isinstance(v, dict) else {}

    def spec(name: str) -> str:
        return next((s for s in (E5, PACKAGED) if model_name(s) == name), name)
    name = manifest.get("embed_model")  # each part of a composite as its settings spell it
    found = {"embed_model": JOIN.join(map(spec, name.split(NAME_JOIN))) if isinstance(name, str) else name,
             "chunk_tokens": part("chunker").get("chunk_tokens"),
             "bm25_k1": part("bm25").get("k1"), "bm25_b": part("bm25").get("b")}
    return {k: v for k, v in found.items() if isinstance(v, (str, int, float)) and not isinstance(v, bool)}


def scope_values(chunks) -> dict:
    """The audiences, languages and tenants the index's chunks have, for the
    manifest: a scope flag no chunk matches is most likely a typo.  The
    shared chunks' audiences and languages, and each tenant's own."""
    def values(cs) -> dict[str, list[str]]:
        return {"audience": sorted({c.audience for c in cs}), "lang": sorted({c.lang for c in cs if c.lang})}
    chunks = list(chunks)
    tenants = sorted({c.tenant for c in chunks if c.tenant})
    return {**values([c for c in chunks if not c.tenant]), "tenant": tenants,
            "tenants": {t: values([c for c in chunks if c.tenant == t]) for t in tenants}}


def scope_notes(manifest: dict, scope) -> list[str]:
    """What the asker's scope names that no chunk it may see has (``--audience
    staf``): it is taken, and sees less than meant, so say so.  The values
    listed are the shared documents' and the asker's tenant's, never another
    tenant's (nor its name).  An index stamped before the values were kept
    gives no note; one stamped before they were kept per tenant lists none."""
    values = manifest.get("scopes")
    if not isinstance(values, dict):
        return []
    tenants = values.get("tenants")
    known = isinstance(tenants, dict) or not values.get("tenant")  # else the lists mix every tenant's
    own = tenants.get(scope.tenant) if isinstance(tenants, dict) and scope.tenant else None
    own = own if isinstance(own, dict) else {}

    def here(key: str) -> set[str]:
        return set(values.get(key) or []) | set(own.get(key) or [])

    def listed(key: str, what: str) -> str:
        return f" ({what} here: {', '.join(sorted(here(key))) or 'none'})" if known else ""
    notes = []
    for a in sorted(scope.audiences - {"public"} - here("audience")):
        notes.append(f"--audience {a}: no document in this index is for audience {a!r}, so the public ones "
                     f"alone are searched{listed('audience', 'audiences')}")
    for lang in sorted((scope.langs or set()) - here("lang")):
        notes.append(f"--lang: no document in this index is in {lang!r}{listed('lang', 'languages')}")
    if scope.tenant and scope.tenant not in set(values.get("tenant") or []):
        notes.append(f"--tenant: no document in this index belongs to tenant {scope.tenant!r}, so the shared "
                     "ones alone are searched")
    return notes


def rebuild_command(manifest: dict, root, cfg=None) -> str:
    """The ingest command that rebuilds this index, with every stamped
    setting other than the default: those ``cfg`` gives (what the asker
    wants), else those the manifest records (a damaged index is rebuilt as
    it was built)."""
    from citebot.config import DEFAULTS, ConfigError, resolve

    try:  # what the command gets where it runs without a --set: the config file's, the environment's
        ambient = resolve()[0]
    except (ConfigError, OSError):
        ambient = DEFAULTS
    manifest = manifest if isinstance(manifest, dict) else {}
    include = "".join(f" --include {shlex.quote(str(g))}" for g in manifest.get("include") or [])
    # Without it the rebuild drops every document read through a link out of the folder.
    include += " --follow-links" if manifest.get("follow_links") is True else ""
    where = f"--index {shlex.quote(str(root))}"
    if manifest.get("backend") == "milvus":
        where = (f"--set backend=milvus --set milvus_uri={shlex.quote(str(manifest.get('milvus_uri')))} "
                 f"--set milvus_collection={shlex.quote(str(manifest.get('milvus_collection')))}")
    given = {k: getattr(cfg, k) for k in STAMPED_SETTINGS} if cfg is not None else stamped_settings(manifest)
    # A setting the asker gave as the default is repeated too when the environment or a config file
    # sets another: without it the rebuild took theirs, and the same refusal came back.
    sets = "".join(f" --set {k}={shlex.quote(str(v))}" for k, v in given.items()
                   if v != getattr(DEFAULTS, k) or v != getattr(ambient, k))
    folder = manifest.get("source_folder")
    return f"{script('ingest.py')} {shlex.quote(str(folder)) if folder else 'FOLDER'} {where}{sets}{include} --rebuild"


def check_compatible(manifest: dict, expected: dict, root, cfg=None) -> None:
    """Refuse an index built with other settings, naming the command that fixes it."""
    diffs = [f"{k}: index has {manifest.get(k)!r}, settings ask for {v!r}"
             for k, v in expected.items() if manifest.get(k) != v]
    if diffs:
        raise SettingsMismatch(f"the index at {root} was built with other settings ({'; '.join(diffs)}). "
                               f"{_as_built_hint(manifest, cfg)}"
                               f"Rebuild it: {rebuild_command(manifest, root if cfg is None else cfg.index, cfg)}")


def _as_built_hint(manifest: dict, cfg) -> str:
    """How to use the index as it was built, when the flags it was built with
    give its whole stamp (not when its format, chunker or analyzer differ):
    the rebuild re-embeds everything for a new model."""
    from citebot.config import ConfigError

    if cfg is None:
        return ""
    flags = {k: v for k, v in stamped_settings(manifest).items() if getattr(cfg, k) != v}
    try:
        again = expected_stamp(cfg.replace(**flags)) if flags else None
    except ConfigError:
        return ""
    if again is None or any(manifest.get(k) != v for k, v in again.items()):
        return ""
    return "To use it as built, give " + " ".join(f"--set {k}={shlex.quote(str(v))}" for k, v in flags.items()) + ". "


def open_index(cfg) -> SearchIndex:
    """The index the settings name (``backend``), checked against the settings that built it."""
    index: SearchIndex
    if cfg.backend == "milvus":
        from citebot.index.milvus import MilvusIndex

        index = MilvusIndex.open(cfg)
    else:
        from citebot.index.local import LocalIndex

        index = LocalIndex.load(cfg.index)
    return checked(index, cfg)


def index_where(cfg) -> str:
    """The index the settings name, as messages say it: its folder, or its Milvus collection."""
    return f"Milvus collection {cfg.milvus_collection}" if cfg.backend == "milvus" else str(cfg.index)


def another_index(cfg) -> str:
    """How to give a run an index of its own, on this backend (``--index`` is a usage error on Milvus)."""
    return "--set milvus_collection=NAME" if cfg.backend == "milvus" else "--index"


def checked(index: SearchIndex, cfg) -> SearchIndex:
    """``index``, refused when the settings ask for another build than its stamp."""
    check_compatible(index.manifest, expected_stamp(cfg), index_where(cfg), cfg)
    return index

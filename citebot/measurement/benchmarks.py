"""Readers for the public BEIR-format benchmarks kept outside the repository.

The benchmark folders are read-only copies of public research data that live
next to the repository, at ``../shared/benchmarks`` (override with the
``CITEBOT_BENCHMARKS`` environment variable).  They are never copied into the
project; tests that need them skip when the folder is absent.

BEIR form: ``corpus.jsonl`` rows ``{"_id", "title", "text"}``, ``queries.jsonl``
rows ``{"_id", "text", ...}``, qrels TSV with a ``query-id corpus-id score``
header line.  Per benchmark (see ``load``):

* ``scifact``: ``corpus.jsonl``, ``queries.jsonl`` (1,109), ``qrels/test.tsv``
  (300 queries) and ``qrels/train.tsv`` (809 queries); binary qrels.
* ``mtrag``: ``pooled_corpus.jsonl`` and ``mtrag_human_pooled/`` with
  ``queries_lastturn.jsonl`` / ``queries_rewrite.jsonl`` /
  ``queries_questions.jsonl`` (238 turns each, same ids, an extra ``domain``
  field) and ``qrels.tsv``.  Query texts carry a ``|user|: `` speaker prefix;
  the "questions" form is every user turn so far, one ``|user|: ...`` per line.
  ``mtragun_tasks.jsonl`` / ``mtragun_qrels.tsv`` (MTRAG-UN) are read by
  ``load_mtragun_tasks``.
* ``squad2``: ``corpus.jsonl`` (411 paragraphs), ``queries.jsonl`` (500 rows
  with ``is_impossible``, ``answers``, ``context_id``), ``qrels.tsv`` holding
  only the 242 answerable questions (impossible ones have ``answers == [""]``
  and no qrels row).
* ``rgb_zh``: ``zh_corpus.jsonl``, ``zh_queries.jsonl`` (with ``answers``),
  ``zh_qrels.tsv``.
* ``cmrc``: ``cmrc2018/`` ``corpus.jsonl`` (137 Chinese contexts),
  ``queries.jsonl`` (500 questions with ``answers``), ``qrels.tsv`` (the
  context each question was written against).
"""
from __future__ import annotations

import csv
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "BENCH_DIR",
    "NAMES",
    "MTRAG_QUERY_FORMS",
    "PUBLISHED",
    "PUBLISHED_SOURCES",
    "Benchmark",
    "bench_dir",
    "available",
    "load_corpus",
    "load_queries",
    "load_qrels",
    "load",
    "load_mtragun_tasks",
]

ENV_VAR = "CITEBOT_BENCHMARKS"

#: Default location: ``<repo>/../shared/benchmarks`` unless CITEBOT_BENCHMARKS is set.
BENCH_DIR: Path = Path(
    os.environ.get(ENV_VAR) or Path(__file__).resolve().parents[3] / "shared" / "benchmarks"
)

NAMES = ("scifact", "mtrag", "squad2", "rgb_zh", "cmrc")
MTRAG_QUERY_FORMS = ("lastturn", "rewrite", "questions")
MTRAG_SPEAKER = "|user|: "

# Published nDCG@10 numbers from shared/benchmarks/README.md.  A tuple is a
# published range (low, high).  The mtrag "pooled" numbers are measured on the
# pooled corpus shipped here; the "full" ones are the paper's, on the full
# corpora, and are NOT comparable with anything measured on the pooled corpus.
PUBLISHED: dict[str, dict[str, float | tuple]] = {
    "scifact": {
        "bm25_anserini_multifield": 0.665,
        "bm25_anserini_flat": 0.679,
        "bm25_rank_bm25": 0.685,
        "dense_all_minilm_l6_v2": 0.645,
        "bm25_top100_ce_minilm_l6": (0.682, 0.688),
        "dense_bge_small_en_v1_5": 0.713,
        "bm25_bge_base_rrf": 0.744,
        "bm25_lucene_k0.9_b0.4": 0.676,
        "bm25_lucene_k1.2_b0.75": 0.680,
        "bm25_elasticsearch": 0.690,
    },
    "mtrag": {
        "bm25_pooled_lastturn": 0.550,
        "bm25_pooled_rewrite": 0.584,
        "bm25_full_lastturn": 0.21,
        "bm25_full_rewrite": 0.25,
        "bge_base_full_lastturn": 0.30,
        "bge_base_full_rewrite": 0.38,
    },
}

PUBLISHED_SOURCES: dict[str, dict[str, str]] = {
    "scifact": {
        "bm25_anserini_multifield": "BM25 (Anserini, k1=0.9 b=0.4, multifield); BEIR paper Table 2, Anserini regression 0.6647",
        "bm25_anserini_flat": "BM25 (Anserini, title+text flat); Anserini / Pyserini BEIR regressions",
        "bm25_rank_bm25": "BM25, rank-bm25; xhluca/bm25-benchmarks README",
        "dense_all_minilm_l6_v2": "all-MiniLM-L6-v2 dense; MTEB",
        "bm25_top100_ce_minilm_l6": "BM25 top-100 + cross-encoder ms-marco-MiniLM-L-6-v2; BEIR reranking table / BEIR paper BM25+CE",
        "dense_bge_small_en_v1_5": "bge-small-en-v1.5 dense; MTEB results",
        "bm25_bge_base_rrf": "BM25 + BGE-base, RRF; QuackIR (Waterloo)",
        "bm25_lucene_k0.9_b0.4": "Lucene BM25 k1=0.9 b=0.4; bm25-benchmarks README (67.6)",
        "bm25_lucene_k1.2_b0.75": "Lucene BM25 k1=1.2 b=0.75; bm25-benchmarks README (68.0)",
        "bm25_elasticsearch": "Elasticsearch BM25; bm25-benchmarks README (69.0)",
    },
    "mtrag": {
        "bm25_pooled_lastturn": "BM25 on the pooled corpus here, last turn as query (README)",
        "bm25_pooled_rewrite": "BM25 on the pooled corpus here, gold rewrite as query (README)",
        "bm25_full_lastturn": "MTRAG paper, full corpora, BM25, last turn",
        "bm25_full_rewrite": "MTRAG paper, full corpora, BM25, rewritten turn",
        "bge_base_full_lastturn": "MTRAG paper, full corpora, BGE-base, last turn",
        "bge_base_full_rewrite": "MTRAG paper, full corpora, BGE-base, rewritten turn",
    },
}


@dataclass
class Benchmark:
    """One loaded benchmark split.

    ``queries`` holds only the queries that have qrels for the split, except
    for squad2, whose unanswerable queries (no qrels by construction) are kept
    and listed in ``meta["unanswerable"]``.
    """

    name: str
    corpus: dict[str, dict]  # _id -> {"title", "text"}
    queries: dict[str, str]  # _id -> query text
    qrels: dict[str, dict[str, int]]  # query id -> {doc id: grade}
    meta: dict = field(default_factory=dict)


# ----------------------------------------------------------------------------
# paths


def bench_dir() -> Path:
    """The benchmarks folder: CITEBOT_BENCHMARKS if set now, else BENCH_DIR."""
    env = os.environ.get(ENV_VAR)
    return Path(env) if env else Path(BENCH_DIR)


def _need(path: Path, what: str = "benchmark file") -> Path:
    if not path.is_file():
        raise FileNotFoundError(
            f"{what} not found: {path}. The benchmarks folder is expected at "
            f"../shared/benchmarks next to the repository (default {BENCH_DIR}), "
            f"or wherever the {ENV_VAR} environment variable points."
        )
    return path


def _files(name: str, root: Path, split: str, query_form: str | None) -> dict[str, Path]:
    """The files one (name, split, query_form) needs, by role."""
    if name == "scifact":
        d = root / "scifact"
        return {
            "corpus": d / "corpus.jsonl",
            "queries": d / "queries.jsonl",
            "qrels": d / "qrels" / f"{split}.tsv",
        }
    if name == "mtrag":
        d = root / "mtrag"
        form = query_form or "lastturn"
        return {
            "corpus": d / "pooled_corpus.jsonl",
            "queries": d / "mtrag_human_pooled" / f"queries_{form}.jsonl",
            "qrels": d / "mtrag_human_pooled" / "qrels.tsv",
            "questions": d / "mtrag_human_pooled" / "queries_questions.jsonl",
        }
    if name == "squad2":
        d = root / "squad2"
        return {"corpus": d / "corpus.jsonl", "queries": d / "queries.jsonl", "qrels": d / "qrels.tsv"}
    if name == "rgb_zh":
        d = root / "rgb_zh"
        return {
            "corpus": d / "zh_corpus.jsonl",
            "queries": d / "zh_queries.jsonl",
            "qrels": d / "zh_qrels.tsv",
        }
    if name == "cmrc":
        d = root / "cmrc2018"
        return {"corpus": d / "corpus.jsonl", "queries": d / "queries.jsonl", "qrels": d / "qrels.tsv"}
    raise ValueError(f"unknown benchmark {name!r}; expected one of {', '.join(NAMES)}")


def _check_args(name: str, split: str, query_form: str | None) -> None:
    if name not in NAMES:
        raise ValueError(f"unknown benchmark {name!r}; expected one of {', '.join(NAMES)}")
    splits = ("test", "train") if name == "scifact" else ("test",)
    if split not in splits:
        raise ValueError(f"benchmark {name!r} has no split {split!r}; expected one of {', '.join(splits)}")
    if name == "mtrag":
        if query_form is not None and query_form not in MTRAG_QUERY_FORMS:
            raise ValueError(
                f"mtrag query_form must be one of {', '.join(MTRAG_QUERY_FORMS)}, got {query_form!r}"
            )
    elif query_form is not None:
        raise ValueError(f"query_form applies to mtrag only, not {name!r}")


def available(name: str, root: str | Path | None = None) -> bool:
    """True when every file ``load(name)`` needs (all splits/forms) exists."""
    if name not in NAMES:
        return False
    base = Path(root) if root is not None else bench_dir()
    combos: list[tuple[str, str | None]]
    if name == "scifact":
        combos = [("test", None), ("train", None)]
    elif name == "mtrag":
        combos = [("test", f) for f in MTRAG_QUERY_FORMS]
    else:
        combos = [("test", None)]
    return all(p.is_file() for s, f in combos for p in _files(name, base, s, f).values())


# ----------------------------------------------------------------------------
# raw readers


def _read_jsonl(path: str | Path):
    path = Path(path)
    _need(path)
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            line = line.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{lineno}: not valid JSON ({e.msg})") from None


def load_corpus(path: str | Path) -> dict[str, dict]:
    """``corpus.jsonl`` -> {_id: {"title", "text"}} (a missing title is "")."""
    corpus: dict[str, dict] = {}
    for row in _read_jsonl(path):
        corpus[str(row["_id"])] = {"title": row.get("title") or "", "text": row.get("text") or ""}
    return corpus


def load_queries(path: str | Path) -> dict[str, str]:
    """``queries.jsonl`` -> {_id: text}."""
    return {str(row["_id"]): row.get("text") or "" for row in _read_jsonl(path)}


def _query_rows(path: str | Path) -> dict[str, dict]:
    return {str(row["_id"]): row for row in _read_jsonl(path)}


def load_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """qrels TSV (``query-id  corpus-id  score``, header line skipped) ->
    {query id: {doc id: grade}}.  Rows with grade <= 0 are kept (judged
    non-relevant); the metrics ignore them."""
    path = Path(path)
    _need(path)
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8", newline="") as fh:
        for lineno, row in enumerate(csv.reader(fh, delimiter="\t"), start=1):
            if not row or not "".join(row).strip():
                continue
            if lineno == 1 and row[0].strip().lower() in ("query-id", "query_id", "qid"):
                continue
            if len(row) == 4:  # TREC form: qid iter docid grade
                row = [row[0], row[2], row[3]]
            if len(row) != 3:
                raise ValueError(f"{path}:{lineno}: expected 3 tab-separated columns, got {len(row)}")
            qid, did, score = (c.strip() for c in row)
            try:
                grade = int(float(score))
            except ValueError:
                raise ValueError(f"{path}:{lineno}: score {score!r} is not a number") from None
            qrels.setdefault(qid, {})[did] = grade
    return qrels


def _strip_speaker(text: str) -> str:
    lines = [ln[len(MTRAG_SPEAKER):] if ln.startswith(MTRAG_SPEAKER) else ln for ln in text.split("\n")]
    return "\n".join(lines).strip()


# ----------------------------------------------------------------------------
# benchmarks


def load(
    name: str,
    split: str = "test",
    query_form: str | None = None,
    *,
    root: str | Path | None = None,
    strip_speaker: bool = True,
) -> Benchmark:
    """Load one benchmark split.

    ``name``: scifact | mtrag | squad2 | rgb_zh | cmrc.  ``split``: "test" (scifact
    also "train"; the others ship one qrels file, exposed as "test").
    ``query_form`` (mtrag only): "lastturn" (default), "rewrite" (the human
    standalone rewrite) or "questions" (all user turns so far, one per line).
    ``strip_speaker`` (mtrag only) drops the ``|user|: `` prefix of each line.
    ``root`` overrides the benchmarks folder.

    ``meta`` always has "split", "root" and "files"; also:

    * mtrag: "query_form", "domain" {qid: domain}, "user_turns" {qid: [user
      utterances up to and including this turn]} (from queries_questions).
    * squad2: "unanswerable" (set of impossible query ids; these queries are
      kept in ``queries`` although they have no qrels), "answers" {qid: [gold
      answers]} ([] for impossible ones), "context_id" {qid: paragraph id the
      question was written against}.
    * rgb_zh, cmrc: "answers" {qid: [gold answers]}.
    """
    _check_args(name, split, query_form)
    base = Path(root) if root is not None else bench_dir()
    files = _files(name, base, split, query_form)
    for role, p in files.items():
        if role != "questions":
            _need(p, f"{name} {role} file")

    corpus = load_corpus(files["corpus"])
    rows = _query_rows(files["queries"])
    qrels = load_qrels(files["qrels"])
    meta: dict = {"split": split, "root": str(base), "files": {k: str(v) for k, v in files.items()}}

    if name == "squad2":
        unanswerable = {qid for qid, r in rows.items() if r.get("is_impossible")}
        keep = [qid for qid in rows if qid in qrels or qid in unanswerable]
        meta["unanswerable"] = unanswerable
        meta["answers"] = {
            qid: [a for a in (rows[qid].get("answers") or []) if a] for qid in keep
        }
        meta["context_id"] = {qid: rows[qid].get("context_id") for qid in keep}
    else:
        keep = [qid for qid in rows if qid in qrels]

    queries = {qid: rows[qid].get("text") or "" for qid in keep}
    qrels = {qid: qrels[qid] for qid in keep if qid in qrels}

    if name == "mtrag":
        queries = _mtrag_meta(meta, rows, keep, files["questions"], query_form, queries, strip_speaker)
    elif name in ("rgb_zh", "cmrc"):
        meta["answers"] = {qid: list(rows[qid].get("answers") or []) for qid in keep}

    return Benchmark(name=name, corpus=corpus, queries=queries, qrels=qrels, meta=meta)


def _mtrag_meta(meta: dict, rows: dict, keep: list[str], questions: Path, query_form: str | None,
                queries: dict[str, str], strip_speaker: bool) -> dict[str, str]:
    """Fill mtrag's "query_form", "domain" and "user_turns"; the queries,
    speaker prefixes stripped when asked."""
    meta["query_form"] = query_form or "lastturn"
    meta["domain"] = {qid: rows[qid].get("domain") for qid in keep}
    if questions.is_file():
        q_rows = _query_rows(questions)
        meta["user_turns"] = {qid: [_strip_speaker(t) for t in q_rows[qid]["text"].split("\n" + MTRAG_SPEAKER)]
                              for qid in keep if qid in q_rows}
    return {qid: _strip_speaker(t) for qid, t in queries.items()} if strip_speaker else queries


def load_mtragun_tasks(root: str | Path | None = None) -> list[dict]:
    """MTRAG-UN tasks (``mtrag/mtragun_tasks.jsonl``) as a list of dicts with
    ``task_id``, ``collection``, ``history`` [{speaker, text}], ``question``,
    ``answerability`` (list, e.g. ["UNANSWERABLE"]), ``gold_passage_ids``,
    ``reference_answer``, ... plus ``qrels`` {doc id: grade} from
    ``mtragun_qrels.tsv`` ({} for tasks without qrels: UNANSWERABLE and
    UNDERSPECIFIED).  Passage ids refer to ``mtrag/pooled_corpus.jsonl``."""
    base = Path(root) if root is not None else bench_dir()
    d = base / "mtrag"
    tasks = list(_read_jsonl(d / "mtragun_tasks.jsonl"))
    qrels = load_qrels(d / "mtragun_qrels.tsv")
    for t in tasks:
        t["qrels"] = qrels.get(str(t["task_id"]), {})
    return tasks

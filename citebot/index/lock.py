"""One writer at a time: the lock an ingest holds on its index for its whole run.

The lock is ``INDEX/.lock``, taken with ``flock`` (released by the kernel
when the process ends, so a crashed writer never leaves it stuck).  The
holder writes who it is into the file; a second writer either waits, saying
for whom, or gives up at once with that name.  Readers take no lock: they
read whole generations, which a writer never changes.
"""
from __future__ import annotations

import contextlib
import errno
import json
import os
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from citebot.index.store import IndexError_

try:
    import fcntl
except ImportError:  # not POSIX: no lock, and say so
    fcntl = None  # type: ignore[assignment]


def holder(path: Path) -> str:
    try:
        h = json.loads(path.read_text(encoding="utf-8"))
        return f"pid {h['pid']} on {h['host']}, started {h['started']}: {h['command']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "another citebot ingest"


@contextlib.contextmanager
def writer(root: str | Path, wait: bool = True, log=None, other: str = "--index") -> Iterator[None]:
    """Hold the index's writer lock; ``wait`` False raises ``IndexError_``
    at once when another writer holds it.  ``other``: the flag that names
    another index on this backend, for the message."""
    root = Path(root)
    try:
        root.mkdir(parents=True, exist_ok=True)
        path = root / ".lock"
        f = open(path, "a+", encoding="utf-8")
    except (NotADirectoryError, FileExistsError):
        raise IndexError_(f"cannot use {root} as an index folder: a file is in the way; move it, or give another "
                          f"{other}") from None
    except OSError as e:
        if isinstance(e, PermissionError) or getattr(e, "errno", None) == errno.EROFS:
            # Reading needs no lock: the chat goes on over a read-only index; only an ingest cannot write.
            chats = " (chats over it still work)" if (root / "CURRENT").exists() else ""
            raise IndexError_(f"cannot write to the index folder {root} ({e.strerror or e}); an ingest needs write "
                              f"access there{chats}, or give another {other}") from None
        raise IndexError_(f"cannot open the index folder {root}: {e.strerror or e}") from None
    with f:
        if fcntl is not None:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                who = holder(path)
                if not wait:
                    raise IndexError_(f"the index at {root} is being written by {who}; wait for it to finish") from None
                if log:
                    log(f"waiting for the index at {root}: it is being written by {who}")
                fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        f.truncate()
        f.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "started": time.strftime("%H:%M:%S"),
                            "command": " ".join(sys.argv[:3])[:200]}))
        f.flush()
        try:
            yield
        finally:
            f.seek(0)
            f.truncate()
            if fcntl is not None:
                fcntl.flock(f, fcntl.LOCK_UN)

"""One progress line for an ingest, on a terminal only: files read, chunks,
embeddings made and the time left; warnings print above it."""
from __future__ import annotations

import sys
import time
from collections.abc import Callable

from citebot.terminal import safe_line


class Progress:
    def __init__(self, log: Callable[[str], None] | None = None, stream=None):
        self.stream = stream or sys.stderr
        self.log = log
        self.live = log is None and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.t0 = time.perf_counter()
        self.files = self.n_files = self.n_chunks = self.to_embed = self.done_embed = 0
        self.t_embed = 0.0
        self._last = 0.0

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def warn(self, msg: str) -> None:
        if self.log is not None:
            self.log(msg)
            return
        self._clear()
        print(f"citebot: {safe_line(msg)}", file=self.stream, flush=True)
        self._draw(force=True)

    def start(self, n_files: int) -> None:
        self.n_files = n_files

    def file(self, rel: str) -> None:
        self.files += 1
        self._draw()

    def chunks(self, n: int) -> None:
        self.n_chunks = n

    def embedding(self, n: int) -> None:
        self.to_embed, self.t_embed = n, time.perf_counter()
        self._draw(force=True)

    def embedded(self, n: int) -> None:
        self.done_embed += n
        self._draw(force=True)

    def done(self) -> None:
        self._clear()

    def _line(self) -> str:
        line = f"ingest: files {self.files}/{self.n_files} · chunks {self.n_chunks}"
        if self.to_embed:
            rate = self.done_embed / max(time.perf_counter() - self.t_embed, 1e-6)
            left = (self.to_embed - self.done_embed) / rate if rate and self.done_embed else 0
            line += f" · embedded {self.done_embed}/{self.to_embed}"
            if self.done_embed:
                line += f" ({rate:.0f}/s, ~{left / 60:.0f} min left)" if left >= 90 else f" ({rate:.0f}/s, ~{left:.0f} s left)"
        return line

    def _draw(self, force: bool = False) -> None:
        now = time.perf_counter()
        if not self.live or (not force and now - self._last < 0.2):
            return
        self._last = now
        self.stream.write("\r\x1b[2K" + self._line())
        self.stream.flush()

    def _clear(self) -> None:
        if self.live:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()

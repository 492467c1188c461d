"""One progress line for an ingest: files read, chunks, embeddings made and
the time left.  On a terminal it is redrawn in place, warnings above it;
into a log or a pipe it is written as a plain line every ``PLAIN_EVERY``
seconds, so a long ingest never looks hung (reviewers saw 7 to 17 minutes
of silence), and a short one adds nothing."""
from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable

from citebot.terminal import safe_line

PLAIN_EVERY = 30.0


class Progress:
    def __init__(self, log: Callable[[str], None] | None = None, stream=None,
                 clock: Callable[[], float] = time.perf_counter):
        self.stream = stream or sys.stderr
        self.log = log
        self.live = log is None and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.plain = log is None and not self.live
        self.clock = clock
        self.t0 = clock()
        self.files = self.n_files = self.n_chunks = self.to_embed = self.done_embed = 0
        self.t_embed = 0.0
        self._last = 0.0 if self.live else self.t0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._shown = ""  # the last plain line written ("": none yet)

    def elapsed(self) -> float:
        return self.clock() - self.t0

    def warn(self, msg: str) -> None:
        if self.log is not None:
            self.log(msg)
            return
        self._clear()
        print(f"citebot: {safe_line(msg)}", file=self.stream, flush=True)
        self._draw(force=True)

    def start(self, n_files: int, tick: float = 1.0) -> None:
        self.n_files = n_files
        if self.plain and self._ticker is None:
            # Into a log, the line is due every PLAIN_EVERY seconds even while one batch of
            # embeddings runs (256 passages: 30-85 s on 2 cores), not only when one ends.
            self._ticker = threading.Thread(target=self._tick, args=(tick,), daemon=True)
            self._ticker.start()

    def _tick(self, every: float) -> None:
        while not self._stop.wait(every):
            self._draw()

    def file(self, rel: str) -> None:
        self.files += 1
        self._draw()

    def chunks(self, n: int) -> None:
        self.n_chunks = n

    def embedding(self, n: int) -> None:
        self.to_embed, self.t_embed = n, self.clock()
        self._draw(force=True)

    def embedded(self, n: int) -> None:
        self.done_embed += n
        self._draw(force=True)

    def done(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        # Into a log that has a line, the last one says where the ingest ended: it stopped at
        # "embedded 0/192" when the one batch ended less than PLAIN_EVERY after the last line.
        if self.plain and self._shown and self._line() != self._shown:
            print(self._line(), file=self.stream, flush=True)
        self._clear()

    def _line(self) -> str:
        line = f"ingest: files {self.files}/{self.n_files} · chunks {self.n_chunks}"
        if self.to_embed:
            rate = self.done_embed / max(self.clock() - self.t_embed, 1e-6)
            left = (self.to_embed - self.done_embed) / rate if rate and self.done_embed else 0
            line += f" · embedded {self.done_embed}/{self.to_embed}"
            if self.done_embed:
                line += f" ({rate:.0f}/s, ~{left / 60:.0f} min left)" if left >= 90 else f" ({rate:.0f}/s, ~{left:.0f} s left)"
        return line

    def _draw(self, force: bool = False) -> None:
        now = self.clock()
        if self.plain:
            with self._lock:  # the ticker and the ingest both draw
                if now - self._last >= PLAIN_EVERY:
                    self._last, self._shown = now, self._line()
                    print(self._shown, file=self.stream, flush=True)
            return
        if not self.live or (not force and now - self._last < 0.2):
            return
        self._last = now
        self.stream.write("\r\x1b[2K" + self._line())
        self.stream.flush()

    def _clear(self) -> None:
        if self.live:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()

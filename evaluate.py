"""Measure citebot on golden.json (and public benchmarks): which techniques earn their keep.

    python evaluate.py [--index DIR] [--golden golden.json] [--answers] [--json] [--limit N] [--ids q001,q002]
    python evaluate.py --benchmark scifact|mtrag|squad2|rgb_zh [--limit N] [--json]

Prints one ablation table (hit@k, recall@k, MRR, nDCG@10, refusal precision and
recall, leaks, latency, model calls), a per-tag breakdown, the questions each
configuration misses, and a diagnosis of the stage where each failed question
lost its evidence.  Gold evidence is matched as phrases, so re-chunking does
not invalidate the labels.  Same input, same numbers (latency aside).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import answer as answer_mod
import cli
import config
import diagnose
import metrics
import models
import rewrite
import store
from retrieve import Retriever, open_index
from schema import Scope

RANK_DEPTH = 20  # every configuration ranks at least this deep for recall@20

# name -> (config overrides, search without filters)
CONFIGS: dict[str, tuple[dict, bool]] = {
    "bm25": (dict(use_dense=False, use_rerank=False, use_expansion=False, use_rewrite=False), False),
    "dense": (dict(use_sparse=False, use_rerank=False, use_expansion=False, use_rewrite=False), False),
    "hybrid": (dict(use_rerank=False, use_expansion=False, use_rewrite=False), False),
    "+rerank": (dict(use_rerank=True, use_expansion=False, use_rewrite=False), False),
    "+expansion": (dict(use_rerank=True, use_expansion=True, use_rewrite=False), False),
    "+rewrite": (dict(use_rerank=True, use_expansion=True, use_rewrite=True), False),
    "no-filters": (dict(use_rerank=True, use_expansion=True, use_rewrite=True), True),
}
FULL = "+rewrite"


def load_golden(path: str | Path) -> list[dict]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"cannot read the golden set {path}: {e}") from None
    qs = data["questions"] if isinstance(data, dict) else data
    for q in qs:
        if not q.get("id") or not (q.get("question") or q.get("turns")):
            raise ValueError(f"golden entry {q!r:.80} needs an id and a question or turns")
    return qs


def scope_for(q: dict) -> Scope:
    s = q.get("scope") or {}
    return Scope.build(audience=s.get("audience"), tenant=s.get("tenant"), lang=s.get("lang"),
                       include_superseded=bool(s.get("include_superseded")))


def turns_of(q: dict) -> list[str]:
    return list(q["turns"]) if q.get("turns") else [q["question"]]


class Judge:
    """Relevance of chunks for a question, from its evidence phrases."""

    def __init__(self, index: store.LocalIndex):
        self.index = index
        self.normed = {c.id: diagnose.norm(c.search_text) for c in index.chunks}
        self._relevant: dict[str, dict[str, int]] = {}

    def relevant(self, q: dict) -> dict[str, int]:
        """Grade of every chunk holding the evidence; the same for every
        configuration, so it is worked out once per question."""
        if q["id"] not in self._relevant:
            ev = q.get("evidence", [])
            grades = {cid: diagnose.grade_normed(t, ev) for cid, t in self.normed.items()}
            self._relevant[q["id"]] = {cid: g for cid, g in grades.items() if g}
        return self._relevant[q["id"]]

    def missing_phrases(self, q: dict) -> list[str]:
        return [e["phrase"] for e in q.get("evidence", []) if e.get("grade", 1) >= 2
                and not any(diagnose.norm(e["phrase"]) in t for t in self.normed.values())]

    def stale(self, q: dict, chunk) -> bool:
        """A chunk this asker must not get: out of the question's scope, or
        holding a phrase the question marks as must-not."""
        if not scope_for(q).allows(chunk):
            return True
        t = self.normed[chunk.id]
        return any(diagnose.norm(p) in t for p in q.get("must_not", []))


def rank_config(cfg: config.Config) -> config.Config:
    return cfg.replace(final_k=max(RANK_DEPTH, cfg.final_k), rerank_pool=max(RANK_DEPTH, cfg.rerank_pool))


def run_config(name: str, qs: list[dict], retriever: Retriever, judge: Judge, base: config.Config,
               synonyms) -> tuple[dict, dict]:
    overrides, unfiltered = CONFIGS[name]
    cfg = base.replace(**overrides)
    rcfg = rank_config(cfg)
    per_q: dict[str, dict] = {}
    for q in qs:
        turns = turns_of(q)
        t0 = time.perf_counter()
        rw = rewrite.rewrite(turns[-1], turns[:-1], synonyms if cfg.use_expansion else (),
                             use_rewrite=cfg.use_rewrite, use_expansion=cfg.use_expansion)
        r = retriever.search(rw.queries(), Scope.everything() if unfiltered else scope_for(q), rcfg)
        ms = (time.perf_counter() - t0) * 1000
        seen = {h.id for h in r.hits}
        ranked = list(r.hits) + [h for h in r.fused if h.id not in seen]
        ctx = answer_mod.select_context(ranked[:cfg.final_k], cfg)
        rel = judge.relevant(q)
        top = ranked[:cfg.final_k]
        per_q[q["id"]] = {
            "ranked": [h.id for h in ranked], "relevant": rel, "ms": ms, "searched": rw.standalone,
            "refused": not ctx.shown,
            "leak": any(judge.stale(q, h.chunk) for h in top),
            "trace": {
                "missing_phrases": judge.missing_phrases(q) if q.get("answerable", True) else [],
                "retrieved": [{"id": h.id, "grade": rel.get(h.id, 0), "stale": judge.stale(q, h.chunk)} for h in top],
                "shown": [h.id for h in ctx.shown], "dropped": [(h.id, why) for h, why in ctx.dropped],
                "duplicates": sum(1 for i, a in enumerate(ctx.shown) for b in ctx.shown[i + 1:]
                                  if answer_mod.word_overlap(a.chunk.text, b.chunk.text) >= cfg.dedup_overlap),
            },
        }
    return summarize(qs, per_q, rerank_on=bool(cfg.use_rerank and retriever.reranker is not None)), per_q


def summarize(qs: list[dict], per_q: dict, rerank_on: bool = False) -> dict:
    ans = [q for q in qs if q.get("answerable", True)]
    m: dict = {}

    def avg(f):
        v = metrics.mean([f(per_q[q["id"]]) for q in ans])
        return None if v is None else round(v, 4)

    for k in (1, 3, 5):
        m[f"hit@{k}"] = avg(lambda p, k=k: metrics.hit_at_k(p["ranked"], p["relevant"], k))
    for k in (5, 20):
        m[f"recall@{k}"] = avg(lambda p, k=k: metrics.recall_at_k(p["ranked"], p["relevant"], k))
    m["mrr"] = avg(lambda p: metrics.reciprocal_rank(p["ranked"], p["relevant"]))
    m["ndcg@10"] = avg(lambda p: metrics.ndcg_at_k(p["ranked"], p["relevant"], 10))
    ref = metrics.refusal_scores([(not q.get("answerable", True), per_q[q["id"]]["refused"]) for q in qs])
    m["refusal_precision"], m["refusal_recall"] = ref["refusal_precision"], ref["refusal_recall"]
    m["leaks"] = sum(1 for q in qs if per_q[q["id"]]["leak"])
    lat = [p["ms"] for p in per_q.values()]
    m["p50_ms"] = round(metrics.percentile(lat, 50) or 0, 1)
    m["p95_ms"] = round(metrics.percentile(lat, 95) or 0, 1)
    m["model_calls"] = 0.0  # retrieval-only run; see --answers
    m["rerank"] = rerank_on
    m["n"] = len(qs)
    return m


def failed(q: dict, p: dict, k: int = 5) -> bool:
    if p["leak"]:
        return True
    if q.get("answerable", True):
        return not metrics.hit_at_k(p["ranked"], p["relevant"], k) or p.get("answer_failed", False)
    return not p["refused"]


def per_tag(qs: list[dict], runs: dict[str, dict], answers: dict | None = None) -> dict:
    """hit@5 on answerable questions / refusal accuracy on unanswerable, per
    tag; with answers, a last column: share answered correctly (keywords
    present, or refused when unanswerable)."""
    tags = sorted({t for q in qs for t in q.get("tags", [])})
    out: dict = {}
    for tag in tags:
        group = [q for q in qs if tag in q.get("tags", [])]
        row = {"n": len(group)}
        for name, per_q in runs.items():
            ok = [not failed(q, per_q[q["id"]]) for q in group]
            row[name] = round(sum(ok) / len(ok), 3)
        if answers:
            row["answers"] = round(sum(answers[q["id"]]["correct"] for q in group) / len(group), 3)
        out[tag] = row
    return out


def run_answers(qs: list[dict], retriever: Retriever, judge: Judge, cfg: config.Config, synonyms, llm) -> tuple[dict, dict]:
    """Answer-level run through the offline answerer (or the configured LLM)."""
    per_q: dict = {}
    for q in qs:
        turns = turns_of(q)
        engine = answer_mod.Engine(retriever, cfg, scope_for(q), llm=llm, synonyms=synonyms, log=False)
        engine.history = turns[:-1]
        t0 = time.perf_counter()
        turn = engine.ask(turns[-1])
        ms = (time.perf_counter() - t0) * 1000
        cited_texts = [c.chunk.text for c in (turn.context.shown if turn.context else [])
                       if any(x["chunk_id"] == c.id for x in turn.citations)]
        keys = q.get("answer_keywords", [])
        correct = (turn.refused if not q.get("answerable", True) else
                   (not turn.refused and all(diagnose.norm(k).lower() in diagnose.norm(turn.answer).lower() for k in keys)))
        per_q[q["id"]] = {"answer": turn.answer, "refused": turn.refused, "unsupported": turn.unsupported,
                          "stripped": turn.stripped, "cited_texts": cited_texts, "ms": ms,
                          "model_calls": turn.model_calls, "correct": correct, "score": turn.answer_score, "error": turn.error,
                          "valid_citations": bool(turn.citations) and turn.stripped == 0}
    n = len(qs)
    answered = [p for p in per_q.values() if not p["refused"]]
    ref = metrics.refusal_scores([(not q.get("answerable", True), per_q[q["id"]]["refused"]) for q in qs])
    lat = [p["ms"] for p in per_q.values()]
    return {
        "answer_accuracy": round(sum(p["correct"] for p in per_q.values()) / n, 4) if n else None,
        "refusal_accuracy": ref["refusal_accuracy"], "refusal_precision": ref["refusal_precision"],
        "refusal_recall": ref["refusal_recall"],
        "all_citations_valid": round(sum(p["valid_citations"] for p in answered) / len(answered), 4) if answered else None,
        "stripped_citations": sum(p["stripped"] for p in per_q.values()),
        "unsupported_answers": sum(p["unsupported"] for p in answered),
        "model_calls": round(sum(p["model_calls"] for p in per_q.values()) / n, 3) if n else 0,
        "p50_ms": round(metrics.percentile(lat, 50) or 0, 1), "p95_ms": round(metrics.percentile(lat, 95) or 0, 1),
        "answerer": "llm" if llm else "extractive", "n": n,
    }, per_q


def diagnosis(qs: list[dict], per_q: dict, answers: dict | None) -> dict:
    found: dict[str, list] = {}
    counts: dict = defaultdict(Counter)
    for q in qs:
        p = per_q[q["id"]]
        t = dict(p["trace"])
        if answers:
            a = answers[q["id"]]
            t.update(answer=a["answer"], refused=a["refused"], cited_texts=a["cited_texts"], stripped=a["stripped"])
            p = dict(p, answer_failed=not a["correct"], refused=a["refused"])
        if not failed(q, p):
            continue
        f = diagnose.diagnose(q, t)
        found[q["id"]] = [list(x) for x in f]
        for stage, label in f:
            counts[stage][label] += 1
    return {"questions": found, "counts": {s: dict(counts[s]) for s in diagnose.STAGES if counts[s]}}


# --- output ------------------------------------------------------------------
COLUMNS = ["hit@1", "hit@3", "hit@5", "recall@5", "recall@20", "mrr", "ndcg@10",
           "refusal_precision", "refusal_recall", "leaks", "p50_ms", "p95_ms", "model_calls"]
SHORT = {"refusal_precision": "ref_P", "refusal_recall": "ref_R", "model_calls": "calls", "recall@5": "rec@5",
         "recall@20": "rec@20"}


def fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.3f}" if v <= 1.0 else f"{v:.0f}"
    return str(v)


def table(configs: dict) -> str:
    head = f"{'config':12}" + "".join(f"{SHORT.get(c, c):>8}" for c in COLUMNS)
    rows = [head, "-" * len(head)]
    for name, m in configs.items():
        note = "" if m.get("rerank", True) or name not in ("+rerank", "+expansion", "+rewrite", "no-filters") else "  (rerank unavailable)"
        rows.append(f"{name:12}" + "".join(f"{fmt(m.get(c)):>8}" for c in COLUMNS) + note)
    return "\n".join(rows)


def report(result: dict) -> str:
    out = [f"golden set: {result['n']} questions ({result['n_answerable']} answerable); index {result['index']}", "",
           table(result["configs"]), "",
           "hit@5 (answerable) / refusal (unanswerable) per tag — share of questions not failed:"]
    names = list(result["configs"]) + (["answers"] if result.get("answers") else [])
    out.append(f"{'tag':18}{'n':>4}" + "".join(f"{n:>12}" for n in names))
    for tag, row in result["per_tag"].items():
        out.append(f"{tag:18}{row['n']:>4}" + "".join(f"{row[n]:>12.2f}" for n in names))
    out.append("")
    out.append("misses per configuration:")
    for name, ids in result["misses"].items():
        out.append(f"  {name:12} {len(ids):>3}: {' '.join(ids)}")
    if result.get("answers"):
        a = result["answers"]
        out += ["", f"answers ({a['answerer']}): " + ", ".join(f"{k}={fmt(v)}" for k, v in a.items() if k != "answerer")]
    d = result["diagnosis"]
    out += ["", f"diagnosis of failed questions ({FULL} configuration):"]
    for qid, findings in d["questions"].items():
        out.append(f"  {qid}: " + ", ".join(f"{s}/{l}" for s, l in findings) if findings else f"  {qid}: (no finding)")
    out.append("counts: " + "; ".join(f"{s}: " + ", ".join(f"{l} {n}" for l, n in c.items())
                                     for s, c in d["counts"].items()))
    return "\n".join(out)


def evaluate(cfg: config.Config, golden: str | Path, answers: bool = False, limit: int | None = None,
             ids: list[str] | None = None, configs: list[str] | None = None) -> dict:
    qs = load_golden(golden)
    if ids:
        qs = [q for q in qs if q["id"] in set(ids)]
    if limit:
        qs = qs[:limit]
    index = open_index(cfg)
    retriever = Retriever(index, cfg)
    judge = Judge(index)
    synonyms = rewrite.load_synonyms(cfg.synonyms)
    runs, results = {}, {}
    for name in configs or CONFIGS:
        results[name], runs[name] = run_config(name, qs, retriever, judge, cfg, synonyms)
    full = FULL if FULL in runs else list(runs)[-1]
    ans, ans_q = (None, None)
    if answers:
        import llm as llm_mod
        acfg = cfg.replace(**CONFIGS[full][0])
        ans, ans_q = run_answers(qs, retriever, judge, acfg, synonyms, llm_mod.make(acfg))
        for name in results:
            results[name]["model_calls"] = ans["model_calls"] if name == full else 0.0
    return {
        "n": len(qs), "n_answerable": sum(1 for q in qs if q.get("answerable", True)), "index": cfg.index,
        "configs": results, "per_tag": per_tag(qs, runs, ans_q),
        "misses": {name: [q["id"] for q in qs if failed(q, runs[name][q["id"]])] for name in runs},
        "answers": ans, "diagnosis": diagnosis(qs, runs[full], ans_q),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="evaluate.py", description="Ablation table and error diagnosis for citebot.")
    p.add_argument("--golden", default=str(config.HERE / "golden.json"))
    p.add_argument("--answers", action="store_true", help="also run the answerer (offline extractive or the configured LLM)")
    p.add_argument("--benchmark", choices=["scifact", "mtrag", "squad2", "rgb_zh"])
    p.add_argument("--limit", type=int, help="only the first N questions")
    p.add_argument("--ids", help="only these question ids, comma-separated")
    p.add_argument("--configs", help="only these configurations, comma-separated: " + ", ".join(CONFIGS))
    p.add_argument("--json", action="store_true", help="print one JSON object")
    cli.add_config_flags(p)
    args, cfg = cli.parse(p, argv)
    configs = [c.strip() for c in args.configs.split(",")] if args.configs else None
    if configs and (bad := [c for c in configs if c not in CONFIGS]):
        return cli.fail(f"unknown configuration(s) {', '.join(bad)}; choose from {', '.join(CONFIGS)}", cli.EXIT_USAGE)
    try:
        if args.benchmark:
            import bench_beir
            result = bench_beir.run(args.benchmark, limit=args.limit, log=lambda *a: print(*a, file=sys.stderr))
            print(json.dumps(result, indent=2, default=str) if args.json else bench_beir.format_table(result))
            return cli.EXIT_OK
        result = evaluate(cfg, args.golden, answers=args.answers, limit=args.limit,
                          ids=args.ids.split(",") if args.ids else None, configs=configs)
    except (store.IndexError_, models.ModelUnavailable, ValueError, FileNotFoundError) as e:
        return cli.fail(str(e))
    print(json.dumps(result, indent=2, ensure_ascii=False) if args.json else report(result))
    return cli.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())

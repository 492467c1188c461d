"""Plain-text tables for evaluation results (pure functions of result dicts)."""
from __future__ import annotations

COLUMNS = ["hit@1", "hit@3", "hit@5", "recall@5", "recall@20", "mrr", "ndcg@10",
           "refusal_precision", "refusal_recall", "leaks", "p50_ms", "p95_ms"]
SHORT = {"refusal_precision": "ref_P", "refusal_recall": "ref_R", "recall@5": "rec@5", "recall@20": "rec@20"}


def fmt(v, digits: int = 3) -> str:
    if v is None:
        return "-"
    if isinstance(v, tuple | list):
        return "–".join(fmt(x, digits) for x in v)
    if isinstance(v, bool) or isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return f"{v:.{digits}f}" if abs(v) <= 1.0 else f"{v:.0f}"
    return str(v)


def columns(header: list[str], rows: list[list[str]], left: tuple[str, ...] = ()) -> list[str]:
    """Plain-text columns: the first and the ``left`` ones left-aligned, the rest right."""
    widths = [max([len(header[i])] + [len(r[i]) for r in rows]) for i in range(len(header))]

    def line(cells):
        return "  ".join(c.ljust(w) if i == 0 or header[i] in left else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    return [line(header), line(["-" * w for w in widths])] + [line(r) for r in rows]


def spelled_line(configs: dict, what: str) -> list[str]:
    """The line saying how many of ``what`` each configuration also searched
    with misspellings corrected (none when no configuration did)."""
    spelled = {name: m["spelled"] for name, m in configs.items() if m.get("spelled")}
    return [f"{what} also searched with misspellings corrected: "
            + ", ".join(f"{name} {n}" for name, n in spelled.items())] if spelled else []


def ablation_table(configs: dict, default: str | None) -> list[str]:
    rows = [[name + (" *" if name == default else "")] + [fmt(m.get(c)) for c in COLUMNS]
            for name, m in configs.items()]
    return columns(["config"] + [SHORT.get(c, c) for c in COLUMNS], rows)


MARKDOWN = [("hit@1", "hit@1"), ("hit@5", "hit@5"), ("recall@20", "recall@20"), ("mrr", "MRR"),
            ("ndcg@10", "nDCG@10"), ("refusal_precision", "refusal P"), ("refusal_recall", "refusal R"),
            ("leaks", "leaks")]


def markdown_table(result: dict) -> str:
    """The ablation as the README shows it (``evaluate.py --markdown``); the
    suite checks the README's copy against a fresh run."""
    lines = ["| config | " + " | ".join(h for _, h in MARKDOWN) + " |", "|---" * (len(MARKDOWN) + 1) + "|"]
    for name, m in result["configs"].items():
        label = f"{name} *" if name == result.get("default") else name
        lines.append(f"| {label} | " + " | ".join(fmt(m.get(k)) for k, _ in MARKDOWN) + " |")
    a = result.get("answers")
    if a:
        lines += ["", f"Offline answers ({a['answerer']}): accuracy {fmt(a['answer_accuracy'])}, precision "
                      f"{fmt(a['answer_precision'])}, refusal precision "
                      f"{fmt(a['refusal_precision'])}, recall {fmt(a['refusal_recall'])}, every citation valid in "
                      f"{fmt(a['all_citations_valid'])} of answers."]
    return "\n".join(lines)


def golden_report(result: dict) -> str:
    out = [f"golden set {result['golden']} ({result['split']}): {result['n']} questions "
           f"({result['n_answerable']} answerable); index {result['index']}", ""]
    out += ablation_table(result["configs"], result.get("default"))
    out.append("* = the bot as configured" + ("" if result.get("rerank_available")
                                              else "; no cross-encoder loads, so +rerank rows equal the row above"))
    out += spelled_line(result["configs"], f"questions (of {result['n']})")
    names = list(result["configs"]) + (["answers"] if result.get("answers") else [])
    out += ["", "share of questions not failed per tag (hit@5 when answerable, refusal when not):"]
    out += columns(["tag", "n"] + names, [[tag, str(row["n"])] + [fmt(row[n], 2) for n in names]
                                          for tag, row in result["per_tag"].items()])
    out += ["", "misses per configuration:"]
    out += [f"  {name:12} {len(ids):>3}: {' '.join(ids)}" for name, ids in result["misses"].items()]
    if result.get("answers"):
        a = result["answers"]
        out += ["", f"answers ({a['answerer']}): " + ", ".join(f"{k}={fmt(v)}" for k, v in a.items() if k != "answerer")]
    d = result["diagnosis"]
    out += ["", f"diagnosis of failed questions ({result['diagnosed']} configuration):"]
    out += [f"  {qid}: " + (", ".join(f"{s}/{lab}" for s, lab in f) or "(no finding)") for qid, f in d["questions"].items()]
    out.append("counts: " + ("; ".join(f"{s}: " + ", ".join(f"{lab} {n}" for lab, n in c.items())
                                      for s, c in d["counts"].items()) or "none"))  # "counts: " alone read as cut off
    return "\n".join(out)

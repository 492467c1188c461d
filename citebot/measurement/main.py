"""``evaluate.py`` / ``citebot eval``: golden sets, benchmarks, sweeps and the refusal gate.

    python evaluate.py [--golden golden.json] [--split tune|report|all] [--answers] [--typos] [--json|--markdown]
    python evaluate.py --benchmark scifact|mtrag|squad2|rgb_zh|cmrc [--bench-split train] [--limit N] [--json]
    python evaluate.py [--golden F] --sweep KEY=V1,V2 ...          (the tune half)
    python evaluate.py --benchmark scifact --bench-split train --sweep KEY=V1,V2 ...
    python evaluate.py --refusal [--fit] [--plot docs/refusal-tradeoff.png]

A golden file that names its documents ("corpus") is run on its own index
(.cache/golden/<name>_<model>, built and kept up to date here) unless ``--index`` or
``CITEBOT_INDEX`` names one; when those documents are absent the run is
skipped with a message (exit 0).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from citebot import cli, config
from citebot.config import ROOT, Config
from citebot.measurement import benchmarks, report
from citebot.measurement.evaluate import CONFIGS, UNFILTERED, evaluate, golden_engine
from citebot.measurement.golden import SPLITS


def parser(prog: str) -> argparse.ArgumentParser:
    p = cli.Parser(prog=prog, description="Ablation table and error diagnosis for citebot.")
    p.add_argument("--golden", help="the golden file (default: golden.json, questions over examples/kb)")
    p.add_argument("--split", choices=[*SPLITS, "all"],
                   help="which half of the golden set (or of MTRAG's conversations): tune, report (held out) "
                        "or all (default)")
    p.add_argument("--answers", action="store_true", help="also run the answerer (offline extractive or the configured LLM)")
    p.add_argument("--benchmark", choices=list(benchmarks.NAMES))
    p.add_argument("--bench-split", default="test", help="--benchmark scifact: test (default) or train")
    p.add_argument("--limit", type=int, help="only the first N questions")
    p.add_argument("--typos", action="store_true",
                   help="a golden file's questions with one typing slip each (two letters of the longest word swapped)")
    p.add_argument("--ids", help="only these question ids, comma-separated")
    p.add_argument("--configs", help="only these configurations, comma-separated: " + ", ".join(CONFIGS))
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--markdown", action="store_true", help="print the ablation as the README's table")
    p.add_argument("--sweep", action="append", default=[], metavar="KEY=V1,V2",
                   help="tuning: run the bot's configuration once per combination of these values")
    p.add_argument("--refusal", action="store_true", help="the refusal gate's precision/recall trade-off")
    p.add_argument("--fit", action="store_true", help="with --refusal: refit the gate on the tuning halves")
    p.add_argument("--plot", help="with --refusal: write the trade-off picture (PNG) here")
    cli.add_config_flags(p)
    return p


def main(argv: list[str] | None = None, prog: str = "evaluate.py") -> int:
    p = parser(prog)
    args = p.parse_args(argv)
    try:
        cfg, sources = config.resolve(cli.config_flags(args), file=args.config)
    except config.ConfigError as e:
        return cli.fail(str(e), cli.EXIT_USAGE)
    configs = [c.strip() for c in args.configs.split(",")] if args.configs else None
    if configs and (bad := [c for c in configs if c not in CONFIGS]):
        return cli.fail(f"unknown configuration(s) {', '.join(bad)}; choose from {', '.join(CONFIGS)}", cli.EXIT_USAGE)
    golden_given, args.golden = args.golden is not None, args.golden or str(ROOT / "golden.json")
    if problem := _flag_problem(args, golden_given):
        return cli.fail(problem, cli.EXIT_USAGE)
    if args.answers and configs and all(c in UNFILTERED for c in configs):
        return cli.fail("--answers needs a configuration with the scope filters on (no-filters is the leak "
                        "check); add one to --configs, for example +followups", cli.EXIT_USAGE)
    from citebot.index.store import IndexError_
    from citebot.search.models import ModelUnavailable, hush_reranker

    if not cfg.use_rerank:  # the +rerank rows still run; the table says they keep the fused order
        hush_reranker(cfg.rerank_model)

    try:
        return run(args, cfg, configs, own_index=sources["index"] == "default")
    except (IndexError_, ModelUnavailable, ValueError, FileNotFoundError) as e:
        return cli.fail(str(e))


def _flag_problem(args, golden_given: bool) -> str | None:
    """A flag that would be ignored or misread, said before anything runs."""
    if not (args.benchmark or args.refusal) and not Path(args.golden).is_file():
        return f"--golden {args.golden} is not a file"
    if args.benchmark:
        ignored = [f for f, on in (("--golden", golden_given), ("--ids", args.ids), ("--answers", args.answers),
                                   ("--markdown", args.markdown), ("--typos", args.typos)) if on]
        if args.split not in (None, "all") and args.benchmark != "mtrag":
            ignored.append("--split (--bench-split picks SciFact's train or test)")
        if ignored:
            return f"--benchmark does not read {', '.join(ignored)}; drop {'it' if len(ignored) == 1 else 'them'}"
    if args.benchmark and args.bench_split not in (splits := ("test", "train") if args.benchmark == "scifact"
                                                   else ("test",)):
        return f"--benchmark {args.benchmark} has no split {args.bench_split!r}; give {' or '.join(splits)}"
    if args.ids and not args.benchmark and not args.refusal:
        from citebot.measurement.golden import load_golden
        try:  # an id the file lacks, or one the chosen half leaves out (a table of nothing, said as a result)
            load_golden(args.golden).select(args.split, [i.strip() for i in args.ids.split(",")])
        except ValueError as e:
            return str(e)
    if args.limit is not None and args.limit < 1:
        return "--limit needs a whole number of 1 or more"
    if args.typos and (args.refusal or args.sweep):
        return "--typos goes with a golden file's table (and --answers), not with --refusal or --sweep"
    if (args.fit or args.plot) and not args.refusal:
        return "--fit and --plot go with --refusal"
    if args.json and args.markdown:
        return "give --json or --markdown, not both"
    if args.sweep:
        if args.ids or args.configs or (args.limit and not args.benchmark):
            return ("a sweep runs the bot's configuration over the whole tune half: drop --ids, --configs and "
                    "--limit (--limit works with --benchmark)")
        if args.markdown or args.split == "all":
            return "a sweep prints its own table over the tune half: drop --markdown and --split all"
        from citebot.measurement import sweep

        try:
            sweep.parse(args.sweep)
        except (ValueError, config.ConfigError) as e:
            return str(e)
    return None


def run(args, cfg: Config, configs, own_index: bool) -> int:
    if args.refusal:
        from citebot.measurement import refusal

        out = refusal.run(cfg, args.fit, Path(args.plot) if args.plot else None, cli.warn, as_json=args.json)
        print(cli.json_text(out, indent=2) if args.json else out)  # --json printed the text table
        return cli.EXIT_OK
    if args.benchmark and not args.sweep:
        from citebot.measurement import beir

        result = beir.run(args.benchmark, cfg, configs, split=args.bench_split, limit=args.limit, log=cli.warn,
                          half=args.split if args.split not in (None, "all") else None)
        print(cli.json_text(beir.jsonable(result), indent=2) if args.json else beir.format_table(result))
        return cli.EXIT_OK
    if args.benchmark:
        return _sweep(args, cfg, None)
    said: list[str] = []

    def log(msg: str) -> None:
        said.append(msg)
        cli.warn(msg)
    engine = golden_engine(cfg, args.golden, own_index=own_index, log=log)
    if engine is None:  # its documents are not here: skipped, not failed (exit 0)
        if args.json:  # stdout was empty, and a script had nothing to read
            print(cli.json_text({"golden": args.golden, "skipped": said[-1] if said else "skipped"}, indent=2))
        return cli.EXIT_OK
    if args.sweep:
        return _sweep(args, cfg, engine, own_index)
    result = evaluate(engine.cfg, args.golden, answers=args.answers, split=args.split or "all", limit=args.limit,
                      ids=args.ids.split(",") if args.ids else None, configs=configs, engine=engine,
                      typos=args.typos)
    if args.markdown:
        print(report.markdown_table(result))
    else:
        print(cli.json_text(result, indent=2) if args.json else report.golden_report(result))
    return cli.EXIT_OK


def _sweep(args, cfg: Config, engine, own_index: bool = False) -> int:
    from citebot.measurement import sweep

    axes = sweep.parse(args.sweep)
    # A sweep chooses settings, so it reads tuning data only (the README's rule).
    if args.benchmark:
        if args.bench_split != "train":
            return cli.fail("a sweep tunes settings, so it runs on training data: add --bench-split train",
                            cli.EXIT_USAGE)
        rows = sweep.benchmark(args.benchmark, cfg, axes, args.bench_split, args.limit, cli.warn)
        metrics = ["ndcg@10", "mrr@10", "recall@100"]
    else:
        if args.split == "report":
            return cli.fail("a sweep tunes settings, so it runs on the tune half (the report half is held out)",
                            cli.EXIT_USAGE)
        reopen = (lambda c: golden_engine(c, args.golden, engine.models)) if own_index else None
        rows = sweep.golden(engine, args.golden, axes, "tune", args.answers, reopen)
        metrics = ["ndcg@10", "hit@1", "hit@5", "mrr"] + (
            ["answer_accuracy", "answer_precision", "answer_refusal_precision", "answer_refusal_recall"]
            if args.answers else [])
    print(cli.json_text(rows, indent=2) if args.json else sweep.table(rows, metrics))
    return cli.EXIT_OK

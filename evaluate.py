"""Measure citebot: the ablation table, per-tag results and a diagnosis on a
golden set, or a public benchmark, all through the engine the bot runs.

    python evaluate.py [--golden golden.json] [--split tune|report|all] [--answers] [--json]
    python evaluate.py --benchmark scifact|mtrag|squad2|rgb_zh [--limit N] [--json]
"""
import sys

from citebot.commands import eval_main as main

if __name__ == "__main__":
    sys.exit(main())

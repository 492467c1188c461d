"""Speed benchmark: index time and size, per-query latency, first output.

    python bench.py [--folder examples/kb] [--json]
"""
import sys

from citebot.measurement.bench import main

if __name__ == "__main__":
    sys.exit(main())

"""Evaluation and benchmarks.  Only the entry points (evaluate.py, bench.py,
``citebot eval``) import this package; the product never does."""

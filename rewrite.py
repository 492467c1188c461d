"""Show the queries citebot would search for a turn after earlier turns.

    python rewrite.py "and for size L?" --history "what frame size fits 175 cm?" [--json]
"""
import sys

from citebot.commands import queries_main as main

if __name__ == "__main__":
    sys.exit(main())

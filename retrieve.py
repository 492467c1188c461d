"""Search a citebot index and show the ranked chunks with every channel's rank and score.

    python retrieve.py "question" [--json] [--index DIR] [--audience staff] [--tenant T] [--lang zh]
"""
import sys

from citebot.commands import search_main as main

if __name__ == "__main__":
    sys.exit(main())

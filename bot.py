"""citebot: chat with your documents, with cited answers.

    python bot.py [--index DIR] [--audience staff] [--tenant T] [--lang zh] [--include-superseded]
    python bot.py --ask "question" [--json]
"""
import sys

from citebot.commands import chat_main as main

if __name__ == "__main__":
    sys.exit(main())

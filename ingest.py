"""Build or update a citebot index from a folder of documents.

    python ingest.py FOLDER [--index DIR] [--rebuild] [--json]
"""
import sys

from citebot.commands import ingest_main as main

if __name__ == "__main__":
    sys.exit(main())

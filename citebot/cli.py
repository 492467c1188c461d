"""Shared command-line plumbing: config flags, scope flags, messages, exit codes.

Exit codes: 0 success, 1 runtime failure (message on stderr), 2 usage error.
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import re
import sys

from citebot import config
from citebot.schema import Scope
from citebot.terminal import BIDI, safe

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
# A question longer than this is a paste accident, not a question: it would
# be embedded whole (a minute for 100 KB) with nothing on screen meanwhile.
MAX_QUESTION = 4000


def question_problem(text: str | None) -> str | None:
    """What is wrong with a typed question, or None."""
    if text is None or not text.strip():
        return "give a question"
    if len(text) > MAX_QUESTION:
        return f"the question is {len(text):,} characters long; ask in at most {MAX_QUESTION:,}"
    return None


_C1 = re.compile(f"[\x7f-\x9f\u2028\u2029{BIDI}\ud800-\udfff]")


def json_text(obj, **kw) -> str:
    """``json.dumps`` for stdout: readable non-ASCII text, but the C1
    controls escaped (``ensure_ascii=False`` leaves U+009B, a one-character
    CSI, raw), the line separators, the bidi controls and lone surrogates
    too (escaped, the text a script reads is exact; raw, a terminal showed it
    reversed, and a surrogate could not be written at all)."""
    return _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(obj, ensure_ascii=False, **kw))


def add_config_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--index", help="index directory (env CITEBOT_INDEX; default under the user data dir)")
    p.add_argument("--config", help="TOML config file (env CITEBOT_CONFIG; default ./citebot.toml if present)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="any config key, e.g. --set final_k=8 --set use_rerank=false")


def add_scope_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--audience", help="who is asking: public (default) or staff (sees public + staff)")
    p.add_argument("--tenant", help="tenant of the asker (sees that tenant's documents and shared ones)")
    p.add_argument("--lang", help="only documents in these languages, comma-separated (default any)")
    p.add_argument("--include-superseded", action="store_true", help="also search superseded documents")


def config_flags(args: argparse.Namespace) -> dict:
    flags = {"index": getattr(args, "index", None)}
    for item in getattr(args, "set", []) or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise config.ConfigError(f"--set needs KEY=VALUE, got {item!r}")
        key = key.strip()
        if key == "index" and flags["index"] is not None and flags["index"] != value.strip():
            # Both given: one silently won, and config.py named the other as the source.
            raise config.ConfigError("the index is given twice (--index and --set index=); give one")
        flags[key] = value.strip()
    return flags


def parse(p: argparse.ArgumentParser, argv: list[str] | None) -> tuple[argparse.Namespace, config.Config]:
    """Parse the command line and build the config; a bad setting is a usage
    error (exit 2) naming the key, like any other bad flag."""
    args = p.parse_args(argv)
    try:
        cfg = config.load(config_flags(args), file=getattr(args, "config", None))
    except config.ConfigError as e:
        p.exit(EXIT_USAGE, f"citebot: {e}\n")
    if cfg.backend == "milvus" and getattr(args, "index", None) is not None:
        # Ignored, it let an ingest meant for a new index write into the collection already there.
        p.exit(EXIT_USAGE, f"citebot: --index names a local index folder, and the backend is milvus (collection "
                           f"{cfg.milvus_collection!r}); give --set milvus_collection=NAME instead, or --set backend=local\n")
    return args, cfg


def scope_from(args: argparse.Namespace) -> Scope:
    return Scope.build(audience=args.audience, tenant=args.tenant, lang=args.lang,
                       include_superseded=args.include_superseded)


def scope_warnings(index, scope: Scope) -> None:
    """Say which scope flag names what no document has (a typo sees less than meant)."""
    from citebot.index.store import scope_notes

    for note in scope_notes(index.manifest, scope):
        warn(note)


def warn(msg: str) -> None:
    """A diagnostic on stderr; file names and document text in it are shown, never obeyed."""
    print(f"citebot: {safe(msg)}", file=sys.stderr, flush=True)


def entry(main):
    """A command's main: output cut short by a closed pipe (``| head``) ends
    quietly with exit 1; Ctrl-C outside the chat ends with 130."""
    @functools.wraps(main)
    def run(*args, **kwargs) -> int:
        try:
            return main(*args, **kwargs)
        except BrokenPipeError:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # the interpreter's final flush must not fail again
            return EXIT_FAIL
        except KeyboardInterrupt:
            print(file=sys.stderr)
            return 130
    return run


def fail(msg: str, code: int = EXIT_FAIL) -> int:
    warn(msg)
    return code

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
    """What is wrong with a typed question, or None.  Control sequences are
    no question: ESC [2J alone was searched as the question "2j"."""
    if text is None or not safe(text).strip():
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


def parse(p: argparse.ArgumentParser, argv: list[str] | None,
          opens_index: bool = True) -> tuple[argparse.Namespace, config.Config]:
    """Parse the command line and build the config; a bad setting is a usage
    error (exit 2) naming the key, like any other bad flag. ``opens_index``:
    the command reads an index (``rewrite.py`` does not)."""
    args = p.parse_args(argv)
    return args, settings(p, args, opens_index)[0]


def settings(p: argparse.ArgumentParser, args: argparse.Namespace,
             opens_index: bool = True) -> tuple[config.Config, dict[str, str]]:
    """The config of parsed flags and where each value came from, checked as
    :func:`parse` checks it (``config.py`` shows the sources)."""
    try:
        cfg, sources = config.resolve(config_flags(args), file=getattr(args, "config", None))
    except config.ConfigError as e:
        p.exit(EXIT_USAGE, f"citebot: {safe(str(e))}\n")
    if problem := index_problem(args, cfg):
        p.exit(EXIT_USAGE, f"citebot: {problem}\n")
    if opens_index and cfg.backend == "milvus" and sources["index"] != "default" and args.index is None:
        # An index folder from the environment or a file, meant for the local backend: not used, and
        # silently so the asker took the answers to come from it.
        warn(f"index {cfg.index} (from {sources['index']}) is not used: the backend is milvus "
             f"(collection {cfg.milvus_collection!r})")
    lang = getattr(args, "lang", None)
    if lang and lang.strip() and not all(x.strip() for x in lang.split(",")):
        # ",," searched an empty set of languages: "no hits", and a warning about the language ''.
        p.error(f"--lang {lang!r} names an empty language; give language codes separated by commas, such as "
                f"--lang zh,en (--lang \"\" is any language)")
    return cfg, sources


def index_problem(args: argparse.Namespace, cfg: config.Config) -> str | None:
    """--index with the milvus backend, which names its index otherwise."""
    if cfg.backend == "milvus" and getattr(args, "index", None) is not None:
        # Ignored, it let an ingest meant for a new index write into the collection already there.
        return (f"--index names a local index folder, and the backend is milvus (collection "
                f"{cfg.milvus_collection!r}); give --set milvus_collection=NAME instead, or --set backend=local")
    return None


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


class OutputError(Exception):
    """stdout cannot take the output (a full disk, a closed stdout): the run has
    no answer to give, said in one line by :func:`entry`. Not an OSError, so no
    handler meant for a document or index file takes it for one."""


class Stdout:
    """``sys.stdout`` while a command runs: a write that fails raises
    :class:`OutputError` (a full disk gave a traceback; a closed stdout, None,
    an AttributeError in the chat, or exit 0 with nothing written), and it
    remembers whether anything was written and whether ``--json`` was given,
    so a failure can still print the one JSON object a script reads."""

    def __init__(self, stream):
        self.written, self.json, self.gone = False, False, stream is None
        # Closed: a library asking for its encoding or fileno gets /dev/null's (it checked for None,
        # not for an object that refuses), and /dev/null takes fd 1, so no file opened later lands there.
        self.stream = open(os.devnull, "w", encoding="utf-8") if stream is None else stream  # noqa: SIM115
        # A character the stream's encoding lacks (PYTHONIOENCODING=ascii, a Latin-1 terminal) is written
        # escaped: taken for a failed write, it hid the run's own error behind "cannot write the output".
        if getattr(self.stream, "errors", None) == "strict" and hasattr(self.stream, "reconfigure"):
            self.stream.reconfigure(errors="backslashreplace")

    def _do(self, what, *args):
        if self.gone:
            raise OutputError("stdout is closed")
        try:
            return getattr(self.stream, what)(*args)
        except BrokenPipeError:
            raise  # `| head`: ends quietly (entry)
        except (OSError, ValueError) as e:  # ValueError: a stream closed under us
            raise OutputError(getattr(e, "strerror", None) or str(e)) from None

    def write(self, text: str) -> int:
        n = self._do("write", text)
        self.written = self.written or bool(text)
        return n

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if not self.gone:  # closed: nothing can be pending, and a run that wrote nothing is fine
            self._do("flush")

    def __getattr__(self, name):  # fileno, isatty, encoding, buffer ... as the real stream has them
        return getattr(self.stream, name)


def json_mode(on: bool) -> None:
    """Say whether this run prints JSON (``--json``), so its failures do too."""
    if isinstance(sys.stdout, Stdout):
        sys.stdout.json = on


def json_error(msg: str) -> None:
    """With ``--json`` and nothing on stdout yet, ``{"error": msg}`` there: a
    script reads one JSON object even when the run failed before its answer
    (the README's promise); the message is on stderr as well."""
    out = sys.stdout
    if isinstance(out, Stdout) and out.json and not out.written:
        print(json_text({"error": msg}, indent=2))


class Parser(argparse.ArgumentParser):
    """argparse, whose errors honour ``--json`` too (stdout was empty on a
    bad setting or an empty question, and a script read nothing)."""

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        argv = list(sys.argv[1:] if args is None else args)
        if "--json" in self._option_string_actions:
            # Before parsing: argparse's own errors come before the namespace says.
            json_mode("--json" in argv[:argv.index("--")] if "--" in argv else "--json" in argv)
        ns, rest = super().parse_known_args(argv, namespace)
        json_mode(bool(getattr(ns, "json", False)))
        return ns, rest

    def exit(self, status: int = 0, message: str | None = None):  # type: ignore[override]
        if status and message:
            json_error(message.strip().removeprefix("citebot: "))
        super().exit(status, message)

    def error(self, message: str):  # type: ignore[override]
        self.print_usage(sys.stderr)
        json_error(message)
        super().exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _stdout_to_devnull() -> None:
    """fd 1 onto /dev/null: the interpreter's last flush of what could not be
    written must not fail again (a second message, exit 120)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, ValueError, OSError):  # closed, or not a file (a test's capture)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def entry(main):
    """A command's main: output cut short by a closed pipe (``| head``) ends
    quietly with exit 1; stdout that cannot be written (a full disk, closed)
    is one line on stderr and exit 1; Ctrl-C outside the chat ends with 130."""
    @functools.wraps(main)
    def run(*args, **kwargs) -> int:
        stdout = sys.stdout
        own = not isinstance(stdout, Stdout)  # the outermost command wraps stdout; one it calls shares it
        if own:
            sys.stdout = Stdout(stdout)  # type: ignore[assignment]
        try:
            try:
                code = main(*args, **kwargs)
            except SystemExit:  # argparse's --help and usage errors: their output is checked like any other
                sys.stdout.flush()
                raise
            sys.stdout.flush()  # a short output meets a full disk only here
            return code
        except BrokenPipeError:
            _stdout_to_devnull()
            return EXIT_FAIL
        except OutputError as e:
            warn(f"cannot write the output: {e}")
            _stdout_to_devnull()
            return EXIT_FAIL
        except KeyboardInterrupt:
            print(file=sys.stderr)
            json_error("interrupted")
            return 130
        finally:
            if own:
                sys.stdout = stdout
    return run


def fail(msg: str, code: int = EXIT_FAIL) -> int:
    """Say why the command failed, on stderr, and with ``--json`` on stdout too."""
    warn(msg)
    json_error(msg)
    return code

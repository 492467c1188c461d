"""The command-line programs, one function each; the top-level scripts and
the ``citebot`` console command (``citebot chat|ask|ingest|search|queries|config|eval``)
call these.  Answers go to stdout, diagnostics to stderr; exit codes 0 ok,
1 runtime failure, 2 usage error.
"""
from __future__ import annotations

import itertools
import sys
from collections.abc import Callable

from citebot import cli
from citebot.terminal import dim, safe_line, safe_name


def _runtime_errors() -> tuple:
    from citebot.index.store import IndexError_
    from citebot.search.models import ModelUnavailable

    return IndexError_, ModelUnavailable, ValueError


@cli.entry
def chat_main(argv: list[str] | None = None, prog: str = "bot.py", positional: bool = False) -> int:
    """``positional``: the question is an argument (``citebot ask QUESTION``), not ``--ask``."""
    p = cli.Parser(prog=prog, description="Chat with your documents; answers cite their sources.")
    if positional:
        p.add_argument("ask", metavar="QUESTION", help="the question (after -- when it starts with -)")
    else:
        p.add_argument("--ask", metavar="QUESTION", help="answer one question and exit")
    p.add_argument("--json", action="store_true", help="with --ask: print one JSON object; with turns on stdin "
                   "(one a line, follow-ups kept, /new starts over): one JSON object a line")
    cli.add_config_flags(p)
    cli.add_scope_flags(p)
    args, cfg = cli.parse(p, argv)
    from citebot.chat import render
    from citebot.chat.repl import Chat, Conversation, answer_to, stdin_lines

    turns = None
    if args.json and args.ask is None:
        turns = None if sys.stdin.isatty() else _first_turn(stdin_lines())
        if turns is None:  # read before the index is opened: no turns is a usage error, not a missing index
            p.error("--json needs --ask QUESTION, or the turns on stdin (bot.py --json < turns.txt)")
    if args.ask is not None and (problem := cli.question_problem(args.ask)):
        p.error(problem)
    from citebot.engine import Engine

    try:
        engine = Engine.open(cfg)
    except _runtime_errors() as e:  # (JSON Lines: one line, as every turn's)
        return _failed(e, {"question": args.ask} if args.json else None, indent=None if turns is not None else 2)
    convo = Conversation(engine, cli.scope_from(args))
    cli.scope_warnings(engine.index, convo.scope)
    if line := cfg.key_without_endpoint:
        cli.warn(line)
    if turns is not None:
        return _json_turns(convo, turns)
    if args.ask is None:
        from citebot.search.models import missing_reranker

        note = missing_reranker(cfg)  # before the loader thread starts: it would warn on stderr as well
        engine.models.warm(cfg)  # the prompt is up while the models load
        lines = None if sys.stdin.isatty() else stdin_lines()  # a pipe or a file: one turn a line, as plain text
        return Chat(convo, note=note, lines=lines).run()
    try:
        if args.json:
            turn = convo.ask(args.ask)
            print(cli.json_text(render.turn_json(turn), indent=2))  # a script reads "error" here, too
            return cli.fail(turn.error) if turn.error else cli.EXIT_OK
        # answers on stdout, diagnostics on stderr; no /show hint (the chat's command)
        turn = answer_to(convo, args.ask, sys.stdout, notes=sys.stderr, chat=False)
    except _runtime_errors() as e:  # a model that would not load, an index the model does not fit ...
        return _failed(e, {"question": args.ask} if args.json else None)
    return cli.EXIT_FAIL if turn.error else cli.EXIT_OK


def _first_turn(lines):
    """``lines`` from its first non-blank one on, or None when there is none."""
    for line in lines:
        if line.strip():
            return itertools.chain([line], lines)
    return None


def _json_turns(convo, lines) -> int:
    """A conversation read from a pipe, answered as JSON Lines: one object a
    turn, as ``--ask --json`` prints it (a follow-up searched with the turns
    before it; "/new" starts over, "/quit" stops).  Exit 1 when a turn got no
    answer, as the plain pipe does."""
    from citebot.chat import render

    failed = 0
    for line in lines:
        text = line.strip()
        if not text:
            continue
        if text in ("/new", "/quit", "/exit"):
            if text != "/new":
                break
            convo.reset()
            continue
        if problem := cli.question_problem(text) or (text.startswith("/") and "with --json only /new and /quit "
                                                                              "are commands"):
            print(cli.json_text({"question": text, "error": problem}))
            failed += 1
            continue
        try:
            turn = convo.ask(text)
        except _runtime_errors() as e:
            print(cli.json_text({"question": text, "error": str(e)}))
            failed += 1
            continue
        print(cli.json_text(render.turn_json(turn)), flush=True)
        failed += turn.error is not None
    return cli.EXIT_FAIL if failed else cli.EXIT_OK


def _failed(e: Exception, record: dict | None = None, indent: int | None = 2) -> int:
    """A command's failure: exit 2 for a bad setting, 1 for the rest; with
    ``record`` (--json), the JSON a script reads too, with the "error"."""
    from citebot.config import ConfigError

    if record:
        print(cli.json_text({**record, "error": str(e)}, indent=indent))
    return cli.fail(str(e), cli.EXIT_USAGE if isinstance(e, ConfigError) else cli.EXIT_FAIL)


@cli.entry
def ingest_main(argv: list[str] | None = None, prog: str = "ingest.py") -> int:
    p = cli.Parser(prog=prog, description="Build or update a citebot index from a folder.")
    p.add_argument("folder", help="folder of .md, .txt, .html, .pdf, .adoc, .rst documents")
    p.add_argument("--rebuild", action="store_true", help="replace the index with one of this folder alone (documents it no longer reads "
                   "are dropped; the vectors of unchanged text are kept, not embedded again)")
    p.add_argument("--include", action="append", default=[], metavar="GLOB",
                   help="only files whose path in the folder matches, e.g. --include 'en/*'; repeat for more")
    p.add_argument("--follow-links", action="store_true", help="also read links that lead out of the folder")
    p.add_argument("--no-wait", action="store_true", help="exit 1 at once when another ingest is writing the index")
    p.add_argument("--verbose", action="store_true", help="print every added, changed and removed file")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    cli.add_config_flags(p)
    args, cfg = cli.parse(p, argv)
    from citebot.index.build import ingest
    from citebot.index.store import NotAFolder

    try:
        report = ingest(args.folder, cfg, rebuild=args.rebuild, include=args.include,
                        follow_links=args.follow_links, wait=not args.no_wait)
    except NotAFolder as e:  # a wrong argument: a usage error, found before the index is touched
        return cli.fail(str(e), cli.EXIT_USAGE)
    except _runtime_errors() as e:
        return cli.fail(str(e))
    except KeyboardInterrupt as e:  # a blank line alone left the user guessing what was lost
        print(file=sys.stderr)  # past the progress line
        from citebot.index.build import InterruptedInPlace

        if isinstance(e, InterruptedInPlace):  # an update there is written in place, not switched to
            return cli.fail("ingest interrupted; the Milvus collection is updated in place, so it may hold some of "
                            "this run's changes and not others: run the same command again to finish it (the "
                            "embeddings made so far are kept)", 130)
        return cli.fail("ingest interrupted; the index is as it was before this run (it switches all at once), and "
                        "the embeddings made so far are kept: run the same command again to go on", 130)
    if args.json:
        print(cli.json_text(report.__dict__, default=list))
        return cli.EXIT_OK
    for label, items in (("added", report.added), ("changed", report.changed), ("removed", report.removed)):
        empty = set(report.empty)  # named even in a long list: nothing of them can be found
        for rel in items if args.verbose or len(items) <= 20 else [r for r in items if r in empty]:
            named = ", ".join(safe_name(x) for x in report.included.get(rel, []))
            print(f"{label:8} {safe_name(rel)}" + (f"  (no text to search{'; it includes ' + named if named else ''})"
                                                   if rel in empty else ""))
    if report.unread:  # one line: FastAPI's pages include code from a folder beside the docs, 900 of them
        first, names = next(iter(report.unread.items()))
        more = f"; and {len(report.unread) - 1} more file(s)" if len(report.unread) > 1 else ""
        print(f"{len(report.unread)} file(s) include text that is not searched, from a file outside the folder or "
              f"missing: {safe_name(first)} includes {', '.join(safe_name(x) for x in names[:3])}{more}; to search "
              "it, ingest a folder that holds it (--json lists them under \"unread\")")
    if report.autodoc:  # one line: the API reference of a Sphinx project is mostly autodoc
        first, n = max(report.autodoc.items(), key=lambda kv: kv[1])
        print(f"{len(report.autodoc)} file(s) hold Sphinx autodoc directives ({sum(report.autodoc.values())} in all; "
              f"{safe_name(first)} has {n}): the docstrings they show live in the code, which is not searched; "
              "the text written around them is (--json lists them under \"autodoc\")")
    print(report.summary())
    print(f"index: {cfg.index}" if cfg.backend == "local" else
          f"index: Milvus collection {cfg.milvus_collection} at {safe_line(cfg.milvus_uri)}")
    return cli.EXIT_OK


def hit_json(h, ev) -> dict:
    c = h.chunk
    # "page" as bot.py's JSON has it: a PDF's lines are counted from 1 on each page (None for other files).
    return {"id": h.id, "source": c.source, "page": c.page, "lines": [c.start, c.end], "end_page": c.end_page,
            "title": c.title,
            "headings": list(c.headings), "text": c.text, "rank": h.rank,
            "ranks": dict(h.ranks), "scores": {k: round(v, 6) for k, v in h.scores.items()},
            "evidence": None if ev is None else {"coverage": round(ev.coverage, 6), "identifier": ev.identifier,
                                                 "cosine": None if ev.cosine is None else round(ev.cosine, 6)}}


@cli.entry
def search_main(argv: list[str] | None = None, prog: str = "retrieve.py") -> int:
    p = cli.Parser(prog=prog, description="Search a citebot index and show the ranked chunks.")
    p.add_argument("question")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    cli.add_config_flags(p)
    cli.add_scope_flags(p)
    args, cfg = cli.parse(p, argv)
    if problem := cli.question_problem(args.question):
        p.error(problem)
    from citebot.engine import Engine

    try:
        engine, scope = Engine.open(cfg), cli.scope_from(args)
        cli.scope_warnings(engine.index, scope)
        _, r = engine.search(args.question, [], scope)
    except _runtime_errors() as e:
        return _failed(e, {"query": args.question} if args.json else None)
    if args.json:
        print(cli.json_text({"query": args.question, "queries": r.queries, "scope": r.scope.describe(),
                             "rerank": r.rerank_on, "timings_ms": {k: round(v, 2) for k, v in r.timings_ms.items()},
                             "hits": [hit_json(h, r.evidence.get(h.id)) for h in r.hits]}, indent=2))
        return cli.EXIT_OK
    if len(r.queries) > 1:
        print(dim("searched: " + " | ".join(safe_line(q) for q in r.queries)))
    if not r.hits:
        print("no hits")
    for h in r.hits:
        c = h.chunk
        ranks = " ".join(f"{k}={v}" for k, v in h.ranks.items())
        scores = " ".join(f"{k}={v:.3f}" for k, v in h.scores.items())
        print(f"{h.rank}. {safe_line(c.title)} — {safe_name(c.location)}  [{h.id}]")
        print(dim(f"   ranks: {ranks}\n   scores: {scores}"))
        print("   " + safe_line(c.text)[:200])
    print(dim(f"rerank {'on' if r.rerank_on else 'off'}; {r.timings_ms.get('total', 0):.0f} ms; scope {r.scope.describe()}"))
    return cli.EXIT_OK


@cli.entry
def queries_main(argv: list[str] | None = None, prog: str = "rewrite.py") -> int:
    p = cli.Parser(prog=prog, description="Show the queries citebot would search for a turn "
                                "after the earlier turns of a conversation.")
    p.add_argument("turn", help="the turn as typed")
    p.add_argument("--history", action="append", default=[], metavar="TURN",
                   help="an earlier user turn, oldest first; repeat for each")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    cli.add_config_flags(p)
    args, cfg = cli.parse(p, argv, opens_index=False)
    if problem := cli.question_problem(args.turn):  # as bot.py and retrieve.py do: "" is no turn to plan
        p.error(problem)
    if long := next((h for h in args.history if len(h) > cli.MAX_QUESTION), None):  # the chat caps every turn
        p.error(f"a --history turn is {len(long):,} characters long; give turns of at most {cli.MAX_QUESTION:,}")
    from citebot.answer import llm
    from citebot.search import queries

    try:
        groups = queries.load_synonyms(cfg.synonyms) if cfg.use_expansion else ()
    except ValueError as e:
        return cli.fail(str(e))
    try:
        model = llm.make(cfg)
    except ValueError as e:
        return _failed(e)
    plan = queries.plan(args.turn, args.history, groups, followups=cfg.use_followups, expansion=cfg.use_expansion,
                        condense=model.complete if model and cfg.use_followups else None)
    if args.json:
        print(cli.json_text({"typed": plan.typed, "standalone": plan.standalone, "followup": plan.followup,
                             "method": plan.method, "expansions": list(plan.expansions), "queries": plan.queries},
                            indent=2))
        return cli.EXIT_OK
    print(dim(f"follow-up form: {plan.method}" + (" (nothing to look up: no query is searched)"
                                                   if plan.method == "ack" else "")))
    for q in plan.queries:
        print(safe_line(q))
    return cli.EXIT_OK


@cli.entry
def config_main(argv: list[str] | None = None, prog: str = "config.py") -> int:
    p = cli.Parser(prog=prog, description="Print every setting and where its value came from "
                                "(flag, CITEBOT_* environment, config file, default).")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    cli.add_config_flags(p)
    args = p.parse_args(argv)
    from citebot import config

    # Checked as every other command checks it (--index with milvus was shown as valid).
    cfg, sources = cli.settings(p, args, opens_index=False)
    values = {k: getattr(cfg, k) for k in config.FIELDS}
    if values["milvus_token"]:
        values["milvus_token"] = "***"  # never printed
    if args.json:
        print(cli.json_text({k: {"value": v, "from": sources[k]} for k, v in values.items()}, indent=2))
        return cli.EXIT_OK
    width = max(map(len, values))
    for k, v in values.items():  # a value or file name from a config file is shown, never obeyed
        print(f"{k:{width}}  {safe_line(str(v)):40}  {dim(safe_line(sources[k]))}")
    return cli.EXIT_OK


@cli.entry
def eval_main(argv: list[str] | None = None, prog: str = "evaluate.py") -> int:
    from citebot.measurement.main import main

    return main(argv, prog)


@cli.entry
def models_main(argv: list[str] | None = None, prog: str = "citebot models") -> int:
    p = cli.Parser(prog=prog, description="The models citebot uses: where each one is, and "
                                "`pull` to fetch the configured cross-encoder (the only command that goes online).")
    p.add_argument("action", nargs="?", choices=["list", "pull"], default="list")
    p.add_argument("model", nargs="?", help="with pull: a hub id (default: the configured rerank_model)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    cli.add_config_flags(p)
    args, cfg = cli.parse(p, argv, opens_index=False)
    from citebot.search import hub

    if args.action == "pull":
        spec = args.model or cfg.rerank_model
        where = hub.locate("cross-encoder", spec)

        def done(path, pulled: bool) -> int:
            if args.json:  # --json was ignored here: text where a script read JSON
                print(cli.json_text({"model": spec, "path": str(path), "pulled": pulled}, indent=2))
            elif pulled:
                print(f"pulled {spec} into {safe_line(str(path))}; it is used from the next question on")
            else:
                print(f"{spec} is already here: {safe_line(str(path))} ({where.how})")
            return cli.EXIT_OK
        if where.path is not None:
            return done(where.path, False)
        if where.how != "missing":  # a folder that holds no model: nothing to download
            return cli.fail(f"{safe_line(spec)} is {where.how}; give a hub id (owner/name) or the folder a model was "
                            "saved to")
        from huggingface_hub.utils import HFValidationError, validate_repo_id

        try:  # no folder and no hub id (/nope/x): a wrong argument, exit 2 like any other
            validate_repo_id(spec)
        except HFValidationError:
            return cli.fail(f"{safe_line(spec)} is neither a folder here nor a hub id; give a hub id (owner/name, "
                            "e.g. cross-encoder/ms-marco-MiniLM-L-6-v2) or the folder a model was saved to",
                            cli.EXIT_USAGE)
        try:
            path = hub.pull(spec)
        except (ConnectionError, ValueError) as e:
            return cli.fail(str(e))
        return done(path, True)
    from citebot.config import parts

    found = [hub.locate("embedding", m) for m in parts(cfg.embed_model)] + [hub.locate("cross-encoder",
                                                                                     cfg.rerank_model)]
    if args.json:
        print(cli.json_text([{"role": w.role, "model": w.spec, "present": w.path is not None, "how": w.how,
                           "path": str(w.path) if w.path else None} for w in found], indent=2))
        return cli.EXIT_OK
    for w in found:
        state = f"{w.how}: {safe_line(str(w.path))}" if w.path else w.how
        print(f"{w.role:14} {safe_line(w.spec):45} {state}")
    if found[-1].path is None and cfg.use_rerank:
        print(dim("rerank is off until a cross-encoder is here: citebot models pull"))
    return cli.EXIT_OK


COMMANDS: dict[str, Callable[..., int] | None] = {"chat": chat_main, "ask": None, "ingest": ingest_main, "search": search_main,
            "queries": queries_main, "config": config_main, "eval": eval_main, "models": models_main}


@cli.entry
def main(argv: list[str] | None = None) -> int:
    """``citebot COMMAND ...``; ``citebot ask "question"`` is ``bot.py --ask``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in COMMANDS:
        print("usage: citebot {" + ",".join(COMMANDS) + "} ...\n"
              "  chat     chat with your documents        ask      answer one question (--json)\n"
              "  ingest   build or update an index         search   show the ranked chunks\n"
              "  queries  the queries a turn would search  config   every setting and its source\n"
              "  eval     evaluation and benchmarks        models   the models; `models pull` fetches one",
              file=sys.stdout if argv[:1] in (["-h"], ["--help"]) else sys.stderr)
        if argv[:1] in (["-h"], ["--help"]):
            return cli.EXIT_OK
        if argv:
            print(f"citebot: unknown command {safe_line(argv[0])!r}", file=sys.stderr)
        return cli.EXIT_USAGE
    name, rest = argv[0], argv[1:]
    if name == "ask":
        return chat_main(rest, prog="citebot ask", positional=True)
    command = COMMANDS[name]
    assert command is not None
    return command(rest, prog=f"citebot {name}")

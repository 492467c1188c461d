"""citebot: chat with your documents, with cited answers.

    python bot.py [--index DIR] [--audience staff] [--tenant T] [--lang zh] [--include-superseded]
    python bot.py --ask "question" [--json]

Answers go to stdout, diagnostics to stderr.  Exit codes: 0 ok, 1 runtime
failure, 2 usage error.  In the chat: Ctrl-C cancels the answer being written,
Ctrl-D or /quit leaves.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import cli
import config
import llm as llm_mod
import models
import store
from answer import Engine, Turn
from retrieve import Retriever, open_index

HELP = """Commands:
  /sources   the last answer's sources again
  /show N    the full text of source N, with its file and lines
  /why       how the last answer was found: searched question, expansions, ranks, drops
  /new       forget the conversation
  /help      this list
  /quit      leave (or Ctrl-D); Ctrl-C cancels an answer being written"""

_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|[\x00-\x08\x0b-\x1f\x7f]")


def safe(text: str) -> str:
    """Model and document text is shown as plain text: terminal control
    sequences in it are removed, never interpreted."""
    return _CONTROL.sub("", text)


def sources_text(turn: Turn) -> str:
    if not turn.citations:
        return ""
    lines = ["Sources:"]
    for c in turn.citations:
        a, b = c["lines"]
        where = f"line {a}" if a == b else f"lines {a}-{b}"
        lines.append(f"  [{c['n']}] {safe(c['title'])} — {c['source']}, {where}")
    return "\n".join(lines)


def show_text(turn: Turn | None, arg: str) -> str:
    if turn is None or not turn.context or not turn.context.shown:
        return "Nothing to show yet: ask a question first."
    try:
        n = int(arg)
        h = turn.context.shown[n - 1]
        if n < 1:
            raise IndexError
    except (ValueError, IndexError):
        return f"Usage: /show N, with N from 1 to {len(turn.context.shown)}."
    c = h.chunk
    head = " > ".join((c.title, *c.headings))
    return f"[{n}] {safe(head)}\n{c.location}\n\n{safe(c.text)}"


def why_text(turn: Turn | None) -> str:
    if turn is None:
        return "Nothing to explain yet: ask a question first."
    t = turn.trace()
    out = [f"typed:    {turn.typed}", f"searched: {t['question_searched']}"]
    if t["expansions"]:
        out.append("expanded: " + " | ".join(t["expansions"]))
    out.append(f"scope:    {t['scope']}; rerank {'on' if t['rerank'] else 'off'}; model calls {t['model_calls']}")
    out.append(f"{'chunk':18} {'bm25':>4} {'dense':>5} {'fused':>5} {'rerank':>7} {'cos':>5} {'cover':>5}  outcome / source")
    for c in t["chunks"]:
        rr = f"{c['rerank_score']:.3f}" if c["rerank_score"] is not None else "-"
        outcome = f"shown [{c['shown_as']}]" if c["shown_as"] else f"dropped ({c['dropped']})"
        out.append(f"{c['id']:18} {c['bm25_rank'] or '-':>4} {c['dense_rank'] or '-':>5} {c['fused_rank'] or '-':>5} "
                   f"{rr:>7} {c['cosine']:>5.2f} {c['coverage']:>5.2f}  {outcome} {c['source']}:{c['lines'][0]}-{c['lines'][1]}")
    if not t["chunks"]:
        out.append("(no chunk matched)")
    if t.get("refusal_reason"):
        out.append(f"refused:  {t['refusal_reason']}")
    out.append("timings ms: " + ", ".join(f"{k} {v:.0f}" for k, v in t["timings_ms"].items()))
    return "\n".join(out)


class Chat:
    """The REPL: prompt-toolkit's PromptSession loop, as in its examples."""

    def __init__(self, engine: Engine, cfg: config.Config, input=None, output=None, out=None):
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory, InMemoryHistory

        self.engine, self.cfg = engine, cfg
        self.out = out or sys.stdout
        self.last: Turn | None = None
        history = InMemoryHistory()
        try:
            Path(cfg.data_dir).mkdir(parents=True, exist_ok=True)
            history = FileHistory(str(Path(cfg.data_dir) / "history"))
        except OSError:
            pass
        self.session = PromptSession(history=history, input=input, output=output)

    def say(self, text: str = "", end: str = "\n") -> None:
        self.out.write(text + end)
        self.out.flush()

    def run(self) -> int:
        self.say("citebot — ask about your documents. /help for commands, Ctrl-D to leave.")
        while True:
            try:
                text = self.session.prompt("you> ")
            except KeyboardInterrupt:
                continue  # Ctrl-C at the prompt clears the line
            except EOFError:
                return cli.EXIT_OK
            text = text.strip()
            if not text:
                continue
            if text.startswith("/"):
                if self.command(text) == "quit":
                    return cli.EXIT_OK
                continue
            self.ask(text)

    def command(self, text: str) -> str | None:
        name, _, arg = text.partition(" ")
        if name in ("/quit", "/exit"):
            return "quit"
        if name == "/help":
            self.say(HELP)
        elif name == "/sources":
            self.say(sources_text(self.last) if self.last and self.last.citations else "No sources yet.")
        elif name == "/show":
            self.say(show_text(self.last, arg.strip()))
        elif name == "/why":
            self.say(why_text(self.last))
        elif name == "/new":
            self.engine.reset()
            self.last = None
            self.say("Started a new conversation.")
        else:
            self.say(f"Unknown command {name}. /help lists the commands.")
        return None

    def ask(self, text: str) -> None:
        try:
            turn = answer_to(self.engine, text, self.out)
        except KeyboardInterrupt:
            self.say("\n(cancelled)")
            return
        if turn.error is None:
            self.last = turn


def answer_to(engine: Engine, text: str, out) -> Turn:
    """Ask, streaming the answer to ``out``, then the notes and the sources."""
    def say(s: str, end: str = "\n") -> None:
        out.write(s + end)
        out.flush()

    def on_searched(q: str) -> None:
        if q != text:  # show what was actually searched when it differs
            say(cli.dim(f"(searched: {q})", out))

    turn = engine.ask(text, on_text=lambda t: say(safe(t), end=""), on_searched=on_searched)
    if turn.error:
        print(f"citebot: {turn.error}", file=sys.stderr)
        return turn
    say("")
    if turn.stripped:
        say(cli.dim(f"({turn.stripped} citation number(s) that named no shown source were removed; "
                    f"{engine.stripped_total} this session)", out))
    if turn.unsupported and not turn.refused:
        say("(unsupported: this answer cites none of the sources — do not rely on it)")
    if turn.citations:
        say(sources_text(turn))
    return turn


def build_engine(cfg: config.Config, scope) -> Engine:
    import rewrite

    index = open_index(cfg)
    retriever = Retriever(index, cfg)
    _ = retriever.embedder  # load now, not on the first question
    if cfg.use_rerank:
        _ = retriever.reranker  # warns once here if it cannot be loaded
    synonyms = rewrite.load_synonyms(cfg.synonyms) if cfg.use_expansion else ()
    return Engine(retriever, cfg, scope, llm=llm_mod.make(cfg), synonyms=synonyms)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bot.py", description="Chat with your documents; answers cite their sources.")
    p.add_argument("--ask", metavar="QUESTION", help="answer one question and exit")
    p.add_argument("--json", action="store_true", help="with --ask: print one JSON object")
    cli.add_config_flags(p)
    cli.add_scope_flags(p)
    args, cfg = cli.parse(p, argv)
    if args.json and not args.ask:
        p.error("--json needs --ask")
    try:
        engine = build_engine(cfg, cli.scope_from(args))
    except (store.IndexError_, models.ModelUnavailable, ValueError) as e:
        return cli.fail(str(e))
    if args.ask is None:
        return Chat(engine, cfg).run()
    if args.json:
        turn = engine.ask(args.ask)
        if turn.error:
            return cli.fail(turn.error)
        print(json.dumps(turn.to_json(), ensure_ascii=False, indent=2))
        return cli.EXIT_OK
    turn = answer_to(engine, args.ask, sys.stdout)
    return cli.EXIT_FAIL if turn.error else cli.EXIT_OK

if __name__ == "__main__":
    sys.exit(main())

"""The terminal chat: prompt-toolkit's PromptSession loop, as in its examples.

Answers stream to stdout; notes about an answer (what else was searched,
stripped citations, an incomplete or unsupported answer) follow it; errors go
to stderr and the chat goes on.  Ctrl-C cancels the answer being written,
Ctrl-D or /quit leaves.  With stdin not a terminal (a pipe, a file, a here
document) each line is a turn, read as plain text: no prompt, no editing
keys, no terminal queries (prompt-toolkit read a file as empty, and bytes of
a pipe as keystrokes).
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from citebot import cli
from citebot.chat import render
from citebot.engine import Engine, Turn, readable
from citebot.index.store import IndexError_
from citebot.schema import Scope
from citebot.search.models import ModelUnavailable
from citebot.terminal import dim, safe, safe_line

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession


class Conversation:
    """One conversation over an engine: its history, its session counters,
    and the citation metrics log in the data dir."""

    def __init__(self, engine: Engine, scope: Scope = Scope(), log: bool = True):
        self.engine, self.scope, self.log = engine, scope, log
        self.history: list[str] = []
        self.stripped_total = 0

    def reset(self) -> None:
        self.history.clear()

    def ask(self, typed: str, on_text=None, on_plan=None) -> Turn:
        typed = readable(typed)  # kept in the history and the log, so made valid first
        try:
            turn = self.engine.ask(typed, self.history, self.scope, on_text=on_text, on_plan=on_plan)
        except KeyboardInterrupt:  # an answer cancelled with Ctrl-C still asked its question: a follow-up refers to it
            self.history.append(typed)
            raise
        # A turn that failed (the index gone, unreadable) asked nothing a follow-up can
        # refer to: kept, the next turn searched "what does E4032 mean? what does E4032 mean?".
        self.history.append(typed)
        self.stripped_total += turn.stripped
        if self.log:
            self._log(turn)
        return turn

    def _log(self, turn: Turn) -> None:
        path = Path(self.engine.cfg.data_dir) / "metrics.jsonl"
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            with open(path, "a", encoding="utf-8", opener=owner_only) as f:
                f.write(json.dumps({"time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "question": turn.typed,
                                    "cited": [c["n"] for c in turn.citations], "stripped": turn.stripped,
                                    "refused": turn.refused, "unsupported": turn.unsupported,
                                    "incomplete": turn.incomplete is not None,
                                    "error": turn.error is not None},  # a failed turn is no answer
                                   ensure_ascii=False) + "\n")
        except OSError:
            pass  # a read-only data dir must not break the answer


def answer_to(convo: Conversation, text: str, out, notes=None, chat: bool = True) -> Turn:
    """Ask, streaming the answer to ``out``, then the notes and the sources.
    ``notes`` (default ``out``) gets the diagnostics: what else was searched,
    how many citation numbers were removed; ``--ask`` sends them to stderr.
    Warnings about the answer itself (incomplete, unsupported) stay with it."""
    notes = notes or out

    def say(s: str, end: str = "\n", to=None) -> None:
        to = to or out
        to.write(s + end)
        to.flush()

    def on_plan(plan) -> None:
        if plan.also_searched:  # show what else was searched
            say(dim("(also searched: " + " | ".join(safe_line(q) for q in plan.also_searched) + ")", notes),
                to=notes)

    begun = []

    def on_text(t: str) -> None:
        begun.append(bool(t))
        say(safe(t), end="")

    turn = convo.ask(text, on_text=on_text, on_plan=on_plan)
    if turn.error:
        if any(begun):
            say("")  # end the line the answer had begun; a failure before any text prints nothing on stdout
        print(f"citebot: {safe_line(turn.error)}", file=sys.stderr, flush=True)  # a server's words: shown, never obeyed
        return turn
    say("")
    if turn.incomplete:
        say(f"(incomplete: {safe_line(turn.incomplete)} — do not rely on this answer)")
    if turn.stripped:
        say(dim(f"({turn.stripped} citation number(s) that named no shown source were removed; "
                f"{convo.stripped_total} this session)", notes), to=notes)
    if turn.unsupported and not turn.refused:
        say("(unsupported: this answer cites none of the sources — do not rely on it)")
    if turn.citations:
        say(render.sources_text(turn, chat))
    return turn


def owner_only(path, flags: int) -> int:
    """An ``open()`` opener for a file readable by its owner alone: it holds
    every question typed, a staff asker's too."""
    fd = os.open(path, flags, 0o600)
    os.fchmod(fd, 0o600)  # one an older citebot made readable to all
    return fd


def private(path: Path) -> None:
    """``path`` made owner-only (its new folder too) before another library opens it."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.close(owner_only(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND))


def _tty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or odd stream
        return False


def stdin_lines():
    """The lines of a stdin that is not a terminal, as text (bytes UTF-8 cannot read become U+FFFD)."""
    for raw in iter(sys.stdin.buffer.readline, b""):
        yield raw.decode("utf-8", "replace").rstrip("\r\n")


class Chat:
    def __init__(self, convo: Conversation, input=None, output=None, out=None, note: str | None = None,
                 lines=None):
        """``input``/``output``: prompt-toolkit's (tests); ``lines``: the turns
        as plain text (``stdin_lines()`` when stdin is not a terminal)."""
        self.convo = convo
        self.out = out or sys.stdout
        self.last: Turn | None = None
        self.waited = False
        self.failed = 0  # turns that got no answer (a model server down, the index gone)
        self.broke: str | None = None  # why the last turn failed before it searched (the index gone, no model)
        self.note = note  # what is missing, and the command that fixes it
        self.lines = None if lines is None else iter(lines)
        # Typed at a terminal with stdout sent to a file: the prompt, the banner and the
        # notes stay on the terminal (stderr), the answers go to the file.
        redirected = lines is None and output is None and out is None and not _tty(sys.stdout) and _tty(sys.stderr)
        self.ui = sys.stderr if redirected else self.out
        if redirected:
            from prompt_toolkit.output import create_output
            output = create_output(stdout=sys.stderr)
        self.session = None if lines is not None else self._session(input, output)

    def _session(self, input, output) -> PromptSession[str]:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory, InMemoryHistory

        convo = self.convo
        history: InMemoryHistory | FileHistory = InMemoryHistory()
        try:
            path = Path(convo.engine.cfg.data_dir) / "history"
            private(path)
            history = FileHistory(str(path))
        except OSError:
            pass
        session: PromptSession[str] = PromptSession(history=history, input=input, output=output)
        return session

    def read(self) -> str:
        """The next turn typed; EOFError at the end (Ctrl-D, or stdin's last line)."""
        if self.lines is not None:
            line = next(self.lines, None)
            if line is None:
                raise EOFError
            return line
        assert self.session is not None  # one of the two is set
        return self.session.prompt("you> ")

    def say(self, text: str = "", to=None) -> None:
        to = to or self.out
        to.write(text + "\n")
        to.flush()

    def run(self) -> int:
        if self.session is not None:
            self.say("citebot — ask about your documents. /help for commands, Ctrl-D to leave.", self.ui)
            if self.note:
                self.say(dim(f"({safe_line(self.note)})", self.ui), self.ui)
        elif self.note:  # lines from a pipe: stdout holds the answers alone
            cli.warn(safe_line(self.note))
        while True:
            try:
                text = self.read()
            except KeyboardInterrupt:
                if self.session is None:
                    raise  # a pipe's run is stopped as any command is (exit 130); its input cannot be read on
                continue  # Ctrl-C at the prompt clears the line
            except EOFError:
                # From a pipe, a turn that got no answer fails the run, as it fails --ask; in the
                # chat the person saw each failure and leaves as they like.
                return cli.EXIT_FAIL if self.failed and self.session is None else cli.EXIT_OK
            text = text.strip()
            if not safe(text).strip():  # blank, or control sequences alone (a stray ESC [2J): no turn
                continue
            if text.startswith("/"):
                if self.command(text) == "quit":
                    return cli.EXIT_OK
                continue
            if problem := cli.question_problem(text):
                self.problem(problem)
                # From a pipe, a turn too long to ask got no answer: the run fails (exit 1), as the README says.
                self.failed += self.session is None
                continue
            self.ask(text)

    def command(self, text: str) -> str | None:
        name, _, arg = text.partition(" ")
        if name in ("/quit", "/exit"):
            return "quit"
        if name == "/help":
            self.say(render.HELP, self.ui)
        elif name in ("/sources", "/show", "/why") and self.broke:
            self.say(f"The last turn failed before it searched anything ({self.broke}); ask again once that is "
                     "fixed.", self.ui)
        elif name == "/sources":
            self.say(render.sources_text(self.last), self.ui)
        elif name == "/show":
            self.say(render.show_text(self.last, arg.strip()), self.ui)
        elif name == "/why":
            self.say(render.why_text(self.last), self.ui)
        elif name == "/new":
            self.convo.reset()
            self.last, self.broke = None, None
            self.say("Started a new conversation.", self.ui)
        else:
            self.problem(f"unknown command {safe_line(name)}; /help lists the commands")
        return None

    def problem(self, msg: str) -> None:
        """What is wrong with a line typed: in the chat, said in it; from a pipe, on
        stderr (stdout holds the answers alone)."""
        if self.session is None:
            cli.warn(msg)
        else:
            self.say(f"({msg})", self.ui)

    def ask(self, text: str) -> None:
        engine = self.convo.engine
        if not self.waited and not engine.models.ready(engine.cfg):
            loading = "loading the models, the first answer takes a few seconds"
            if self.session is None:
                cli.warn(loading)
            else:
                self.say(dim(f"({loading})", self.ui), self.ui)
        self.waited = True
        try:
            # From a pipe, stdout holds the answers; what else was searched goes to stderr, as with --ask.
            turn = answer_to(self.convo, text, self.out, notes=sys.stderr if self.session is None else self.ui)
        except KeyboardInterrupt:
            if self.session is None:
                raise  # from a pipe: stdout holds answers alone, and the run stops (exit 130)
            self.say("\n(cancelled)", self.ui)
            return
        except (IndexError_, ModelUnavailable) as e:  # a model that would not load, found at first use
            self.failed += 1
            # Nothing was searched: /why explained the turn before as if it were this one.
            self.broke = safe_line(str(e))
            print(f"citebot: {self.broke}", file=sys.stderr, flush=True)
            return
        self.failed += turn.error is not None
        self.last, self.broke = turn, None  # a turn the model failed still searched: /why and /show explain it

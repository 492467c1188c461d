"""Everything citebot prints that came from a document, a file name or a
model goes through :func:`safe`: such text is shown, never obeyed.

Removed: ESC sequences (CSI such as clear-screen, OSC such as set-title or
the clipboard write OSC 52, and any other ESC + byte), the single-byte C1
controls U+0080..U+009F (U+009B is a one-character CSI on many terminals),
the C0 controls except tab and newline, lone surrogates (shown as U+FFFD), and the bidi embedding, override
and isolate controls U+202A..U+202E, U+2066..U+2069 (a title holding U+202E
showed the citation's file name and line reversed: "Trojan Source").  A file
name goes through :func:`safe_name` instead, which writes those characters as
escapes, so the name shown is one the user can find.  ``--json`` output is never
passed through here: JSON escapes control characters itself and stays exact.
"""
from __future__ import annotations

import os
import re
import sys

_SEQUENCES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC ... BEL / ST (or cut off)
    r"|\x1b[PX^_][^\x1b\x9c]*(?:\x1b\\|\x9c)?"  # DCS, SOS, PM, APC strings
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
    r"|\x9d[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # 8-bit OSC
    r"|\x1b[ -/]*[0-~]?"  # any other escape (ESC c resets the terminal)
)
BIDI = "\u202a-\u202e\u2066-\u2069"  # embedding, override and isolate controls (a range for a character class)
_CONTROLS = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{BIDI}]")
_SURROGATE = re.compile("[\ud800-\udfff]")  # no UTF-8 for it: written out, it raised and ended the command


def writable(text: str) -> str:
    """``text`` with every lone surrogate as U+FFFD, so it can be written as UTF-8."""
    return _SURROGATE.sub("\ufffd", text)


def safe(text: str) -> str:
    """``text`` with every terminal control sequence and control character
    removed (tab and newline kept)."""
    return writable(_CONTROLS.sub("", _SEQUENCES.sub("", str(text))))


def safe_line(text: str) -> str:
    """:func:`safe`, folded onto one line (titles, file names, queries)."""
    return " ".join(safe(text).split())


_NAME_CONTROLS = re.compile(f"[\x00-\x1f\x7f-\x9f{BIDI}]")


def safe_name(text: str) -> str:
    """A file name (or a location that starts with one) as one can find it on
    disk: every control character written as its escape (``\\x1b``, ``\\u202e``)
    where :func:`safe` removes it; a file named "ESC[31mdoor.md" is not door.md."""
    return writable(_NAME_CONTROLS.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text)))


def use_color(stream=None) -> bool:
    # https://no-color.org: any non-empty NO_COLOR turns colour off; so does TERM=dumb (a terminal that
    # draws no escapes: Emacs' shell, some CI consoles showed "[2m" around every note).
    stream = stream or sys.stdout
    return (not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
            and hasattr(stream, "isatty") and stream.isatty())


def dim(text: str, stream=None) -> str:
    """Secondary text, dimmed on a colour terminal; ``text`` must be safe already."""
    return f"\x1b[2m{text}\x1b[0m" if use_color(stream) else text


def script(name: str) -> str:
    """How to run citebot's ``name`` (ingest.py) from here, as a command to
    paste: this interpreter and the script, each relative to the current
    folder when inside it (".venv/bin/python ingest.py" in the checkout).
    A bare "python ingest.py" meant whatever python the shell finds, which
    lacks citebot's packages when the venv is not activated."""
    import shlex
    from pathlib import Path

    def short(p: Path) -> str:
        try:
            return str(p.relative_to(Path.cwd()))
        except ValueError:
            return str(p)
    python = Path(sys.executable)
    path = Path(__file__).resolve().parent.parent / name
    return f"{shlex.quote(short(python))} {shlex.quote(short(path) if path.is_file() else name)}"

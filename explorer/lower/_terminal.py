"""Printing on a terminal: ``printable`` (control characters escaped), ``terminal`` (a
console at the terminal's width), ``echo`` (a text view's lines, wrapped where a terminal is
narrower) and ``echo_fitting`` (a text view made at the terminal's width, then echoed)."""

from __future__ import annotations

import re
import sys

from rich.console import Console

from ..base._bound import bounded
from ._fit import text_width, wrap_line


def terminal(file=None) -> Console:
    """A console at the terminal's width (rich reads it, or COLUMNS when set); piped or
    redirected: no wrapping at all, whatever COLUMNS says (a log or ``grep`` gets whole lines;
    GNU readline exports COLUMNS to every child of a process that used it, a Python shell's)."""
    out = file or sys.stdout
    if out.isatty():
        return Console(file=out)
    return Console(file=out, width=UNWRAPPED, soft_wrap=True, color_system=None)


UNWRAPPED = 10_000  # a pipe's "width": the table's columns take what their cells need


# C0 but newline and tab, DEL, C1: what moves the cursor, clears the screen, sets the title or
# writes the clipboard (ESC ] 52) when printed raw; and Unicode's invisible format controls:
# the bidi marks, embeddings, overrides and isolates (U+202E shows what follows backwards, so
# a line reads otherwise than it is), zero-width characters, line and paragraph separators
_CONTROL = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff]"
)


def printable(text: str) -> str:
    """``text`` safe to print on a terminal: each control character as its escape (``\\x1b``,
    ``\\x07``, ``\\u202e``), so an ESC sequence in a report shows as text and does nothing, and
    a bidi override does not turn the line around. What PT2 Explorer prints from a report or a
    trace passes here: ``echo``, ``print_summary`` and the CLI's error lines."""
    return _CONTROL.sub(_escape, text)


def _escape(m: re.Match) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def echo(text: str, file=None) -> None:
    """Plain text from a text view, to the terminal: wrapped at its width in a terminal (an
    indented line's continuation keeps the indent), whole lines when piped; control characters
    escaped (``printable``); at most ``_bound.OUTPUT`` characters, then a line that says where it
    stopped."""
    out = file or sys.stdout
    text = printable(bounded(text))
    console = terminal(out)
    if console.width >= UNWRAPPED or console.soft_wrap:
        out.write(text)
        return
    for line in text.splitlines():
        out.write("".join(ln + "\n" for ln in wrap_line(line, console)))


def echo_fitting(make, file=None) -> None:
    """``make()``'s text on stdout (or ``file``), made to fit the terminal's width where it is
    one (whole lines where piped: ``terminal``), then wrapped by ``echo``
    where a line still runs over."""
    room = terminal(file).width
    with text_width(room if room < UNWRAPPED else None):
        text = make()
    echo(text, file)

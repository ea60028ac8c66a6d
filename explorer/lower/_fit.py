"""Text laid out to a terminal's width: the width a text view is made for (None: whole lines,
as piped), and tables at that width, their text wrapped inside the cells by rich's table
layout, so that a row never runs across the lines of the next.

The CLI makes a view's text inside ``text_width(console.width)`` when its output is a
terminal (``View.terminal``, ``views/_registry.py``, through ``lower._terminal.echo_fitting``;
``explorer.text(report, view, width=...)`` likewise); every table of a text view is laid out by ``table_lines``, and the views whose rows are not
tables (the compile-time waterfall) ask ``width()`` how wide a line may be."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from rich.cells import cell_len

# a figure and its unit ("29.78 s", "1,818 lines") are one word where a line wraps: rich
# wraps at any whitespace (a no-break space too), so the space is a private-use character
# while the line is wrapped, and a space again after
KEPT = "\ue000"
_FIGURE = re.compile(r"(?<=\d) (?=(?:s|ms|µs|us|ns|GB|MB|KB|GiB|MiB|KiB|B|%|×|lines|nodes|calls)\b)")

_WIDTH: ContextVar[int | None] = ContextVar("pt2x_text_width", default=None)


@contextmanager
def text_width(width: int | None) -> Iterator[None]:
    """The text views made inside this block fit ``width`` columns (None: whole lines)."""
    token = _WIDTH.set(width)
    try:
        yield
    finally:
        _WIDTH.reset(token)


def width() -> int | None:
    """The width text views are being made for; None: whole lines."""
    return _WIDTH.get()


def wrap_line(line: str, console) -> list[str]:
    """``line`` as it is where it fits ``console``'s width (a line made to fit, or short); else
    wrapped between words (a figure kept with its unit), an indented line's continuations
    keeping its indent."""
    room = console.width
    if cell_len(line) <= room:
        return [line.rstrip()]
    from rich.text import Text

    indent = len(line) - len(line.lstrip(" "))
    keep = indent < room // 2
    parts = Text(keep_figures(line)).wrap(console, room - indent if keep else room)
    return [
        (" " * indent if i and keep else "") + part.plain.rstrip().replace(KEPT, " ")
        for i, part in enumerate(parts)
    ]


def keep_figures(line: str) -> str:
    """``line`` with each figure's space before its unit as ``KEPT`` (none where the line holds
    that character itself)."""
    return line if KEPT in line else _FIGURE.sub(KEPT, line)


class Parts:
    """A line of parts joined by ``sep`` (the summary's "13 frames · … · compile time 29.78 s")
    for rich: wrapped between parts where it does not fit, never inside one that fits."""

    def __init__(self, text: str, sep: str = " · "):
        self.parts = text.split(sep)
        self.sep = sep

    def __rich_console__(self, console, options):
        from rich.text import Text

        line = ""
        for part in self.parts:
            joined = line + self.sep + part if line else part
            if line and cell_len(joined) > options.max_width:
                yield Text(line + self.sep.rstrip())
                joined = part
            line = joined
        yield Text(line)


def table_lines(
    columns: Sequence[str] | None,
    rows: Sequence[Sequence[str]],
    keep: Sequence[int] = (),
    indent: int = 0,
) -> list[str]:
    """The table's lines (the header's first where ``columns`` is given): each column as wide as
    its widest cell, two spaces between columns, where that fits ``width()``; else rich's layout
    at that width, each cell's text wrapped inside its column (a word longer than its column
    folded), the columns in ``keep`` (numbers, ids) never wrapped. ``indent``: spaces before
    each line, counted in the width. Each line without its trailing spaces."""
    head = [tuple(columns)] if columns else []
    body = [tuple(r) for r in rows]
    n = max((len(r) for r in head + body), default=0)
    widths = [max((cell_len(r[i]) for r in head + body if i < len(r)), default=0) for i in range(n)]
    room = width()
    pad = " " * indent
    if room is None or sum(widths) + 2 * (n - 1) + indent <= room:
        return [
            (pad + "  ".join(x + " " * (w - cell_len(x)) for x, w in zip(r, widths))).rstrip()
            for r in head + body
        ]
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None, pad_edge=False, show_edge=False, show_header=bool(columns), header_style="")
    given = _shares(widths, keep, room - indent - 2 * (n - 1))
    for i in range(n):
        table.add_column(
            Text(columns[i] if columns else ""), no_wrap=i in keep, overflow="fold", width=given[i]
        )
    for r in body:  # a list ("a.py:3, b.py:9") in a column too narrow for it: an item a line
        table.add_row(
            *(Text(_items(x) if w is not None and cell_len(x) > w else x) for x, w in zip(r, given))
        )
    out = io.StringIO()
    console = Console(
        file=out,
        width=max(room - indent, 20),
        color_system=None,
        no_color=True,
        highlight=False,
        force_terminal=False,
        force_jupyter=False,
        emoji=False,
        markup=False,
    )
    console.print(table)
    return [(pad + ln).rstrip() for ln in out.getvalue().splitlines()]


def _items(cell: str) -> str:
    """A list of names or places ("a.py:3, b.py:9", "mlp.fc1, mlp.act") an item a line, a
    file's further lines beside it ("a.py:3, 7"); prose whose clauses hold commas ("wrapper
    (a.py:3) [0/0], forward (b.py:9) [1/0]: failed …") as it is, wrapped between its words."""
    items = cell.split(", ")
    if len(items) == 1 or any(" " in x for x in items):
        return cell
    return items[0] + "".join((", " if x.isdigit() else ",\n") + x for x in items[1:])


SMALL = 12  # a column this narrow keeps its width: the wide ones wrap


def _shares(widths: list[int], keep: Sequence[int], room: int) -> list[int | None]:
    """Each column's width in ``room`` columns: the narrow ones (and ``keep``) as they are, the
    room left shared among the wide ones, none given more than it needs (water-filling: what
    a column does not need goes to the others). None: rich's own layout (too little room)."""
    fixed = {i for i, w in enumerate(widths) if w <= SMALL or i in keep}
    left = room - sum(widths[i] for i in fixed)
    wide = sorted((i for i in range(len(widths)) if i not in fixed), key=lambda i: widths[i])
    if not wide or left < SMALL * len(wide):
        return [None] * len(widths)
    out: list[int | None] = [widths[i] if i in fixed else None for i in range(len(widths))]
    for k, i in enumerate(wide):  # the narrowest first: each takes at most its fair part
        out[i] = min(widths[i], left // (len(wide) - k))
        left -= out[i]
    return out

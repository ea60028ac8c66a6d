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


MARK = "↪ "  # a code line's continuation, in a terminal narrower than the line


def continued(line: str, room: int) -> list[str]:
    """A line of code (graph code, IR, a kernel) in ``room`` columns: as it is where it fits;
    else cut after its last comma that fits, or its last space (inside a word that fits nowhere), each
    further part on a line of its own at the line's indent after ``MARK``: code is never cut
    short, and the mark says the line goes on (piped, the line is whole)."""
    if cell_len(line) <= room:
        return [line]
    indent = min(len(line) - len(line.lstrip(" ")), room // 2)
    lead = " " * indent + MARK
    out, rest, first = [], line, True
    while rest:
        avail = room - (0 if first else cell_len(lead))
        if cell_len(rest) <= avail:
            out.append(rest if first else lead + rest)
            break
        end = _fitting(rest, avail)
        comma, space = rest.rfind(", ", 0, end - 1), rest.rfind(" ", 0, end)
        if comma + 1 > avail // 3:  # after an argument's comma, else between words
            end = comma + 1
        elif space > avail // 3:
            end = space
        end = _outside_place(rest, end)
        part, rest = rest[:end].rstrip(), rest[end:].lstrip(" ")
        out.append(part if first else lead + part)
        first = False
    return out


def _outside_place(text: str, end: int) -> int:
    """``end``, or where a cut at ``end`` would split a place of ``text``: before the place,
    else (a place from the line's start) before its file's name, in its directories."""
    for m in PLACE.finditer(text):
        if m.start() < end < m.end():
            lead = len(text) - len(text.lstrip(" "))
            if m.start() > lead:
                return m.start()
            name = max(m[0].rfind("/"), m[0].rfind("\\")) + 1
            return m.start() + name if m.start() + name > lead and m.start() + name < end else end
    return end


def _fitting(text: str, room: int) -> int:
    """How many characters of ``text`` fit ``room`` columns (at least one)."""
    n = min(len(text), room)
    while n > 1 and cell_len(text[:n]) > room:
        n -= 1
    return max(n, 1)


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

    # laid out to fit: a header of several words may take lines of its own ("nodes / fused")
    widths = [
        max(
            [cell_len(r[i]) for r in body if i < len(r)]
            + [max(map(cell_len, h[i].split()), default=0) for h in head]
        )
        for i in range(n)
    ]
    table = Table(box=None, pad_edge=False, show_edge=False, show_header=bool(columns), header_style="")
    places = [max((_least(w) for r in body if i < len(r) for w in r[i].split()), default=0) for i in range(n)]
    given = _shares(widths, keep, room - indent - 2 * (n - 1), places)
    for i in range(n):
        table.add_column(
            Text(columns[i] if columns else ""), no_wrap=i in keep, overflow="fold", width=given[i]
        )
    for r in body:  # a list ("a.py:3, b.py:9") in a column too narrow for it: an item a line
        table.add_row(
            *(
                Text(_cell(x, w) if w is not None and i not in keep else x)
                for i, (x, w) in enumerate(zip(r, given))
            )
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


# a place (``modeling_bert.py:335``, ``transformers/models/bert/modeling_bert.py:335``): cut
# only in its directories, its file and line whole on one line
PLACE = re.compile(r"[^\s,;()\[\]'\"`]+\.\w+:\d+")


def cut_middle(word: str, room: int, keep: int = 0) -> str:
    """``word`` as it is where it fits ``room`` columns; else cut in its middle with "…", keeping
    its start and, longer, its end (Inductor's names of one family differ at their end:
    ``cpp_fused_…_native_layer_norm_view_2``), at least its last ``keep`` characters (whole
    where they do not fit)."""
    if cell_len(word) <= room:
        return word
    if keep >= room:
        return word
    head = (room - 1) // 3
    tail = max(room - 1 - head, keep, 1)
    return word[: room - 1 - tail] + "…" + word[len(word) - tail :]


def _place_end(word: str) -> int:
    """How many characters at the end of ``word`` a cut keeps: from the file's name of the
    place in it (``modeling_bert.py:335,``) to its end; 0 where it names no place."""
    m = PLACE.search(word)
    if m is None:
        return 0
    name = max(m[0].rfind("/"), m[0].rfind("\\")) + 1
    return len(word) - (m.start() + name)


def _least(word: str) -> int:
    """The columns ``word`` needs, cut: a place's file and line, and "…/" before them where
    its directories are cut; 0 for a word that is no place (any cut will do)."""
    keep = _place_end(word)
    return 0 if not keep else keep if keep == len(word) else keep + 2


def _cell(cell: str, room: int) -> str:
    """A cell for a column ``room`` wide: a list an item a line (``_items``), each word longer
    than the column cut in its middle (``cut_middle``), a place's file and line kept whole."""
    if cell_len(cell) <= room:
        return cell
    return cut_words(_items(cell), room)


def cut_words(text: str, room: int) -> str:
    """``text`` with each word longer than ``room`` cut in its middle (``cut_middle``), a
    place's directories cut from its start (``…/gpt2/modeling_gpt2.py:697``)."""
    return re.sub(r"[^\s]+", lambda m: _cut_word(m[0], room), text)


def _cut_word(word: str, room: int) -> str:
    """A word too long for its column cut (``cut_middle``); a place's directories cut from its
    start (``…/gpt2/modeling_gpt2.py:697``): its file and line whole."""
    keep = _place_end(word)
    if not keep or cell_len(word) <= room or keep > room:
        return cut_middle(word, room, keep)
    if keep == room:  # the file and line alone fit: its directories left out
        return word[len(word) - keep :]
    tail = word[len(word) - (room - 1) :]
    cut = tail.find("/", 0, len(tail) - keep)
    return "…" + (tail[cut:] if cut >= 0 else tail[len(tail) - keep :])


def _items(cell: str) -> str:
    """A list of names or places ("a.py:3, b.py:9", "mlp.fc1, mlp.act") an item a line, a
    file's further lines beside it ("a.py:3, 7"); prose whose clauses hold commas ("wrapper
    (a.py:3) [0/0], forward (b.py:9) [1/0]: failed …") as it is, wrapped between its words."""
    items = cell.split(", ")
    if len(items) == 1 or any(" " in x for x in items):
        return cell
    return items[0] + "".join((", " if x.isdigit() else ",\n") + x for x in items[1:])


SMALL = 12  # a column this narrow keeps its width: the wide ones wrap
FLOOR = 10  # a wide column gives room to another's place down to this


def _shares(widths: list[int], keep: Sequence[int], room: int, least: Sequence[int] = ()) -> list[int | None]:
    """Each column's width in ``room`` columns: the narrow ones (and ``keep``) as they are, the
    room left shared among the wide ones, none given more than it needs (water-filling: what
    a column does not need goes to the others), none less than its ``least`` (its longest
    place, kept whole) while another has more than its own. None: rich's own layout (no
    wide column)."""
    fixed = {i for i, w in enumerate(widths) if w <= SMALL or i in keep}
    left = room - sum(widths[i] for i in fixed)
    wide = sorted((i for i in range(len(widths)) if i not in fixed), key=lambda i: widths[i])
    if not wide:
        return [None] * len(widths)
    out: list[int | None] = [widths[i] if i in fixed else None for i in range(len(widths))]
    for k, i in enumerate(wide):  # the narrowest first: each takes at most its fair part
        out[i] = max(min(widths[i], left // (len(wide) - k)), 4)
        left -= out[i]
    least = list(least) or [0] * len(widths)

    def _floor(j: int) -> int:  # a column gives room down to this
        return max(least[j], min(widths[j], FLOOR))

    for i in wide:  # a place whole: the room from the column with the most to spare
        while out[i] < min(least[i], widths[i]):
            spare = max((j for j in wide if j != i), key=lambda j: out[j] - _floor(j), default=None)
            if spare is None or out[spare] - _floor(spare) <= 0:
                break
            out[spare] -= 1
            out[i] += 1
    return out

"""A table as rich lays out ``Table(box=None, pad_edge=False, show_edge=False)`` without
colours where it fits the width as it is: each column as wide as its widest cell (or its
header, or its least width), cells left-justified, two spaces between columns. Rich measures
and renders each cell on its own: the summary's table of a log of a thousand compiles took
seconds; this takes milliseconds (the summary, ``_summary._plain``; its tests hold the two
equal)."""

from __future__ import annotations

import io
from collections.abc import Sequence

from rich.cells import cell_len
from rich.console import Console
from rich.emoji import Emoji
from rich.text import Text

from ..base._types import CompileRow


def plain_table(
    columns: Sequence[str], rows: Sequence[Sequence[str] | None], least: Sequence[int], width: int
) -> list[str] | None:
    """The table's lines (the header's first), each with the spaces that pad its last cell;
    None where a row is None (one only rich can lay out) or the table is wider than ``width``."""
    if any(r is None for r in rows):
        return None
    lens = [[cell_len(x) for x in r] for r in (columns, *rows)]  # type: ignore[misc]
    widths = [max(n, *(ln[i] for ln in lens)) for i, n in enumerate(least)]
    if sum(widths) + 2 * (len(widths) - 1) > width:
        return None
    return [
        "  ".join(x + " " * (w - n) for x, n, w in zip(r, ln, widths))
        for r, ln in zip((columns, *rows), lens)  # type: ignore[misc]
    ]


def plain_cells(c: CompileRow) -> tuple[str, ...] | None:
    """A compile's row of the summary's table (``_summary._cells``) as rich prints its markup
    without colours, where that is its text as it is (no tag, no emoji's ``:name:``, no tab or
    line end); else None (rich lays it out)."""
    raw = (c.stages, c.kernels, c.time, c.stage_times)  # markup as they are: a "[" may be a tag
    cells = (f"[{c.compile_id}]", c.frame, c.status, *raw)
    if any("[" in x for x in raw) or any(ch in x for x in cells for ch in "\t\n\r"):
        return None
    return cells if all(":" not in x or Emoji.replace(x) == x for x in cells) else None


def word_widths(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> list[int]:
    """Each column's longest word, its header's among them: the least it takes wrapped
    between words."""
    table = [columns, *rows]
    return [max(cell_len(w) for r in table for w in r[i].split() or [""]) for i in range(len(columns))]


def fitted_table(
    columns: Sequence[str], rows: Sequence[Sequence[str]], width: int, fold: int = 12
) -> list[str]:
    """The table's lines at most ``width`` wide, the header's first, two spaces between
    columns. Where the whole lines are wider, the widest column narrows first, down to its
    longest word; then the longest words fold (down to ``fold``), then any where it must.
    Each cell wraps inside its column (rich's wrapping), so a row may take several lines with
    its cells side by side, never one line running into the next row."""
    table = [list(columns), *(list(r) for r in rows)]
    widths = [max(cell_len(r[i]) for r in table) for i in range(len(columns))]
    words = word_widths(columns, rows)
    room = width - 2 * (len(columns) - 1)
    # wrap between words first, then fold the longest words (down to ``fold``), then any
    for least in (words, [min(w, fold) for w in words], [1] * len(columns)):
        while sum(widths) > room:
            over = [i for i, w in enumerate(widths) if w > least[i]]
            if not over:
                break
            widths[max(over, key=lambda i: widths[i])] -= 1
    console = Console(file=io.StringIO(), width=max(widths), color_system=None, highlight=False)
    out = []
    for r in table:
        cells = [
            [ln.plain.rstrip() for ln in Text(x, overflow="fold").wrap(console, w)] or [""]
            for x, w in zip(r, widths)
        ]
        for k in range(max(len(c) for c in cells)):
            parts = [(c[k] if k < len(c) else "").ljust(w) for c, w in zip(cells, widths)]
            out.append("  ".join(parts).rstrip())
    return out

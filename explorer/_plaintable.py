"""A table as rich lays out ``Table(box=None, pad_edge=False, show_edge=False)`` without
colours where it fits the width as it is: each column as wide as its widest cell (or its
header, or its least width), cells left-justified, two spaces between columns. Rich measures
and renders each cell on its own: the summary's table of a log of a thousand compiles took
seconds; this takes milliseconds (the summary, ``_summary._plain``; its tests hold the two
equal)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len


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

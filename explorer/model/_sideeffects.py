"""The side effects of a compile (``Capture.side_effects``, torch's ``dynamo_side_effects``):
the objects the code Dynamo made mutates in Python after the graph runs, as a table of the
capture stage."""

from __future__ import annotations

from compiler.types import SideEffect

from ..base._types import Table
from ._summary import where

SIDE_EFFECTS = (
    "side effects: objects Dynamo's code mutates after the graph, in Python (torch's dynamo_side_effects)"
)


def side_effects_table(effects: tuple[SideEffect, ...]) -> Table:
    """One row per object the code Dynamo made mutates after the graph runs: its type, where
    Dynamo found it, how many mutations it replays and the lines that made them."""
    rows = tuple(
        (
            e.type,
            e.source or "(no source)",
            str(len(e.sites)),
            _lines_by_file(e.sites),
        )
        for e in effects
    )
    return Table(SIDE_EFFECTS, ("object", "source", "mutations", "made at"), rows)


def _lines_by_file(frames) -> str:
    """``a.py:3, 7, b.py:2``: each line once, its file named at its first line."""
    out, last = [], None
    for f in dict.fromkeys((f.filename, f.line) for f in frames):
        out.append(where(*f) if f[0] != last else str(f[1]))
        last = f[0]
    return ", ".join(out)

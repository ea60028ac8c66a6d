"""The head that moved, for each row of a census diff whose compile time moved beyond the noise
(``_diff.py``): each row's compile time placed under the heads
(``compiler.analysis.program_time``), as the row keeps it (``CensusRow.compile_heads``); a row
written before rows kept them reads them from its report (``reports/<case>.json.gz``, which
``census run`` keeps beside the census and the row names). Where a row has neither (an old
census written as one file: the compile's total only), the diff says that no head is named."""

from __future__ import annotations

import dataclasses

import compiler
from compiler._viewer import HEADS
from compiler.analysis import program_time

from ._table import Census, CensusRow

NO_REPORT = "no head named: the row keeps no heads and the census no report of it (its total only)"


def _heads(census: Census, row: CensusRow) -> dict[str, float] | None:
    if row.compile_heads is not None:
        return row.compile_heads
    path = census.report_path(row)  # inside the census, through no link
    if path is None:
        return None
    try:
        report = compiler.load(path)
    except (OSError, ValueError):
        return None
    p = program_time(report)
    return p.heads if p.compiles else None


def moved_head(a: Census, ra: CensusRow, b: Census, rb: CensusRow) -> str:
    """``codegen 3.10 s → 9.42 s``: the head whose seconds moved most between the two rows."""
    ha, hb = _heads(a, ra), _heads(b, rb)
    if ha is None or hb is None:
        return NO_REPORT
    k = max(HEADS, key=lambda k: abs(hb.get(k, 0.0) - ha.get(k, 0.0)))
    return f"most moved: {HEADS[k]} {ha.get(k, 0.0):.2f} s → {hb.get(k, 0.0):.2f} s"


def with_heads(changes, a: Census, b: Census) -> tuple:
    """Each change whose compile time moved, with the head that moved most after it."""
    out = []
    for c in changes:

        def told(items: tuple[str, ...], c=c) -> tuple[str, ...]:
            return tuple(
                f"{x} — {moved_head(a, c.before, b, c.after)}" if x.startswith("compile ") else x
                for x in items
            )

        out.append(dataclasses.replace(c, worse=told(c.worse), better=told(c.better)))
    return tuple(out)

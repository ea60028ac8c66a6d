"""Compile time by head (``pt2-explorer report --view heads``): every second of each
compile placed under what a user can act on (Dynamo tracing, AOTAutograd, Inductor's passes,
lowering, scheduling and fusion, codegen, kernel compiles, autotuning, cache lookups, waiting
on compile workers), what no timed phase covers as "unplaced"; the program's sum, its 10
largest costs with the code that paid them, and the code compiled again and again with the
same graph. The figures are ``model/_compiletime.py``'s, one per head in every form."""

from __future__ import annotations

from html import escape

from compiler import Report

from ..base._types import Table
from ..lower._fit import table_lines
from ..lower._html import table_html
from ..model._compiletime import (
    after_line,
    compile_heading,
    cost_rows,
    head_cell,
    head_rows,
    program,
    repeat_lines,
)

_EMPTY = "No timed phases recorded (torch logs them from 2.5 on, in chromium_event records).\n"
_COST_COLUMNS = ("seconds", "head", "phase", "paid by")


def has_phases(report: Report) -> bool:
    return any(c.phases for c in report.compiles)


def compile_time_text(report: Report) -> str:
    p = program(report)
    if p is None:
        return _EMPTY
    n = len(p.compiles)
    lines = [f"Compile time by head: {head_cell(p.wall_s)} over {n} compile{'s' * (n != 1)}"]
    lines += table_lines(("head", "seconds", "share"), head_rows(p.heads, p.wall_s), keep=(1, 2), indent=2)
    lines += ["", f"The {len(p.top)} largest costs"]
    lines += table_lines(_COST_COLUMNS, cost_rows(p), keep=(0,), indent=2)
    if p.repeats:
        lines += ["", "Compiled again with the same graph"] + ["  " + ln for ln in repeat_lines(p)]
    for t in p.compiles:
        lines += ["", compile_heading(report, t)]
        lines += table_lines(
            ("head", "seconds", "share", "its largest parts"),
            head_rows(t.heads, t.wall_s, t),
            keep=(1, 2),
            indent=2,
        )
        if after := after_line(t):
            lines.append("  " + after)
    return "\n".join(lines) + "\n"


def compile_time_html(report: Report) -> str:
    p = program(report)
    if p is None:
        return f"<p>{escape(_EMPTY.strip())}</p>"
    n = len(p.compiles)
    parts = [
        table_html(
            Table(
                f"Compile time by head: {head_cell(p.wall_s)} over {n} compile{'s' * (n != 1)}",
                ("head", "seconds", "share"),
                tuple(head_rows(p.heads, p.wall_s)),
            )
        ),
        table_html(Table(f"The {len(p.top)} largest costs", _COST_COLUMNS, tuple(cost_rows(p)))),
    ]
    if p.repeats:
        items = "".join(f"<li>{escape(ln)}</li>" for ln in repeat_lines(p))
        parts.append(f"<h3>Compiled again with the same graph</h3><ul>{items}</ul>")
    for t in p.compiles:
        parts.append(
            table_html(
                Table(
                    compile_heading(report, t),
                    ("head", "seconds", "share", "its largest parts"),
                    tuple(head_rows(t.heads, t.wall_s, t)),
                )
            )
        )
        if after := after_line(t):
            parts.append(f"<p>{escape(after)}</p>")
    return "".join(parts)

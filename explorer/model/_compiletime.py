"""Where compile time went, under the heads a user can act on: the figures every form prints
(the summary's line, the "Compile time by head" view's text, page and notebook tab), each
head's seconds written once here (``head_cell``) from ``compiler.analysis.compile_time``."""

from __future__ import annotations

from compiler import Report
from compiler._viewer import HEADS
from compiler.analysis import compile_time, program_time
from compiler.types import CompileTime, ProgramTime

from ..base._phasenames import phase_label
from ..base._words import display_name


def head_cell(seconds: float) -> str:
    """A head's seconds as every form prints them: ``1.234 s``."""
    return f"{seconds:.3f} s"


def share(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f}%" if whole > 0 else "-"


def program(report: Report) -> ProgramTime | None:
    """The program's compile time under the heads; None where torch logged no timed phase."""
    p = program_time(report)
    return p if p.compiles else None


def heads_line(report: Report) -> tuple[str, ...]:
    """The summary's line: each head that holds time, the unplaced rest always."""
    p = program(report)
    if p is None:
        return ()
    parts = [f"{HEADS[k]} {head_cell(v)}" for k, v in p.heads.items() if v > 0 or k == "unplaced"]
    return (
        f"{head_cell(p.wall_s)} over {len(p.compiles)} compile{'s' * (len(p.compiles) != 1)}: "
        + " · ".join(parts),
        "(pt2-explorer report --view heads: each compile's heads, the 10 largest costs)",
    )


def parts_of(t: CompileTime, head: str, n: int = 3) -> str:
    """A head's largest parts in one compile: ``tracing the bytecode (bytecode_tracing) 0.931 s``."""
    rows = [r for r in t.rows if r.head == head][:n]
    return ", ".join(
        f"{phase_label(r.phase, {})}{f' ×{r.count}' if r.count > 1 else ''} {head_cell(r.seconds)}"
        for r in rows
    )


def head_rows(heads: dict[str, float], wall: float, t: CompileTime | None = None) -> list[tuple[str, ...]]:
    """(head, seconds, share of the wall[, largest parts]) for each head that holds time, and
    the unplaced rest always."""
    return [
        (HEADS[k], head_cell(v), share(v, wall)) + ((parts_of(t, k),) if t is not None else ())
        for k, v in heads.items()
        if v > 0 or k == "unplaced"
    ]


def cost_rows(p: ProgramTime) -> list[tuple[str, ...]]:
    """The program's largest costs: seconds, head, phase (×count), the code that paid it."""
    return [
        (
            head_cell(c.seconds),
            HEADS[c.head],
            phase_label(c.phase, {}),  # the names torch gives its phases (an attempt, a pass: their own)
            f"{display_name(c.name)} {c.where or ''}".strip()
            + (f" ({c.compiles} compiles)" if c.compiles > 1 else ""),
        )
        for c in p.top
    ]


def repeat_lines(p: ProgramTime) -> list[str]:
    """``12 identical compiles of GPT2Block.forward (modeling_gpt2.py:300), 3.210 s: [1/0] … ``"""
    return [
        f"{len(r.compile_ids)} identical compiles of {display_name(r.name)} ({r.where or '?'}), "
        f"{head_cell(r.seconds)}: " + ", ".join(f"[{i}]" for i in r.compile_ids)
        for r in p.repeats
    ]


def compile_heading(report: Report, t: CompileTime) -> str:
    c = report.compile(t.compile_id)
    line = f"[{t.compile_id}] {display_name(c.name)}"
    if c.filename:
        line += f"  {c.filename.rsplit('/', 1)[-1]}:{c.line}"
    line += f" — {head_cell(t.wall_s)}"
    if t.hits:
        line += f"; cache hit ({', '.join(t.hits)})"
        if t.saved_s is not None:
            line += f", saved {head_cell(t.saved_s)} as torch says"
    return line


def after_line(t: CompileTime) -> str | None:
    if t.after_s <= 0:
        return None
    return (
        f"after the compile: autotuning at the first call {head_cell(t.after_s)} (not in the compile's time)"
    )


def times(report: Report) -> list[CompileTime]:
    return [compile_time(c) for c in report.compiles if c.phases]

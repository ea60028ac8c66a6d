"""One view model of a report. Lowered to widgets, static HTML and rich text elsewhere
(``_html.py``, ``_widgets.py``, ``_textview.py``); tests assert its text.

Everything here is plain data built from the Report alone (plus the user's source files
for context lines, read through linecache so notebook cells work too).
"""

from __future__ import annotations

import linecache
import os
from dataclasses import dataclass, field

from compiler import STAGES, Benchmark, Compile, Graph, Report
from compiler.model._report import StackFrame

from ._program import OWN_DIRS
from ._summary import Summary, build_summary, display_name, where


@dataclass(frozen=True)
class SourceLine:
    number: int
    text: str
    highlight: bool = False


@dataclass(frozen=True)
class StackLine:
    """One frame of a break's stack: the program's own code or a library it called."""

    text: str  # "file.py:12 in fn"
    library: bool = False  # an installed package or the standard library (shown dimmed, "[lib]")
    yours: bool = False  # the innermost frame of the program's own code (shown bold)


@dataclass(frozen=True)
class BreakView:
    site: str  # "file.py:12"
    type: str
    reason: str
    explanation: str | None
    hints: tuple[str, ...]
    count: int
    compile_ids: tuple[str, ...]
    user_stack: tuple[StackLine, ...]  # outermost first; torch's and this package's frames left out
    context: tuple[SourceLine, ...]
    graph_before: str | None  # compile whose graph ends at the break
    graph_after: str | None  # compile of the code after it (torch's resume function)
    gb_id: str | None = None
    your_code: str | None = None  # "train.py:11 in step" when the site itself is in a library


@dataclass(frozen=True)
class GuardLine:
    text: str
    failing: bool = False


@dataclass(frozen=True)
class OtherFailure:
    """A further cache entry whose guards also failed (torch tries every entry, newest first)."""

    entry: str | None
    reason: str  # first line, without torch's "0/0: " prefix
    guard: str | None


@dataclass(frozen=True)
class RecompileView:
    compile_id: str
    frame: str
    reasons: tuple[str, ...]
    failed_entry: str | None
    failing_guard: str | None
    guards: tuple[GuardLine, ...]
    guard_from: str | None = None  # "file.py:12 in fn": the user code the failing guard came from
    also_failed: tuple[OtherFailure, ...] = ()
    dynamic: tuple[tuple[str, str], ...] = ()  # (dimension, symbol) this recompile made dynamic
    failed_later_in: str | None = None  # the later recompile whose failure names this compile
    dynamic_note: str | None = None  # "compiled with dynamic … (s27); later calls reuse it"
    diff_from: str | None = None  # the compile its "diff" button compares it with


@dataclass(frozen=True)
class DynamicDim:
    """A row of the "Dynamic dimensions" section: a symbol a compile created for a size (or
    stride), or a dimension it specialized to a constant."""

    compile_id: str
    symbol: str | None  # "s27" (for a specialization: the symbol it replaced)
    dim: str  # "kwargs['input_ids'].size()[1]" (a specialization's sources joined by ", ")
    range: str | None = None  # torch's value range, "[2, int_oo]"
    seen: str | None = None  # the value seen when the symbol was created
    specialized: str | None = None  # the constant it was fixed to (a specialization)
    reason: str | None = None  # torch's reason for the specialization
    at: str | None = None  # "file.py:4": the user line that specialized it


@dataclass(frozen=True)
class TimelineEntry:
    compile_id: str
    status: str
    label: str  # "first compile", the recompile reason, or the failure


@dataclass(frozen=True)
class FrameTimeline:
    frame: str
    where: str
    entries: tuple[TimelineEntry, ...]
    limit_hit: bool = False


@dataclass(frozen=True)
class Table:
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class CodeBlock:
    title: str
    language: str  # python | cpp | triton | text
    code: str


@dataclass(frozen=True)
class GraphBlock:
    title: str
    graph: Graph
    colors: dict[str, str] = field(default_factory=dict)  # node -> kernel colour (fuse view)


Block = Table | CodeBlock | GraphBlock


@dataclass(frozen=True)
class StageView:
    stage: str
    blocks: tuple[Block, ...]
    note: str | None = None  # why a stage is empty (or, beside its blocks, what it lacks and why)


@dataclass(frozen=True)
class CompileView:
    compile_id: str
    label: str  # "[0/1] forward — ok"
    status: str
    error: str | None
    stages: tuple[StageView, ...]
    kernels: int = 0  # how many kernels it generated
    previous: str | None = None  # the compile before it of the same frame ("diff with previous")


@dataclass(frozen=True)
class ExplorerView:
    summary: Summary
    breaks: tuple[BreakView, ...]
    timelines: tuple[FrameTimeline, ...]
    recompiles: tuple[RecompileView, ...]
    compiles: tuple[CompileView, ...]
    benchmarks: tuple[Benchmark, ...] = ()  # report.benchmarks (explorer/_benchview.py)
    dynamic_dims: tuple[DynamicDim, ...] = ()  # every compile's symbols and specializations
    report: Report | None = field(default=None, repr=False, compare=False)  # for the time charts


def build_view(report: Report, title: str | None = None) -> ExplorerView:
    names = {c.id: display_name(c.name) for c in report.compiles}
    summary = build_summary(report, title)
    from ._recompileview import dynamic_dims, recompile_view, timelines  # built on these types

    return ExplorerView(
        summary=summary,
        breaks=tuple(_break_view(report, b) for b in report.graph_breaks),
        timelines=timelines(report),
        recompiles=tuple(recompile_view(report, r, names) for r in report.recompiles),
        compiles=tuple(_compile_view(report, c) for c in report.compiles),
        benchmarks=report.benchmarks,
        dynamic_dims=dynamic_dims(report),
        report=report,
    )


def source_context(filename: str | None, line: int | None, radius: int = 3) -> tuple[SourceLine, ...]:
    if not filename or not line:
        return ()
    lines = linecache.getlines(filename)
    if not lines and os.path.exists(filename):
        linecache.checkcache(filename)
        lines = linecache.getlines(filename)
    if not lines or line > len(lines):
        return ()
    lo, hi = max(1, line - radius), min(len(lines), line + radius)
    return tuple(SourceLine(i, lines[i - 1].rstrip("\n"), i == line) for i in range(lo, hi + 1))


def _before(report: Report, b):
    """The compile whose graph ends at the break: of the compiles that hit it, the one whose
    frame is the function holding the break line (the innermost: a break inside a call that
    Dynamo inlined also ends the caller's graph at the call, compile ``b.compile_id``)."""
    hit = [c for c in report.compiles if c.id in (b.compile_ids or (b.compile_id,))]
    own = [c for c in hit if c.filename == b.filename and c.line is not None and c.line <= b.line]
    if own:
        c = max(own, key=lambda c: c.line)
        if _has_graph(c):
            return c
        # the function holding the break captured nothing before it (the break is its first
        # operation, e.g. a library's logger call): the graph that ends there is its caller's,
        # the innermost compile that hit the site and has a graph (Dynamo compiles callers first)
        order = {cid: i for i, cid in enumerate(b.compile_ids)}
        with_graph = sorted((x for x in hit if _has_graph(x)), key=lambda x: order.get(x.id, -1))
        return with_graph[-1] if with_graph else c
    return next((c for c in report.compiles if c.id == b.compile_id), None)


def _has_graph(c: Compile) -> bool:
    return bool(c.stages.capture and c.stages.capture.graph)


def _break_view(report: Report, b) -> BreakView:
    after = None
    c = _before(report, b)
    if c is not None:
        # torch names the code after a break torch_dynamo_resume_in_<fn>_at_<line>
        for other in report.compiles:
            if (
                other.name
                and other.name.startswith("torch_dynamo_resume_in_")
                and other.name.endswith(f"_at_{b.line}")
            ):
                after = other.id
                break
    stack, mine = _stack(b)
    # the program's own line that led to a site in a library
    your_code = None
    if mine is not None and (mine.filename, mine.line) != (b.filename, b.line):
        your_code = f"{where(mine.filename, mine.line)} in {mine.name}"
    return BreakView(
        site=where(b.filename, b.line),
        type=b.type,
        reason=b.reason,
        explanation=b.explanation,
        hints=b.hints,
        count=b.count,
        compile_ids=b.compile_ids,
        user_stack=stack,
        context=source_context(b.filename, b.line),
        graph_before=c.id if c is not None and c.stages.capture and c.stages.capture.graph else None,
        graph_after=after,
        gb_id=b.gb_id,
        your_code=your_code,
    )


def _stack(b) -> tuple[tuple[StackLine, ...], StackFrame | None]:
    """The stack shown under a break: ``GraphBreak.shown_stack`` (the program's frames and the
    library frames between them and the break) less this package's own frames (the CLI or
    ``compiler.record`` that called the program), from the program's outermost own frame on;
    and the innermost frame of the program's own code."""
    frames = [f for f in b.shown_stack if not f.filename.startswith(OWN_DIRS)]
    first = next((i for i, f in enumerate(frames) if f.kind == "user"), None)
    if first is None:  # no frame of the program's own: what torch gave, libraries included
        return tuple(StackLine(f"{where(f.filename, f.line)} in {f.name}", True) for f in frames), None
    frames = frames[first:]
    mine = max((i for i, f in enumerate(frames) if f.kind == "user"), default=None)
    lines = tuple(
        StackLine(f"{where(f.filename, f.line)} in {f.name}", f.kind != "user", i == mine)
        for i, f in enumerate(frames)
    )
    return lines, frames[mine]


def _compile_view(report: Report, c: Compile) -> CompileView:
    from ._stageview import stage_view  # it builds on this module's types

    label = f"[{c.id}] {display_name(c.name)} — " + (
        "ok" if c.status == "ok" else f"failed in {c.failed_stage}"
    )
    return CompileView(
        compile_id=c.id,
        label=label,
        status=c.status,
        error=c.error,
        stages=tuple(stage_view(report, c, s) for s in STAGES),
        kernels=len(report.kernels_of(c.id)),
        previous=previous_compile(report, c.id),
    )


def previous_compile(report: Report, compile_id: str) -> str | None:
    """The compile before ``compile_id`` of the same frame, if any."""
    frame = report.compile(compile_id).frame
    ids = [c.id for c in report.compiles if c.frame == frame]
    i = ids.index(compile_id)
    return ids[i - 1] if i > 0 else None


def opening_compile(view: ExplorerView) -> CompileView | None:
    """The compile with the most kernels (the first of equals), where a stage view starts."""
    if not view.compiles:
        return None
    return max(view.compiles, key=lambda c: (c.kernels, -view.compiles.index(c)))


def opening(view: ExplorerView) -> tuple[str, str | None]:
    """The most informative tab to open on, and its compile: the graph breaks if there are
    any, else the recompiles if any, else the compiles with the most kernels selected."""
    first = opening_compile(view)
    if view.breaks:
        return "breaks", None
    if view.recompiles:
        return "recompiles", None
    return "compiles", first.compile_id if first else None

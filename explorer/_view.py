"""One view model of a report. Lowered to widgets, static HTML and rich text elsewhere
(``_html.py``, ``_widgets.py``, ``_textview.py``); tests assert its text.

Everything here is plain data built from the Report alone (plus the user's source files
for context lines, read through linecache so notebook cells work too).
"""

from __future__ import annotations

import linecache
import os
import sys
from dataclasses import dataclass, field

from compiler import STAGES, Benchmark, Compile, Graph, Report
from compiler._text import is_user_file

from ._summary import display_name, headline, reasons_line, where


@dataclass(frozen=True)
class SourceLine:
    number: int
    text: str
    highlight: bool = False


@dataclass(frozen=True)
class BreakView:
    site: str  # "file.py:12"
    type: str
    reason: str
    explanation: str | None
    hints: tuple[str, ...]
    count: int
    compile_ids: tuple[str, ...]
    user_stack: tuple[str, ...]  # "file.py:12 in fn"
    context: tuple[SourceLine, ...]
    graph_before: str | None  # compile whose graph ends at the break
    graph_after: str | None  # compile of the code after it (torch's resume function)
    gb_id: str | None = None


@dataclass(frozen=True)
class GuardLine:
    text: str
    failing: bool = False


@dataclass(frozen=True)
class RecompileView:
    compile_id: str
    frame: str
    reasons: tuple[str, ...]
    failed_entry: str | None
    failing_guard: str | None
    guards: tuple[GuardLine, ...]


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
    note: str | None = None  # why a stage is empty


@dataclass(frozen=True)
class CompileView:
    compile_id: str
    label: str  # "[0/1] forward — ok"
    status: str
    error: str | None
    stages: tuple[StageView, ...]


@dataclass(frozen=True)
class Summary:
    title: str
    meta: str  # torch version, device
    headline: str
    break_lines: tuple[str, ...]
    recompile_lines: tuple[str, ...]
    error: str | None


@dataclass(frozen=True)
class ExplorerView:
    summary: Summary
    breaks: tuple[BreakView, ...]
    timelines: tuple[FrameTimeline, ...]
    recompiles: tuple[RecompileView, ...]
    compiles: tuple[CompileView, ...]
    benchmarks: tuple[Benchmark, ...] = ()  # report.benchmarks (explorer/_benchview.py)


def build_view(report: Report, title: str | None = None) -> ExplorerView:
    names = {c.id: display_name(c.name) for c in report.compiles}
    summary = Summary(
        title=title or report.source,
        meta=f"torch {report.torch_version} · {report.device}",
        headline=headline(report),
        break_lines=tuple(
            f"{where(b.filename, b.line)}  {b.type}  (×{b.count})" for b in report.graph_breaks
        ),
        recompile_lines=tuple(
            f"[{r.compile_id}] {names.get(r.compile_id, '?')}: {reasons_line(r.reasons) or '(no reason recorded)'}"
            for r in report.recompiles
        )
        + tuple(
            f"{display_name(f.name)} hit the recompile limit: later calls run uncompiled"
            for f in report.frames
            if f.recompile_limit_hit
        ),
        error=report.error,
    )
    return ExplorerView(
        summary=summary,
        breaks=tuple(_break_view(report, b) for b in report.graph_breaks),
        timelines=_timelines(report),
        recompiles=tuple(_recompile_view(report, r, names) for r in report.recompiles),
        compiles=tuple(_compile_view(report, c) for c in report.compiles),
        benchmarks=report.benchmarks,
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
        return max(own, key=lambda c: c.line)
    return next((c for c in report.compiles if c.id == b.compile_id), None)


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
    return BreakView(
        site=where(b.filename, b.line),
        type=b.type,
        reason=b.reason,
        explanation=b.explanation,
        hints=b.hints,
        count=b.count,
        compile_ids=b.compile_ids,
        user_stack=tuple(
            f"{where(f.filename, f.line)} in {f.name}" for f in b.user_stack if _shown_frame(f.filename)
        ),
        context=source_context(b.filename, b.line),
        graph_before=c.id if c is not None and c.stages.capture and c.stages.capture.graph else None,
        graph_after=after,
        gb_id=b.gb_id,
    )


_HIDDEN_PREFIXES = tuple(
    {
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep + d + os.sep
        for d in ("compiler", "explorer")
    }
    | {p + os.sep for p in {sys.prefix, sys.exec_prefix, sys.base_prefix}}
)


def _shown_frame(filename: str) -> bool:
    """User code only: not torch, not the interpreter's or the venv's files (runpy, IPython,
    ipykernel), not this package's own frames (the CLI that ran the script)."""
    if filename.startswith("<frozen ") or not is_user_file(filename):
        return False
    return not os.path.abspath(filename).startswith(_HIDDEN_PREFIXES)


def _timelines(report: Report) -> tuple[FrameTimeline, ...]:
    reasons = {r.compile_id: reasons_line(r.reasons) for r in report.recompiles}
    out = []
    for f in report.frames:
        entries = []
        for c in report.compiles:
            if c.frame != f.id:
                continue
            if c.status != "ok":
                label = f"failed in {c.failed_stage}: {(c.error or '').splitlines()[0] if c.error else ''}"
            elif c.id.endswith("/0"):
                label = "first compile"
            else:
                label = reasons.get(c.id, "recompile")
            entries.append(TimelineEntry(c.id, c.status, label))
        out.append(
            FrameTimeline(
                display_name(f.name), where(f.filename, f.line), tuple(entries), f.recompile_limit_hit
            )
        )
    return tuple(out)


def _recompile_view(report: Report, r, names: dict[str, str]) -> RecompileView:
    guards = ()
    if r.entry_guards:
        lines = [ln for ln in r.entry_guards.splitlines() if ln.strip()]
        failing = r.failing_guard
        guards = tuple(GuardLine(ln, bool(failing) and ln.rstrip().endswith(failing)) for ln in lines)
    return RecompileView(
        compile_id=r.compile_id,
        frame=names.get(r.compile_id, "?"),
        reasons=r.reasons,
        failed_entry=r.failed_entry,
        failing_guard=r.failing_guard,
        guards=guards,
    )


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
    )

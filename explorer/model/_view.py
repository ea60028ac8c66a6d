"""One view model of a report (its types: ``base/_types.py``), built here from the Report
alone (plus the user's source files for context lines, through ``compiler._viewer.read_source``: a
notebook cell's from linecache, a file only where it is a regular one of a bounded size).
Lowered to rich text, static HTML and widgets by each view's module (``views/``), its generic
parts by ``lower/_text.py`` and ``lower/_html.py``; tests assert its text.
"""

from __future__ import annotations

import os

from compiler import Report
from compiler._viewer import read_source
from compiler.analysis import resume_of
from compiler.types import STAGES, Compile, StackFrame

from ..base._bound import TEXT, clip, clipped
from ..base._paths import machinery
from ..base._types import (
    BreakView,
    CompileView,
    Excerpt,
    ExplorerView,
    Fact,
    Inline,
    Labelled,
    Repro,
    SourceLine,
    Span,
)
from ..base._words import TORCH_BREAK_WHY, break_site, torch_break_words
from ._recompiles import dynamic_dims, previous_compiles, recompile_view, timelines
from ._stages import compile_blocks, stage_view
from ._summary import CELL_FUNCTION, build_summary, cell_label, display_name, where


def build_view(report: Report, title: str | None = None) -> ExplorerView:
    names = {c.id: display_name(c.name) for c in report.compiles}
    previous = previous_compiles(report)
    summary = build_summary(report, title)
    return ExplorerView(
        summary=summary,
        breaks=tuple(_break_view(report, b) for b in report.graph_breaks),
        timelines=timelines(report),
        recompiles=tuple(recompile_view(report, r, names) for r in report.recompiles),
        compiles=tuple(_compile_view(report, c, previous) for c in report.compiles),
        benchmarks=report.benchmarks,
        dynamic_dims=dynamic_dims(report),
        report=report,
    )


def source_context(
    filename: str | None, line: int | None, radius: int = 3, recorded: str | None = None
) -> tuple[tuple[SourceLine, ...], str | None]:
    """The lines around ``line`` of ``filename``, and why the file was not read where it was
    not (a report may name a FIFO or /dev/zero: only a regular file of a bounded size is).
    ``recorded``: the line's code as the report holds it; where the file's line is another
    (the file edited since), that line alone, and a note saying so, not the file's lines."""
    if not filename or not line:
        return (), None
    lines, why = read_source(project_file(filename))
    if why is not None:
        return (), f"{filename} not read: {why}"
    if (
        lines
        and recorded
        and recorded.strip()
        and (line > len(lines) or lines[line - 1].strip() != recorded.strip())
    ):
        note = f"{filename} has changed since it was recorded: line {line} as the report holds it"
        return (SourceLine(line, recorded.strip("\n"), True),), note
    if not lines or line > len(lines):
        return (), None
    lo, hi = max(1, line - radius), min(len(lines), line + radius)
    return tuple(SourceLine(i, lines[i - 1].rstrip("\n"), i == line) for i in range(lo, hi + 1)), None


def project_file(filename: str, up: int = 3) -> str:
    """A relative ``filename`` (a shared report names its project's files from the project's
    root: ``compiler.relative_paths``) found from the working directory or, where it is not
    there, from the nearest of ``up`` directories above it (a notebook runs in the project's
    ``notebooks/``); else ``filename`` as it is."""
    if os.path.isabs(filename) or filename.startswith("<") or os.path.exists(filename):
        return filename
    here = os.getcwd()
    for _ in range(up):
        here = os.path.dirname(here)
        candidate = os.path.join(here, filename)
        if os.path.isfile(candidate):
            return candidate
    return filename


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
            resumed = resume_of(other.name)
            if resumed is not None and resumed[1] == b.line:
                after = other.id
                break
    stack, mine = _stack(b)
    code = next(
        (f.code for f in b.user_stack if (f.filename, f.line) == (b.filename, b.line) and f.code), None
    )
    context, unread = source_context(b.filename, b.line, recorded=code)
    before = c.id if c is not None and c.stages.capture and c.stages.capture.graph else None
    # each field within its length (base/_bound.py): a crafted report's string may be a megabyte
    facts: list[Fact] = []
    if mine is not None and (mine.filename, mine.line) != (b.filename, b.line):
        facts.append(_words("your code", f"{where(mine.filename, mine.line)} in {mine.name}"))
    if context:
        facts.append(Excerpt(clipped(context)))
    if unread:
        facts.append(_words("source", unread, cls="src-unread", strong=False))
    own = torch_break_words(b)
    if own is not None:  # torch's hints ("Remove the call") are not the user's to act on
        facts.append(_words("where", own))
        facts.append(Labelled("why", (Span("prose", TORCH_BREAK_WHY),), cls="why"))
        if b.explanation:  # torch's own words on what its break is (its hint is not the user's)
            facts.append(_words("torch says", clip(b.explanation, TEXT)))
    else:
        if b.explanation:
            facts.append(Labelled("why", (Span("prose", clip(b.explanation, TEXT)),), cls="why"))
        facts += [_words("hint", h) for h in b.hints]
    if stack:
        facts.append(Labelled("stack", clipped(stack), cls="stack", strong=False))
    graphs = _graphs(before, after)
    if graphs:
        facts.append(Labelled("", graphs, cls="meta"))
    return BreakView(
        site=clip(break_site(b)),
        type=clip(b.type),
        reason=clip(b.reason, TEXT),
        count=b.count,
        compile_ids=clipped(b.compile_ids),
        graph_before=before,
        graph_after=after,
        facts=tuple(facts),
        gb_id=None if b.gb_id is None else clip(b.gb_id),
    )


def _words(label: str, text: str, **how) -> Labelled:
    return Labelled(label, (Span("", clip(text)),), **how)


def _graphs(before: str | None, after: str | None) -> Inline:
    """``graph before: [0/0]``, ``graph after: [1/0]``: the compiles around a break, as links."""
    items = [(f"graph {label}: ", cid) for label, cid in (("before", before), ("after", after)) if cid]
    spans: list[Span] = []
    for i, (label, cid) in enumerate(items):
        spans += [Span("next")] * (i > 0) + [Span("", label), Span("compile", cid)]
    return tuple(spans)


def _stack(b) -> tuple[Inline, StackFrame | None]:
    """The stack shown under a break: ``GraphBreak.shown_stack`` (the program's frames and the
    library frames between them and the break) less this package's own frames (the CLI or
    ``compiler.record`` that called the program), from the program's outermost own frame on,
    each frame calling the next; and the innermost frame of the program's own code."""
    # torch's own break: on to torch's line, through torch's frames that reach it
    frames = [f for f in (b.user_stack if b.torch_own else b.shown_stack) if not machinery(f.filename)]
    # a %%compile cell: the cell's own line that only called the magic, then the cell compiled
    frames = [
        f
        for i, f in enumerate(frames)
        if not (f.name == "<module>" and i + 1 < len(frames) and _cell_code(frames[i + 1], f.filename))
    ]
    first = next((i for i, f in enumerate(frames) if f.kind == "user"), None)
    if first is None:  # no frame of the program's own: what torch gave, libraries included
        return _calls(Span("lib", _frame_text(f)) for f in frames), None
    frames = frames[first:]
    mine = max((i for i, f in enumerate(frames) if f.kind == "user"), default=None)
    kinds = ("lib" if f.kind != "user" else "yours" if i == mine else "" for i, f in enumerate(frames))
    return _calls(Span(k, _frame_text(f)) for k, f in zip(kinds, frames)), frames[mine]


def _calls(frames) -> Inline:
    """Frames, each calling the next."""
    spans: list[Span] = []
    for f in frames:
        spans += [Span("calls")] * bool(spans) + [f]
    return tuple(spans)


def _cell_code(f: StackFrame, filename: str | None = None) -> bool:
    """A notebook cell's own code (its top level, or the function ``%%compile`` makes of it)."""
    name = resume_of(f.name)[0] if resume_of(f.name) else f.name
    cell = cell_label(f.filename)
    same = filename is None or cell == cell_label(filename)  # %%compile files the cell anew
    return cell is not None and same and name in ("<module>", CELL_FUNCTION)


def _frame_text(f: StackFrame) -> str:
    """``file.py:12 in fn``; a cell's own code as IPython names it: ``Cell In[3], line 2``."""
    return where(f.filename, f.line) if _cell_code(f) else f"{where(f.filename, f.line)} in {f.name}"


def _compile_view(report: Report, c: Compile, previous: dict[str, str | None]) -> CompileView:
    label = f"[{c.id}] {display_name(c.name)} — " + (
        "ok" if c.status == "ok" else f"failed in {c.failed_stage}"
    )
    return CompileView(
        compile_id=c.id,
        label=label,
        status=c.status,
        error=c.error,
        stages=tuple(stage_view(report, c, s) for s in STAGES),
        blocks=compile_blocks(c, report),
        kernels=len(report.kernels_of(c.id)),
        nodes=_nodes(c),
        previous=previous[c.id],
        repros=tuple(Repro(c.id, backward) for backward in (False, True) if runnable(c, backward)),
    )


def runnable(c: Compile, backward: bool = False) -> str | None:
    """torch's ``fx_graph_runnable`` of the compile's graph (``backward``: of its backward
    graph), the code its repro runs; None where torch logged none."""
    cg = c.stages.codegen
    if cg is None:
        return None
    return cg.fx_graph_runnable_backward if backward else cg.fx_graph_runnable


def _nodes(c: Compile) -> int:
    """The nodes of the compile's biggest graph: Dynamo's, or AOTAutograd's joint graph."""
    graphs = [c.stages.capture and c.stages.capture.graph, c.stages.autograd and c.stages.autograd.joint]
    return max((len(g.nodes) for g in graphs if g), default=0)


# END

"""The summary of a report — frames, compiles, breaks, recompiles, kernels — built once
(``build_summary``, part of the view model; its types are in ``base._types``; its lowerings:
``views/_summary.py``), and the words the views share. Printing on a terminal is
``lower/_terminal.py``'s."""

from __future__ import annotations

from compiler import Report
from compiler._viewer import reads_event
from compiler.types import STAGES, Compile

from ..base._bound import clipped
from ..base._paths import machinery
from ..base._types import BreakLine, CompileRow, Summary
from ..base._words import (  # noqa: F401 - where the views import them from
    break_site,
    cell_label,
    display_name,
    secs,
    torch_break_words,
    where,
    where_source,
)
from ._autotune import autotune_lines
from ._compiletime import heads_line
from ._export import export_run_lines
from ._pipelines import autograd_lines, export_lines, flex_lines
from ._speed import cache_detail_lines, speed_lines

_LETTER = dict(zip(STAGES, "CADFG"))


# the function %%compile makes of a cell (explorer/notebook/_cell.py, which imports IPython)
CELL_FUNCTION = "__pt2_cell__"


# a frame whose code was made at run time (exec of a string): no source file to show
_GENERATED = "  (code generated at run time, e.g. a dataclass's __init__: no source file)"


def _shown_caller(called_from: str | None) -> bool:
    """A frame's call site worth showing: not this package's, IPython's or the launcher's."""
    return bool(called_from) and not machinery(called_from.rpartition(":")[0])


def reasons_line(r) -> str:
    """A recompile's reasons on one line: the first line of each (torch appends a "User stack
    trace:" block to some; ``Recompile.short_reasons``), joined by "; "."""
    return "; ".join(r.short_reasons)


def headline(report: Report) -> str:
    n = len
    breaks = sum(b.count for b in report.graph_breaks)
    return (
        f"{n(report.frames)} frame{'s' * (n(report.frames) != 1)} · "
        f"{n(report.compiles)} compile{'s' * (n(report.compiles) != 1)} · "
        f"{n(report.graph_breaks)} graph-break site{'s' * (n(report.graph_breaks) != 1)} ({breaks} hit{'s' * (breaks != 1)}) · "
        f"{n(report.recompiles)} recompile{'s' * (n(report.recompiles) != 1)} · "
        f"{n(report.kernels)} kernel{'s' * (n(report.kernels) != 1)} · "
        f"compile time {secs(report.compile_time_s)}"
    )


def no_kernels_note(c: Compile) -> str | None:
    """Why an Inductor compile generated no kernel: its graph is only calls of ATen ops that
    Inductor runs as they are (extern kernels and fallbacks: a fused fast path such as
    nn.TransformerEncoderLayer's in eval, a GEMM library call)."""
    d = c.stages.decompose
    if c.status != "ok" or c.stages.codegen is None or d is None:
        return None
    ops = sorted({n.target for rg in d.post_grad for n in rg.graph.nodes if n.op == "call_function"})
    if not ops:
        return "no kernel generated: the graph computes nothing (its outputs are its inputs or constants)"
    short = ", ".join(o.removeprefix("torch.ops.").removesuffix(".default") for o in ops)
    return f"no kernel generated: the graph runs only ATen ops that Inductor calls as they are ({short})"


def build_summary(report: Report, title: str | None = None) -> Summary:
    names = {c.id: display_name(c.name) for c in report.compiles}
    breaks = tuple(
        BreakLine(
            break_site(b),
            b.type,
            b.count,
            b.compile_ids or (b.compile_id,),
            b.user_stack[-1].code if b.user_stack and b.user_stack[-1].code else None,
            None if b.torch_own or not b.hints else b.hints[0],  # torch's hint is not the user's to act on
            torch_break_words(b),
        )
        for b in report.graph_breaks
    )
    recompiles = tuple(
        f"[{r.compile_id}] {names.get(r.compile_id, '?')}: {reasons_line(r) or '(reason not recorded)'}"
        for r in report.recompiles
    ) + tuple(
        f"{display_name(f.name)} ({where(f.filename, f.line)}) hit the recompile limit: later calls run uncompiled"
        for f in report.frames
        if f.recompile_limit_hit
    )
    frames = tuple(
        f"{f.id}: {display_name(f.name)}  {where(f.filename, f.line)}  "
        f"{f.compiles} compile{'s' * (f.compiles != 1)}"
        + (f"  called from {where_source(f.called_from)}" if _shown_caller(f.called_from) else "")
        + ("  RECOMPILE LIMIT HIT" if f.recompile_limit_hit else "")
        + (_GENERATED if f.filename == "<string>" else "")
        for f in report.frames
    )
    rows = []
    for c in report.compiles:
        ks = report.kernels_of(c.id)
        rows.append(
            CompileRow(
                c.id,
                display_name(c.name),
                "ok" if c.status == "ok" else f"FAILED in {c.failed_stage}",
                "".join(_LETTER[s] if getattr(c.stages, s) else "·" for s in STAGES),
                f"{len(ks)} {'/'.join(sorted({k.language for k in ks}))}".strip(),
                secs(c.compile_time_s),
                "/".join(f"{c.stage_times_s[s]:.2f}" if s in c.stage_times_s else "-" for s in STAGES),
                c.error if c.status != "ok" else None,
                None if ks else no_kernels_note(c),
            )
        )
    unknown = None
    if report.unknown_events:
        unknown = _kept_raw(report)
    damaged = None
    if report.damaged:
        n = len(report.damaged)
        damaged = (
            f"{n} event{'s' if n > 1 else ''} of the log not as torch wrote {'them' if n > 1 else 'it'} (kept as read): "
            + "; ".join(report.damaged[:3])
            + (" …" if n > 3 else "")
        )
    # Compiled Autograd, AOTInductor, FlexAttention
    sections = tuple(
        (name, lines)
        for name, lines in (
            ("Compile time by head", heads_line(report)),
            ("Compiled Autograd", autograd_lines(report)),
            ("export → AOTInductor", export_lines(report) + export_run_lines(report)),
            ("FlexAttention", flex_lines(report)),
            ("Max-autotune", autotune_lines(report)),
            ("Mode, CUDA graphs and caches", speed_lines(report)),
        )
        if lines
    )
    summary = Summary(
        title=title or report.source,
        meta=f"torch {report.torch_version} · {report.device}",
        headline=headline(report),
        error=report.error,
        breaks=breaks,
        recompile_lines=recompiles,
        frame_lines=frames,
        compiles=tuple(rows),
        unknown=unknown,
        damaged=damaged,
        sections=sections,
        folded=tuple(
            (name, lines) for name, lines in (("caches per compile", cache_detail_lines(report)),) if lines
        ),
    )
    return clipped(summary)  # each line within _bound.LINE: a crafted report's string may be a megabyte


def _kept_raw(report: Report) -> str:
    """The events the report keeps raw, in one line: those no view reads, and those a build
    reads now but that were kept raw when this report was written (an older report)."""
    older = sorted({e.name for e in report.unknown_events if reads_event(e.name)})
    kinds = sorted({e.name for e in report.unknown_events} - set(older))
    parts = []
    if kinds:
        n = sum(e.name in kinds for e in report.unknown_events)
        parts.append(
            f"{n} events kept raw (not mapped): {', '.join(kinds[:8])}"
            + (" …" if len(kinds) > 8 else "")
            + " — torch logged them, no view of this explorer reads them; the Unmapped events tab shows them as written"
        )
    if older:
        n = sum(e.name in older for e in report.unknown_events)
        parts.append(
            f"{n} events kept raw when this report was written, read now: {', '.join(older)} — "
            "load the TORCH_TRACE log or record again to see them in their view; the Unmapped events tab shows them"
        )
    return "; ".join(parts)


def places(key: str) -> str:
    """A group's lines (``a.py:3, a.py:7, b.py:2``) in ``where``'s style, a file named once
    for its lines in a row: ``a.py:3, 7, b.py:2``."""
    out, last = [], None
    for source in key.split(", "):
        place = where_source(source)
        path, sep, line = place.rpartition(":")
        same = bool(sep) and line.isdigit() and path == last
        out.append(line if same else place)
        last = path if sep and line.isdigit() else None
    return ", ".join(out)

"""The summary of a report — frames, compiles, breaks, recompiles, kernels — built once
(``build_summary``, part of the view model; its types are in ``base._types``; its lowerings:
``views/_summary.py``); and the words and terminal helpers the views share: ``printable``
(control characters escaped), ``terminal`` (a console at the terminal's width), ``echo``."""

from __future__ import annotations

import re
import sys

from rich.console import Console

from compiler import Report
from compiler.analysis import one_gap, reads_event
from compiler.types import STAGES, Compile

from ..base._bound import bounded, clipped
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
from ..lower._fit import text_width, wrap_line
from ._compiletime import heads_line
from ._export import export_run_lines
from ._pipelines import autograd_lines, autotune_lines, export_lines, flex_lines
from ._speed import cache_detail_lines, speed_lines

_LETTER = dict(zip(STAGES, "CADFG"))


# the function %%compile makes of a cell (explorer/notebook/_cell.py, which imports IPython)
CELL_FUNCTION = "__pt2_cell__"


# a frame whose code was made at run time (exec of a string): no source file to show
_GENERATED = "  (code generated at run time, e.g. a dataclass's __init__: no source file)"


def _shown_caller(called_from: str | None) -> bool:
    """A frame's call site worth showing: not this package's, IPython's or the launcher's."""
    from ..run._program import machinery

    return bool(called_from) and not machinery(called_from.rpartition(":")[0])


def reasons_line(reasons) -> str:
    """A recompile's reasons on one line: the first line of each (torch appends a "User stack
    trace:" block to some), joined by "; "."""
    return "; ".join(one_gap(r.strip().splitlines()[0]) for r in reasons if r.strip())


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
        f"[{r.compile_id}] {names.get(r.compile_id, '?')}: {reasons_line(r.reasons) or '(reason not recorded)'}"
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


def terminal(file=None) -> Console:
    """A console at the terminal's width (rich reads it, or COLUMNS when set); piped or
    redirected: no wrapping at all, whatever COLUMNS says (a log or ``grep`` gets whole lines;
    GNU readline exports COLUMNS to every child of a process that used it, a Python shell's)."""
    out = file or sys.stdout
    if out.isatty():
        return Console(file=out)
    return Console(file=out, width=UNWRAPPED, soft_wrap=True, color_system=None)


UNWRAPPED = 10_000  # a pipe's "width": the table's columns take what their cells need


# C0 but newline and tab, DEL, C1: what moves the cursor, clears the screen, sets the title or
# writes the clipboard (ESC ] 52) when printed raw; and Unicode's invisible format controls:
# the bidi marks, embeddings, overrides and isolates (U+202E shows what follows backwards, so
# a line reads otherwise than it is), zero-width characters, line and paragraph separators
_CONTROL = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff]"
)


def printable(text: str) -> str:
    """``text`` safe to print on a terminal: each control character as its escape (``\\x1b``,
    ``\\x07``, ``\\u202e``), so an ESC sequence in a report shows as text and does nothing, and
    a bidi override does not turn the line around. What PT2 Explorer prints from a report or a
    trace passes here: ``echo``, ``print_summary`` and the CLI's error lines."""
    return _CONTROL.sub(_escape, text)


def _escape(m: re.Match) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def echo(text: str, file=None) -> None:
    """Plain text from a text view, to the terminal: wrapped at its width in a terminal (an
    indented line's continuation keeps the indent), whole lines when piped; control characters
    escaped (``printable``); at most ``_bound.OUTPUT`` characters, then a line that says where it
    stopped."""
    out = file or sys.stdout
    text = printable(bounded(text))
    console = terminal(out)
    if console.width >= UNWRAPPED or console.soft_wrap:
        out.write(text)
        return
    for line in text.splitlines():
        out.write("".join(ln + "\n" for ln in wrap_line(line, console)))


def echo_fitting(make, file=None) -> None:
    """``make()``'s text on stdout (or ``file``), made to fit the terminal's width where it is
    one (whole lines where piped: ``terminal``), then wrapped by ``echo``
    where a line still runs over."""
    room = terminal(file).width
    with text_width(room if room < UNWRAPPED else None):
        text = make()
    echo(text, file)


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

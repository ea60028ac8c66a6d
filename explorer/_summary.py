"""The terminal summary of a report (rich): frames, compiles, breaks, recompiles, kernels."""

from __future__ import annotations

import io
import os
import re
import sys

from rich.console import Console, Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from compiler import STAGES, Report

_LETTER = dict(zip(STAGES, "CADFG"))


def cell_label(filename: str) -> str | None:
    """``Cell In[2]`` for a notebook cell's file, as IPython's own tracebacks name it."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    names = getattr(getattr(shell, "compile", None), "_filename_map", None)
    number = names.get(filename) if isinstance(names, dict) else None
    return f"Cell In[{number}]" if number is not None else None


_INSTALLED = re.compile(r"^.*[/\\](?:site|dist)-packages[/\\]")


def where(filename: str | None, line: int | None) -> str:
    """``file:line`` as a user reads it: relative to the working directory; an installed
    package's file from its package (``transformers/modeling_utils.py:4769``, as torch's
    guard comments name it); a notebook cell as IPython names it (``Cell In[3], line 2``)."""
    if not filename:
        return "?"
    cell = cell_label(filename)
    if cell is not None:
        return f"{cell}, line {line}" if line is not None else cell
    name = _INSTALLED.sub("", filename)
    if name == filename:
        try:
            rel = os.path.relpath(filename)
            name = rel if not rel.startswith("..") else filename
        except ValueError:
            name = filename
    return f"{name}:{line}" if line is not None else name


_RESUME = re.compile(r"^torch_dynamo_resume_in_(?P<fn>.+)_at_(?P<line>\d+)$")


def reasons_line(reasons) -> str:
    """A recompile's reasons on one line: the first line of each (torch appends a "User stack
    trace:" block to some), joined by "; "."""
    return "; ".join(_squeeze(r.strip().splitlines()[0]) for r in reasons if r.strip())


def _squeeze(reason: str) -> str:
    """torch pads a guard's code to a column before its ``# source`` comment: one gap."""
    return re.sub(r" {3,}#", "  #", reason)


def display_name(name: str | None) -> str:
    """`torch_dynamo_resume_in_forward_at_18` -> `forward (resumed after line 18)`."""
    if not name:
        return "?"
    m = _RESUME.match(name)
    return f"{m.group('fn')} (resumed after line {m.group('line')})" if m else name


def _secs(s: float | None) -> str:
    return "-" if s is None else (f"{s:.2f} s" if s >= 0.1 else f"{s * 1000:.0f} ms")


def headline(report: Report) -> str:
    n = len
    breaks = sum(b.count for b in report.graph_breaks)
    return (
        f"{n(report.frames)} frame{'s' * (n(report.frames) != 1)} · "
        f"{n(report.compiles)} compile{'s' * (n(report.compiles) != 1)} · "
        f"{n(report.graph_breaks)} graph-break site{'s' * (n(report.graph_breaks) != 1)} ({breaks} hit{'s' * (breaks != 1)}) · "
        f"{n(report.recompiles)} recompile{'s' * (n(report.recompiles) != 1)} · "
        f"{n(report.kernels)} kernel{'s' * (n(report.kernels) != 1)} · "
        f"compile time {_secs(report.compile_time_s)}"
    )


def renderable(report: Report, title: str | None = None):
    parts: list = []
    parts.append(
        Text.assemble(
            ("PT2 Explorer", "bold"),
            f" — {title or report.source}  (torch {report.torch_version}, {report.device})",
        )
    )
    parts.append(Text(headline(report)))
    if report.error:
        parts.append(Text(f"The recorded program ended with: {report.error}", style="bold red"))

    if report.graph_breaks:
        parts.append(Text("\nGraph breaks", style="bold"))
        for b in report.graph_breaks:
            parts.append(
                Text.assemble(
                    ("  " + where(b.filename, b.line), "cyan"),
                    "  ",
                    (b.type, "yellow"),
                    f"  (hit {b.count}×, first in [{b.compile_id}])",
                )
            )
            if b.user_stack and b.user_stack[-1].code:
                parts.append(
                    Text(f"      {b.user_stack[-1].code}", style="dim", no_wrap=True, overflow="ellipsis")
                )
            if b.hints:
                parts.append(Text(f"      hint: {b.hints[0]}", no_wrap=True, overflow="ellipsis"))

    from ._pipelineview import autograd_lines, export_lines  # Compiled Autograd, AOTInductor

    if ca_lines := autograd_lines(report):
        parts.append(Text("\nCompiled Autograd", style="bold"))
        parts += [Text("  " + line) for line in ca_lines]
    if aoti := export_lines(report):
        parts.append(Text("\nexport → AOTInductor", style="bold"))
        parts += [Text("  " + line) for line in aoti]

    if report.recompiles or any(f.recompile_limit_hit for f in report.frames):
        parts.append(Text("\nRecompiles", style="bold"))
        names = {c.id: c.name for c in report.compiles}
        for r in report.recompiles:
            reason = reasons_line(r.reasons) or "(reason not recorded)"
            parts.append(
                Text.assemble(
                    ("  [" + r.compile_id + "] ", "cyan"),
                    f"{display_name(names.get(r.compile_id))}: ",
                    reason,
                )
            )
        for f in report.frames:
            if f.recompile_limit_hit:
                parts.append(
                    Text(
                        f"  {f.name} ({where(f.filename, f.line)}) hit the recompile limit: "
                        "later calls run uncompiled",
                        style="bold red",
                    )
                )

    if report.frames:
        parts.append(Text("\nFrames", style="bold"))
        for f in report.frames:
            limit = "  RECOMPILE LIMIT HIT" if f.recompile_limit_hit else ""
            parts.append(
                Text(
                    f"  {f.id}: {display_name(f.name)}  {where(f.filename, f.line)}  "
                    f"{f.compiles} compile{'s' * (f.compiles != 1)}{limit}"
                )
            )
    table = Table(box=None, pad_edge=False, show_edge=False)
    for col in ("compile", "frame", "status", "stages", "kernels", "time", "C/A/D/F/G s"):
        table.add_column(col, no_wrap=col != "frame", min_width=len(col) if col != "frame" else 8)
    for c in report.compiles:
        stages = "".join(_LETTER[s] if getattr(c.stages, s) else "·" for s in STAGES)
        ks = report.kernels_of(c.id)
        langs = sorted({k.language for k in ks})
        status = "ok" if c.status == "ok" else f"FAILED in {c.failed_stage}"
        table.add_row(
            escape(f"[{c.id}]"),
            escape(display_name(c.name)),
            status if c.status == "ok" else f"[red]{escape(status)}[/red]",
            stages,
            f"{len(ks)} {'/'.join(langs)}".strip(),
            _secs(c.compile_time_s),
            "/".join(f"{c.stage_times_s[s]:.2f}" if s in c.stage_times_s else "-" for s in STAGES),
        )
    parts.append(
        Text("\nCompiles  (stages: C capture, A autograd, D decompose, F fuse, G codegen)", style="bold")
    )
    parts.append(table)
    for c in report.compiles:
        if c.status != "ok":
            parts.append(Text(f"  [{c.id}] {c.error}", style="red"))
    if report.unknown_events:
        names = sorted({e.name for e in report.unknown_events})
        parts.append(
            Text(
                f"\n{len(report.unknown_events)} events kept raw (not mapped): {', '.join(names[:8])}"
                + (" …" if len(names) > 8 else ""),
                style="dim",
            )
        )
    return Group(*parts)


def print_summary(report: Report, title: str | None = None, console: Console | None = None) -> None:
    if console is None:
        import sys

        # a pipe or CI log: do not squeeze into 80 columns
        console = Console(width=None if sys.stdout.isatty() else 120)
    console.print(renderable(report, title))


def summary_text(report: Report, title: str | None = None, width: int = 120) -> str:
    buf = io.StringIO()
    console = Console(
        file=buf, width=width, no_color=True, color_system=None, highlight=False, force_jupyter=False
    )
    console.print(renderable(report, title))
    return buf.getvalue()

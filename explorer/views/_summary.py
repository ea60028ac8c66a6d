"""The summary view: frames, compiles, breaks, recompiles and kernels at a glance, lowered from
the view model's ``Summary`` (``model/_summary.py: build_summary``) to rich (the terminal at its
width: ``print_summary``), to plain text (``summary_text``; of a multi-rank report the ranks view
first: ``summary_view_text``) and to HTML (``summary_html``: the header above the tabs of the
static page and of the notebook explorer)."""

from __future__ import annotations

import io
from dataclasses import fields, is_dataclass, replace

from rich.console import Console, Group
from rich.markup import escape
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from compiler import Report

from ..base._types import CompileRow, ExplorerView, Summary, hits
from ..lower._fit import Parts
from ..lower._html import error_html, esc
from ..lower._plaintable import plain_cells, plain_table
from ..lower._terminal import UNWRAPPED, echo, printable, terminal
from ..model._summary import build_summary
from ._ranks import build_ranks_view, ranks_text


def summary_view_text(report: Report, title: str | None = None) -> str:
    """The summary; of a multi-rank report (or one whose other ranks did not load), the ranks
    view first."""
    text = summary_text(report, title)
    if not (report.ranks or report.damaged_ranks):
        return text
    return ranks_text(build_ranks_view(report, title or "ranks")) + "\n" + f"Rank {report.rank}:\n" + text


def summary_printed(report: Report, title: str | None = None) -> None:
    """The summary on the terminal (``print_summary``: coloured, its table at the terminal's
    width); for a distributed job, where the ranks diverge first (its text, echoed)."""
    if report.ranks:
        echo(summary_view_text(report, title))
    else:
        print_summary(report, title=title)


def renderable(s: Summary):
    """The summary lowered to rich (the terminal and the text form)."""
    head, table, tail = _renderables(s)
    return Group(*head, table, *tail)


_COLUMNS = ("compile", "frame", "status", "stages", "kernels", "time", "C/A/D/F/G s")


def _cells(c: CompileRow) -> tuple[str, ...]:
    """A compile's row of the summary's table, as rich markup."""
    status = c.status if c.status == "ok" else f"[red]{escape(c.status)}[/red]"
    return (escape(f"[{c.compile_id}]"), escape(c.frame), status, c.stages, c.kernels, c.time, c.stage_times)


def _renderables(s: Summary) -> tuple[list, Table, list]:
    """The summary's parts before its table of compiles, the table, the parts after it."""
    parts: list = [
        Text.assemble(("PT2 Explorer", "bold"), f" — {s.title}  ({s.meta})"),
        Parts(s.headline),
    ]
    if s.error:
        parts.append(Text(f"The recorded program ended with: {s.error}", style="bold red"))
    if s.damaged:
        parts.append(Text(s.damaged, style="yellow"))
    if s.breaks:
        parts.append(Text("\nGraph breaks", style="bold"))
        for b in s.breaks:
            parts.append(
                _hang(
                    Text.assemble(
                        (b.site, "cyan"), "  ", (b.type, "yellow"), f"  ({hits(b.count, b.compile_ids)})"
                    )
                )
            )
            if b.code:
                parts.append(Text(f"      {b.code}", style="dim", no_wrap=True, overflow="ellipsis"))
            if b.torch_own:
                parts.append(Text(f"      {b.torch_own}", no_wrap=True, overflow="ellipsis"))
            if b.hint:
                parts.append(Text(f"      hint: {b.hint}", no_wrap=True, overflow="ellipsis"))
    for name, lines in s.sections:
        parts.append(Text(f"\n{name}", style="bold"))
        parts += [_hang(Text(line)) for line in lines]
    if s.recompile_lines:
        parts.append(Text("\nRecompiles", style="bold"))
        parts += [
            _hang(Text(ln, style="bold red" if ln.endswith("run uncompiled") else ""))
            for ln in s.recompile_lines
        ]
    if s.frame_lines:
        parts.append(Text("\nFrames", style="bold"))
        parts += [_hang(Text(ln)) for ln in s.frame_lines]
    table = Table(box=None, pad_edge=False, show_edge=False)
    for col in _COLUMNS:
        table.add_column(col, no_wrap=col != "frame", min_width=_min_width(col))
    for c in s.compiles:
        table.add_row(*_cells(c))
    parts.append(
        Text("\nCompiles  (stages: C capture, A autograd, D decompose, F fuse, G codegen)", style="bold")
    )
    tail = [Text(f"  [{c.compile_id}] {c.error}", style="red") for c in s.compiles if c.error]
    tail += [Text(f"  [{c.compile_id}] {c.note}", style="dim") for c in s.compiles if c.note]
    if s.unknown:
        tail.append(Text(f"\n{s.unknown}", style="dim"))
    return parts, table, tail


def _hang(text: Text) -> Padding:
    """A line of a section, two spaces in: where the terminal wraps it, its continuation lines
    too (a hanging indent), so that the next item still starts at the margin."""
    return Padding(text, (0, 0, 0, 2), expand=False)


def _min_width(col: str) -> int:
    return len(col) if col != "frame" else 8


def _printable(obj):
    """The summary's strings through ``printable``, before rich lays them out (so the
    table's widths are those of what is shown)."""
    if isinstance(obj, str):
        return printable(obj)
    if isinstance(obj, tuple):
        return tuple(_printable(x) for x in obj)
    if is_dataclass(obj):
        return replace(obj, **{f.name: _printable(getattr(obj, f.name)) for f in fields(obj)})
    return obj


def print_summary(report: Report, title: str | None = None, console: Console | None = None) -> None:
    """The summary on the terminal (or ``console``), control characters escaped."""
    console = console or terminal()
    summary = _printable(build_summary(report, title))
    if console.is_terminal:
        console.print(renderable(summary))
    else:  # piped: whole lines, without the table's padding
        console.file.write(_plain(console, summary))


def summary_text(report: Report, title: str | None = None, width: int | None = None) -> str:
    """The summary as plain text: whole lines (as piped), or wrapped at ``width``."""
    buf = io.StringIO()
    console = Console(
        file=buf,
        width=width or UNWRAPPED,
        soft_wrap=width is None,
        no_color=True,
        color_system=None,
        highlight=False,
        force_jupyter=False,
    )
    return _plain(console, build_summary(report, title))


def _plain(console: Console, summary: Summary) -> str:
    """The summary as rich prints it without colours, each line without its trailing spaces;
    the table of compiles laid out here where it fits the width as it is (rich's layout of
    it, cell by cell, took seconds for a log of a thousand compiles)."""
    head, table, tail = _renderables(summary)
    rows = [plain_cells(c) for c in summary.compiles]
    lines = plain_table(_COLUMNS, rows, [_min_width(c) for c in _COLUMNS], console.width)
    with console.capture() as cap:
        console.print(Group(*head) if lines is not None else Group(*head, table, *tail))
    text = cap.get()
    if lines is not None:
        text += "".join(ln + "\n" for ln in lines)
        if tail:
            with console.capture() as cap:
                console.print(Group(*tail))
            text += cap.get()
    return "".join(ln.rstrip() + "\n" for ln in text.splitlines())


def summary_html(view: ExplorerView) -> str:
    s = view.summary
    items = [f'<li class="brk">{esc(x)}</li>' for x in s.break_lines]
    items += [f'<li class="rcp">{esc(x)}</li>' for x in s.recompile_lines]
    items += [f'<li class="pipe">{esc(name)}: {esc(x)}</li>' for name, lines in s.sections for x in lines]
    err = error_html(view) + (f'<div class="note">{esc(s.damaged)}</div>' if s.damaged else "")
    items += [
        f'<li class="pipe"><details><summary>{esc(name)} ({len(lines)})</summary>'
        + "".join(f"<div>{esc(x)}</div>" for x in lines)
        + "</details></li>"
        for name, lines in s.folded
    ]
    glance = f'<ul class="glance">{"".join(items)}</ul>' if items else ""
    return (
        f'<h2>PT2 Explorer — {esc(s.title)}</h2><div class="meta">{esc(s.meta)}</div>'
        f'<div class="headline">{esc(s.headline)}</div>{err}{glance}'
    )

"""A report's faces by what it is: ``explorer.html``, ``explorer.text`` and ``explorer.save_html``
for a Report or a ``compiler.compare_modes`` result (``Paged``), ``explorer.text`` also for an
``Advice`` (``compiler.advise``: ``Shown``). The CLI uses them from here, below the package's
face (which also loads the notebook's magic)."""

from __future__ import annotations

import os
from typing import TypeAlias

from compiler import Report
from compiler._viewer import CompileAdvice, write_file
from compiler.types import (  # torch-free (compiler/model/_modetypes.py, _advicetypes.py)
    Advice,
    ModeComparison,
)

Paged: TypeAlias = Report | ModeComparison  # what has a page: html, save_html
Shown: TypeAlias = Report | ModeComparison | Advice | CompileAdvice  # what has text: text


def _is_modes(obj) -> bool:
    return isinstance(obj, ModeComparison)


def _paged(report: Paged, face: str) -> None:
    """An Advice (or anything else) given to a face that only pages: one line saying what does."""
    if not isinstance(report, Report | ModeComparison):
        what = "an Advice" if isinstance(report, Advice) else f"a {type(report).__name__}"
        raise TypeError(
            f"explorer.{face} takes a Report or a compiler.compare_modes result, not {what}"
            + (": explorer.text(advice) shows its table" if isinstance(report, Advice) else "")
        )


def html(report: Paged, title: str | None = None) -> str:
    """The self-contained static HTML report (opens offline). A ``compiler.compare_modes``
    result gives its modes page: the chart, the table, each configuration's benchmark."""
    _paged(report, "html")
    if _is_modes(report):
        from explorer.pages._modes import modes_page

        return modes_page(report)
    from explorer.pages._page import report_html

    return report_html(report, title)


def text(
    report: Shown,
    view: str = "summary",
    title: str | None = None,
    compile: str | None = None,
    *,
    kernel: str | None = None,
    width: int | None = None,
) -> str:
    """The explorer's views as plain text, what ``pt2-explorer report --view VIEW`` prints:
    ``"summary"`` (of a multi-rank report, ``compiler.load_trace`` of a TORCH_TRACE directory of
    several ranks, it starts with where the ranks diverge), ``"ranks"``, ``"breaks"``,
    ``"recompiles"``, ``"compiles"`` (one compile's own facts), a stage of one compile
    (``"capture"`` … ``"codegen"``), ``"bench"``, ``"why"`` (why compiled is not faster),
    ``"time"`` (where compile time goes), ``"bytecode"`` (the code Dynamo ran in each frame's
    place), ``"raw"`` (the events no stage maps): ``VIEWS`` in explorer/views/_registry.py. ``compile="1/0"``:
    the compile of a compile's or a stage's view (default: the one with the most kernels).
    ``kernel="NAME"`` (``"codegen"``): that kernel's code (or a wrapper module's, ``"forward
    wrapper"``) instead of the tables and each code block's size. ``width``: tables and lines
    laid out to fit that many columns, text wrapped inside table cells (default: whole lines;
    the CLI's terminal width where it makes the text, ``explorer.lower._fit``).
    A ``compiler.compare_modes`` result: its table and each configuration's benchmark,
    whatever the view; an ``Advice`` (``compiler.advise``): its table of measured fixes; a
    ``CompileAdvice`` (``advise --compile-time``): its table of compile times."""
    if _is_modes(report):
        from explorer.pages._modes import modes_text

        return modes_text(report)
    if isinstance(report, Advice):
        from explorer.views._advice import advice_text

        return advice_text(report)
    if isinstance(report, CompileAdvice):
        from explorer.views._compileadvice import compile_advice_text

        return compile_advice_text(report)
    from explorer.lower._fit import text_width
    from explorer.lower._fit import width as fit_width
    from explorer.views._registry import Subject
    from explorer.views._registry import view as _view

    if kernel is not None and view != "codegen":
        raise ValueError(f"kernel={kernel!r} is a kernel of the codegen view, not of {view!r}")
    with text_width(width if width is not None else fit_width()):
        return _view(view).text(Subject(report, title, compile, kernel=kernel))


def save_html(report: Paged, path: str | os.PathLike[str], title: str | None = None) -> str:
    """Write the static page; returns ``path``. For a ``compiler.compare_modes`` result it also
    writes each configuration's recording beside it (``<name>.<i>-<label>.html``), linked from
    the table and the chart's bars."""
    _paged(report, "save_html")
    if _is_modes(report):
        from explorer.pages._modes import save_modes_html

        return save_modes_html(report, path)[0]
    return write_file(path, html(report, title))  # whole or not at all

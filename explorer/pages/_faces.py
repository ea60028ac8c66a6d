"""A report's faces by what it is: ``explorer.html``, ``explorer.text`` and ``explorer.save_html``
for a Report, a ``compiler.compare_modes`` result or an ``Advice`` (``compiler.advise``). The CLI
uses them from here, below the package's face (which also loads the notebook's magic)."""

from __future__ import annotations

import os

import compiler as _compiler
from compiler import Report


def _is_modes(obj) -> bool:
    return isinstance(obj, _compiler.types.ModeComparison)  # torch-free (compiler/model/_modetypes.py)


def html(report: Report, title: str | None = None) -> str:
    """The self-contained static HTML report (opens offline). A ``compiler.compare_modes``
    result gives its modes page: the chart, the table, each configuration's benchmark."""
    if _is_modes(report):
        from explorer.pages._modes import modes_page

        return modes_page(report)
    from explorer.pages._page import report_html

    return report_html(report, title)


def text(report: Report, view: str = "summary", title: str | None = None, compile: str | None = None) -> str:
    """The explorer's views as plain text, what ``pt2-explorer report --view VIEW`` prints:
    ``"summary"`` (of a multi-rank report, ``compiler.load_trace`` of a TORCH_TRACE directory of
    several ranks, it starts with where the ranks diverge), ``"ranks"``, ``"breaks"``,
    ``"recompiles"``, ``"compiles"`` (one compile's own facts), a stage of one compile
    (``"capture"`` … ``"codegen"``), ``"bench"``, ``"time"`` (where compile time goes),
    ``"raw"`` (the events no stage maps): explorer/views/_registry.py lists them. ``compile="1/0"``:
    the compile of a compile's or a stage's view (default: the one with the most kernels).
    A ``compiler.compare_modes`` result: its table and each configuration's benchmark,
    whatever the view; an ``Advice`` (``compiler.advise``): its table of measured fixes."""
    if _is_modes(report):
        from explorer.pages._modes import modes_text

        return modes_text(report)
    if isinstance(report, _compiler.types.Advice):  # torch-free (compiler/model/_advicetypes.py)
        from explorer.views._advice import advice_text

        return advice_text(report)
    from explorer.views._registry import Subject
    from explorer.views._registry import view as _view

    return _view(view).text(Subject(report, title, compile))


def save_html(report: Report, path: str | os.PathLike[str], title: str | None = None) -> str:
    """Write the static page; returns ``path``. For a ``compiler.compare_modes`` result it also
    writes each configuration's recording beside it (``<name>.<i>-<label>.html``), linked from
    the table and the chart's bars."""
    if _is_modes(report):
        from explorer.pages._modes import save_modes_html

        return save_modes_html(report, path)[0]
    return _compiler.write_file(path, html(report, title))  # whole or not at all

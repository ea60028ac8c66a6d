"""The explorer's views, each declared once, in ``VIEWS``.

A view has a name (``explorer.text(report, NAME)``, ``pt2-explorer report --view NAME``), a
line saying what it shows (the CLI's help), and its builders: its text; its tab, if it has one
(the summary is the header above the tabs; a stage is shown inside the compiles tab): the
tab's label with its count, the facts the tab needs (no tab without them: a benchmark, timed
phases, several ranks), its body on the static page (HTML, ``pages/_page.py``) and in the notebook
explorer (``pages/_widgets.py``: a widget where it is more than that HTML). ``explorer.text``, the
CLI's ``--view`` choices and help, the page's tabs and the widget's tabs are all made from
``VIEWS``: a new view is one entry here plus its module.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from compiler import Report
from compiler.types import STAGES

from ..base._types import ExplorerView
from ..diffs._pagediffs import recompile_diffs_html
from ..lower._html import breaks_html, compiles_html, recompiles_html
from ..lower._text import breaks_text, compile_of, compile_text, recompiles_text, stage_text
from ..model._summary import summary_text
from ..model._view import build_view
from ._bench import bench_html, bench_text, bench_widget
from ._bytecode import bytecode_html, bytecode_text, has_bytecode
from ._ranks import build_ranks_view, ranks_html, ranks_of, ranks_text, ranks_widget
from ._raw import raw_html, raw_text
from ._time import time_html, time_text
from ._why import why_html, why_text


class Subject:
    """What a view is built from: the report, the title asked for, the compile that a
    compile's or a stage's view shows (None: the one with the most kernels). The explorer's
    view model of the report (``_view.build_view``) is built once, when a view first needs it."""

    def __init__(
        self,
        report: Report,
        title: str | None = None,
        compile: str | None = None,
        view: ExplorerView | None = None,
    ):
        self.report = report
        self.title = title
        self.compile = compile
        self.lazy_code = False  # the static page's code, highlighted in the browser (_html.code_html)
        if view is not None:
            self.view = view

    @functools.cached_property
    def view(self) -> ExplorerView:
        return build_view(self.report, self.title)


def _always(_report: Report) -> bool:
    return True


def _never(_report: Report) -> bool:
    return False


@dataclass(frozen=True)
class View:
    name: str  # explorer.text(report, NAME); pt2-explorer report --view NAME
    help: str  # what it shows, for the CLI's help
    text: Callable[[Subject], str]
    tab: Callable[[Report], str] | None = None  # the tab's label; None: no tab of its own
    needs: Callable[[Report], bool] = _always  # the facts its tab needs (its text says when they are missing)
    html: Callable[[Subject], str] | None = None  # the tab's body on the static page
    widget: Callable[[Any], Any] | None = None  # the tab in the notebook, given the app; None: its html
    opens: Callable[[Report], bool] = _never  # the explorer opens on the first tab whose `opens` holds


# ---- the builders that join a view's module to the Subject ----------------------------------


def _summary(s: Subject) -> str:
    """The summary; of a multi-rank report (or one whose other ranks did not load), the ranks
    view first."""
    text = summary_text(s.report, s.title)
    several = s.report.ranks or s.report.damaged_ranks
    return _ranks(s) + "\n" + f"Rank {s.report.rank}:\n" + text if several else text


def _ranks(s: Subject) -> str:
    return ranks_text(build_ranks_view(s.report, s.title or "ranks"))


def _stage(stage: str, s: Subject) -> str:
    return stage_text(compile_of(s.view, s.compile), stage)


def _breaks_widget(app):
    from ._widgettabs import breaks_tab

    return breaks_tab(app)


def _recompiles_widget(app):
    from ._widgettabs import recompiles_tab

    return recompiles_tab(app)


def _compiles_widget(app):
    from ._widgettabs import CompilesTab

    return CompilesTab(app, app.subject.compile)


VIEWS: tuple[View, ...] = (
    View("summary", "frames, compiles, breaks, recompiles and kernels at a glance", _summary),
    View(
        "ranks",
        "every rank of a distributed job side by side, where they diverge first (REPORT: also a directory)",
        _ranks,
        tab=lambda r: f"Ranks ({len(ranks_of(r))})",
        needs=lambda r: bool(r.ranks or r.damaged_ranks),
        html=lambda s: ranks_html(build_ranks_view(s.report, s.title or "ranks")),
        widget=lambda app: ranks_widget(app.report, app.subject.title or "ranks"),
        opens=_always,
    ),
    View(
        "breaks",
        "each graph break with where, why, torch's hints, its stack and the graphs around it",
        lambda s: breaks_text(s.view),
        tab=lambda r: f"Graph breaks ({len(r.graph_breaks)})",
        html=lambda s: breaks_html(s.view),
        widget=_breaks_widget,
        opens=lambda r: bool(r.graph_breaks),
    ),
    View(
        "recompiles",
        "each frame's compiles in order, each recompile's failing guard, dynamic dimensions",
        lambda s: recompiles_text(s.view),
        tab=lambda r: f"Recompiles ({len(r.recompiles)})",
        html=lambda s: recompiles_html(s.view) + recompile_diffs_html(s.view),
        widget=_recompiles_widget,
        opens=lambda r: bool(r.recompiles),
    ),
    View(
        "compiles",
        "one compile's stage times, caches, torch's traceback and metrics (--compile)",
        lambda s: compile_text(compile_of(s.view, s.compile)),
        tab=lambda r: f"Compiles ({len(r.compiles)})",
        html=lambda s: compiles_html(s.view, s.compile),
        widget=_compiles_widget,
        opens=_always,
    ),
    *(View(stage, "one compile's stage (--compile)", functools.partial(_stage, stage)) for stage in STAGES),
    View(
        "bench",
        "eager against compiled (times, accuracy, memory, the kernels' profile)",
        lambda s: bench_text(s.report),
        tab=lambda r: f"Benchmark ({len(r.benchmarks)})",
        needs=lambda r: bool(r.benchmarks),
        html=lambda s: bench_html(s.report, s.report.benchmarks, static=True),
        widget=lambda app: bench_widget(app.report),
    ),
    View(
        "why",
        "why isn't compiled faster: the verdict, kernel time on your lines and modules, the roofline",
        lambda s: why_text(s.report),
        tab=lambda r: "Why not faster",
        needs=lambda r: any(b.kernel_rows or b.launch_rows for b in r.benchmarks),
        html=lambda s: why_html(s.report),
    ),
    View(
        "time",
        "where each compile's time went, phase by phase, cold beside warm",
        lambda s: time_text(s.report),
        tab=lambda r: "Compile time",
        needs=lambda r: any(c.phases for c in r.compiles),
        html=lambda s: time_html(s.report),
    ),
    View(
        "bytecode",
        "the code Dynamo ran in each frame's place: graph calls, breaks, resume functions, as Python and dis (--compile: one)",
        lambda s: bytecode_text(s.report, s.compile),
        tab=lambda r: "Bytecode",
        needs=has_bytecode,
        html=lambda s: bytecode_html(s.report, lazy=s.lazy_code),
    ),
    View(
        "raw",
        "the events torch logged that no stage maps, as torch wrote them",
        lambda s: raw_text(s.report),
        tab=lambda r: f"Unmapped events ({len(r.unknown_events)})",
        needs=lambda r: bool(r.unknown_events),
        html=lambda s: raw_html(s.report),
    ),
)

NAMES = tuple(v.name for v in VIEWS)


def view(name: str) -> View:
    """The view called ``name``, or a ValueError naming them all."""
    for v in VIEWS:
        if v.name == name:
            return v
    raise ValueError(f"unknown view {name!r}; choose one of: {', '.join(NAMES)}")


def tabs(report: Report) -> tuple[View, ...]:
    """The views with a tab of their own whose facts ``report`` holds, in their order."""
    return tuple(v for v in VIEWS if v.tab is not None and v.needs(report))


def opening(report: Report) -> str:
    """The tab the explorer opens on: the first whose ``opens`` holds (the ranks of a
    distributed job, else the graph breaks if any, else the recompiles if any, else the
    compiles)."""
    return next(v.name for v in tabs(report) if v.opens(report))


def help_lines() -> str:
    """``NAME: what it shows`` for each view; views that say the same are named together."""
    out: list[tuple[list[str], str]] = []
    for v in VIEWS:
        if out and out[-1][1] == v.help:
            out[-1][0].append(v.name)
        else:
            out.append(([v.name], v.help))
    return "; ".join(f"{'/'.join(names)}: {what}" for names, what in out)

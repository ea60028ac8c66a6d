"""The explorer's views, each declared once, in ``VIEWS``.

A view has a name (``explorer.text(report, NAME)``, ``pt2-explorer report --view NAME``), a
line saying what it shows (the CLI's help), and its builders, each from the view's module in
``views/``: its text (and how ``pt2-explorer`` prints it, where that is more than its text:
the summary in colour); its tab, if it has one (a stage is shown inside the compiles tab): the
tab's label with its count, the facts the tab needs (no tab without them: a benchmark, timed
phases, several ranks), its body on the static page (HTML, ``pages/_page.py``) and in the notebook
explorer (``pages/_widgets.py``: a widget where it is more than that HTML); or, for a header
(the summary), its HTML above the tabs. ``explorer.text``, ``pt2-explorer report`` (its
``--view`` choices, help and output), the page's header and tabs and the widget's are all
made from ``VIEWS``: a new view is one row here plus its module (docs/architecture.md,
"Recipe: add a view"; tests/test_view_recipe.py).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from compiler import Report
from compiler.types import STAGES

from ..base._types import ExplorerView
from ..lower._terminal import echo_fitting
from ..model._view import build_view
from ._bench import bench_html, bench_text, bench_widget
from ._breaks import breaks_html, breaks_text, breaks_widget
from ._bytecode import bytecode_html, bytecode_text, has_bytecode
from ._compiles import CODEGEN_HELP, compile_of, compile_text, compiles_html, compiles_widget, stage_view_text
from ._compiletime import compile_time_html, compile_time_text, has_phases
from ._numerics import numerics_html, numerics_text, numerics_widget
from ._ranks import build_ranks_view, ranks_html, ranks_of, ranks_text, ranks_widget
from ._raw import raw_html, raw_text
from ._recompiles import recompiles_page_html, recompiles_text, recompiles_widget
from ._summary import summary_html, summary_printed, summary_view_text
from ._time import time_html, time_text
from ._why import why_html, why_text


class Subject:
    """What a view is built from: the report, the title asked for, the compile that a
    compile's or a stage's view shows (None: the one with the most kernels), the kernel whose
    code the codegen view prints (None: its tables and each code block's size). The explorer's
    view model of the report (``_view.build_view``) is built once, when a view first needs it."""

    def __init__(
        self,
        report: Report,
        title: str | None = None,
        compile: str | None = None,
        view: ExplorerView | None = None,
        kernel: str | None = None,
    ):
        self.report = report
        self.title = title
        self.compile = compile
        self.kernel = kernel
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
    header: bool = False  # its html is the header above the tabs (the summary), not a tab
    printed: Callable[[Subject], None] | None = None  # pt2-explorer's print of it; None: its text, echoed

    def terminal(self, subject: Subject) -> None:
        """The view printed by ``pt2-explorer`` (``printed``, else its text made at the
        terminal's width, its tables fitting it, and echoed: a line still too long wrapped,
        control characters escaped; ``lower/_terminal.py: echo_fitting``)."""
        if self.printed is not None:
            self.printed(subject)
        else:
            echo_fitting(lambda: self.text(subject))


VIEWS: tuple[View, ...] = (
    View(
        "summary",
        "frames, compiles, breaks, recompiles and kernels at a glance",
        lambda s: summary_view_text(s.report, s.title),
        html=lambda s: summary_html(s.view),
        header=True,
        printed=lambda s: summary_printed(s.report, s.title),
    ),
    View(
        "ranks",
        "every rank of a distributed job side by side, where they diverge first (REPORT: also a directory)",
        lambda s: ranks_text(build_ranks_view(s.report, s.title or "ranks")),
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
        widget=breaks_widget,
        opens=lambda r: bool(r.graph_breaks),
    ),
    View(
        "recompiles",
        "each frame's compiles in order, each recompile's failing guard, dynamic dimensions",
        lambda s: recompiles_text(s.view),
        tab=lambda r: f"Recompiles ({len(r.recompiles)})",
        html=lambda s: recompiles_page_html(s.view),
        widget=recompiles_widget,
        opens=lambda r: bool(r.recompiles),
    ),
    View(
        "compiles",
        "one compile's stage times, caches, torch's traceback and metrics (--compile)",
        lambda s: compile_text(compile_of(s.view, s.compile)),
        tab=lambda r: f"Compiles ({len(r.compiles)})",
        html=lambda s: compiles_html(s.view, s.compile),
        widget=compiles_widget,
        opens=_always,
    ),
    *(
        View(
            stage,
            "one compile's stage (--compile)" if stage != "codegen" else CODEGEN_HELP,
            lambda s, stage=stage: stage_view_text(compile_of(s.view, s.compile), stage, s.kernel),
        )
        for stage in STAGES
    ),
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
        opens=lambda r: bool(r.benchmarks),  # a verdict: what the reader came for
    ),
    View(
        "numerics",
        "where compiled diverges from eager: each output's error, the first module, the cause and the fix",
        lambda s: numerics_text(s.report),
        tab=lambda r: f"Numerics ({len(r.numerics)})",
        needs=lambda r: bool(r.numerics),
        html=lambda s: numerics_html(s.report),
        widget=numerics_widget,
        opens=lambda r: any(not n.ok for n in r.numerics),
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
        "heads",
        "every second of each compile placed under a head (Dynamo, AOTAutograd, passes, fusion, codegen, kernel compiles, autotuning, caches, workers, unplaced), the 10 largest costs",
        lambda s: compile_time_text(s.report),
        tab=lambda r: "Compile time by head",
        needs=has_phases,
        html=lambda s: compile_time_html(s.report),
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


def names() -> tuple[str, ...]:
    """Every view's name, in the registry's order (``--view``'s choices)."""
    return tuple(v.name for v in VIEWS)


def view(name: str) -> View:
    """The view called ``name``, or a ValueError naming them all."""
    for v in VIEWS:
        if v.name == name:
            return v
    raise ValueError(f"unknown view {name!r}; choose one of: {', '.join(names())}")


def headers() -> tuple[View, ...]:
    """The views drawn above the tabs, on the page and in the notebook explorer."""
    return tuple(v for v in VIEWS if v.header)


def tabs(report: Report) -> tuple[View, ...]:
    """The views with a tab of their own whose facts ``report`` holds, in their order."""
    return tuple(v for v in VIEWS if v.tab is not None and v.needs(report))


FIRST = ("ranks", "why")  # looked at before the other tabs, in this order


def opening(report: Report) -> str:
    """The tab the explorer opens on: the first whose ``opens`` holds (the ranks of a
    distributed job, else the verdict of a benchmark (Why not faster), else the graph breaks
    if any, else the recompiles if any, else the compiles)."""
    order = sorted(tabs(report), key=lambda v: FIRST.index(v.name) if v.name in FIRST else len(FIRST))
    return next(v.name for v in order if v.opens(report))


def help_lines() -> str:
    """``NAME: what it shows`` for each view; views that say the same are named together."""
    out: list[tuple[list[str], str]] = []
    for v in VIEWS:
        if out and out[-1][1] == v.help:
            out[-1][0].append(v.name)
        else:
            out.append(([v.name], v.help))
    return "; ".join(f"{'/'.join(names)}: {what}" for names, what in out)

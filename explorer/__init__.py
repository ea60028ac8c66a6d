"""PT2 Explorer's views over a recorded report: the notebook explorer, the ``%%compile``
magic, a static HTML report, the terminal summary and the CLI (``pt2-explorer``).

    %load_ext explorer          # registers %%compile; reports then display themselves
    explorer.show(report)       # the widget explorer
    explorer.save_html(report, "report.html")
"""

from __future__ import annotations

import os

import compiler as _compiler

if not getattr(_compiler, "__pt2_explorer__", False):  # a user's compiler.py, another package
    raise ImportError(
        f"`import compiler` found {getattr(_compiler, '__file__', None) or repr(_compiler)}, not PT2 Explorer's "
        f"recorder (expected {os.path.join(os.path.dirname(os.path.dirname(__file__)), 'compiler')}): "
        "a file or package named `compiler` earlier on sys.path shadows it; rename it or run from "
        "another directory"
    )

from compiler import Report, export_summary, flex_calls, flex_summary  # noqa: E402
from explorer._summary import print_summary, summary_text  # noqa: E402


def show(report: Report, title: str | None = None) -> None:
    """Display the explorer for ``report`` in a notebook. (It returns nothing, so that a cell
    ending with it shows the explorer once; ``explorer.Explorer(report)`` is the widget.)"""
    from IPython.display import display

    from explorer._widgets import Explorer

    display(Explorer(report, title=title))


def _is_modes(obj) -> bool:
    return isinstance(obj, _compiler.ModeComparison)  # torch-free (compiler/model/_modetypes.py)


def html(report: Report, title: str | None = None) -> str:
    """The self-contained static HTML report (opens offline). A ``compiler.compare_modes``
    result gives its modes page: the chart, the table, each configuration's benchmark."""
    if _is_modes(report):
        from explorer._modesview import modes_page

        return modes_page(report)
    from explorer._page import report_html

    return report_html(report, title)


def text(
    report: Report,
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
    (``"capture"`` … ``"codegen"``), ``"bench"``, ``"time"`` (where compile time goes),
    ``"raw"`` (the events no stage maps): explorer/_registry.py lists them. ``compile="1/0"``:
    the compile of a compile's or a stage's view (default: the one with the most kernels).
    ``kernel="NAME"`` (``"codegen"``): that kernel's code (or a wrapper module's, ``"forward
    wrapper"``) instead of the tables and each code block's size. ``width``: tables and lines
    laid out to fit that many columns, text wrapped inside table cells (default: whole lines).
    A ``compiler.compare_modes`` result: its table and each configuration's benchmark,
    whatever the view; an ``Advice`` (``compiler.advise``): its table of measured fixes."""
    if _is_modes(report):
        from explorer._modesview import modes_text

        return modes_text(report)
    if isinstance(report, _compiler.Advice):  # torch-free (compiler/model/_advicetypes.py)
        from explorer._adviceview import advice_text

        return advice_text(report)
    from explorer._fit import text_width
    from explorer._registry import Subject
    from explorer._registry import view as _view

    if kernel is not None and view != "codegen":
        raise ValueError(f"kernel={kernel!r} is a kernel of the codegen view, not of {view!r}")
    with text_width(width if width is not None else _fit_width()):
        return _view(view).text(Subject(report, title, compile, kernel=kernel))


def _fit_width() -> int | None:
    """The width a text is being made for (``explorer._fit``: the CLI's terminal), if any."""
    from explorer._fit import width

    return width()


def repro(report: Report, compile_id: str, *, backward: bool = False) -> str:
    """A runnable repro of compile ``compile_id`` (its backward graph's with ``backward``):
    torch's ``fx_graph_runnable`` (the graph Inductor got, the non-default config, inputs of
    the recorded shapes, strides and dtypes) with a header; what ``pt2-explorer repro REPORT
    --compile ID`` saves. A ValueError says why a compile has none."""
    from explorer._repro import repro_script

    return repro_script(report, compile_id, backward=backward)


def break_repro(report: Report, site: str) -> str:
    """A starting point for reproducing the graph break at ``site`` ("model.py:12"): its
    function compiled with ``fullgraph=True`` and called with tensors shaped as recorded;
    a ValueError where the report does not allow one. Not a promise that it reproduces."""
    from explorer._breakrepro import break_program

    return break_program(report, site)


def save_html(report: Report, path: str | os.PathLike[str], title: str | None = None) -> str:
    """Write the static page; returns ``path``. For a ``compiler.compare_modes`` result it also
    writes each configuration's recording beside it (``<name>.<i>-<label>.html``), linked from
    the table and the chart's bars."""
    if _is_modes(report):
        from explorer._modesview import save_modes_html

        return save_modes_html(report, path)[0]
    return _compiler.write_file(path, html(report, title))  # whole or not at all


def check_recompile(fn, *args, run: bool = False, **kwargs):
    """Would calling ``fn`` (what torch.compile returned) with these inputs recompile, and
    which guard fails? torch's guards of ``fn``'s frame are evaluated for the inputs, as
    Dynamo does on each call: ``fn`` is not called and its cache is not changed. ``run=True``
    calls it once under ``torch.compiler.set_stance("fail_on_recompile")`` instead, which also
    checks frames after a graph break (the call runs, up to where it would recompile).
    Returns a ``RecompileCheck`` (printable; docs/pipelines.md)."""
    return _compiler.check_recompile(fn, *args, run=run, **kwargs)


def _in_kernel(ip) -> bool:
    """A Jupyter kernel (a frontend that draws widgets), not a terminal IPython."""
    return type(ip).__name__ == "ZMQInteractiveShell" or any(
        c.__name__ == "ZMQInteractiveShell" for c in type(ip).__mro__
    )


def _register_display(ip) -> None:
    def _display(report: Report) -> None:
        if _in_kernel(ip):
            show(report)
        else:  # a terminal: the text views (widgets and charts would print as reprs)
            print(text(report), end="")
            if report.benchmarks:
                print(text(report, "bench"), end="")

    ip.display_formatter.ipython_display_formatter.for_type(Report, _display)


def load_ipython_extension(ip) -> None:
    """``%load_ext explorer``: the %%compile magic, and reports that display themselves."""
    from explorer._magic import load_ipython_extension as _load_magic

    _load_magic(ip)
    _register_display(ip)


def __getattr__(name: str):
    if name == "reports":  # reports kept by %%compile --name NAME
        from explorer._magic import reports

        return reports
    if name in ("show_modes", "modes_widget"):  # compiler.compare_modes results (docs/benchmark.md)
        from explorer import _modesview

        return getattr(_modesview, name)
    if name == "time_figure":  # where compile time goes, as a plotly waterfall
        from explorer._timeview import time_figure

        return time_figure
    if name == "Explorer":
        from explorer._widgets import Explorer

        return Explorer
    if name in ("diff", "diff_compiles", "compare_stages"):  # side-by-side diffs (docs/diff.md)
        from explorer import _diff

        return getattr(_diff, name)
    raise AttributeError(name)


__all__ = [
    "Explorer",
    "break_repro",
    "check_recompile",
    "compare_stages",
    "diff",
    "diff_compiles",
    "export_summary",
    "flex_calls",
    "flex_summary",
    "html",
    "load_ipython_extension",
    "print_summary",
    "repro",
    "reports",
    "save_html",
    "show",
    "show_modes",
    "summary_text",
    "text",
    "time_figure",
]

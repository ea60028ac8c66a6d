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

from compiler import Report  # noqa: E402
from compiler.analysis import export_summary, flex_calls, flex_summary  # noqa: E402
from explorer.pages._faces import html, save_html, text  # noqa: E402
from explorer.views._summary import print_summary, summary_text  # noqa: E402


def show(report: Report, title: str | None = None) -> None:
    """Display the explorer for ``report`` in a notebook. (It returns nothing, so that a cell
    ending with it shows the explorer once; ``explorer.Explorer(report)`` is the widget.)"""
    from IPython.display import display

    from explorer.pages._widgets import Explorer

    display(Explorer(report, title=title))


def repro(report: Report, compile_id: str, *, backward: bool = False) -> str:
    """A runnable repro of compile ``compile_id`` (its backward graph's with ``backward``):
    torch's ``fx_graph_runnable`` (the graph Inductor got, the non-default config, inputs of
    the recorded shapes, strides and dtypes) with a header; what ``pt2-explorer repro REPORT
    --compile ID`` saves. A ValueError says why a compile has none."""
    from explorer.repros._compile import repro_script

    return repro_script(report, compile_id, backward=backward)


def break_repro(report: Report, site: str) -> str:
    """A starting point for reproducing the graph break at ``site`` ("model.py:12"): its
    function compiled with ``fullgraph=True`` and called with tensors shaped as recorded;
    a ValueError where the report does not allow one. Not a promise that it reproduces."""
    from explorer.repros._break import break_program

    return break_program(report, site)


def would_recompile(fn, *args, run: bool = False, **kwargs):
    """Would calling ``fn`` (what torch.compile returned) with these inputs recompile, and
    which guard fails? torch's guards of ``fn``'s frame are evaluated for the inputs, as
    Dynamo does on each call: ``fn`` is not called and its cache is not changed. ``run=True``
    calls it once under ``torch.compiler.set_stance("fail_on_recompile")`` instead, which also
    checks frames after a graph break (the call runs, up to where it would recompile).
    Returns a ``RecompileCheck`` (printable; docs/pipelines.md)."""
    return _compiler.would_recompile(fn, *args, run=run, **kwargs)


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
    from explorer.notebook._magic import load_ipython_extension as _load_magic

    _load_magic(ip)
    _register_display(ip)


# names whose modules load heavy libraries (ipywidgets, plotly) or the notebook's magic, imported
# on first use (PEP 562): name -> the module that defines it
_LAZY = {
    "reports": "explorer.notebook._magic",  # reports kept by %%compile --name NAME
    "show_modes": "explorer.pages._modes",  # compiler.compare_modes results (docs/benchmark.md)
    "modes_widget": "explorer.pages._modes",
    "time_figure": "explorer.views._time",  # where compile time goes, as a plotly waterfall
    "Explorer": "explorer.pages._widgets",
    "diff": "explorer.diffs._diff",  # side-by-side diffs (docs/diff.md)
    "diff_compiles": "explorer.diffs._diff",
    "compare_stages": "explorer.diffs._diff",
}


def __getattr__(name: str):
    if name == "check_recompile":  # its old name, kept working; every use warns
        import warnings

        warnings.warn(
            "explorer.check_recompile is now explorer.would_recompile", DeprecationWarning, stacklevel=2
        )
        return would_recompile
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(name)


__all__ = [
    "Explorer",
    "break_repro",
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
    "would_recompile",
]

"""A runnable repro of one compile: torch's ``fx_graph_runnable`` (the graph Inductor got,
the non-default config, inputs of the recorded shapes, strides and dtypes) with a header
saying where it comes from. ``pt2-explorer repro REPORT --compile 0/1 -o repro.py`` saves it;
the page and the widget offer it as a download beside the compile's code (``views/_compiles.py``)."""

from __future__ import annotations

import re

from compiler import Report
from compiler._viewer import RUNNABLE_PREAMBLE

from ..model._view import runnable

# config lines a recording sets itself (compiler/listen/_capture.py), not the program
_RECORDING_CONFIG = (
    "config.fx_graph_cache = False",
    "trace.provenance_tracking_level",
    "enable_autograd_cache = False",
)


def repro_script(
    report: Report, compile_id: str, *, backward: bool = False, source: str | None = None
) -> str:
    """The repro of ``compile_id`` (its backward graph's with ``backward``), or a ValueError
    in one line saying why there is none. ``source``: the report's file, named in the header."""
    c = next((x for x in report.compiles if x.id == compile_id), None)
    if c is None:
        ids = ", ".join(x.id for x in report.compiles) or "none"
        raise ValueError(f"no compile {compile_id} in this report (compiles: {ids})")
    code = runnable(c, backward)
    if not code:
        role = "backward graph" if backward else "graph"
        raise ValueError(
            f"compile {compile_id} has no runnable repro of its {role}: torch logs fx_graph_runnable "
            "when Inductor compiles a graph (backend 'inductor'), from torch 2.5"
        )
    role = "backward" if backward else "forward"
    ended = (
        "ok"
        if c.status == "ok"
        else f"FAILED in {token(c.failed_stage or '?')}: {(c.error or '?').splitlines()[0]!r}"
    )
    ours = (  # looked for line by line only where the code names one
        [ln.strip() for ln in code.splitlines() if any(k in ln for k in _RECORDING_CONFIG)]
        if any(k in code for k in _RECORDING_CONFIG)
        else []
    )
    head = [
        f"# Runnable repro of compile [{token(compile_id)}] ({role} graph) of {token(c.name or '?')}, saved by pt2-explorer.",
        *provenance_lines(source),
        "# torch's fx_graph_runnable: the graph Inductor received, the non-default config, and",
        "# inputs of the recorded shapes, strides and dtypes (random values). `python repro.py`",
        "# compiles it with Inductor and runs it once.",
        f"# Recorded with torch {token(report.torch_version)} on {token(report.device)}; the compile ended {ended}.",
    ]
    if ours:
        head.append("# Set by the recording, not by the program: " + "; ".join(ours))
    return "\n".join(head) + "\n" + RUNNABLE_PREAMBLE + code.lstrip("\n")


# a value from a report that reads as it is in a "#" line: no space, quote, "#" or line end, ASCII
_TOKEN = re.compile(r"[A-Za-z0-9_.:+/<>-]+")


def token(value: str | None) -> str:
    """A report's string for a header line: as it is where it is a plain word (``model``,
    ``2.13.0+cpu``, ``cuda:0``), else its ``repr``: one line whatever it holds (a line break in
    it cannot add a line of code below the ``#``); ``?`` for none."""
    if value is None:
        return "?"
    return value if _TOKEN.fullmatch(value) else repr(value)


def provenance_lines(source: str | None) -> list[str]:
    """The header lines naming the report a file was made from, and what that means."""
    where = f"the report {token(source)}" if source else "a report"
    return [
        f"# Made from {where}. A report is a shared file that anyone can write, and what",
        "# follows comes from it: read it before you run it.",
    ]


def file_name(compile_id: str, backward: bool = False) -> str:
    """``repro_0_1.py`` (``repro_0_1_backward.py``)."""
    safe = compile_id.replace("/", "_").replace("!", "ca")
    return f"repro_{safe}{'_backward' if backward else ''}.py"

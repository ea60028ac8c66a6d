"""A runnable repro of one compile: torch's ``fx_graph_runnable`` (the graph Inductor got,
the non-default config, inputs of the recorded shapes, strides and dtypes) with a header
saying where it comes from. ``pt2-explorer repro REPORT --compile 0/1 -o repro.py`` saves it;
the page and the widget offer it as a download beside the compile's code."""

from __future__ import annotations

import base64
import re

from compiler import Report
from compiler.types import Compile

from ..lower._html import esc

_KEEP_NAMES = """\
import torch.fx.traceback

# Inductor names a kernel after the ATen ops its nodes came from (node meta), which the repro's
# make_fx keeps only under preserve_node_meta: kept, the kernels get the recorded names where no
# op was decomposed on the way to Inductor (else the decomposed ops name them: the same code)
_keep_node_meta = torch.fx.traceback.preserve_node_meta()
_keep_node_meta.__enter__()
"""
# config lines a recording sets itself (compiler/listen/_capture.py), not the program
_RECORDING_CONFIG = (
    "config.fx_graph_cache = False",
    "trace.provenance_tracking_level",
    "enable_autograd_cache = False",
)


def _runnable(c: Compile, backward: bool) -> str | None:
    cg = c.stages.codegen
    if cg is None:
        return None
    return cg.fx_graph_runnable_backward if backward else cg.fx_graph_runnable


def repro_script(
    report: Report, compile_id: str, *, backward: bool = False, source: str | None = None
) -> str:
    """The repro of ``compile_id`` (its backward graph's with ``backward``), or a ValueError
    in one line saying why there is none. ``source``: the report's file, named in the header."""
    c = next((x for x in report.compiles if x.id == compile_id), None)
    if c is None:
        ids = ", ".join(x.id for x in report.compiles) or "none"
        raise ValueError(f"no compile {compile_id} in this report (compiles: {ids})")
    code = _runnable(c, backward)
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
    return "\n".join(head) + "\n" + _KEEP_NAMES + code.lstrip("\n")


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


def repro_links_html(report: Report, c: Compile) -> str:
    """Buttons that save each repro of ``c`` (a download link: no script, no server), or ""."""
    links = []
    for backward in (False, True):
        if not _runnable(c, backward):
            continue
        data = base64.b64encode(repro_script(report, c.id, backward=backward).encode()).decode()
        name = file_name(c.id, backward)
        label = "Save the backward repro" if backward else "Save repro"
        links.append(
            f'<a class="button repro" download="{esc(name)}" href="data:text/x-python;base64,{data}" '
            f'title="torch\'s fx_graph_runnable of this compile: run it with python">{esc(label)} ({esc(name)})</a>'
        )
    return f'<div class="repro">{" ".join(links)}</div>' if links else ""

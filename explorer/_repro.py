"""A runnable repro of one compile: torch's ``fx_graph_runnable`` (the graph Inductor got,
the non-default config, inputs of the recorded shapes, strides and dtypes) with a header
saying where it comes from. ``pt2-explorer repro REPORT --compile 0/1 -o repro.py`` saves it;
the page and the widget offer it as a download beside the compile's code."""

from __future__ import annotations

import base64
import sys

from compiler import Compile, Report

from ._html import esc

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


def repro_script(report: Report, compile_id: str, *, backward: bool = False) -> str:
    """The repro of ``compile_id`` (its backward graph's with ``backward``), or a ValueError
    in one line saying why there is none."""
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
        "ok" if c.status == "ok" else f"FAILED in {c.failed_stage or '?'}: {(c.error or '?').splitlines()[0]}"
    )
    ours = (  # looked for line by line only where the code names one
        [ln.strip() for ln in code.splitlines() if any(k in ln for k in _RECORDING_CONFIG)]
        if any(k in code for k in _RECORDING_CONFIG)
        else []
    )
    head = [
        f"# Runnable repro of compile [{compile_id}] ({role} graph) of {c.name or '?'}, saved by pt2-explorer.",
        "# torch's fx_graph_runnable: the graph Inductor received, the non-default config, and",
        "# inputs of the recorded shapes, strides and dtypes (random values). `python repro.py`",
        "# compiles it with Inductor and runs it once.",
        f"# Recorded with torch {report.torch_version} on {report.device}; the compile ended {ended}.",
    ]
    if ours:
        head.append("# Set by the recording, not by the program: " + "; ".join(ours))
    return "\n".join(head) + "\n" + _KEEP_NAMES + code.lstrip("\n")


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


def repro_parser(sub) -> None:
    """``pt2-explorer repro``'s options (explorer/cli.py)."""
    r = sub.add_parser("repro", help="save a compile's runnable repro, or a graph break's starting point")
    r.add_argument("report", help="a report JSON file")
    what = r.add_mutually_exclusive_group(required=True)
    what.add_argument("--compile", metavar="ID", help="the compile, e.g. 0/1: torch's runnable repro of it")
    what.add_argument(
        "--break", dest="break_site", metavar="FILE:LINE", help="a graph break's site, e.g. model.py:12"
    )
    r.add_argument("--backward", action="store_true", help="the compile's backward graph")
    r.add_argument("-o", "--out", metavar="OUT", help="write it here (default: print it)")


def repro_main(ns, error) -> int:
    """Print or save the repro; a report or a compile that has none: one line, status 2."""
    import compiler

    from ._breakrepro import break_program
    from ._cliout import warned

    try:
        report = warned(lambda: compiler.load(ns.report))
        if ns.break_site:
            script = break_program(report, ns.break_site)
        else:
            script = repro_script(report, ns.compile, backward=ns.backward)
        if ns.out:
            compiler.write_file(ns.out, script)
    except (OSError, ValueError) as e:
        return error(e)
    if ns.out:
        print(f"repro: {ns.out}")
    else:
        sys.stdout.write(script)
    return 0

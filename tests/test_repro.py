"""A compile's runnable repro (``pt2-explorer repro``): saved from a recorded report, run in a
fresh process, it makes the same kernels (names and count) as the recorded compile; the repro
of a compile that failed fails the same way. The kernels on both sides are read from torch's
own trace: the recorded compile's from a handler on torch's trace logger, the repro's from
the TORCH_TRACE log its process writes. The GPU twin is tests/test_gpu_repro.py."""

from __future__ import annotations

import base64
import glob
import os
import re
import subprocess
import sys
import textwrap

import pytest
import torch

import compiler
import compiler._viewer
from explorer import cli
from tests._torch_trace import RawTrace, read_log

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNEL_DEF = re.compile(r"^(\w+) = async_compile\.(?:cpp_pybinding|cpp|triton)\(", re.M)


def kernels_in_trace(records) -> list[str]:
    """The kernel names of every ``inductor_output_code`` torch logged, in order."""
    out = []
    for meta, payload in records:
        if "inductor_output_code" in meta and payload:
            out += [m.group(1) for m in KERNEL_DEF.finditer(payload)]
    return out


def kernel_code(records) -> list[str]:
    """Each kernel's code in every ``inductor_output_code`` torch logged, in order, without its
    name and comments: Inductor names a kernel after the ATen ops before AOTAutograd's
    decompositions (node meta, which the runnable's graph no longer carries), so a repro of a
    graph with decomposed ops (layer_norm: var_mean, rsqrt) names the same code differently.
    A Triton kernel's code is its ``@triton.jit`` function: the decorator's metadata above it
    (Inductor's hashes and compile facts) is not code."""
    out = []
    for meta, payload in records:
        if "inductor_output_code" in meta and payload:
            for k in compiler._viewer.split_kernels(payload):
                source = k.source
                if "@triton.jit" in source:
                    source = source[source.index("@triton.jit") :]
                lines = source.replace(k.name, "KERNEL").splitlines()
                out.append("\n".join(ln for ln in lines if not ln.lstrip().startswith("#")))
    return out


def model(x, w):
    y = torch.sin(x) @ w
    return torch.relu(y * 2) + y.sum(dim=1, keepdim=True)


@pytest.fixture(autouse=True)
def _reset():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def run_repro(path, tmp_path, *, trace: bool = True) -> tuple[subprocess.CompletedProcess, list]:
    """``python repro.py`` in a fresh process (its own Inductor cache), and the records torch
    logged there."""
    logs = tmp_path / "trace"
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=ROOT)
    if trace:
        env["TORCH_TRACE"] = str(logs)
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300, env=env)
    return proc, [r for f in sorted(glob.glob(f"{logs}/*.log")) for r in read_log(f)]


def record(fn, *args, **config):
    with torch._inductor.config.patch(config), RawTrace() as raw, compiler.recording() as rec:
        try:
            torch.compile(fn)(*args)
        except Exception as e:  # the failing compile's error is the test's to check
            rec.error_seen = e
    return rec, raw


def test_repro_makes_the_same_kernels_in_a_fresh_process(tmp_path, capsys):
    rec, raw = record(model, torch.randn(8, 16), torch.randn(16, 4))
    recorded = kernels_in_trace(raw.records)
    assert len(recorded) == 2 and all(
        k.startswith("cpp_fused_") for k in recorded
    )  # a fusion and a reduction
    report_path = tmp_path / "r.json"
    rec.report.to_json(report_path)
    (c,) = rec.report.compiles
    assert [k.name for k in rec.report.kernels_of(c.id)] == recorded

    out = tmp_path / "repro_0_0.py"
    assert cli.main(["repro", str(report_path), "--compile", "0/0", "-o", str(out)]) == 0
    assert capsys.readouterr().out == f"repro: {out}\n"
    script = out.read_text()
    assert script.startswith(
        "# Runnable repro of compile [0/0] (forward graph) of model, saved by pt2-explorer."
    )
    assert script.endswith(c.stages.codegen.fx_graph_runnable.lstrip("\n"))  # torch's artifact, whole

    # the page's and the widget's button saves the same file
    from explorer.model._view import build_view
    from explorer.views._compiles import compile_facts_html

    button = re.search(
        r'<a class="button repro" download="repro_0_0.py" href="data:text/x-python;base64,([^"]+)"',
        compile_facts_html(build_view(rec.report).compiles[0], rec.report),
    )
    # the same file, but that a page (or a notebook's report) knows no report file to name
    named = f"# Made from the report {report_path}. A report is a shared file"
    assert named in script
    assert base64.b64decode(button.group(1)).decode() == script.replace(
        named, "# Made from a report. A report is a shared file"
    )

    proc, made = run_repro(out, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert kernels_in_trace(made) == recorded  # the same kernels, by name and count
    assert kernel_code(made) == kernel_code(raw.records)  # and code


def test_repro_of_a_failed_compile_fails_the_same_way(tmp_path):
    # Inductor's own switch for testing repros: its C++ relu emits code that does not compile
    rec, _raw = record(
        model, torch.randn(8, 16), torch.randn(16, 4), **{"cpp.inject_relu_bug_TESTING_ONLY": "compile_error"}
    )
    (c,) = rec.report.compiles
    assert c.status == "failed"
    from explorer.repros._compile import repro_script

    script = repro_script(rec.report, c.id)
    assert "torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = 'compile_error'" in script
    assert "# Recorded with torch" in script and "the compile ended FAILED in" in script
    out = tmp_path / "repro.py"
    out.write_text(script)
    proc, _made = run_repro(out, tmp_path, trace=False)
    assert proc.returncode != 0
    assert "CppCompileError" in proc.stderr or "C++ compile error" in proc.stderr, proc.stderr[-2000:]


def test_repro_says_why_there_is_none(tmp_path, capsys):
    with compiler.recording() as rec:
        torch.compile(model, backend="eager")(torch.randn(8, 16), torch.randn(16, 4))
    path = tmp_path / "r.json"
    rec.report.to_json(path)
    assert cli.main(["repro", str(path), "--compile", "0/0"]) == 2
    assert capsys.readouterr().err == (
        "pt2-explorer: error: compile 0/0 has no runnable repro of its graph: torch logs "
        "fx_graph_runnable when Inductor compiles a graph (backend 'inductor'), from torch 2.5\n"
    )
    assert cli.main(["repro", str(path), "--compile", "3/0"]) == 2
    assert capsys.readouterr().err == "pt2-explorer: error: no compile 3/0 in this report (compiles: 0/0)\n"


BREAKS = textwrap.dedent(
    """
    import torch

    def helper(y):
        print("in helper")  # BREAK helper
        return y

    def f(x, w):
        y = x @ w
        if y.sum() > 0:  # BREAK branch
            y = y * 2
        return helper(y).cos()
    """
)


def test_break_starting_point_reproduces_the_break(tmp_path, capsys):
    path = tmp_path / "prog.py"
    path.write_text(BREAKS)
    scope: dict = {"__name__": "prog"}
    exec(compile(BREAKS, str(path), "exec"), scope)
    with compiler.recording() as rec:
        torch.compile(scope["f"], backend="eager")(torch.ones(3, 5), torch.ones(5, 2))
    report_path = tmp_path / "r.json"
    rec.report.to_json(report_path)
    branch = next(i for i, ln in enumerate(BREAKS.splitlines(), 1) if "# BREAK branch" in ln)
    helper = next(i for i, ln in enumerate(BREAKS.splitlines(), 1) if "# BREAK helper" in ln)

    out = tmp_path / "break.py"
    assert cli.main(["repro", str(report_path), "--break", f"prog.py:{branch}", "-o", str(out)]) == 0
    program = out.read_text()
    assert program.startswith(f"# A STARTING POINT for reproducing the graph break at {path}:{branch}")
    assert "# names the function takes from its module (define or import them): helper\n" in program
    assert program.endswith(
        "if __name__ == '__main__':\n"
        "    x = torch.randn(3, 5, dtype=torch.float32)\n"
        "    w = torch.randn(5, 2, dtype=torch.float32)\n"
        "    torch.compile(f, fullgraph=True)(x, w)\n"
    )
    # a starting point: completed with the helper it names, it raises torch's break
    out.write_text(program.replace("import torch\n", "import torch\n\n\ndef helper(y):\n    return y\n", 1))
    proc, _ = run_repro(out, tmp_path, trace=False)
    assert proc.returncode == 1
    assert "torch._dynamo.exc.Unsupported: Data-dependent branching" in proc.stderr, proc.stderr[-2000:]

    # the helper's break: its inputs are not the compiled frame's graph inputs
    capsys.readouterr()
    assert cli.main(["repro", str(report_path), "--break", f"prog.py:{helper}"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "pt2-explorer: error: the break is in helper, called from the compiled frame "
        f"torch_dynamo_resume_in_f_at_{branch}: its inputs are not the graph's; no starting point\n"
    )


def test_a_compiles_repros_are_data_the_compiles_view_draws():
    """The view model holds each compile's repros as data (``Repro``: which compile, which
    graph), no HTML: one where torch logged the graph's fx_graph_runnable, none where it did
    not; the compiles view draws one save button per repro, whose file is the repro
    ``pt2-explorer repro`` writes (recorded reports: a GPU block's, a DDP rank's)."""
    from explorer.base._types import Repro
    from explorer.model._view import build_view
    from explorer.repros._compile import repro_script
    from explorer.views._compiles import compile_facts_html

    fixtures = os.path.join(ROOT, "tests", "fixtures", "reports")
    block = compiler.load(os.path.join(fixtures, "h100-torch211-gpu-block.json.gz"))
    ddp = compiler.load(os.path.join(fixtures, "h200x2-torch211-ddp", "run.rank0.json.gz"))
    for report in (block, ddp):
        logged = [
            (
                c.id,
                bool(c.stages.codegen and c.stages.codegen.fx_graph_runnable),
                bool(c.stages.codegen and c.stages.codegen.fx_graph_runnable_backward),
            )
            for c in report.compiles
        ]
        assert [cv.repros for cv in build_view(report).compiles] == [
            tuple(Repro(cid, backward) for backward, has in ((False, fw), (True, bw)) if has)
            for cid, fw, bw in logged
        ]
    assert [cv.repros for cv in build_view(ddp).compiles] == [(), (), (), (), (Repro("4/0"),)]
    cv = build_view(block).compiles[2]
    assert cv.repros == (Repro("0/1"),)
    buttons = re.findall(
        r'<a class="button repro" download="([^"]+)" href="data:text/x-python;base64,([^"]+)"',
        compile_facts_html(cv, block),
    )
    assert [name for name, _ in buttons] == ["repro_0_1.py"]
    assert base64.b64decode(buttons[0][1]).decode() == repro_script(block, "0/1")
    assert 'class="repro"' not in compile_facts_html(build_view(ddp).compiles[0], ddp)

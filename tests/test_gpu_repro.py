"""The GPU twin of tests/test_repro.py: a compile's repro, run in a fresh process on the GPU,
makes the recorded compile's Triton kernels; of a training compile, the forward graph's and
the backward graph's. Kernels on both sides from torch's own trace. Skipped without CUDA;
on the GPU machine: `python -m pytest -m gpu tests/test_gpu_repro.py`.
"""

from __future__ import annotations

import pytest
import torch

import compiler
from explorer import cli
from tests._torch_trace import RawTrace
from tests.test_repro import _reset, kernel_code, kernels_in_trace, model, run_repro  # noqa: F401 (_reset: autouse fixture)

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU")]


def _recorded(fn, *args):
    with RawTrace() as raw, compiler.recording() as rec:
        fn(*args)
    per_graph = [[r] for r in raw.records if "inductor_output_code" in r[0]]
    assert all(
        kernels_in_trace(g) and all(n.startswith("triton_") for n in kernels_in_trace(g)) for g in per_graph
    )
    return rec.report, per_graph


def _run(report, tmp_path, backward: bool) -> list:
    tmp_path.mkdir(parents=True, exist_ok=True)
    report_path = tmp_path / "r.json"
    report.to_json(report_path)
    out = tmp_path / f"repro_{int(backward)}.py"
    args = ["repro", str(report_path), "--compile", "0/0", "-o", str(out)] + (
        ["--backward"] if backward else []
    )
    assert cli.main(args) == 0
    assert "device=device(type='cuda', index=0)" in out.read_text()
    proc, made = run_repro(out, tmp_path / f"run{int(backward)}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return made


def test_repro_makes_the_same_triton_kernels(tmp_path):
    x = torch.randn(64, 128, device="cuda")
    w = torch.randn(128, 32, device="cuda")
    report, (recorded,) = _recorded(torch.compile(model), x, w)
    made = _run(report, tmp_path, backward=False)
    assert kernels_in_trace(made) == kernels_in_trace(recorded)  # the same kernels, by name and count
    assert kernel_code(made) == kernel_code(recorded)


def _kind_and_index(name: str) -> tuple[str, str]:
    """``triton_red_fused_add_sum_1`` -> ("triton_red", "1"): the kernel's kind and number."""
    return name.split("_fused_")[0], name.rsplit("_", 1)[-1]


def test_training_repros_make_the_same_kernels_forward_and_backward(tmp_path):
    """Of a training compile, the forward graph's repro and the backward graph's: the same
    kernels' code, count, kinds (pointwise, reduction, persistent reduction) and order. The ops
    part of a name can differ (tests/test_repro.py: kernel_code): relu's backward is
    threshold_backward in the recorded names, le/where in the repro's."""
    x = torch.randn(64, 128, device="cuda", requires_grad=True)
    w = torch.randn(128, 32, device="cuda", requires_grad=True)
    report, per_graph = _recorded(lambda: torch.compile(model)(x, w).sum().backward())
    assert len(per_graph) == 2  # the forward graph's module, then the backward's
    (c,) = report.compiles
    assert c.stages.codegen.fx_graph_runnable and c.stages.codegen.fx_graph_runnable_backward
    for backward, recorded in zip((False, True), per_graph):
        made = _run(report, tmp_path / str(backward), backward)
        names = [_kind_and_index(n) for n in kernels_in_trace(made)]
        assert names == [_kind_and_index(n) for n in kernels_in_trace(recorded)], (backward, made)
        assert kernel_code(made) == kernel_code(recorded), backward

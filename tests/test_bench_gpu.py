"""GPU benchmark path: CUDA events, L2 flush, peak memory, Triton kernels profiled and matched,
reduce-overhead in compare_modes. Skipped without CUDA.

Run on a GPU machine with `python -m pytest -m gpu tests/test_bench_gpu.py`.
"""

from __future__ import annotations

import pytest
import torch

import compiler

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU with Triton"),
]


def _gelu_sum(x, w):
    return torch.nn.functional.gelu(x @ w).sum(-1)


def test_gpu_benchmark_events_memory_and_triton_kernels_matched():
    x = torch.randn(512, 512, device="cuda")
    w = torch.randn(512, 512, device="cuda")
    with torch._inductor.config.patch(benchmark_kernel=True):
        _, report = compiler.record(_gelu_sum, x, w)
    b = compiler.benchmark(report, reps=10, warmup=2, progress=False)
    assert b.device == "cuda" and "CUDA events" in b.method and "flush L2" in b.method
    assert b.eager.reps == b.compiled.reps == 10
    assert b.peak_memory_eager > 0 and b.peak_memory_compiled > 0
    assert b.accuracy.ok
    triton_rows = [k for k in b.kernels if k.kind == "triton"]
    assert triton_rows, b.kernels
    names = {k.name for k in report.kernels}
    assert all(k.kernel in names and k.compile_id == "0/0" for k in triton_rows)
    assert any(k.kind == "extern" for k in b.kernels)  # the cuBLAS GEMM
    assert abs(sum(k.share for k in b.kernels) - 1) < 1e-9
    assert all(k.gb is not None and k.gb_per_s > 0 for k in triton_rows)


def test_gpu_compare_modes_runs_reduce_overhead():
    x = torch.randn(64, 256, device="cuda")
    w = torch.randn(256, 256, device="cuda")
    cmp = compiler.compare_modes(_gelu_sum, x, w, reps=5, warmup=2, profile=False, progress=False)
    assert [r.label for r in cmp.rows] == ["default", "reduce-overhead"]
    assert all(r.skipped is None and r.error is None for r in cmp.rows), cmp.rows
    assert all(r.benchmark.speedup > 0 for r in cmp.rows)


def test_gpu_training_step_restored_and_compared():
    """A CUDA training step (optimizer, grads, a step counter on the module) benchmarked with
    mutates=True: every tensor back on the GPU as it was, the counter too, and the state each
    arm leaves compared (Adam's update of the same weights: the same within tolerance)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.GELU(), torch.nn.Linear(64, 8)).cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.steps = 0

    def step(x):
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        model.steps += 1
        return loss.detach()

    x = torch.randn(32, 64, device="cuda")
    params = [p.detach().clone() for p in model.parameters()]
    b = compiler.benchmark(
        compiler.Report("x", "cuda"),
        step,
        x,
        compiled=torch.compile(step),
        mutates=True,
        reps=5,
        warmup=1,
        profile=False,
        progress=False,
    )
    assert b.state == "restored" and "model.steps" in b.mutated and "opt.state" in b.mutated
    assert all(torch.equal(p, q) and p.is_cuda for p, q in zip(model.parameters(), params))
    assert model.steps == 0 and opt.state == {} and all(p.grad is None for p in model.parameters())
    assert b.accuracy.ok, b.accuracy  # outputs and the weights each arm left agree
    assert b.accuracy.tensors > 1

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
    b = report.benchmark(reps=10, warmup=2, progress=False)
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

"""The H100 benchmark recordings in notebooks/data, read on CPU (see notebooks/data/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

import compiler

DATA = Path(__file__).parent.parent / "notebooks" / "data"


def test_gpu_benchmark_recording():
    r = compiler.load(DATA / "h100-bench-mlp.json.gz")
    (b,) = r.benchmarks
    assert (b.device, b.device_name, b.name) == ("cuda", "NVIDIA H100 80GB HBM3", "MLPBlock")
    assert (b.eager.reps, b.compiled.reps, b.profiled_calls, b.peak_gb_per_s) == (50, 50, 3, 3350.0)
    assert b.accuracy.ok and b.peak_memory_eager > 0 and b.peak_memory_compiled > 0
    triton = [k for k in b.kernels if k.kind == "triton"]
    assert {k.kernel for k in triton} == {k.name for k in r.kernels}
    assert {k.compile_id for k in triton} == {"0/0"}
    assert all(k.gb > 0 and k.gb_per_s > 0 for k in triton)
    (extern,) = [k for k in b.kernels if k.kind == "extern"]
    assert "gemm" in extern.name and extern.kernel is None
    assert sum(k.share for k in b.kernels) == pytest.approx(1.0)
    assert b.speedup == b.eager.median_ms / b.compiled.median_ms


def test_gpu_modes_recording():
    m = compiler.load_modes(DATA / "h100-modes-mlp.json.gz")
    labels = [
        "default",
        "reduce-overhead",
        "max-autotune",
        "default · dynamic",
        "default · dynamic · bfloat16",
    ]
    assert [r.label for r in m.rows] == labels
    assert all(r.skipped is None and r.error is None and r.benchmark.device == "cuda" for r in m.rows)
    assert m.row("default · dynamic · bfloat16").config.autocast == "bfloat16"
    assert m.row("default · dynamic").config.dynamic is True
    assert m.row("reduce-overhead").report.compiles[0].status == "ok"
    # CUDA graphs cut the launch overhead that dominates at this small batch (README in notebooks/data)
    ms = {r.label: r.benchmark.compiled.median_ms for r in m.rows}
    assert ms["reduce-overhead"] < ms["default"]

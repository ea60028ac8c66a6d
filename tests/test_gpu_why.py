"""Why isn't compiled faster, on a GPU: the line-level join against the profiler's own kernel list
and torch's provenance artifact, Triton's IR and register counts against what Triton reports for
the same kernel, and the verdict on three cases whose cause is known by construction
(notebooks/data/make_why_data.py). Skipped without CUDA.

Run on a GPU machine with `python -m pytest -m gpu tests/test_gpu_why.py`.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from pathlib import Path

import pytest
import torch

import compiler
import compiler._viewer

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU with Triton"),
]

DATA = Path(__file__).parent.parent / "notebooks" / "data"


def _cases(script: str = "make_why_data"):
    spec = importlib.util.spec_from_file_location(script, DATA / f"{script}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def cases():
    return _cases()


@pytest.fixture(scope="module")
def launch(cases):
    return cases.launch_case(reps=10)  # many small kernels: launch-bound by construction


def test_join_against_the_profiler_and_provenance(launch):
    from compiler.bench import _launches, _profile

    report = launch
    b = report.benchmarks[-1]
    subject = compiler._viewer.benchmark_subject(report)  # what the report remembers: model, compiled, args
    x = subject.args[0]
    with torch.inference_mode():
        subject.compiled(x)  # conftest resets Dynamo before each test: compile again, outside the profile
        torch.cuda.synchronize()
        events = _profile.profile_calls(_launches.marked(lambda: subject.compiled(x), True), 3, True)
    triton_names = {k.name for k in report.kernels if k.language == "triton"}
    launches, timeline = _launches.take_apart(events, True, triton_names)
    costs = compiler.analysis.kernel_costs(
        report, dataclasses.replace(b, launches=launches, profiled_calls=3)
    )
    # the profiler's own list: every CUDA kernel it saw, with its time
    # (record_function ranges appear on the device's timeline too, as user annotations: not kernels)
    device = [
        e
        for e in events
        if e.device_type == torch.autograd.DeviceType.CUDA and not getattr(e, "is_user_annotation", False)
    ]
    total_us = sum(e.time_range.elapsed_us() for e in device)
    assert sum(c.ms for c in costs) * 3 * 1e3 == pytest.approx(total_us, rel=0.01)
    profiled_triton = {e.name for e in device if e.name in triton_names}
    assert profiled_triton and profiled_triton == {c.name for c in costs if c.kind == "triton"}
    # every Triton kernel attributed: its provenance call, that call's nodes, a line of the model
    prov = {}
    for c in report.compiles:
        doc = json.JSONDecoder().raw_decode(c.stages.fuse.provenance)[0]
        prov.update(next(v for k, v in doc.items() if k.endswith("CodeToPost")))
    for c in costs:
        if c.kind == "triton":
            keys = c.call.split(", ")  # a kernel launched at several places: each of its calls
            assert all(k in prov for k in keys) and set(c.nodes) == {n for k in keys for n in prov[k]}
            assert c.lines and all("make_gpu_data.py:" in ln for ln in c.lines)  # MLPBlock.forward
    gemms = [c for c in costs if c.kind == "extern" and c.family == "matmul"]
    assert gemms and all(c.call.startswith("extern_kernels.") and c.modules for c in gemms)


def _launchers(name: str):
    """Inductor's own compiled kernel (its CachingAutotuner) for ``name``: the oracle."""
    from torch._inductor.codecache import PyCodeCache

    mods = PyCodeCache.modules
    for mod in mods.values() if isinstance(mods, dict) else mods:
        k = getattr(mod, name, None)
        if k is not None and getattr(k, "launchers", None):
            return k.launchers
    return None


def test_ir_and_registers_against_triton():
    def f(x):
        return torch.nn.functional.gelu(x).sum(-1)

    x = torch.randn(256, 512, device="cuda")
    threads = torch._inductor.config.compile_threads
    with compiler.recording(triton_ir=True) as rec:
        assert torch._inductor.config.compile_threads == 1
        torch.compile(f)(x)
    assert torch._inductor.config.compile_threads == threads  # compile parallelism given back
    kernels = [k for k in rec.report.kernels if k.language == "triton"]
    assert kernels
    for k in kernels:
        chosen = [b for b in k.binaries if b.chosen]
        assert len(chosen) == 1, k.name
        b = chosen[0]
        assert {"ttir", "ttgir", "llir", "ptx"} <= set(b.ir)
        assert f"tt.func public @{k.name}(" in b.ir["ttir"] and f".entry {k.name}(" in b.ir["ptx"]
        kwargs = {a: v for a, v in b.config.items() if a.isupper()}
        (launcher,) = [
            ln
            for ln in _launchers(k.name)
            if getattr(ln, "cache_hash", None) == b.hash or ln.config.kwargs == kwargs
        ]
        assert (b.n_regs, b.n_spills, b.shared) == (launcher.n_regs, launcher.n_spills, launcher.shared)
        assert (b.num_warps, b.num_stages) == (launcher.config.num_warps, launcher.config.num_stages)
        # Triton's locations, shifted to the report's source: a tt.store sits on a tl.store line
        src = k.source.splitlines()
        pairs = zip(
            b.ir["ttir"].splitlines(), compiler.analysis.ir_source_lines("ttir", b.ir["ttir"]), strict=True
        )
        stores = [s for ln, s in pairs if "tt.store" in ln and s is not None]
        assert stores and all("tl.store" in src[s - b.line_offset - 1] for s in stores), k.name


def test_verdicts_known_by_construction(cases, launch):
    gemm = cases.gemm_case(reps=5, triton_ir=False)
    v = compiler.analysis.verdict(gemm, gemm.benchmarks[-1])
    assert v.main == "library" and v.headline.endswith("the matmul is fp32 without TF32")
    lib = next(c for c in v.causes if c.key == "library")
    assert lib.share > 0.8 and "float32_matmul_precision='highest', allow_tf32=False" in lib.evidence[-1]
    v = compiler.analysis.verdict(launch, launch.benchmarks[-1])
    assert v.main == "launch" and "CUDA graphs are off" in v.headline
    brk = cases.break_case(reps=5)
    b = brk.benchmarks[-1]
    v = compiler.analysis.verdict(brk, b)
    # a disabled call inside the loop: Dynamo gives up on the loop's frame (a fallback) and
    # compiles each layer on its own
    assert v.main == "fallback" and b.timeline.graphs >= 4
    for r in (gemm, launch, brk):  # parts add up to the compiled median
        bb = r.benchmarks[-1]
        parts = [c.ms for c in compiler.analysis.verdict(r, bb).causes if c.ms is not None]
        assert sum(parts) == pytest.approx(bb.compiled.median_ms)


@pytest.mark.parametrize(
    "name, main",
    [
        ("fallback", "fallback"),
        ("fallback-ro", "fallback"),
        ("item", "breaks"),
        ("item-fixed", "launch"),
        ("recompile", "fallback"),
        ("cudagraph-skip", "cudagraphs"),
        ("sync", "sync"),
    ],
)
def test_each_cause_named_first_live(name, main):
    """notebooks/data/make_why_causes.py's programs, recorded and benchmarked here: each one's
    cause comes first, and the tool's own ranges are no kernel (tests/test_why_causes.py checks
    the shipped recordings of the same programs in detail)."""
    make = _cases("make_why_causes")
    torch._dynamo.reset()
    r = make.CASES[name]()
    b = r.benchmarks[-1]
    v = compiler.analysis.verdict(r, b)
    assert v.main == main, v.headline
    assert not any(k.name.startswith("## ") for k in b.kernels)
    assert sum(c.share for c in v.causes if c.share is not None) == pytest.approx(1.0)


def test_dropout_on_the_gpu_is_said_to_draw_random_numbers():
    """Dropout on CUDA draws from the device's generator (the CPU's does not move): the
    benchmark sees it, so outputs that differ are said to be random numbers drawn otherwise."""
    x = torch.ones(4096, device="cuda")

    def f(x):
        return torch.nn.functional.dropout(x, 0.5, training=True) * 2

    cpu_rng = torch.get_rng_state()
    f(x)
    assert torch.equal(torch.get_rng_state(), cpu_rng)  # only the device's generator moved
    torch._dynamo.reset()
    b = compiler.benchmark(
        compiler.Report("x", "cuda"),
        f,
        x,
        compiled=torch.compile(f),
        reps=2,
        warmup=0,
        profile=False,
        progress=False,
    )
    assert b.accuracy.random and not b.accuracy.ok

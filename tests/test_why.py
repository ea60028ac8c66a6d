"""Why isn't compiled faster, read offline from the H100 recordings in notebooks/data: the kernel
read for people, kernel time joined to the model's lines, the roofline, the verdict. The facts
are checked against what torch and the profiler recorded (the provenance artifact, the kernel's
own source, the benchmark's per-kernel rows), read here directly."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import compiler
import compiler._viewer
import explorer

DATA = Path(__file__).parent.parent / "notebooks" / "data"
FIXTURES = Path(__file__).parent / "fixtures" / "reports"


@pytest.fixture(scope="module")
def mlp():
    r = compiler.load(DATA / "h100-bench-mlp.json.gz")
    return r, r.benchmarks[0]


def test_triton_kernel_read_for_people():
    r = compiler.load(FIXTURES / "h100-torch211-gpu-block.json.gz")
    k = next(k for k in r.kernels if k.name == "triton_poi_fused_gelu_1")
    t = compiler.analysis.read_triton_source(k.source)
    # the decorator's facts, as the source writes them
    assert (t.name, t.heuristic, t.size_hints) == ("triton_poi_fused_gelu_1", "pointwise", {"x": 32768})
    assert t.signature == {"in_ptr0": "*fp32", "out_ptr0": "*fp32", "xnumel": "i32", "XBLOCK": "constexpr"}
    assert (
        "'signature': {'in_ptr0': '*fp32', 'out_ptr0': '*fp32', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}"
        in k.source
    )
    assert (t.mutated, t.loads, t.stores, t.reductions) == ((), 1, 1, 0)
    assert t.device.startswith("DeviceProperties(type='cuda'") and "cc=90" in t.device
    # the body: the @triton.jit function, whole, and nothing of the harness around it
    lines = k.source.splitlines()
    start = lines.index("@triton.jit")
    assert t.body.splitlines()[0] == "@triton.jit"
    assert t.body.splitlines() == lines[start : start + len(t.body.splitlines())]
    assert lines[t.body_line - 1].startswith("def triton_poi_fused_gelu_1(")
    after = [ln for ln in lines[start + len(t.body.splitlines()) :] if ln.strip()]
    assert after == [] and t.body.splitlines()[-1].startswith(
        "    tl.store(out_ptr0"
    )  # this module ends there
    # read from its decorators and signature alone (the function ends the module), it is what
    # the whole module parsed gives (a statement after the function: the module is parsed)
    assert compiler.analysis.read_triton_source(k.source + "\n\ndef get_args():\n    return []\n") == t
    mlp = compiler.load(DATA / "h100-bench-mlp.json.gz").kernels[1]  # one with Inductor's harness after it
    m_lines = mlp.source.splitlines()
    body = compiler.analysis.read_triton_source(mlp.source).body.splitlines()
    rest = [ln for ln in m_lines[m_lines.index("@triton.jit") + len(body) :] if ln.strip()]
    assert rest[0] == "def get_args():" and body[-1].startswith("    tl.store(")
    assert compiler.analysis.read_triton_source("void kernel() {}") is None


def test_codegen_view_shows_the_body_first_and_the_metadata_as_a_table():
    r = compiler.load(FIXTURES / "h100-torch211-gpu-block.json.gz")
    text = (
        explorer.text(r, "codegen", compile="0/0", kernel="triton_poi_fused_gelu_1") + "\n"
    )  # its last block
    block = text[text.index("kernel triton_poi_fused_gelu_1") :]
    block = block[: block.index("\n\n", block.index("metadata\n\n") + 10)]
    assert block.index("@triton.jit") < block.index("triton_poi_fused_gelu_1: metadata")
    assert "triton_meta=" not in block and "inductor_meta=" not in block
    rows = dict(re.findall(r"^(size hints|signature|mutated in place|config)\s{2,}(.+)$", block, re.M))
    assert rows == {
        "size hints": "x=32,768",
        "signature": "in_ptr0: *fp32, out_ptr0: *fp32, xnumel: i32, XBLOCK: constexpr",
        "mutated in place": "none",
        # triton_kernel_info: {'autotune_cache_state': 'miss', 'num_configs': 2, …}
        "config": "autotuned over 2 configs at the first run (the choice is recorded with triton_ir=True)",
    }
    norm = explorer.text(r, "codegen", compile="0/0", kernel="triton_per_fused_native_layer_norm_0")
    norm = norm[norm.index("triton_per_fused_native_layer_norm_0: metadata") :]
    # triton_kernel_info: 'only_config': [['XBLOCK', 1], ['num_warps', 2], ['num_stages', 1]]
    assert re.search(r"^config\s+XBLOCK=1, num_warps=2, num_stages=1 \(the only config\)$", norm, re.M)


def _provenance(r, cid="0/0") -> dict:
    text = next(c for c in r.compiles if c.id == cid).stages.fuse.provenance
    return json.JSONDecoder().raw_decode(text)[0]  # torch's node-mappings artifact, first payload


def test_kernel_time_on_the_model_lines(mlp):
    r, b = mlp
    costs = compiler.analysis.kernel_costs(r, b)
    # every profiled row is there, with its own time per call
    assert sorted((c.name, round(c.ms, 9)) for c in costs) == sorted(
        (k.name, round(k.per_call_ms, 9)) for k in b.kernels
    )
    assert sum(c.share for c in costs) == pytest.approx(1.0)
    prov = _provenance(r)["cppCodeToPost"]
    for c in costs:
        if c.kind == "triton":  # its wrapper call in torch's provenance, and that call's nodes
            (key,) = [k for k in prov if k.rsplit(":", 1)[0] == c.name]
            assert (c.call, set(c.nodes)) == (key, set(prov[key]))
    gemm = next(c for c in costs if c.kind == "extern")
    externs = [k for k in prov if k.startswith("extern_kernels.mm:")]
    assert gemm.call == ", ".join(externs) and set(gemm.nodes) == {n for k in externs for n in prov[k]}
    assert (gemm.library, gemm.family, gemm.modules, gemm.dtype) == (True, "matmul", ("up", "down"), "f32")
    norm = next(c for c in costs if c.name == "triton_per_fused_native_layer_norm_0")
    assert norm.modules == ("norm",) and norm.family == "reduction"
    # every line is the model's forward (make_gpu_data.py line 34), as the graph's nodes say
    assert {line for c in costs for line in c.lines} == {"notebooks/data/make_gpu_data.py:34"}
    (line,) = compiler.analysis.cost_groups(costs, "line")
    assert (line.kernels, line.share) == (4, pytest.approx(1.0))
    fams = {g.key: g.kernels for g in compiler.analysis.cost_groups(costs, "family")}
    assert fams == {"matmul": 1, "pointwise": 2, "reduction": 1}


def test_roofline_of_the_recorded_kernels(mlp):
    r, b = mlp
    costs = compiler.analysis.kernel_costs(r, b)
    places = {p.name: p for p in compiler.analysis.roofline(costs, b)}
    for k in b.kernels:
        if k.kind == "triton":  # bandwidth: the benchmark's own figure, against the H100's 3,350 GB/s
            p = places[k.name]
            assert (p.bound, p.gb_per_s) == ("memory", pytest.approx(k.gb_per_s))
            assert p.of_bound == pytest.approx(k.gb_per_s / 3350.0)
    (gemm,) = [k for k in b.kernels if k.kind == "extern"]
    p = places[gemm.name]
    # two launches a call, each 16384x1024 @ 1024x4096 or 16384x4096 @ 4096x1024: 2*M*N*K FLOPs
    flops = 2 * 16384 * 4096 * 1024
    assert p.tflops == pytest.approx(flops / (gemm.total_ms / gemm.calls / 1e3) / 1e12)
    assert (p.precision, p.bound) == ("fp32", "compute")  # ffma: no tensor cores
    assert p.of_bound == pytest.approx(p.tflops / 67.0)
    assert compiler.analysis.device_peak("NVIDIA H100 80GB HBM3").gb_per_s == 3350.0
    assert compiler.analysis.device_peak("NVIDIA H100 PCIe").gb_per_s == 2000.0
    import dataclasses

    unknown = dataclasses.replace(b, device_name="NVIDIA Imaginary 1")
    assert compiler.analysis.roofline(costs, unknown) == ()
    assert compiler._viewer.no_roofline(unknown) == (
        "NVIDIA Imaginary 1: not in the table of device peaks, so no roofline (no guess)"
    )
    assert compiler._viewer.no_roofline(dataclasses.replace(b, device="cpu")).startswith(
        "CPU run: no roofline"
    )


def test_verdict_gemm_bound_block(mlp):
    r, b = mlp
    v = compiler.analysis.verdict(r, b)
    assert v.main == "library"
    assert v.headline == (
        "compiled is as fast as eager (×1.00): compile has little left to win here: 95% of the compiled "
        "call is library kernels it does not change; the matmul is fp32 without TF32"
    )
    parts = [c for c in v.causes if c.ms is not None]
    assert sum(c.ms for c in parts) == pytest.approx(b.compiled.median_ms)  # the parts add up
    lib = next(c for c in v.causes if c.key == "library")
    assert lib.ms == pytest.approx(sum(k.per_call_ms for k in b.kernels if k.kind == "extern"))
    assert "fp32 on the CUDA cores, no TF32" in lib.evidence[0]
    assert lib.fix == 'torch.set_float32_matmul_precision("high")  # TF32 tensor cores for fp32 matmuls'
    assert v.fixes[0] == lib.fix
    assert "no timeline: the host's time is not split into guards, graph breaks and launches" in v.missing


def test_verdict_launch_bound_modes():
    m = compiler.load_modes(DATA / "h100-modes-mlp.json.gz")
    rows = {row.label: compiler.analysis.verdict(row.report, row.benchmark) for row in m.rows}
    default = m.rows[0].benchmark
    v = rows["default"]
    idle = default.compiled.median_ms - sum(k.per_call_ms for k in default.kernels)
    launch = next(c for c in v.causes if c.key == "launch")
    assert (v.main, launch.ms) == ("launch", pytest.approx(idle))
    assert v.headline.endswith("CUDA graphs are off (mode='reduce-overhead' turns them on)")
    assert (
        "mode=reduce-overhead: CUDA graphs on"
        in next(c for c in rows["reduce-overhead"].causes if c.key == "launch").evidence
    )


def test_why_view_text(mlp):
    r, _ = mlp
    text = explorer.text(r, "why")
    assert text.splitlines()[0].startswith(
        "MLPBlock (NVIDIA H100 80GB HBM3, mode=default): compiled is as fast as eager (×1.00)"
    )
    assert "the lines of your model that cost the most kernel time" in text
    assert re.search(
        r"^MLPBlock\.norm\s+0\.04577\s+1%\s+1\s*$", text, re.M
    )  # the module table, named from the model


def test_verdict_names_generated_kernels_slower_than_eager(mlp):
    """Eager profiled by module (the facts a new benchmark keeps): when eager's own kernels for
    the ops compile fused took less time than the generated ones, that is a cause, named."""
    import dataclasses

    r, b = mlp
    gen_ms = sum(k.per_call_ms for k in b.kernels if k.kind == "triton")
    eager = (  # over 3 profiled calls: a GEMM (library), GELU and LayerNorm kernels (0.03 ms a call)
        compiler.types.Launch("sm80_xmma_gemm_f32f32", "eager", 6, 16.3, op="aten::addmm", module="up"),
        compiler.types.Launch(
            "vectorized_elementwise_kernel", "eager", 3, gen_ms * 3 / 2, op="aten::gelu", module=""
        ),
        compiler.types.Launch(
            "layer_norm_kernel", "eager", 3, 0.09, op="aten::native_layer_norm", module="norm"
        ),
    )
    with_eager = dataclasses.replace(b, eager_launches=eager)
    v = compiler.analysis.verdict(r, with_eager)
    slow = next(c for c in v.causes if c.key == "generated")
    assert slow.title == "generated kernels slower than eager's"
    eager_ms = gen_ms / 2 + 0.03
    assert (
        slow.evidence[0]
        == f"{gen_ms:.4g} ms a call, slower than the {eager_ms:.4g} ms of eager's 2 kernels they replace"
    )
    assert "eager's kernels were not profiled" not in " ".join(v.missing)
    modules = {
        g.key: g.eager_ms
        for g in compiler.analysis.cost_groups(compiler.analysis.kernel_costs(r, b), "module", with_eager)
    }
    # a kernel of one module beside eager's for it; one fused across modules has no single peer
    assert modules[f"{b.name}.norm"] == pytest.approx(0.03) and modules[f"{b.name}, {b.name}.up"] is None


def test_bandwidth_over_the_peak_is_said_to_be_l2_hits():
    """Two kernels of the H100 MLP block run at 126% and 110% of the device's DRAM peak by
    Inductor's byte counts over their profiled times: the counts take every byte as read from
    DRAM, and those found in L2 were not. Said where the figure is, not capped."""
    r = compiler.load(DATA / "h100-why-gemm.json.gz")
    (b,) = r.benchmarks
    text = explorer.text(r, "why")
    over = {k.name: k.gb / (k.total_ms / k.calls / 1e3) / b.peak_gb_per_s for k in b.kernels if k.gb}
    over = {n: x for n, x in over.items() if x > 1}
    assert sorted(f"{x:.0%}" for x in over.values()) == ["110%", "126%"]
    for name, x in over.items():
        (row,) = [ln for ln in text.splitlines() if ln.startswith(name + " ") and "memory," in ln]
        assert row.rstrip().endswith(f"memory, {x:.0%} (L2 hits: bytes counted as DRAM's came from L2)")
    assert "126% of the device's peak bandwidth (L2 hits: bytes counted as DRAM's came from L2)" in text


def test_a_headline_says_why_it_names_a_smaller_cause():
    """The GPT-2 training step: graph breaks (25% of the call) are named over the host's 60%,
    and the headline says that causes are named in a fixed order; where the named cause is the
    largest, nothing is added."""
    r = compiler.load(DATA / "h100-gpt2-train-bench.json.gz")
    v = compiler.analysis.verdict(r, r.benchmarks[0])
    launch = next(c for c in v.causes if c.key == "launch")
    assert v.main == "breaks"
    assert v.headline.endswith(
        f"(named before {launch.title}, {launch.share:.0%}: causes are named in a fixed order, fallback, "
        "backend, graph breaks, recompiles, CUDA-graph skips, host↔device copies, then the largest part)"
    )
    gemm = compiler.load(DATA / "h100-why-gemm.json.gz")
    assert "named before" not in compiler.analysis.verdict(gemm, gemm.benchmarks[0]).headline

"""The recorded H100 report (tests/fixtures/reports): the GPU path, readable without a GPU."""

from __future__ import annotations

from pathlib import Path

import compiler

FIXTURE = Path(__file__).parent / "fixtures" / "reports" / "h100-torch211-gpu-block.json.gz"
EXAMPLE = Path(__file__).parent.parent / "examples" / "gpu_block.py"


def _marker_line(path: Path, marker: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if marker in ln)


def test_gpu_recording_round_trips_and_holds_triton_kernels():
    r = compiler.load(FIXTURE)
    assert (r.torch_version, r.device, r.source) == ("2.11.0+cu130", "cuda", "in-process")
    assert compiler.load_trace  # the same Report type as trace loading
    assert [c.id for c in r.compiles] == ["0/0", "1/0", "0/1", "1/1"]
    assert all(c.status == "ok" for c in r.compiles)
    assert len(r.kernels) == 20 and {k.language for k in r.kernels} == {"triton"}
    assert {(k.compile_id, k.role) for k in r.kernels} == {
        (cid, role) for cid in ("0/0", "1/0", "0/1", "1/1") for role in ("forward", "backward")
    }
    ln = r.kernels[0]
    assert ln.name == "triton_per_fused_native_layer_norm_0"
    assert ln.nodes == ("layer_norm",)
    assert set(ln.metadata) == {"autotune_cache_state", "compile_time_us", "only_config"}
    assert "@triton.jit" in ln.source
    # every kernel has its triton_kernel_info
    assert all("compile_time_us" in k.metadata for k in r.kernels)


def test_gpu_recording_break_and_recompiles():
    r = compiler.load(FIXTURE)
    (b,) = r.graph_breaks
    assert (b.filename, b.line) == ("examples/gpu_block.py", _marker_line(EXAMPLE, "data-dependent branch"))
    assert (b.type, b.count, b.compile_ids) == ("Data-dependent branching", 2, ("0/0", "0/1"))
    assert [(x.compile_id, x.reasons) for x in r.recompiles] == [
        ("0/1", ("0/0: tensor 'x' size mismatch at index 0. expected 32, actual 48",)),
        ("1/1", ("1/0: tensor 'h' size mismatch at index 0. expected 32, actual 48",)),
    ]
    saved = r.compile("0/0").stages.autograd.saved_tensors
    assert [(s.name, s.shape, s.bytes) for s in saved] == [
        ("primals_3", "[32, 256]", 32768),
        ("primals_4", "[1024, 256]", 1048576),
        ("getitem_1", "[32, 1]", 128),
        ("rsqrt", "[32, 1]", 128),
        ("add_1", "[32, 256]", 32768),
        ("addmm", "[32, 1024]", 131072),
    ]
    nodes = {n.name: n.module for n in r.compile("0/0").stages.capture.graph.nodes}
    assert (nodes["layer_norm"], nodes["linear"]) == ("norm", "up")

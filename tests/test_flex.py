"""FlexAttention: the recorded H100 call (notebooks/data/make_flex_data.py) read without a GPU,
checked against torch's own TORCH_TRACE of the same run; the block mask summary on CPU."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch
from _torch_trace import read_log
from torch.nn.attention.flex_attention import create_block_mask

import compiler
from compiler.analysis import flex_calls, flex_summary

HERE = Path(__file__).parent
REPORT = HERE / "fixtures" / "reports" / "h100-torch211-flex-sliding-window.json.gz"
TRACE = HERE / "fixtures" / "traces" / "h100-torch211-flex.log.gz"
SCRIPT = HERE.parent / "notebooks" / "data" / "make_flex_data.py"
DEVICE_SCRIPT = "/work/main/out/flex/notebooks/data/make_flex_data.py"  # where it ran


def _line_after(marker: str) -> int:
    """The line after `marker` in the recording script (the body line torch names)."""
    return next(i for i, ln in enumerate(SCRIPT.read_text().splitlines(), 1) if marker in ln) + 1


def _torch_facts():
    """From the TORCH_TRACE: per compile id, the Triton kernels torch reports
    (triton_kernel_info), the kernels its output code says compute flex_attention, the
    graph op count (compilation_metrics) and the user functions named in the Dynamo graph."""
    kernels, flex_kernels, ops, named = {}, {}, {}, {}
    for meta, payload in read_log(str(TRACE)):
        cid = f"{meta.get('frame_id')}/{meta.get('frame_compile_id')}"
        art = meta.get("artifact", {}).get("name") if isinstance(meta.get("artifact"), dict) else None
        if art == "triton_kernel_info":
            kernels[cid] = sorted(json.loads(payload))
        elif "inductor_output_code" in meta:
            flex_kernels[cid] = re.findall(
                r"# Topologically Sorted Source Nodes: \[flex_attention\].*?\n(\w+) = async_compile\.triton",
                payload,
                re.S,
            )
        elif "compilation_metrics" in meta:
            ops[meta["compilation_metrics"]["compile_id"]] = meta["compilation_metrics"]["graph_op_count"]
        elif "dynamo_output_graph" in meta:
            named[cid] = re.findall(r"# File: (\S+):(\d+) in (\w+),", payload)
    return kernels, flex_kernels, ops, named


def test_recorded_flex_call_kernel_and_mods_match_torchs_trace():
    r = compiler.load(REPORT)
    assert (r.torch_version, r.device) == ("2.11.0+cu130", "cuda")
    kernels, flex_kernels, ops, named = _torch_facts()
    # the compiled call is Dynamo's frame 1; frame 0 is eager flex_attention's own Dynamo
    # capture of its HOP wrapper (backend "eager": no kernels), before the recording started
    assert [c.id for c in r.compiles] == ["1/0"]
    assert [k.name for k in r.kernels] == kernels["1/0"] == ["triton_tem_fused_flex_attention_0"]
    assert flex_kernels["1/0"] == ["triton_tem_fused_flex_attention_0"]
    assert r.compiles[0].metrics["graph_op_count"] == ops["1/0"] == 2
    (call,) = flex_calls(r)
    assert (call.compile_id, call.node, call.kernels) == ("1/0", "flex_attention", tuple(flex_kernels["1/0"]))
    assert (call.query, call.q_len, call.kv_len, call.block_size, call.block_grid) == (
        "f32[1, 2, 512, 64]",
        512,
        512,
        (128, 128),
        (4, 4),
    )
    sm, mm = call.score_mod, call.mask_mod
    assert (sm.subgraph, sm.function, sm.line) == (
        "score_mod_0",
        "distance_penalty",
        _line_after("def distance_penalty"),
    )
    assert (mm.subgraph, mm.function, mm.line) == (
        "mask_fn_0",
        "sliding_window_causal",
        _line_after("def sliding_window_causal"),
    )
    assert {(f, int(ln), fn) for f, ln, fn in named["1/0"] if f == DEVICE_SCRIPT} == {
        (sm.filename, sm.line, sm.function),
        (mm.filename, mm.line, mm.function),
    }
    lines = SCRIPT.read_text().splitlines()
    assert sm.code == (lines[sm.line - 1].strip(),) and mm.code == (lines[mm.line - 1].strip(),)
    assert mm.graph.lstrip().startswith("class mask_fn_0(torch.nn.Module):") and "le:" in mm.graph


def test_trace_load_finds_both_captures():
    tr = compiler.load_trace(TRACE)
    calls = flex_calls(tr)
    # eager flex_attention goes through Dynamo too (its HOP wrapper, no kernels)
    assert [(c.compile_id, c.kernels) for c in calls] == [
        ("0/0", ()),
        ("1/0", ("triton_tem_fused_flex_attention_0",)),
    ]
    assert calls[1] == flex_calls(compiler.load(REPORT))[0]


def test_flex_summary_is_torchs_block_mask():
    def sliding_window_causal(b, h, q_idx, kv_idx):
        return (q_idx >= kv_idx) & (q_idx - kv_idx <= 128)

    bm = create_block_mask(sliding_window_causal, 1, 1, 512, 512, device="cpu")
    s = flex_summary(bm)
    assert s.sparsity == bm.sparsity() == 56.25
    assert (s.shape, s.block_size, s.mask_mod) == ((1, 1, 512, 512), (128, 128), "sliding_window_causal")
    assert s.partial_blocks == tuple(bm.kv_num_blocks[0, 0].tolist()) == (1, 2, 2, 2)
    assert s.full_blocks == tuple(bm.full_kv_num_blocks[0, 0].tolist()) == (0, 0, 0, 0)
    assert s.picture == str(bm)
    with pytest.raises(TypeError, match="expects a BlockMask, got Tensor"):
        flex_summary(torch.ones(2))


def test_views_name_the_kernel_and_the_mods():
    import explorer

    r = compiler.load(REPORT)
    summary = explorer.text(r)
    sl, ml = _line_after("def distance_penalty"), _line_after("def sliding_window_causal")
    assert (
        "  [1/0] flex_attention f32[1, 2, 512, 64], 512×512 in 4×4 blocks of 128×128 → "
        "triton_tem_fused_flex_attention_0; score_mod distance_penalty (make_flex_data.py:"
        f"{sl}), mask_mod sliding_window_causal (make_flex_data.py:{ml})"
    ) in summary.splitlines()
    for stage in ("capture", "codegen"):
        view = explorer.text(r, stage, compile="1/0")
        assert f"score_mod            distance_penalty at {DEVICE_SCRIPT}:{sl} (subgraph score_mod_0)" in view
        assert "    class mask_fn_0(torch.nn.Module):" in view.splitlines()
        assert "kernels              triton_tem_fused_flex_attention_0" in view
    page = explorer.html(r)
    assert "sliding_window_causal" in page and "triton_tem_fused_flex_attention_0" in page

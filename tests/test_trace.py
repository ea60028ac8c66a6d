"""compiler.load_trace on recorded TORCH_TRACE logs (tests/fixtures/traces, see README there),
and on bad input. No compiles here: every test reads files."""

from __future__ import annotations

import dataclasses
import gzip
import os
import random
import re
import shutil
import warnings
from collections import Counter
from pathlib import Path

import pytest

import compiler
import explorer
from compiler.read._logfile import TraceTruncatedError, read_trace_file

TRACES = Path(__file__).parent / "fixtures" / "traces"
GPU_BREAKS = TRACES / "h100-torch211-breaks.log.gz"
GPU_GPT2 = TRACES / "h100-torch211-gpt2.log.gz"
GPU_CUDAGRAPHS = TRACES / "h100-torch211-cudagraphs.log.gz"
CPU_BREAKS = TRACES / "cpu-torch213-breaks.log.gz"

# where the scripts ran (the logs name these paths)
GPU_SCRIPT = "/work/steering/probes/gpu_traces.py"  # == make_gpu_traces.py, byte for byte
CPU_SCRIPT = "/work/main/tests/fixtures/traces/make_cpu_trace.py"
STAGE_NAMES = ("capture", "autograd", "decompose", "fuse", "codegen")


def _line_of(script: Path, needle: str) -> int:
    (line,) = [i for i, text in enumerate(script.read_text().splitlines(), 1) if needle in text]
    return line


BREAK_LINE_GPU = _line_of(TRACES / "make_gpu_traces.py", "if y.sum() > 0:")
BREAK_LINE_CPU = _line_of(TRACES / "make_cpu_trace.py", "if y.sum() > 0:")
_cache: dict[Path, compiler.Report] = {}


def load(path: Path) -> compiler.Report:
    if path not in _cache:
        _cache[path] = compiler.load_trace(path)
    return _cache[path]


def unknown_names(report: compiler.Report) -> Counter:
    return Counter(e.name for e in report.unknown_events)


def test_break_lines_are_the_recorded_ones():
    # checked by hand against the scripts; the logs were made from exactly these files
    assert (BREAK_LINE_GPU, BREAK_LINE_CPU) == (13, 15)


@pytest.mark.parametrize("path", [GPU_BREAKS, GPU_GPT2, GPU_CUDAGRAPHS, CPU_BREAKS], ids=lambda p: p.name)
def test_every_fixture_loads_and_round_trips(path, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # complete logs: no truncation warning
        report = compiler.load_trace(path)
    assert report.error is None
    assert report.source == f"torch-trace:{path}"
    assert report.schema_version == compiler.types.SCHEMA_VERSION
    assert all(c.status == "ok" for c in report.compiles)
    assert all(e.name and e.metadata for e in report.unknown_events)
    out = tmp_path / "report.json"
    report.to_json(out)
    assert compiler.load(out) == report


def test_plain_and_gzipped_logs_read_the_same(tmp_path):
    plain = tmp_path / "trace.log"
    plain.write_bytes(gzip.decompress(CPU_BREAKS.read_bytes()))
    a, b = list(read_trace_file(str(plain))), list(read_trace_file(str(CPU_BREAKS)))
    assert len(a) == len(b) == 861
    assert [(e.name, e.line, e.payload) for e in a] == [(e.name, e.line, e.payload) for e in b]


def test_the_garbage_collector_is_left_as_it_was(tmp_path):
    """Reading pauses Python's cyclic collector while it builds, then restores it, on a
    refused file too."""
    import gc

    bad = tmp_path / "bad.log"
    bad.write_text("not a log\n")
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            assert len(compiler.load_trace(CPU_BREAKS).compiles) == 4 and gc.isenabled() is enabled
            with pytest.raises(
                compiler.TraceFormatError, match=f"{re.escape(str(bad))}:1: not a TORCH_TRACE line"
            ):
                compiler.load_trace(bad)
            assert gc.isenabled() is enabled
    finally:
        gc.enable()


@pytest.mark.parametrize("block", [1000, 61])
def test_blocks_cut_anywhere_read_the_same(tmp_path, monkeypatch, block):
    """The reader takes the file in blocks of whole lines and a payload's lines at once: a
    block ending inside a payload, or holding part of one line, reads as torch wrote it."""
    from compiler.read import _logfile
    from tests._torch_trace import read_log

    plain = tmp_path / "trace.log"
    plain.write_bytes(gzip.decompress(GPU_BREAKS.read_bytes()))
    whole = [(e.name, e.line, e.payload) for e in read_trace_file(str(plain))]
    monkeypatch.setattr(_logfile, "_BLOCK", block)
    events = list(read_trace_file(str(plain)))
    assert [(e.name, e.line, e.payload) for e in events] == whole
    assert [(e.metadata, e.payload) for e in events] == read_log(str(plain))  # torch's own
    assert len(events) == 910 and not any(e.damaged for e in events)


# ---- H100: graph break + backward + recompile ------------------------------------------------


def test_gpu_breaks_report_header_and_frames():
    r = load(GPU_BREAKS)
    assert r.torch_version == "2.11.0+cu130"
    assert r.device == "cuda"
    assert [(f.id, f.name, f.filename, f.line, f.compiles, f.recompile_limit_hit) for f in r.frames] == [
        (0, "forward", GPU_SCRIPT, 11, 2, False),
        (1, f"torch_dynamo_resume_in_forward_at_{BREAK_LINE_GPU}", GPU_SCRIPT, BREAK_LINE_GPU, 2, False),
    ]
    assert [c.id for c in r.compiles] == ["0/0", "1/0", "0/1", "1/1"]
    for c in r.compiles:
        assert (c.status, c.error, c.cache_entry) == ("ok", None, True)
        assert c.cache == {"aotautograd": "miss", "fx_graph": "miss"}
        assert all(getattr(c.stages, s) is not None for s in STAGE_NAMES)
        ag = c.stages.autograd
        assert ag.forward is not None and ag.backward is not None and ag.joint is not None
        assert ag.inference is None
        assert [o.role for o in c.stages.codegen.output_code] == ["forward", "backward"]
        assert [rg.role for rg in c.stages.decompose.post_grad] == ["forward", "backward"]
        assert c.compile_time_s > 0 and c.stage_times_s.keys() == set(STAGE_NAMES)
    assert r.compile("0/0").metrics["guard_count"] == 33
    assert r.compile("1/0").metrics["guard_count"] == 31


def test_gpu_breaks_graph_break():
    (b,) = load(GPU_BREAKS).graph_breaks
    assert b.type == "Data-dependent branching"
    assert (b.filename, b.line) == (GPU_SCRIPT, BREAK_LINE_GPU)
    assert b.count == 2
    assert b.compile_id == "0/0" and b.compile_ids == ("0/0", "0/1")
    assert b.gb_id == "GB0170"
    assert b.explanation == (
        "Detected data-dependent branching (e.g. `if my_tensor.sum() > 0:`). "
        "Dynamo does not support tracing dynamic control flow."
    )
    assert b.hints == (
        "This graph break is fundamental - it is unlikely that Dynamo will ever be able to trace "
        "through your code. Consider finding a workaround.",
        "Use `torch.cond` to express dynamic control flow.",
    )
    assert b.reason.startswith("Data-dependent branching\n  Explanation: Detected data-dependent")
    inner = b.user_stack[-1]
    assert (inner.filename, inner.line, inner.name) == (GPU_SCRIPT, BREAK_LINE_GPU, "forward")
    assert inner.code == "if y.sum() > 0:          # data-dependent branch: graph break"
    # the rest of the stack: the script's caller lines and torch's nn.Module plumbing
    assert [(f.line, f.name) for f in b.user_stack if f.filename == GPU_SCRIPT] == [
        (37, "<module>"),
        (19, "breaks_recompile_backward"),
        (13, "forward"),
    ]


def test_gpu_breaks_recompiles():
    r = load(GPU_BREAKS)
    assert [(rc.compile_id, rc.reasons, rc.failed_entry) for rc in r.recompiles] == [
        ("0/1", ("0/0: tensor 'x' requires_grad mismatch. expected requires_grad=1",), "0/0"),
        ("1/1", ("1/0: tensor 'y' size mismatch at index 0. expected 8, actual 16",), "1/0"),
    ]
    rc0, rc1 = r.recompiles
    assert rc0.failing_guard.startswith("TENSOR_MATCH: check_tensor(L['x'], Tensor, ")
    assert "requires_grad=True, size=[8, 64], stride=[64, 1])" in rc0.failing_guard
    assert rc1.failing_guard.startswith("TENSOR_MATCH: check_tensor(L['y'], Tensor, ")
    assert rc0.entry_guards == r.compile("0/0").stages.capture.guards
    assert rc1.entry_guards == r.compile("1/0").stages.capture.guards
    assert r.compile("0/1").metrics["recompile_reason"] == rc0.reasons[0]
    # the recompiled frame went dynamic in the batch dimension
    sym = r.compile("0/1").stages.capture.symbols
    assert [s.symbol for s in sym] == ["s77"] and sym[0].source == "L['x'].size()[0]"


def test_gpu_breaks_kernels():
    r = load(GPU_BREAKS)
    assert [(k.compile_id, k.name, k.role) for k in r.kernels] == [
        ("0/0", "triton_per_fused_addmm_gt_relu_sum_threshold_backward_0", "forward"),
        ("0/0", "triton_per_fused_sum_threshold_backward_0", "backward"),
        ("1/0", "triton_poi_fused_mul_0", "forward"),
        ("1/0", "triton_per_fused__softmax_exp_prepare_softmax_online_sub_1", "forward"),
        ("1/0", "triton_per_fused__softmax_backward_data_0", "backward"),
        ("1/0", "triton_per_fused_sum_1", "backward"),
        ("1/0", "triton_poi_fused_mul_2", "backward"),
        ("0/1", "triton_red_fused_addmm_gt_relu_sum_threshold_backward_0", "forward"),
        ("0/1", "triton_red_fused_sum_threshold_backward_0", "backward"),
        ("1/1", "triton_poi_fused_mul_0", "forward"),
        ("1/1", "triton_per_fused__softmax_exp_prepare_softmax_online_sub_1", "forward"),
        ("1/1", "triton_per_fused__softmax_backward_data_0", "backward"),
        ("1/1", "triton_red_fused_sum_1", "backward"),
        ("1/1", "triton_poi_fused_mul_2", "backward"),
    ]
    for k in r.kernels:
        assert k.language == "triton"
        assert "@triton.jit" in k.source and f"def {k.name}(" in k.source
        assert k.metadata["compile_time_us"] > 0
        assert {"autotune_cache_state", "compile_time_us"} < k.metadata.keys()
        assert ("only_config" in k.metadata) != ("num_configs" in k.metadata)
        assert k.nodes, k.name  # every Triton kernel has torch's source-nodes comment
    first = r.kernels[0]
    assert first.metadata == {
        "autotune_cache_state": "only 1 config",
        "only_config": [["XBLOCK", 1], ["num_warps", 4], ["num_stages", 1]],
        "compile_time_us": 330793,
    }
    assert first.nodes == ("linear", "y", "sum_1", "gt", "le")
    assert first.aten_ops == ("aten.addmm", "aten.relu", "aten.sum", "aten.gt", "aten.threshold_backward")
    k = r.kernels_of("1/0")[1]
    assert (k.nodes, k.aten_ops) == (
        ("softmax",),
        ("prims.prepare_softmax_online", "aten.sub", "aten.exp", "aten._softmax"),
    )
    assert (k.metadata["num_configs"], k.metadata["autotune_cache_state"]) == (2, "miss")
    assert r.compile("1/0").stages.codegen.kernel_names == tuple(x.name for x in r.kernels_of("1/0"))
    kn = r.compile("0/0").stages.fuse.kernel_nodes
    assert [(x.kernel, x.nodes) for x in kn] == [(x.name, x.nodes) for x in r.kernels_of("0/0")]


def test_gpu_breaks_graphs():
    c = load(GPU_BREAKS).compile("0/0")
    dyn = c.stages.capture.graph
    assert [(n.name, n.op, n.target) for n in dyn.nodes] == [
        ("L_self_modules_a_parameters_weight_", "placeholder", "L_self_modules_a_parameters_weight_"),
        ("L_self_modules_a_parameters_bias_", "placeholder", "L_self_modules_a_parameters_bias_"),
        ("L_x_", "placeholder", "L_x_"),
        ("linear", "call_function", "torch._C._nn.linear"),
        ("y", "call_function", "torch.relu"),
        ("sum_1", "call_method", "sum"),
        ("gt", "call_function", "operator.gt"),
        ("output", "output", "output"),
    ]
    linear = dyn.nodes[3]
    assert (linear.module, linear.dtype, linear.shape, linear.device) == ("a", "f32", "[8, 64]", "cuda:0")
    assert linear.source == f"{GPU_SCRIPT}:12"
    ag = c.stages.autograd
    assert [(s.name, s.dtype, s.shape, s.bytes) for s in ag.saved_tensors] == [
        ("primals_1", "f32", "[64, 64]", 16384),
        ("primals_3", "f32", "[8, 64]", 2048),
        ("le", "b8", "[8, 64]", 512),
    ]
    assert ag.forward.nodes[-1].args == ("gt", "relu", "primals_1", "primals_3", "le")  # outputs, saved
    # recompiled with a dynamic batch: symbolic shapes have no byte size
    saved = load(GPU_BREAKS).compile("0/1").stages.autograd.saved_tensors
    assert [(s.name, s.shape, s.bytes) for s in saved] == [
        ("primals_3", None, None),
        ("primals_4", "[s77, 64]", None),
        ("le", "[s77, 64]", None),
    ]


def test_gpu_breaks_unknown_events_are_kept():
    r = load(GPU_BREAKS)
    assert unknown_names(r) == {}
    # runtime metrics (first-call costs) are kept per compile
    runtime = {c.id: [m["event"] for m in c.metrics.get("runtime", [])] for c in r.compiles}
    assert runtime == {
        "0/0": ["bwd_compilation_metrics_runtime"],
        "1/0": ["compilation_metrics_runtime", "bwd_compilation_metrics_runtime"],
        "0/1": [],
        "1/1": ["compilation_metrics_runtime"],
    }


# ---- H100: GPT-2 with SDPA ---------------------------------------------------------------------

GPT2_KERNELS = [
    "triton_red_fused__to_copy_add_arange_embedding_native_layer_norm_unsqueeze_view_0",
    "triton_poi_fused__to_copy_1",
    "triton_poi_fused__to_copy_2",
    "triton_poi_fused_cat_split_transpose_view_3",
    "triton_poi_fused_cat_split_transpose_view_4",
    "triton_poi_fused__scaled_dot_product_cudnn_attention_add_arange_expand_le_scalar_tensor_split_transpose_unsqueeze_view_where_5",
    "triton_poi_fused__to_copy_6",
    "triton_poi_fused__to_copy_7",
    "triton_per_fused__to_copy_add_arange_embedding_native_layer_norm_unsqueeze_view_8",
    "triton_poi_fused__to_copy_9",
    "triton_poi_fused__to_copy_10",
    "triton_poi_fused__to_copy_add_mul_pow_tanh_view_11",
    "triton_per_fused__to_copy_add_arange_embedding_native_layer_norm_unsqueeze_view_12",
    "triton_per_fused__to_copy_add_native_layer_norm_view_13",
    "triton_per_fused__to_copy_add_native_layer_norm_view_14",
    "triton_poi_fused__to_copy_15",
]


def test_gpt2_one_inference_compile():
    r = load(GPU_GPT2)
    assert (r.torch_version, r.device) == ("2.11.0+cu130", "cuda")
    (frame,) = r.frames
    assert (frame.name, frame.line, frame.compiles) == ("wrapper", 933, 1)
    assert frame.filename.endswith("/site-packages/transformers/utils/generic.py")
    (c,) = r.compiles
    assert (c.id, c.status) == ("0/0", "ok")
    assert r.graph_breaks == () and r.recompiles == ()
    ag = c.stages.autograd
    assert ag.inference is not None
    assert (ag.forward, ag.backward, ag.joint, ag.saved_tensors) == (None, None, None, ())
    assert [o.role for o in c.stages.codegen.output_code] == ["inference"]
    assert [rg.role for rg in c.stages.decompose.post_grad] == ["inference"]
    assert (c.metrics["graph_op_count"], c.metrics["guard_count"]) == (113, 738)
    assert {"bf16", "f32", "i64", "b8"} <= {n.dtype for n in ag.inference.nodes}  # autocast
    wte = c.stages.capture.graph.nodes[1]
    assert (wte.name, wte.module) == (
        "L_self_modules_transformer_modules_wte_parameters_weight_",
        "transformer.wte",
    )


def test_gpt2_kernels():
    r = load(GPU_GPT2)
    assert [k.name for k in r.kernels] == GPT2_KERNELS
    assert {(k.compile_id, k.language, k.role) for k in r.kernels} == {("0/0", "triton", "inference")}
    assert all("compile_time_us" in k.metadata and k.nodes for k in r.kernels)
    assert sum("only_config" in k.metadata for k in r.kernels) == 5
    assert r.kernels[-1].nodes == ("logits",)


def test_gpt2_sdpa():
    c = load(GPU_GPT2).compile("0/0")
    # Dynamo records the torch call; AOT/post-grad graphs the cuDNN attention op it dispatched to
    assert c.stages.decompose.ops_before["torch._C._nn.scaled_dot_product_attention"] == 2
    sdpa = "torch.ops.aten._scaled_dot_product_cudnn_attention.default"
    assert c.stages.decompose.ops_after[sdpa] == 2
    assert [n.target for n in c.stages.autograd.inference.nodes if "scaled_dot_product" in n.target] == [
        sdpa
    ] * 2
    assert not any("flash" in op or "efficient" in op for op in c.stages.decompose.ops_after)
    # SDPA is not a Triton kernel: the wrapper calls the ATen op; the mask is one fused kernel
    wrapper = c.stages.codegen.output_code[0].code
    assert wrapper.count(f"= {sdpa}(") == 2
    (mask,) = [k for k in load(GPU_GPT2).kernels if "attention" in k.name]
    assert mask.name == GPT2_KERNELS[5]
    assert mask.aten_ops[-1] == "aten._scaled_dot_product_cudnn_attention"
    assert mask.nodes[-3:] == ("attention_mask", "attention_mask_1", "attn_output")


def test_gpt2_side_effects_are_read_as_torch_wrote_them():
    """torch's ``dynamo_side_effects`` (one message per object Dynamo's code mutates after the
    graph, each mutation's stack after it) is read into the capture stage, not kept raw: the
    objects, their sources and each mutation's innermost frame, as torch's own log says them."""
    from tests._torch_trace import read_log

    r = load(GPU_GPT2)
    assert "artifact:dynamo_side_effects" not in unknown_names(r)
    (payload,) = [
        p
        for m, p in read_log(str(GPU_GPT2))
        if (m.get("artifact") or {}).get("name") == "dynamo_side_effects"
    ]
    messages = payload.split("\n\n" + "=" * 40 + "\n\n")
    effects = r.compile("0/0").stages.capture.side_effects
    assert [e.type for e in effects] == [re.match(r"Mutating object of type (\S+)", m)[1] for m in messages]
    assert [e.type for e in effects] == [
        "CompileableContextVar", "DynamicCache", "DynamicLayer", "DynamicLayer",
        "CausalLMOutputWithCrossAttentions", "CausalLMOutputWithCrossAttentions",
    ]  # fmt: skip
    assert [e.source for e in effects] == [
        "G['__import_transformers_dot_utils_dot_output_capturing']._active_collector",
        *["created in torch.compile region"] * 3,
        None,
        "created in torch.compile region",
    ]
    for e, m in zip(effects, messages):  # one site per stack: its last frame, with its code
        stacks = re.split(r"^ *\*{8}$", m, flags=re.M)
        last = [
            re.findall(r'^ *File "([^"]+)", line (\d+), in (\S+)\n(?! *File )(.*)', s, re.M)[-1]
            for s in stacks
        ]
        assert [(f.filename, f.line, f.name, f.code) for f in e.sites] == [
            (file, int(line), fn, code.strip()) for file, line, fn, code in last
        ]
    assert [(f.filename.rsplit("/", 1)[1], f.line) for f in effects[0].sites] == [
        ("output_capturing.py", 82), ("output_capturing.py", 83),
        ("output_capturing.py", 90), ("output_capturing.py", 91),
    ]  # fmt: skip
    text = explorer.text(r, "capture", compile="0/0")
    assert "side effects: objects Dynamo's code mutates after the graph, in Python" in text
    assert re.search(
        r"^CompileableContextVar +G\[\S+ +4 +transformers/utils/output_capturing.py:82, 83, 90, 91$",
        text,
        re.M,
    )
    assert "events kept raw" not in explorer.text(r, "summary")


# ---- H100: mode="reduce-overhead" (CUDA graphs) --------------------------------------------------


def test_cudagraphs_report():
    r = load(GPU_CUDAGRAPHS)
    assert (r.torch_version, r.device) == ("2.11.0+cu130", "cuda")
    assert [(f.name, f.filename, f.line, f.compiles) for f in r.frames] == [("f", GPU_SCRIPT, 30, 1)]
    (c,) = r.compiles
    assert (c.id, c.status) == ("0/0", "ok")
    assert c.stages.autograd.inference is not None and c.stages.autograd.forward is None
    assert c.stages.decompose.ops_after == {
        "torch.ops.aten.mul.Tensor": 3,
        "torch.ops.aten.add.Tensor": 1,
        "torch.ops.aten.erf.default": 1,
        "torch.ops.aten.mm.default": 1,
        "torch.ops.aten.sum.dim_IntList": 1,
    }
    (k,) = r.kernels
    assert (k.compile_id, k.name, k.language, k.role) == (
        "0/0",
        "triton_per_fused_gelu_sum_0",
        "triton",
        "inference",
    )
    assert (k.nodes, k.aten_ops) == (("gelu", "sum_1"), ("aten.gelu", "aten.sum"))
    assert k.metadata == {"autotune_cache_state": "miss", "num_configs": 3, "compile_time_us": 985315}
    assert r.graph_breaks == () and r.recompiles == ()


def test_cudagraphs_what_shows_of_the_cuda_graphs():
    r = load(GPU_CUDAGRAPHS)
    # CUDA-graph recording is timed by torch as phases of the compile...
    phases = r.compile("0/0").phase_times_s
    assert {"cudagraphify.get_container", "CUDAGraphNode.record"} <= phases.keys()
    # ...and as runtime metrics, kept per compile (two: warm-up/record, then replay set-up)
    assert unknown_names(r) == {}
    runtime = r.compile("0/0").metrics["runtime"]
    assert [m["runtime_cudagraphify_time_us"] for m in runtime] == [11374, 1421]
    assert runtime[0]["runtime_triton_autotune_time_us"] == 47839
    assert {m["compile_id"] for m in runtime} == {"0/0"}
    # ...and in the wrapper: Inductor puts the CUDA-graphable part in a graph partition
    wrapper = r.compile("0/0").stages.codegen.output_code[0].code
    assert "def partition_0(args):" in wrapper and "Runner(partitions=[partition_0,])" in wrapper
    breaks_wrapper = load(GPU_BREAKS).compile("0/0").stages.codegen.output_code[0].code
    assert "Runner(partitions=[])" in breaks_wrapper


# ---- CPU, torch 2.13: graph break + backward + recompile, C++ kernels ----------------------------


def test_cpu_report():
    r = load(CPU_BREAKS)
    assert (r.torch_version, r.device) == ("2.13.0+cpu", "cpu")
    assert [(f.id, f.name, f.filename, f.line, f.compiles) for f in r.frames] == [
        (0, "f", CPU_SCRIPT, 13, 2),
        (1, f"torch_dynamo_resume_in_f_at_{BREAK_LINE_CPU}", CPU_SCRIPT, BREAK_LINE_CPU, 2),
    ]
    assert [c.id for c in r.compiles] == ["0/0", "1/0", "0/1", "1/1"]
    for c in r.compiles:
        assert c.status == "ok" and c.cache == {}  # TORCHINDUCTOR_FORCE_DISABLE_CACHES=1
        assert all(getattr(c.stages, s) is not None for s in STAGE_NAMES)
        assert [o.role for o in c.stages.codegen.output_code] == ["forward", "backward"]


def test_cpu_graph_break():
    (b,) = load(CPU_BREAKS).graph_breaks
    assert (b.type, b.filename, b.line, b.count) == (
        "Data-dependent branching",
        CPU_SCRIPT,
        BREAK_LINE_CPU,
        2,
    )
    assert (b.compile_id, b.compile_ids, b.gb_id) == ("0/0", ("0/0", "0/1"), "GB0170")
    # torch 2.13 explains where the condition came from
    assert "The branch condition involves a tensor computed as follows:" in b.explanation
    assert b.hints[-1] == "Use `torch.cond` to express dynamic control flow."
    assert [(f.line, f.name, f.code) for f in b.user_stack] == [
        (23, "<module>", "cf(torch.randn(8, 16), w).sum().backward()"),
        (BREAK_LINE_CPU, "f", "if y.sum() > 0:  # data-dependent branch: graph break"),
    ]


def test_cpu_recompiles():
    r = load(CPU_BREAKS)
    assert [(rc.compile_id, rc.reasons, rc.failed_entry) for rc in r.recompiles] == [
        ("0/1", ("0/0: tensor 'x' size mismatch at index 0. expected 8, actual 12",), "0/0"),
        ("1/1", ("1/0: tensor 'y' size mismatch at index 0. expected 8, actual 12",), "1/0"),
    ]
    assert r.recompiles[0].failing_guard.startswith("TENSOR_MATCH: check_tensor(L['x'], Tensor, ")
    assert r.recompiles[1].failing_guard.startswith("TENSOR_MATCH: check_tensor(L['y'], Tensor, ")
    cap = r.compile("0/1").stages.capture
    (sym,) = cap.symbols
    assert (sym.symbol, sym.val, sym.vr, sym.source) == ("s77", "12", "[2, int_oo]", "L['x'].size()[0]")
    # torch's user stack of the symbol: the line of the script that read the dynamic size
    assert (os.path.basename(sym.user_stack[-1].filename), sym.user_stack[-1].name) == (
        "make_cpu_trace.py",
        "f",
    )
    assert cap.shape_guards == ("16*s77 <= 4096",)


def test_cpu_kernels():
    r = load(CPU_BREAKS)
    fw, bw = "cpp_fused_gt_relu_sum_threshold_backward_0", "cpp_fused_threshold_backward_0"
    fw1, bw1 = "cpp_fused_add_mul_sin_sum_0", "cpp_fused_cos_expand_mul_unsqueeze_0"
    assert [(k.compile_id, k.name, k.role) for k in r.kernels] == [
        ("0/0", fw, "forward"),
        ("0/0", bw, "backward"),
        ("1/0", fw1, "forward"),
        ("1/0", bw1, "backward"),
        ("0/1", fw, "forward"),
        ("0/1", bw, "backward"),
        ("1/1", fw1, "forward"),
        ("1/1", bw1, "backward"),
    ]
    for k in r.kernels:
        assert k.language == "cpp"
        assert k.source.startswith("#include <torch/csrc/inductor/cpp_prefix.h>")
        assert 'extern "C"' in k.source
        # torch 2.13 writes no source-nodes comment for C++ kernels and no triton_kernel_info
        assert (k.nodes, k.aten_ops, k.metadata) == ((), (), {})
    # the static first compile has fixed loop bounds, the dynamic recompile a symbolic one
    assert "static_cast<int64_t>(128L)" in r.kernels_of("0/0")[0].source
    assert "ks0" in r.kernels_of("0/1")[0].source


def test_cpu_graphs():
    r = load(CPU_BREAKS)
    ag = r.compile("0/0").stages.autograd
    assert [(s.name, s.dtype, s.shape, s.bytes) for s in ag.saved_tensors] == [
        ("le", "b8", "[8, 16]", 128),
        ("permute", "f32", "[16, 8]", 512),
    ]
    assert [(n.name, n.target) for n in ag.forward.nodes if n.op == "call_function"][:2] == [
        ("mm", "torch.ops.aten.mm.default"),
        ("relu", "torch.ops.aten.relu.default"),
    ]
    assert ag.forward.nodes[2].source == f"{CPU_SCRIPT}:14"
    dyn = r.compile("0/1").stages.capture.graph
    assert [n.name for n in dyn.nodes if n.op == "placeholder"] == ["s77", "L_x_", "L_w_"]
    assert r.compile("1/0").stages.decompose.ops_after["torch.ops.aten.sin.default"] == 1


def test_cpu_unknown_events_are_kept():
    r = load(CPU_BREAKS)
    assert unknown_names(r) == {"artifact:torch_version": 1}
    (ev,) = r.unknown_events
    assert ev.compile_id is None and '"pytorch_version": "2.13.0+cpu"' in ev.payload


# ---- bad input ------------------------------------------------------------------------------


def _lines() -> list[bytes]:
    return gzip.decompress(CPU_BREAKS.read_bytes()).split(b"\n")


def _event_starts(lines: list[bytes], marker: bytes) -> list[int]:
    return [i + 1 for i, ln in enumerate(lines) if not ln.startswith(b"\t") and marker in ln]


def test_nonexistent_path():
    with pytest.raises(FileNotFoundError, match="no such file"):
        compiler.load_trace("/nonexistent/trace/dir")


def test_empty_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="no TORCH_TRACE logs"):
        compiler.load_trace(tmp_path)


def test_empty_file(tmp_path):
    p = tmp_path / "empty.log"
    p.write_bytes(b"")
    with pytest.raises(compiler.TraceFormatError, match=re.escape(f"{p}: empty file")):
        compiler.load_trace(p)


def test_random_bytes(tmp_path):
    p = tmp_path / "garbage.log"
    data = random.Random(0).randbytes(4096)
    assert not data.startswith(b"\x1f\x8b")
    p.write_bytes(data)
    with pytest.raises(compiler.TraceFormatError, match=re.escape(f"{p}:1: ")):
        compiler.load_trace(p)


def test_text_that_is_not_a_log(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("hello\nthis is not a TORCH_TRACE log\n")
    with pytest.raises(compiler.TraceFormatError, match=re.escape(f"{p}:1: not a TORCH_TRACE line: 'hello'")):
        compiler.load_trace(p)


def test_garbage_in_the_middle_is_an_error(tmp_path):
    lines = _lines()
    p = tmp_path / "t.log"
    p.write_bytes(b"\n".join([*lines[:99], b"not a log line", *lines[99:]]))
    with pytest.raises(compiler.TraceFormatError, match=re.escape(f"{p}:100: not a TORCH_TRACE line")) as e:
        compiler.load_trace(p)
    assert not isinstance(e.value, TraceTruncatedError)
    # a damaged event line, even the last complete one, is corruption too
    start = _event_starts(lines, b'"dynamo_output_graph"')[0]
    bad = lines[start - 1].replace(b"{", b"[", 1)
    p.write_bytes(b"\n".join([*lines[: start - 1], bad, *lines[start:]]))
    with pytest.raises(compiler.TraceFormatError, match=re.escape(f"{p}:{start}: bad JSON in event")):
        compiler.load_trace(p)


def test_bad_gzip(tmp_path):
    p = tmp_path / "t.log.gz"
    p.write_bytes(b"\x1f\x8b" + b"\x00" * 64)
    with pytest.raises(compiler.TraceFormatError, match=re.escape(f"{p}:1: corrupt gzip data")):
        compiler.load_trace(p)


def _load_truncated(p: Path, start: int) -> compiler.Report:
    """A truncated log loads what came before the cut, warns and names the line; strict raises."""
    msg = f"{p}:{start}: the log is truncated at "
    with pytest.warns(UserWarning, match=re.escape(msg)):
        report = compiler.load_trace(p)
    assert report.error.startswith(msg)
    assert f"the events before line {start} are complete" in report.error
    with pytest.raises(TraceTruncatedError, match=re.escape(msg)) as e:
        compiler.load_trace(p, strict=True)
    assert isinstance(e.value, compiler.TraceFormatError) and e.value.line == start
    return report


def _complete_events_before(start: int) -> list:
    return [(e.name, e.line, e.payload) for e in read_trace_file(str(CPU_BREAKS)) if e.line < start]


@pytest.mark.parametrize("cut", ["mid-line", "line-boundary", "event-line"])
def test_truncated_in_a_payload(tmp_path, cut):
    lines = _lines()
    start = _event_starts(lines, b'"inductor_output_code"')[2]  # the backward of 1/0
    assert lines[start + 39].startswith(b"\t")
    if cut == "mid-line":
        data = b"\n".join(lines[: start + 39]) + b"\n" + lines[start + 39][:10]
    elif cut == "line-boundary":  # only the payload's MD5 (has_payload) tells it is incomplete
        data = b"\n".join(lines[: start + 39]) + b"\n"
    else:
        data = b"\n".join(lines[: start - 1]) + b"\n" + lines[start - 1][:50]
    p = tmp_path / "dedicated_log_torch_trace_abc.log"
    p.write_bytes(data)
    r = _load_truncated(p, start)
    # nothing before the cut is lost
    events = []
    with pytest.raises(TraceTruncatedError):
        for ev in read_trace_file(str(p)):
            events.append((ev.name, ev.line, ev.payload))
    assert events == _complete_events_before(start)
    full = load(CPU_BREAKS)
    assert [c.id for c in r.compiles] == ["0/0", "1/0"]
    assert all(c.status == "ok" for c in r.compiles)
    assert r.kernels == (full.kernels[0], full.kernels[2])  # the two forwards; backwards not yet
    assert r.graph_breaks == (dataclasses.replace(full.graph_breaks[0], count=1, compile_ids=("0/0",)),)
    assert r.torch_version == "2.13.0+cpu"


def test_truncated_during_a_compile(tmp_path):
    lines = _lines()
    start = _event_starts(lines, b'"aot_joint_graph"')[2]  # compile 0/1, before its metrics
    p = tmp_path / "t.log"
    p.write_bytes(b"\n".join(lines[: start + 3]) + b"\n")
    r = _load_truncated(p, start)
    assert [(c.id, c.status) for c in r.compiles] == [("0/0", "ok"), ("1/0", "ok"), ("0/1", "failed")]
    c = r.compile("0/1")
    assert (c.error, c.failed_stage) == ("compile did not finish (no compilation_metrics event)", "autograd")
    assert r.graph_breaks[0].compile_ids == ("0/0", "0/1")
    assert r.recompiles == ()  # 0/1 never installed code


def test_truncated_gzip(tmp_path):
    gz = CPU_BREAKS.read_bytes()
    p = tmp_path / "t.log.gz"
    p.write_bytes(gz[: len(gz) // 2])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = compiler.load_trace(p)
    (msg,) = [str(x.message) for x in w]
    m = re.match(
        rf"{re.escape(str(p))}:(\d+): the log is truncated at line \1: the gzip stream ends early", msg
    )
    assert m, msg
    start = int(m.group(1))
    assert 1000 < start < 12000
    _load_truncated(p, start)
    full = load(CPU_BREAKS)
    assert len(r.compiles) >= 2
    assert r.compiles[0].stages == full.compiles[0].stages  # its backward metrics come later
    assert r.kernels == full.kernels[: len(r.kernels)]


def test_cut_inside_the_first_event_is_an_error(tmp_path):
    lines = _lines()
    p = tmp_path / "t.log"
    p.write_bytes(lines[0] + b"\n" + lines[1][:5])  # first event has a payload
    assert lines[1].startswith(b"\t")
    with pytest.raises(TraceTruncatedError, match=re.escape(f"{p}:1: the log is truncated")):
        compiler.load_trace(p)


def test_carriage_return_in_a_payload(tmp_path):
    import hashlib
    import json

    payload = "def f():\r\n    return 1\rsecond"
    meta = {
        "artifact": {"name": "fx_graph_runnable", "encoding": "string"},
        "frame_id": 0,
        "frame_compile_id": 0,
        "attempt": 0,
        "has_payload": hashlib.md5(payload.encode()).hexdigest(),
    }
    p = tmp_path / "t.log"
    head = "V1122 08:16:07.449000 399 torch/_dynamo/utils.py:2126] "
    p.write_bytes(
        (head + json.dumps(meta) + "".join("\n\t" + ln for ln in payload.split("\n")) + "\n").encode()
    )
    (ev,) = read_trace_file(str(p))
    assert ev.payload == payload


def _rank_dir(tmp_path: Path) -> Path:
    d = tmp_path / "trace"
    d.mkdir()
    (d / "dedicated_log_torch_trace_rank_0_k3j2x1.log").write_bytes(gzip.decompress(CPU_BREAKS.read_bytes()))
    (d / "dedicated_log_torch_trace_rank_1_p9q8r7.log").write_bytes(
        gzip.decompress(GPU_CUDAGRAPHS.read_bytes())
    )
    return d


def test_rank_directory(tmp_path):
    d = _rank_dir(tmp_path)
    both = compiler.load_trace(d)  # default: every rank, one multi-rank report
    assert [(r.rank, r.world_size) for r in both.ranks] == [(0, 2), (1, 2)]
    assert (both.rank, both.compiles) == (0, both.ranks[0].compiles)  # the lowest rank's own
    r0 = compiler.load_trace(d, rank=0)
    assert r0.source == f"torch-trace:{d / 'dedicated_log_torch_trace_rank_0_k3j2x1.log'}"
    assert (r0.torch_version, len(r0.compiles)) == ("2.13.0+cpu", 4)
    assert r0.compiles == both.ranks[0].compiles
    r1 = compiler.load_trace(d, rank=1)
    assert r1.compiles == both.ranks[1].compiles
    assert r1.source.endswith("dedicated_log_torch_trace_rank_1_p9q8r7.log")
    assert (r1.torch_version, [k.name for k in r1.kernels]) == (
        "2.11.0+cu130",
        ["triton_per_fused_gelu_sum_0"],
    )
    with pytest.raises(ValueError, match=re.escape("no log for rank 2; ranks present: [0, 1]")):
        compiler.load_trace(d, rank=2)


def test_a_damaged_rank_does_not_stop_another(tmp_path):
    d = _rank_dir(tmp_path)
    bad = d / "dedicated_log_torch_trace_rank_1_p9q8r7.log"
    bad.write_bytes(b"garbage\n")
    assert len(compiler.load_trace(d, rank=0).compiles) == 4
    with pytest.raises(compiler.TraceFormatError, match=re.escape(f"{bad}:1: not a TORCH_TRACE line")):
        compiler.load_trace(d, rank=1)  # that rank alone: the bad line is named
    with pytest.warns(UserWarning, match=re.escape(f"rank 1 not loaded: {bad}:1: not a TORCH_TRACE line")):
        every = compiler.load_trace(d)  # every rank: those that load (tests/test_ranks_damaged.py)
    assert (every.rank, every.world_size, len(every.compiles), every.ranks) == (0, 2, 4, ())
    assert every.damaged_ranks == (f"rank 1: {bad}:1: not a TORCH_TRACE line: 'garbage'",)


def test_single_log_directory(tmp_path):
    d = tmp_path / "trace"
    d.mkdir()
    log = d / "dedicated_log_torch_trace_zz.log"
    shutil.copy(GPU_CUDAGRAPHS, log)  # gzipped content under torch's plain name: sniffed
    assert compiler.load_trace(d) == dataclasses.replace(load(GPU_CUDAGRAPHS), source=f"torch-trace:{log}")


def test_an_older_report_names_the_side_effects_it_kept_raw():
    """A report written before side effects were read (the shipped H100 GPT-2 recording) keeps
    torch's two dynamo_side_effects events raw: its summary says so in one line, and why they
    are not in their view; an event no build reads stays "not mapped"."""
    from compiler._viewer import reads_event

    shipped = Path(__file__).resolve().parent.parent / "notebooks" / "data" / "h100-gpt2-train-bench.json.gz"
    r = compiler.load(shipped)
    assert unknown_names(r) == {"artifact:dynamo_side_effects": 2}
    assert reads_event("artifact:dynamo_side_effects") and not reads_event("artifact:torch_version")
    raw = [ln.strip() for ln in explorer.text(r, "summary").splitlines() if "kept raw" in ln]
    assert raw == [
        "2 events kept raw when this report was written, read now: artifact:dynamo_side_effects — load the "
        "TORCH_TRACE log or record again to see them in their view; the Unmapped events tab shows them"
    ]

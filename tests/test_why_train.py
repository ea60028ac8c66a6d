"""The verdict on a training step (notebooks/data/census-h100-speed/bert.train.amp: BERT-base
under bf16 autocast on an H100, forward, backward and optimizer step; the compiled model's
forward is one compiled graph, its backward run by autograd's engine). The engine runs the
compiled backward outside every "Torch-Compiled Region", so the profile places its cuBLAS
calls in no graph: they are still library kernels (as eager's are), and the backward's bmm of
SDPA's math decomposition are the attention's. Each figure is checked against the report's own
records, read here directly: the profiler's launches, the backward's output code, the
post-grad graphs' nodes and the kernels' nodes. And the kept training rows whose frames fell
back (mixtral, qwen2_moe, olmoe: Inductor failing on the MoE's backward; wav2vec2) name torch's
reason for the frames they lead with, and only those frames' fix. Torch-free."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from compiler.model._benchtypes import within_spread
from tests._verdicts import cause, judged

BERT = Path(__file__).parent.parent / "notebooks" / "data" / "census-h100-speed" / "bert.train.amp.json.gz"
SDPA = "scaled_dot_product_attention("


@pytest.fixture(scope="module")
def bert():
    return judged(BERT)


def _ms(rows, calls) -> float:
    return sum(x.total_ms for x in rows) / calls


def test_the_backwards_extern_calls_run_outside_every_region(bert):
    r, b, _v = bert
    (c,) = r.compiles
    code = next(o.code for o in c.stages.codegen.output_code if o.role == "backward")
    calls = Counter(re.findall(r"^\s*extern_kernels\.(\w+)\(", code, re.M))
    assert calls == {"mm": 146, "bmm": 48}
    outside = [x for x in b.launch_rows if x.compile_id is None]
    for op, n in calls.items():
        # one GEMM kernel a call (cuBLAS's memsets and split-K reductions beside it)
        rows = [x for x in outside if x.op == f"aten::{op}"]
        gemms = [x for x in rows if not x.name.startswith("Memset") and "splitKreduce" not in x.name]
        assert sum(x.calls for x in gemms) / b.profiled_calls == n
    # every bmm of the graphs is the SDPA call's: 24 in the forward, 48 in the backward
    bmm = {
        rg.role: [n for n in rg.graph.nodes if n.target == "torch.ops.aten.bmm.default"]
        for rg in c.stages.decompose.post_grad
    }
    assert {role: len(ns) for role, ns in bmm.items()} == {"forward": 24, "backward": 48}
    assert {n.code for ns in bmm.values() for n in ns} == {
        "attn_output = torch.nn.functional.scaled_dot_product_attention("
    }


def _sdpa_kernels(r) -> tuple[set[str], dict]:
    """The Triton kernels computing a node the user's SDPA line made (post-grad, or Dynamo's
    graph as a kernel's nodes may be named), and the post-grad nodes by name."""
    (c,) = r.compiles
    nodes = {n.name: n for rg in c.stages.decompose.post_grad for n in rg.graph.nodes}
    captured = {n.name for n in c.stages.capture.graph.nodes if n.code and SDPA in n.code}
    mine = {name for name, n in nodes.items() if n.code and SDPA in n.code} | captured
    return {k.name for k in r.kernels_of(c.id) if set(k.nodes) & mine}, nodes


def test_the_attention_takes_the_backwards_bmm_and_its_softmax_backward(bert):
    r, b, v = bert
    calls = b.profiled_calls
    theirs, nodes = _sdpa_kernels(r)
    # the backward's softmax and dropout backward: nodes the user's SDPA call made
    soft = "triton_poi_fused__softmax_backward_data__to_copy_native_dropout_native_dropout_backward_transpose_view_12"
    assert soft in theirs
    assert {nodes[n].source for n in next(k for k in r.kernels if k.name == soft).nodes if n in nodes} == {
        "site-packages/transformers/integrations/sdpa_attention.py:158"
    }
    bmm = [x for x in b.launch_rows if x.op == "aten::bmm"]
    assert {x.compile_id for x in bmm} == {"0/0", None}  # the forward's in its region, the backward's outside
    gen = [x for x in b.launch_rows if x.name in theirs]
    att = cause(v, "attention")
    assert att.ms == pytest.approx(_ms(bmm, calls) + _ms(gen, calls))
    assert f"{att.ms:.4g}" == "33.63"
    assert f"compiled: 72 bmm calls a call, {_ms(bmm, calls):.4g} ms" in "\n".join(att.evidence)
    eager = [
        x
        for x in b.eager_launch_rows
        if x.op in ("aten::_cudnn_attention_forward", "aten::_cudnn_attention_backward")
    ]
    assert att.evidence[0] == (
        f"compiled runs SDPA's math decomposition (72 bmm and a softmax) {att.ms:.4g} ms a call "
        f"where eager runs cuDNN attention (_cudnn_attention_backward) {_ms(eager, calls):.4g} ms"
    )
    assert v.main == "attention"
    assert (
        v.headline
        == f"compiled is 1.36× slower than eager: attention: {att.evidence[0]}: 55% of the compiled call"
    )


def test_the_backwards_gemms_are_library_kernels_and_the_rest_beats_eager(bert):
    r, b, v = bert
    calls = b.profiled_calls
    mm = [x for x in b.launch_rows if x.op in ("aten::mm", "aten::addmm")]
    assert {x.compile_id for x in mm} == {"0/0", None}  # the forward's addmm, the backward's mm
    assert cause(v, "library").ms == pytest.approx(_ms(mm, calls))
    assert (
        cause(v, "library").evidence[0].startswith("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT: 2.646 ms")
    )
    # the generated part: Triton kernels the attention does not hold, and the ATen ops outside
    # the graphs that the backward does not call (the optimizer step, the gradients' zeroing)
    theirs, _nodes = _sdpa_kernels(r)
    mm_ops = ("aten::mm", "aten::addmm", "aten::bmm")
    rest = [x for x in b.launch_rows if x.op not in mm_ops and x.name not in theirs]
    gen = cause(v, "generated-ok")
    assert gen.ms == pytest.approx(_ms(rest, calls))
    outside = {x.op for x in rest if x.compile_id is None and x.op.startswith("aten::")}
    assert {"aten::_foreach_add_", "aten::fill_", "aten::add_"} <= outside
    # held against eager's kernels that no library and no fused attention op ran
    lib = re.compile(r"gemm|gemv|cublas|cutlass|xmma|nvjet|cudnn|flash|fmha|conv|wgrad|dgrad", re.I)
    eager = [
        x
        for x in b.eager_launch_rows
        if not lib.search(x.name) and x.op not in mm_ops and "attention" not in (x.op or "")
    ]
    assert gen.evidence[0] == (
        f"{gen.ms:.4g} ms a call, faster than the {_ms(eager, calls):.4g} ms of eager's {len(eager)} kernels they replace"
    )
    assert f"{gen.ms:.4g}" == "12.96"
    # the parts add up to the compiled call
    assert sum(c.ms for c in v.causes if c.ms is not None) == pytest.approx(v.compiled_ms, rel=1e-6)


CENSUS = Path(__file__).parent.parent / "notebooks" / "data" / "census-h100-speed"
GB0219 = "the backend failed (aten._local_scalar_dense.default, GB0219)"
MOE_FRAMES = "wrapper, forward, __call__, grouped_mm_experts_forward, _grouped_linear, _grouped_mm"
BACKEND_HINT = "Report an issue to the backend compiler repo."
DYNAMIC = "torch.compile(..., dynamic=True)  # or torch._dynamo.mark_dynamic(x, 0) on the changing dimension"
# the kept training rows (AMP) whose frames fell back: the headline, the fallback's fix and advice
FALLEN = {
    "mixtral": (
        f"compiled is 1.05× faster than eager: eager fallback: {GB0219} in {MOE_FRAMES} (and 1 more frame): "
        "89% of the compiled call",
        None,
        BACKEND_HINT,
    ),
    "qwen2_moe": (
        f"compiled is 1.06× slower than eager: eager fallback: {GB0219} in {MOE_FRAMES} (and 1 more frame): "
        "85% of the compiled call",
        None,
        BACKEND_HINT,
    ),
    "olmoe": (
        f"compiled is 1.14× slower than eager: eager fallback: {GB0219} in {MOE_FRAMES}: 92% of the compiled call",
        None,
        BACKEND_HINT,
    ),
    "wav2vec2": (
        "compiled is 1.05× slower than eager: eager fallback: setattr() on Tensor.requires_grad (GB0206) in "
        "wrapper, torch_dynamo_resume_in_wrapper_at_271 (and 3 more frames): 14% of the compiled call",
        None,
        "It may be possible to write Dynamo tracing rules for this code. Please report an issue to PyTorch if "
        "you encounter this graph break often and it is causing performance issues.",
    ),
}


@pytest.mark.parametrize("model", FALLEN)
def test_a_fallback_names_torchs_reason_for_the_frames_it_leads_with(model):
    """The fallback's title says why its leading frames (the most of those whose every call
    runs eagerly) fell back, as torch's records of their compiles say it: a backend's exception
    and the break's GB id, or the break's registered type. Its fix and advice are theirs: a
    frame that hit the recompile limit is counted, and its fix (dynamic shapes) is not the
    fallback's."""
    r, b, v = judged(CENSUS / f"{model}.train.amp.json.gz")
    headline, fix, advice = FALLEN[model]
    fb = cause(v, "fallback")
    assert (v.main, fb.fix, fb.advice) == ("fallback", fix, advice)
    # the fallback is the report's own fact: named whatever the timings say; where they are
    # unsteady (the medians within the spread), the headline says that beside it
    if within_spread(b.eager, b.compiled):
        assert v.headline.startswith(headline + " (no clear winner: the medians differ by "), v.headline
    else:
        assert v.headline == headline
    # torch's warning on each frame it would not convert is its compile's break, not a site of its own
    assert not [x for x in r.graph_breaks if "WON'T CONVERT" in x.type or x.gb_id is None]
    failed = {c.id: c for c in r.compiles if c.status == "failed"}
    brk = {i: x for x in r.graph_breaks for i in x.compile_ids if i in failed}
    lead = fb.evidence[1]
    ids = [i for i in failed if f"[{i}]" in lead.split(": failed in ")[0]]
    assert len(ids) == len(lead.split("], ")) and ids
    if model == "wav2vec2":
        assert {brk[i].gb_id for i in ids} == {"GB0206"}
        return
    # the leading frames: failed while AOTAutograd traced the backward, Inductor raising on
    # a tensor's value read back (torch's debug context: the backend and its exception)
    assert {(failed[i].failed_stage, brk[i].gb_id) for i in ids} == {("autograd", "GB0219")}
    assert {
        "Exception:aten._local_scalar_dense.default" in failed[i].error
        and "Backend: inductor" in failed[i].error
        for i in ids
    } == {True}
    # the shapes that change are the recompiles' cause, with their own fix, not the fallback's
    limit = [f.name for f in r.frames if f.recompile_limit_hit]
    assert limit == ([] if model == "olmoe" else ["forward"])
    assert [c.fix for c in v.causes if c.key == "recompiles"] == [DYNAMIC]

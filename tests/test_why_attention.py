"""The verdict names attention that compiled runs as SDPA's math decomposition where eager ran a
fused kernel, on the shipped H100 census reports (real data): BERT-family encoders under AMP,
where Dynamo's graph gets an all-true mask and its SDPA becomes fp32 bmm and a softmax.
The figures are checked against the profiler's own rows in each report, summed here."""

from __future__ import annotations

from pathlib import Path

import pytest

import compiler
from compiler.analysis import verdict

DATA = Path(__file__).parent.parent / "notebooks" / "data" / "census-h100-speed"


def _load(name: str):
    r = compiler.load(str(DATA / f"{name}.json.gz"))
    return r, r.benchmarks[-1]


def _profiled(bench, op: str, compiled: bool) -> float:
    rows = bench.launch_rows if compiled else bench.eager_launch_rows
    return sum(r.total_ms for r in rows if r.op == op) / bench.profiled_calls


@pytest.mark.parametrize(
    ("name", "eager_op", "backend", "upcast", "main"),
    [
        ("bert.eval.amp", "aten::_cudnn_attention_forward", "cuDNN", True, "attention"),
        ("electra.eval.amp", "aten::_cudnn_attention_forward", "cuDNN", True, "attention"),
        # fp32: the fp32 linears (no TF32) are the larger part, and stay the headline's
        ("bert.eval", "aten::_efficient_attention_forward", "mem-efficient", False, "library"),
    ],
)
def test_math_attention_is_named_with_its_figures(name, eager_op, backend, upcast, main):
    r, b = _load(name)
    v = verdict(r, b)
    assert v.main == main
    cause = next(c for c in v.causes if c.key == "attention")
    eager_ms = _profiled(b, eager_op, compiled=False)
    bmm_ms = _profiled(b, "aten::bmm", compiled=True)
    assert eager_ms > 0 and bmm_ms > 0
    assert cause.title == "attention: SDPA's math decomposition where eager runs a fused kernel"
    assert cause.evidence[0].startswith("compiled runs SDPA's math decomposition (24 f32 bmm and a softmax) ")
    assert cause.evidence[0].endswith(
        f" ms a call where eager runs {backend} attention ({eager_op.removeprefix('aten::')}) {eager_ms:.4g} ms"
    )
    assert f"compiled: 24 bmm calls a call, {bmm_ms:.4g} ms" in "\n".join(cause.evidence)
    # the bmm are the attention's part, not the library's
    lib = next(c for c in v.causes if c.key == "library")
    total_lib = sum(r.total_ms for r in b.launch_rows if r.kind == "extern") / b.profiled_calls
    assert lib.ms == pytest.approx(total_lib - bmm_ms)
    # the parts still add up to the compiled call
    assert sum(c.ms for c in v.causes if c.ms is not None) == pytest.approx(v.compiled_ms, rel=1e-6)
    casts = "the decomposition casts the bf16 query, key and value to fp32 (math SDPA's default)"
    assert (casts in cause.evidence) is upcast
    # measured on the H100: math SDPA kept in bf16 changed nothing (23.4 ms against 23.2 ms); the
    # fused kernels refused the expanded mask: the advice is the mask's, no code fix
    assert cause.fix is None
    assert cause.advice is not None and cause.advice.startswith(
        "a fused SDPA kernel needs the mask's last dimension"
    )
    if main == "attention":
        assert v.headline.startswith(f"{b.speedup_words}: attention: {cause.evidence[0]}: ")


def test_mask_line_is_dynamos_graph_argument():
    r, b = _load("bert.eval.amp")
    cause = next(c for c in verdict(r, b).causes if c.key == "attention")
    cap = r.compiles[0].stages.capture.graph
    sdpa = next(n for n in cap.nodes if n.target == "torch._C._nn.scaled_dot_product_attention")
    mask = next(n for n in cap.nodes if n.name == sdpa.args[3])
    assert mask.source.endswith("transformers/masking_utils.py:519")
    assert (
        f"Dynamo's graph passes an attention mask b8[32, 1, 510, 510] (made at {mask.source}) "
        "to scaled_dot_product_attention"
    ) in cause.evidence


def test_fused_attention_in_both_arms_is_no_attention_cause():
    r, b = _load("gpt2.eval")
    assert any(row.op == "aten::_efficient_attention_forward" for row in b.launch_rows)
    assert all(c.key != "attention" for c in verdict(r, b).causes)

"""``compiler.fill(report)`` of a training step whose backward writes over a saved activation:
GELU's backward (and an MSE loss's) is one kernel AOTAutograd lets Inductor write into the
saved tensor it reads (a donated buffer: ``in_out_ptr0``). The runnable repro of the backward,
compiled alone, knows nothing of donated buffers; the fill compiles it with those its forward
gives (compiler/bench/_filldonated.py), so it makes the cached code, and each kernel gets the
nodes torch's own provenance map of a cold compile (read from torch's structured trace here)
gives it (the cold compile's backward lowered with its forward, so that torch maps it)."""

from __future__ import annotations

import pytest
import torch
import torch._functorch.config
import torch.nn.functional as F

import compiler
from tests._caches import user_caches_in
from tests._torch_trace import RawTrace, provenance_calls

pytestmark = pytest.mark.child


def gelu_sum(x, w):
    return F.gelu(F.linear(x, w)).sum()


def mlp_mse(x, w1, w2, y):
    return F.mse_loss(F.linear(F.gelu(F.linear(x, w1)), w2), y)


def _gelu_sum():
    w = torch.randn(4, 16, requires_grad=True)
    torch.compile(gelu_sum)(torch.randn(8, 16), w).backward()


def _mlp_mse():
    w1, w2 = torch.randn(32, 16, requires_grad=True), torch.randn(4, 32, requires_grad=True)
    torch.compile(mlp_mse)(torch.randn(8, 16), w1, w2, torch.randn(8, 4)).backward()


@pytest.mark.parametrize("program", [_gelu_sum, _mlp_mse], ids=["gelu_sum", "mlp_mse"])
def test_fill_of_a_backward_with_a_donated_buffer_is_the_cold_compile(tmp_path, program):
    with user_caches_in(str(tmp_path)):
        program()  # the user's first run: stores the cache entries
        torch._dynamo.reset()
        with compiler.recording() as warm:
            program()
        torch._dynamo.reset()
        # torch maps a backward's kernels to their nodes only where the backward is compiled
        # with its forward (a lazy one compiles after the forward's provenance is logged)
        lowering = torch._functorch.config.patch({"force_non_lazy_backward_lowering": True})
        with RawTrace() as raw, compiler.recording(caches=False) as cold, lowering:
            program()
    torch._dynamo.reset()
    (c,) = warm.report.compiles
    assert ("fx_graph", "hit") in [(lk.kind, lk.state) for lk in c.caches]
    backward = [k for k in warm.report.kernels_of(c.id) if k.role == "backward"]
    # the cached backward writes over a saved tensor: the case the fill must rebuild
    assert any("in_out_ptr0" in k.source for k in backward), [k.name for k in backward]

    filled = compiler.fill(warm.report, progress=False)
    (fc,) = filled.compiles
    assert fc.regenerated.state == "filled" and fc.regenerated.same_code is True, fc.regenerated
    assert fc.regenerated.note is None
    # torch's map of the cold compile: each generated kernel (extern calls aside) -> its nodes
    theirs = {k: v for k, v in provenance_calls(raw.records).items() if not k.startswith("extern_kernels.")}
    (cc,) = cold.report.compiles
    generated = [k.name for k in cold.report.kernels_of(cc.id) if k.language in ("cpp", "triton")]
    assert sorted(theirs) == sorted(generated)  # torch's map names every kernel of the cold compile
    ours = {k.name: set(k.nodes) for k in filled.kernels_of(fc.id) if k.language in ("cpp", "triton")}
    assert ours == theirs

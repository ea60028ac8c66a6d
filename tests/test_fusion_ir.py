"""The IR before and after fusion: snapshotted in Inductor's scheduler pass hooks during the
compile and rendered when the report is built. Checked against the text Inductor's own
``ir_pre_fusion`` / ``ir_post_fusion`` loggers carry, read directly here."""

from __future__ import annotations

import re

import pytest
import torch
import transformers
from _torch_trace import InductorIR
from torch._inductor.utils import fresh_cache

import compiler
from compiler.listen import _torch
from compiler.listen._listeners import FusionIR

pytestmark = pytest.mark.slow


def _ours(report, field: str) -> list[str]:
    return [text for c in report.compiles if c.stages.fuse for text in getattr(c.stages.fuse, field)]


def _gpt2_training_step():
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=97, n_positions=32)
    model = transformers.GPT2LMHeadModel(cfg)
    ids = torch.randint(0, 97, (2, 12))
    out = torch.compile(model)(ids, labels=ids)
    out.loss.backward()
    return out.loss


def _foreach_adam_step():
    params = [torch.full((10,), float(i), requires_grad=True) for i in range(4)]
    for p in params:
        p.grad = torch.ones(10)
    opt = torch.optim.Adam(params, lr=0.1, foreach=True)
    torch.compile(opt.step)()
    return params


def _dynamic(a, b):
    return (a.sin() + b).softmax(-1).sum(0)


@pytest.mark.corpus
@pytest.mark.parametrize("held", [8, 2])
def test_ir_is_the_text_inductors_loggers_carry(held, monkeypatch):
    """A GPT-2 training step (forward, backward and the graphs around a break), a foreach
    optimizer step and a shape that turns dynamic: every IR text equals torch's, compile for
    compile, whether rendered after the block or, past ``held`` snapshots, during a later
    compile. (On a GPU Inductor also groups the foreach ops between the logger and the hook:
    tests/test_gpu.py.)"""
    monkeypatch.setattr(FusionIR, "MAX_PENDING", held)
    with InductorIR() as theirs, compiler.recording(fusion_ir=True) as rec:
        loss = _gpt2_training_step()
        params = _foreach_adam_step()
        for n in (4, 6):
            _dynamic(torch.randn(n, 8), torch.randn(n, 8))
            torch.compile(_dynamic)(torch.randn(n, 8), torch.randn(n, 8))
    assert torch.isfinite(loss) and all(p.grad is not None for p in params)
    graphs = len(theirs.texts["ir_pre_fusion"])
    assert graphs >= 5 and len(rec._fusion.pending) == min(
        held, graphs
    )  # the rest: rendered during later compiles
    report = rec.report
    for field in InductorIR.ARTIFACTS:
        ours = _ours(report, field)
        # the report groups a compile's backward with its forward; torch logs in compile order
        assert sorted(ours) == sorted(theirs.texts[field])
    pre = theirs.texts["ir_pre_fusion"]
    assert all(t.startswith("BEFORE FUSION\n") for t in pre)
    assert any(re.search(r"\{c0: s\d+\}", t) for t in pre)  # the dynamic compile's symbolic size


def test_the_hooks_are_restored_and_a_users_pass_still_runs():
    inductor = _torch.inductor_config()
    seen: list[int] = []

    def users_pass(nodes):
        seen.append(len(nodes))
        return nodes

    with inductor.patch({_torch.FUSION_PASS: users_pass}):
        with InductorIR() as theirs, compiler.recording(fusion_ir=True) as rec:
            out = torch.compile(_dynamic)(torch.ones(3, 4), torch.ones(3, 4))
        assert getattr(inductor, _torch.FUSION_PASS) is users_pass
    torch.testing.assert_close(out, _dynamic(torch.ones(3, 4), torch.ones(3, 4)))
    assert len(seen) == 1 and seen[0] >= 1  # called once, with the nodes before fusion
    for field in InductorIR.ARTIFACTS:
        assert _ours(rec.report, field) == theirs.texts[field]


def test_nested_recordings_both_get_the_ir_and_nothing_stays_set():
    inductor = _torch.inductor_config()
    before = getattr(inductor, _torch.FUSION_PASS)
    x = torch.ones(5, 4)
    with InductorIR() as theirs, compiler.recording(fusion_ir=True) as outer:
        with compiler.recording(fusion_ir=True) as inner:
            torch.compile(_dynamic)(x, x)
        torch.compile(lambda a: a.cos() * 3)(x)  # after the inner block: the outer's alone
    assert getattr(inductor, _torch.FUSION_PASS) is before
    assert _ours(inner.report, "ir_pre_fusion") == theirs.texts["ir_pre_fusion"][:1]
    assert _ours(outer.report, "ir_pre_fusion") == theirs.texts["ir_pre_fusion"]
    assert len(theirs.texts["ir_pre_fusion"]) == 2


def test_a_recording_with_caches_keeps_the_fx_graph_cache_key(tmp_path):
    """The snapshot pass changes no node: it leaves the FX-graph cache key as a plain compile
    makes it, so a recording with caches=True hits what a plain compile stored."""
    with fresh_cache(dir=str(tmp_path)), _torch.inductor_config().patch({"fx_graph_cache": True}):
        torch.compile(_dynamic)(torch.ones(3, 4), torch.ones(3, 4))  # plain: a miss, stored
        torch._dynamo.reset()
        # provenance=False: Inductor's provenance level is part of the key
        with compiler.recording(caches=True, provenance=False, fusion_ir=True) as rec:
            torch.compile(_dynamic)(torch.ones(3, 4), torch.ones(3, 4))
    (c,) = rec.report.compiles
    assert c.cache["fx_graph"] == "hit"
    assert c.stages.fuse is None or c.stages.fuse.ir_pre_fusion == ()  # nothing was lowered


def test_a_compile_that_fails_while_fusing_keeps_the_ir_before_fusion():
    """The IR after fusion is rendered only where the scheduler finished, as Inductor logs it
    only then: a pass that raises after fusion leaves the failed compile the IR before it."""

    def broken_pass(nodes):
        raise RuntimeError("broken scheduler pass")

    with _torch.inductor_config().patch({"_post_fusion_custom_pass": broken_pass}):
        with InductorIR() as theirs, compiler.recording(fusion_ir=True) as rec:
            with pytest.raises(Exception, match="broken scheduler pass"):
                torch.compile(_dynamic)(torch.ones(3, 4), torch.ones(3, 4))
    (c,) = rec.report.compiles
    assert theirs.texts["ir_post_fusion"] == [] and len(theirs.texts["ir_pre_fusion"]) == 1
    assert list(c.stages.fuse.ir_pre_fusion) == theirs.texts["ir_pre_fusion"]
    assert c.stages.fuse.ir_post_fusion == ()
    assert c.status == "failed"

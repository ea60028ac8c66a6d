"""End to end: recompiles recorded in-process (backend="eager"; torch 2.13's reason texts),
and a frame that hits the recompile limit."""

from __future__ import annotations

import os

import pytest
import torch
from _e2e import marker_line, source_line

import compiler
from compiler.analysis import without_local_scope

HERE = __file__
SCALE = 1.0  # read by `scaled`; test_global_constant changes it


def sine(x):
    return x.sin() + 1  # LINE:sine


def scaled(x):
    return x * SCALE  # LINE:scaled


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        x = self.fc(x)
        if self.training:  # LINE:training
            x = x * 2
        return x.relu()


def _user_stack_lines(fn_name: str, marker: str) -> list[str]:
    line = marker_line(HERE, marker)
    return [
        "User stack trace:",
        f'  File "{HERE}", line {line}, in {fn_name}',
        f"    {source_line(HERE, line)}",
    ]


def _one_recompile(report, reason: str, guard_parts: tuple[str, ...], frame_name: str | None = "sine"):
    """One recompile 0/1 of frame 0 whose entry 0/0 failed with ``reason``."""
    assert [c.id for c in report.compiles] == ["0/0", "0/1"]
    assert all(c.status == "ok" and c.cache_entry for c in report.compiles)
    assert len(report.frames) == 1
    frame = report.frames[0]
    assert frame.compiles == 2
    assert frame.recompile_limit_hit is False
    if frame_name is not None:
        assert (frame.name, frame.filename) == (frame_name, HERE)
    assert len(report.recompiles) == 1
    (rc,) = report.recompiles
    assert rc.compile_id == "0/1"
    assert rc.reasons == (reason,)
    assert rc.failed_entry == "0/0"
    assert rc.entry_guards == report.compile("0/0").stages.capture.guards
    assert rc.failing_guard is not None, rc.entry_guards
    assert rc.failing_guard in rc.entry_guards
    for part in guard_parts:
        assert part in rc.failing_guard, (part, rc.failing_guard)
    # compilation_metrics says the same
    assert report.compile("0/1").metrics["recompile_reason"] == reason
    assert report.graph_breaks == ()
    assert report.unknown_events == ()
    return rc


def _run(fn, *calls, **compile_kwargs):
    compiled = torch.compile(fn, backend="eager", **compile_kwargs)
    with compiler.recording() as rec:
        for x in calls:
            torch.testing.assert_close(compiled(x), fn(x))
    return rec.report


def test_shape():
    report = _run(sine, torch.randn(4), torch.randn(6))
    rc = _one_recompile(
        report,
        "0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6",
        ("TENSOR_MATCH", "check_tensor(L['x']", "size=[4]"),
    )
    assert rc.failing_guard.startswith("TENSOR_MATCH: check_tensor(L['x'], Tensor,")
    # automatic dynamic shapes: the recompiled graph takes a symbolic size
    assert report.compile("0/1").stages.capture.symbols


def test_dtype():
    report = _run(sine, torch.randn(4), torch.randn(4, dtype=torch.float64))
    _one_recompile(
        report,
        "0/0: tensor 'x' dtype mismatch. expected Float, actual Double",
        ("TENSOR_MATCH", "check_tensor(L['x']", "torch.float32"),
    )


def test_requires_grad():
    report = _run(sine, torch.randn(4), torch.randn(4, requires_grad=True))
    _one_recompile(
        report,
        "0/0: tensor 'x' requires_grad mismatch. expected requires_grad=0",
        ("TENSOR_MATCH", "check_tensor(L['x']", "requires_grad=False"),
    )


def test_global_constant(monkeypatch):
    compiled = torch.compile(scaled, backend="eager")
    x = torch.randn(4)
    with compiler.recording() as rec:
        torch.testing.assert_close(compiled(x), x * 1.0)
        monkeypatch.setattr(f"{__name__}.SCALE", 2.0)
        torch.testing.assert_close(compiled(x), x * 2.0)
    report = rec.report
    (reason,) = report.recompiles[0].reasons
    first, *stack = reason.splitlines()
    # "0/0: G['SCALE'] == 1.0    # return x * SCALE  # <tail of the path>:<line> in scaled"
    expr, comment = first.split("#", 1)
    assert expr.rstrip() == "0/0: G['SCALE'] == 1.0"
    line = marker_line(HERE, "LINE:scaled")
    assert comment.strip().startswith("return x * SCALE  # LINE:scaled  #")
    assert comment.rstrip().endswith(f"{os.path.basename(HERE)}:{line} in scaled")
    assert stack == _user_stack_lines("scaled", "LINE:scaled")
    rc = _one_recompile(report, reason, ("EQUALS_MATCH", "G['SCALE'] == 1.0"), frame_name="scaled")
    assert rc.failing_guard.startswith("EQUALS_MATCH: G['SCALE'] == 1.0 ")


def test_train_then_eval():
    torch.manual_seed(0)
    net = Net()
    compiled = torch.compile(net, backend="eager")
    x = torch.randn(2, 4)
    with compiler.recording() as rec:
        torch.testing.assert_close(compiled(x), net(x))
        net.eval()
        torch.testing.assert_close(compiled(x), net(x))
    report = rec.report
    (reason,) = report.recompiles[0].reasons
    first, *stack = reason.splitlines()
    # torch writes the guard's source with L['self'] stripped to self (guards.strip_local_scope)
    assert first.split("#", 1)[0].rstrip() == "0/0: self.training == True"
    line = marker_line(HERE, "LINE:training")
    assert first.rstrip().endswith(f"{os.path.basename(HERE)}:{line} in forward")
    assert stack == _user_stack_lines("forward", "LINE:training")
    rc = _one_recompile(report, reason, ("TRUE_MATCH", "L['self'].training == True"), frame_name="forward")
    assert rc.failing_guard.startswith("TRUE_MATCH: L['self'].training == True ")


def test_two_entries_fail_reasons_of_both():
    """A third shape with static shapes: both cache entries fail; torch lists both reasons,
    the newest entry first."""
    report = _run(sine, torch.randn(2), torch.randn(3), torch.randn(4), dynamic=False)
    assert [c.id for c in report.compiles] == ["0/0", "0/1", "0/2"]
    assert [r.compile_id for r in report.recompiles] == ["0/1", "0/2"]
    assert report.recompiles[1].reasons == (
        "0/1: tensor 'x' size mismatch at index 0. expected 3, actual 4",
        "0/0: tensor 'x' size mismatch at index 0. expected 2, actual 4",
    )
    assert report.recompiles[1].failed_entry == "0/1"
    assert "size=[3]" in report.recompiles[1].failing_guard
    assert report.frames[0].compiles == 3


# ---- recompile limit -------------------------------------------------------------


def test_recompile_limit_events_of_torch():
    """What torch 2.13 emits when the limit is hit: the guard failure's recompile_reasons and a
    compilation_metrics saying "Dynamo recompile limit exceeded", no dynamo_start, no graph."""
    compiled = torch.compile(sine, backend="eager", dynamic=False)
    with torch._dynamo.config.patch(recompile_limit=2), compiler.recording() as rec:
        for n in (2, 3, 4):
            compiled(torch.randn(n))
    names = [e.name for e in rec.events if e.compile_id == "0/2" and e.name != "chromium_event"]
    assert names == ["artifact:recompile_reasons", "compilation_metrics"]
    (metrics,) = [e.body for e in rec.events if e.compile_id == "0/2" and e.name == "compilation_metrics"]
    assert metrics["fail_type"] == "Unsupported"
    assert metrics["fail_reason"].startswith("Dynamo recompile limit exceeded\n")
    assert "Limit type: recompile_limit" in metrics["fail_reason"]
    assert not metrics.get("has_guarded_code")


def test_recompile_limit_hit():
    compiled = torch.compile(sine, backend="eager", dynamic=False)
    with torch._dynamo.config.patch(recompile_limit=2), compiler.recording() as rec:
        for n in (2, 3, 4, 5, 4, 2, 3, 6):
            x = torch.randn(n)
            torch.testing.assert_close(compiled(x), sine(x))
    report = rec.report
    assert len(report.frames) == 1
    frame = report.frames[0]
    assert (frame.name, frame.filename, frame.line) == ("sine", HERE, sine.__code__.co_firstlineno)
    assert frame.recompile_limit_hit is True
    assert frame.compiles == 2
    # only the compiles that happened: the limit hit is neither a compile nor a recompile
    assert [c.id for c in report.compiles] == ["0/0", "0/1"]
    assert all(c.status == "ok" for c in report.compiles)
    assert [r.compile_id for r in report.recompiles] == ["0/1"]
    assert report.recompiles[0].reasons == ("0/0: tensor 'x' size mismatch at index 0. expected 2, actual 3",)
    assert report.graph_breaks == ()
    assert report.unknown_events == ()


def test_recompile_limit_hit_in_a_later_recording():
    """The compiles happened before the recording; only the limit hit is inside it."""
    compiled = torch.compile(sine, backend="eager", dynamic=False)
    with torch._dynamo.config.patch(recompile_limit=2):
        compiled(torch.randn(2))
        compiled(torch.randn(3))
        with compiler.recording() as rec:
            x = torch.randn(4)
            torch.testing.assert_close(compiled(x), sine(x))
    report = rec.report
    assert report.compiles == ()
    assert report.recompiles == ()
    assert [(f.id, f.compiles, f.recompile_limit_hit) for f in report.frames] == [(0, 0, True)]


def test_recompile_limit_hit_with_fullgraph_raises():
    compiled = torch.compile(sine, backend="eager", dynamic=False, fullgraph=True)
    with torch._dynamo.config.patch(recompile_limit=1):
        compiled(torch.randn(2))
        with pytest.raises(torch._dynamo.exc.FailOnRecompileLimitHit), compiler.recording() as rec:
            compiled(torch.randn(3))
    report = rec.report
    assert report.error.startswith("FailOnRecompileLimitHit: ")
    assert report.compiles == ()
    assert [(f.id, f.recompile_limit_hit) for f in report.frames] == [(0, True)]


def branches_on_batch(x):
    if x.shape[0] == 4:  # LINE:spec
        return x * 2
    return x + 1


def test_dynamic_symbols_and_a_specialization():
    """dynamic=True makes both dims symbols; the branch on the batch size specializes it to 4
    (torch's symbolic_shape_specialization, with the user line that did it)."""
    x = torch.randn(4, 3)
    compiled = torch.compile(branches_on_batch, backend="eager", dynamic=True)
    with compiler.recording() as rec:
        torch.testing.assert_close(compiled(x), branches_on_batch(x))
    cap = rec.report.compile("0/0").stages.capture
    line = marker_line(HERE, "LINE:spec")
    assert [(without_local_scope(s.source), s.val, s.vr) for s in cap.symbols] == [
        ("x.size()[0]", "4", "[2, int_oo]"),
        ("x.size()[1]", "3", "[2, int_oo]"),
    ]
    (sp,) = cap.specializations
    assert (sp.symbol, sp.sources, sp.value, sp.reason) == (
        cap.symbols[0].symbol,
        ("L['x'].size()[0]",),
        "4",
        "range_refined_to_singleton",
    )
    assert [(f.filename, f.line, f.name) for f in sp.user_stack] == [(HERE, line, "branches_on_batch")]
    assert cap.shape_guards == (f"Eq({cap.symbols[0].symbol}, 4)",)
    assert rec.report.recompiles == ()


def with_options(x, n=1, opts=None):
    y = x * n
    if opts is not None and opts.get("relu"):
        y = y.relu()
    return y.sin()


@pytest.mark.parametrize(
    ("first", "second", "reason_head", "guard_head"),
    [
        (
            {},
            {"grad": False},
            "0/0: GLOBAL_STATE changed: grad_mode",
            "GLOBAL_STATE: ___check_global_state()",
        ),
        ({"n": 2}, {"n": 3}, "0/0: n == 2", "EQUALS_MATCH: L['n'] == 2"),
        (
            {"opts": {"relu": True}},
            {"opts": {"relu": False}},
            "0/0: opts['relu'] == True",
            "TRUE_MATCH: L['opts']['relu'] == True",
        ),  # fmt: skip
        ({}, {"opts": {"relu": True}}, "0/0: opts is None", "NONE_MATCH: L['opts'] is None"),
        (
            {},
            {"dtype": torch.float64},
            "0/0: tensor 'x' dtype mismatch. expected Float, actual Double",
            "TENSOR_MATCH: check_tensor(L['x'], Tensor, ",
        ),  # fmt: skip
    ],
)
def test_failing_guard_of_each_kind(first, second, reason_head, guard_head):
    """Every recompile names its failing guard: global state, constants, dict items, None
    checks and tensor properties."""
    compiled = torch.compile(with_options, backend="eager")

    def call(grad=True, dtype=torch.float32, **kw):
        with torch.set_grad_enabled(grad):
            x = torch.randn(3, dtype=dtype)
            torch.testing.assert_close(compiled(x, **kw), with_options(x, **kw))

    with compiler.recording() as rec:
        call(**first)
        call(**second)
    (rc,) = rec.report.recompiles
    assert rc.reasons[0].split("  #")[0].rstrip() == reason_head
    assert rc.failing_guard.startswith(guard_head), rc.failing_guard
    assert rc.failing_guard in rc.entry_guards

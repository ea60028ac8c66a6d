"""Recordings under concurrency, resets, interrupts and user config (issue: trust). Each test
would have failed before recordings were scoped to their thread, shared torch's loggers by
count, numbered compiles across torch._dynamo.reset() and left the user's config alone."""

from __future__ import annotations

import threading

import pytest
import torch
from _e2e import logger_state

import compiler
import compiler.listen._capture as capture
import compiler.listen._table as table
from compiler.listen._torch import FUSION_PASS


def sine(x):
    return x.sin() + 1


def cosine(x):
    return x.cos() - 1


def _names(report) -> list[str | None]:
    return [c.name for c in report.compiles]


def test_two_threads_each_record_their_own_compiles():
    both_in = threading.Barrier(2)
    compiled_one = threading.Barrier(2)
    reports: dict[str, compiler.Report] = {}
    errors: list[BaseException] = []

    def work(name, fn):
        try:
            with compiler.recording() as rec:
                both_in.wait(timeout=30)  # both recordings listen before either compiles
                torch.compile(fn, backend="eager")(torch.randn(3))
                compiled_one.wait(timeout=30)  # and both still listen after both compiled
            reports[name] = rec.report
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=a) for a in (("a", sine), ("b", cosine))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    assert _names(reports["a"]) == ["sine"]
    assert _names(reports["b"]) == ["cosine"]


def test_a_worker_threads_compile_is_not_this_recordings():
    def worker():
        torch.compile(cosine, backend="eager")(torch.randn(3))

    with compiler.recording() as rec:
        t = threading.Thread(target=worker)
        t.start()
        t.join()
        torch.compile(sine, backend="eager")(torch.randn(3))
    assert _names(rec.report) == ["sine"]


def test_backward_compiled_in_the_recording_thread_is_kept():
    w = torch.randn(4, requires_grad=True)

    def f(x):
        return (x * w).sin().sum()

    with compiler.recording() as rec:
        torch.compile(f, backend="aot_eager")(torch.randn(4)).backward()
    (c,) = rec.report.compiles
    assert c.stages.autograd.backward is not None


def test_loggers_restored_whatever_order_recordings_end():
    before = logger_state()
    hook_before = getattr(torch._inductor.config, FUSION_PASS)
    first, second = compiler.recording(fusion_ir=True), compiler.recording(fusion_ir=True)
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)  # the first to enter ends first
    torch.compile(sine, backend="eager")(torch.randn(3))
    second.__exit__(None, None, None)
    assert logger_state() == before
    # the second's fusion hook wrapped the first's: both are gone from Inductor's config
    assert getattr(torch._inductor.config, FUSION_PASS) is hook_before
    assert _names(second.report) == ["sine"] and first.report.compiles == ()


def test_dynamo_reset_inside_the_block_keeps_both_compiles():
    with compiler.recording() as rec:
        torch.compile(sine, backend="eager")(torch.randn(3))
        torch._dynamo.reset()
        torch.compile(cosine, backend="eager")(torch.randn(3))
        torch.compile(cosine, backend="eager")(torch.randn(5))  # a recompile after the reset
    r = rec.report
    assert [(c.id, c.name) for c in r.compiles] == [("0/0", "sine"), ("1:0/0", "cosine"), ("1:0/1", "cosine")]
    assert [(f.name, f.compiles) for f in r.frames] == [("sine", 1), ("cosine", 2)]
    assert len({f.id for f in r.frames}) == 2
    (rc,) = r.recompiles
    assert (rc.compile_id, rc.failed_entry) == ("1:0/1", "1:0/0")
    assert rc.failing_guard.startswith("TENSOR_MATCH: check_tensor(L['x'], Tensor, ")
    assert rc.entry_guards == r.compile("1:0/0").stages.capture.guards


@pytest.mark.parametrize("step", range(3))
def test_ctrl_c_while_entering_leaves_nothing_attached(monkeypatch, step):
    """KeyboardInterrupt at any point of attaching (the first logger of the listeners' table,
    a later one of the same row, one of the next row): nothing stays attached or patched."""
    before = logger_state()
    cache_before = torch._inductor.config.fx_graph_cache
    hook_before = getattr(torch._inductor.config, FUSION_PASS)
    calls = {"n": 0}
    real_listen = table.listen_on

    def listen(log, handler):
        if calls["n"] == step:
            raise KeyboardInterrupt
        calls["n"] += 1
        real_listen(log, handler)

    monkeypatch.setattr(table, "listen_on", listen)
    rec = compiler.recording(fusion_ir=True)
    with pytest.raises(KeyboardInterrupt):
        rec.__enter__()
    assert logger_state() == before
    assert torch._inductor.config.fx_graph_cache == cache_before
    assert getattr(torch._inductor.config, FUSION_PASS) is hook_before
    assert capture.listened == {}
    torch.compile(sine, backend="eager")(torch.randn(3))
    assert rec.events == []  # a dead recording collects nothing


def test_users_config_set_inside_the_block_is_kept():
    inductor = torch._inductor.config
    cache0 = inductor.fx_graph_cache
    with compiler.recording():
        assert inductor.fx_graph_cache is False  # ours, inside the block
        assert inductor.trace.provenance_tracking_level == 2  # ours: the basic level
        inductor.trace.provenance_tracking_level = 1  # the user's own choice
    assert inductor.trace.provenance_tracking_level == 1
    assert inductor.fx_graph_cache == cache0  # ours undone
    inductor.trace.provenance_tracking_level = 0
    with compiler.recording():
        inductor.fx_graph_cache = True
    assert inductor.fx_graph_cache is True
    inductor.fx_graph_cache = cache0

"""compiler.recording() / compiler.record(): what they attach and detach, whatever ends the
block, nesting, repeated use, late starts, and the JSON round trip. backend="eager"."""

from __future__ import annotations

import logging

import pytest
import torch
from _e2e import logger_state, marker_line

import compiler
from compiler.listen._torch import FUSION_LOGGERS, FUSION_PASS
from explorer.model._stages import NO_FUSION_IR, NO_FUSION_LOG, stage_view

HERE = __file__


def sine(x):
    return x.sin() + 1


def cosine(x):
    return x.cos() - 1


def with_break(x):
    x = x * 2
    torch._dynamo.graph_break()  # BREAK:lifecycle
    return x + 1


def _kb_backend(gm, example_inputs):
    raise KeyboardInterrupt


def _attached_during(rec: compiler.Recording, before: dict) -> None:
    """Inside the block: one trace handler more, and the fusion loggers at DEBUG with ours."""
    now = logger_state()
    trace_added = set(now["torch.__trace"][2]) - set(before["torch.__trace"][2])
    assert len(trace_added) == 1
    for module, artifact in FUSION_LOGGERS:
        log = torch._logging.getArtifactLogger(module, artifact)
        assert log.isEnabledFor(logging.DEBUG)
        assert log.propagate is False
        assert len(set(log.handlers) - set(before[log.name][2])) == 1


def test_handlers_detached_after_normal_exit():
    before = logger_state()
    with compiler.recording(fusion_logs=True) as rec:
        _attached_during(rec, before)
        torch.compile(sine, backend="eager")(torch.randn(3))
    assert logger_state() == before
    assert rec.report.error is None
    assert [c.id for c in rec.report.compiles] == ["0/0"]


def test_handlers_detached_after_exception():
    before = logger_state()
    x = torch.randn(3)
    with pytest.raises(ValueError, match="^user error$"), compiler.recording(fusion_logs=True) as rec:
        _attached_during(rec, before)
        torch.compile(sine, backend="eager")(x)
        raise ValueError("user error")
    assert logger_state() == before
    # the partial report has what compiled before the error
    report = rec.report
    assert report.error == "ValueError: user error"
    assert [(c.id, c.status) for c in report.compiles] == [("0/0", "ok")]


def test_keyboard_interrupt_in_compiled_region():
    before = logger_state()
    with pytest.raises(KeyboardInterrupt), compiler.recording(fusion_logs=True) as rec:
        _attached_during(rec, before)
        torch.compile(sine, backend=_kb_backend)(torch.randn(3))
    assert logger_state() == before
    report = rec.report
    assert report is not None
    assert report.error == "KeyboardInterrupt"
    (c,) = report.compiles
    assert c.id == "0/0"
    # torch logs metrics without a failure for a BaseException; no code was installed
    assert c.status == "failed"
    assert c.error == "KeyboardInterrupt"
    assert c.failed_stage == "backend"  # raised by the test's backend
    assert c.cache_entry is False
    assert c.stages.capture.graph is not None
    assert [(f.name, f.compiles) for f in report.frames] == [("sine", 0)]


def test_second_recording_in_same_process():
    x = torch.randn(3)
    with compiler.recording() as first:
        torch.compile(sine, backend="eager")(x)
    with compiler.recording() as second:
        torch.compile(cosine, backend="eager")(x)
    assert [(c.id, c.name) for c in first.report.compiles] == [("0/0", "sine")]
    assert [(c.id, c.name) for c in second.report.compiles] == [("1/0", "cosine")]
    assert [f.filename for f in second.report.frames] == [HERE]
    # a Recording object is reusable once its block is over, not while it is active
    rec = compiler.recording()
    with rec:
        with pytest.raises(RuntimeError, match="already active"), rec:
            pass
        torch.compile(sine, backend="eager")(torch.randn(5))
    assert [r.compile_id for r in rec.report.recompiles] == ["0/1"]


def test_nested_recordings_both_see_the_compile():
    before = logger_state()
    x = torch.randn(3)
    with compiler.recording(fusion_logs=True) as outer:
        with compiler.recording(fusion_logs=True) as inner:
            torch.compile(sine, backend="eager")(x)
        # the inner block restored nothing the outer one still needs
        for module, artifact in FUSION_LOGGERS:
            assert torch._logging.getArtifactLogger(module, artifact).isEnabledFor(logging.DEBUG)
        torch.compile(cosine, backend="eager")(x)
    assert logger_state() == before
    assert [c.id for c in inner.report.compiles] == ["0/0"]
    assert [c.id for c in outer.report.compiles] == ["0/0", "1/0"]
    assert inner.report.compiles[0] == outer.report.compiles[0]


def test_recording_after_earlier_compiles_resolves_file_names():
    """torch interns file names once per process: the recording sees no `str` event for this
    file, only its number, and still names it."""
    x = torch.randn(3)
    torch.compile(sine, backend="eager")(x)  # interns HERE
    with compiler.recording() as rec:
        torch.compile(with_break, backend="eager")(x)
    assert not [e for e in rec.events if e.name == "str" and HERE in str(e.metadata)]
    starts = [e.body["stack"][-1] for e in rec.events if e.name == "dynamo_start"]
    assert starts and all(isinstance(top["filename"], int) for top in starts)
    report = rec.report
    assert report.frames[0].name == "with_break"
    assert all(f.filename == HERE for f in report.frames)
    (b,) = report.graph_breaks
    assert (b.filename, b.line) == (HERE, marker_line(HERE, "BREAK:lifecycle"))


def test_json_round_trip(tmp_path):
    x = torch.randn(4)
    compiled = torch.compile(with_break, backend="aot_eager")
    with compiler.recording() as rec:
        compiled(x)
        compiled(torch.randn(6))
    report = rec.report
    assert report.graph_breaks and report.recompiles
    assert report.compiles[0].stages.autograd is not None
    path = tmp_path / "report.json"
    text = report.to_json(path)
    assert path.read_text(encoding="utf-8") == text
    assert compiler.load(path) == report
    assert compiler.Report.from_dict(report.to_dict()) == report


def test_record_helper():
    x = torch.randn(5)
    result, report = compiler.record(sine, x, compile_kwargs={"backend": "eager"})
    torch.testing.assert_close(result, sine(x))
    assert isinstance(report, compiler.Report)
    assert report.error is None
    assert [(c.id, c.name, c.status) for c in report.compiles] == [("0/0", "sine", "ok")]
    assert [(f.name, f.filename, f.line, f.compiles) for f in report.frames] == [
        ("sine", HERE, sine.__code__.co_firstlineno, 1)
    ]
    assert report.compiles[0].stages.capture.graph is not None


@pytest.mark.slow
def test_light_recording_leaves_out_fusion_ir_logs_and_provenance_and_restores_config():
    inductor = torch._inductor.config
    before = (inductor.fx_graph_cache, inductor.trace.provenance_tracking_level)
    x = torch.linspace(-1, 1, 8)
    with compiler.recording(provenance=False) as rec:
        assert inductor.trace.provenance_tracking_level == before[1]  # not turned on
        for module, artifact in FUSION_LOGGERS:  # the fusion decisions are opt-in (fusion_logs=True)
            assert not torch._logging.getArtifactLogger(module, artifact).isEnabledFor(logging.DEBUG)
        assert getattr(inductor, FUSION_PASS) is None  # no snapshot of the IR: fusion_ir is opt-in
        assert inductor.fx_graph_cache is False  # caches off all the same
        out = torch.compile(lambda t: (t.sin() * 2).sum())(x)
    torch.testing.assert_close(out, (x.sin() * 2).sum())
    (c,) = rec.report.compiles
    assert c.stages.fuse.ir_pre_fusion == () and c.stages.fuse.ir_post_fusion == ()
    assert c.stages.fuse.kernel_nodes == ()  # the CPU mapping comes from provenance tracking
    assert [k.language for k in rec.report.kernels] == ["cpp"]
    assert (inductor.fx_graph_cache, inductor.trace.provenance_tracking_level) == before
    assert c.stages.fuse.fusion_log == ()
    assert stage_view(rec.report, c, "fuse").note == f"{NO_FUSION_IR}; {NO_FUSION_LOG}"  # how to get them


def test_report_is_built_at_first_access_after_the_block():
    rec = compiler.recording()
    assert rec.report is None
    with rec:
        torch.compile(sine, backend="eager")(torch.randn(3))
        assert rec.report is None  # nothing is built while the block runs
        assert rec._report is None
    assert rec._report is None  # leaving the block builds nothing either
    report = rec.report
    assert [c.id for c in report.compiles] == ["0/0"]
    assert rec.report is report  # built once


def test_report_is_built_and_written_with_the_collector_paused_and_its_state_kept(tmp_path, monkeypatch):
    """The cyclic collector is paused while the report is built and written (the objects made
    there hold no cycles; in a process holding a big compile's objects a pass there can be a
    full collection); afterwards it is as the user left it, on or off."""
    import gc

    from compiler.assemble import _build
    from compiler.model import _compact

    seen: list[tuple[str, bool]] = []

    def spy(name, real):
        def call(*args, **kwargs):
            seen.append((name, gc.isenabled()))
            return real(*args, **kwargs)

        return call

    monkeypatch.setattr(_build, "build", spy("build", _build.build))
    monkeypatch.setattr(_compact, "encode", spy("encode", _compact.encode))
    try:
        for user_enabled in (True, False):
            torch._dynamo.reset()
            with compiler.recording() as rec:
                torch.compile(cosine, backend="eager")(torch.randn(3))
            (gc.enable if user_enabled else gc.disable)()
            report = rec.report
            assert gc.isenabled() is user_enabled
            report.to_json(tmp_path / "r.json.gz")
            assert gc.isenabled() is user_enabled
            assert seen == [("build", False), ("encode", False)]
            assert [c.id for c in compiler.load(tmp_path / "r.json.gz").compiles] == ["0/0"]
            seen.clear()
    finally:
        gc.enable()

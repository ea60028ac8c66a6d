"""Compiled Autograd recorded in-process: each captured backward is a compile of its own
under torch's id (``!0/3/0``), named as such, with its graph, hooks and recaptures; checked
against torch's own structured trace (tests/_torch_trace.py) and against eager gradients."""

from __future__ import annotations

import re

import pytest
import torch
from _e2e import marker_line
from _torch_trace import RawTrace

import compiler
from explorer.model._summary import summary_text
from explorer.model._view import build_view

HERE = __file__
_NODE_CALL = re.compile(r"\(NodeCall (\d+)\)")


def _model():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    m[0].weight.register_hook(lambda g: g * 2)  # a hook Compiled Autograd captures
    return m


def _steps(m, compiled, n: int) -> list[torch.Tensor]:
    grads = []
    for i in range(n):
        m.zero_grad(set_to_none=i == 0)
        loss = compiled(torch.arange(12.0).reshape(3, 4) / (i + 1)).sum()
        with torch._dynamo.compiled_autograd._enable(torch.compile):
            loss.backward()  # backward
        grads.append(m[0].weight.grad.clone())
    return grads


def _torch_ids(records) -> tuple[list[str], list[str]]:
    """torch's compile ids (CompileId.__str__) of Dynamo compiling CA graphs, and the
    payloads of its compiled_autograd_graph events, in order."""
    ids, graphs = [], []
    for meta, payload in records:
        ca = meta.get("compiled_autograd_id")
        if ca is None:
            continue
        if meta.get("frame_id") is not None and "dynamo_start" in meta:
            ids.append(f"!{ca}/{meta['frame_id']}/{meta['frame_compile_id']}")
        if "compiled_autograd_graph" in meta:
            graphs.append(payload)
    return ids, graphs


@pytest.fixture(scope="module")
def recorded():
    torch._dynamo.reset()
    m = _model()
    with RawTrace() as raw, compiler.recording() as rec:
        grads = _steps(m, torch.compile(m), 2)
    eager_m = _model()
    eager = _steps(eager_m, eager_m, 2)
    return rec.report, raw.records, grads, eager


def test_compiled_autograd_compiles_keep_torch_ids(recorded):
    report, records, grads, eager = recorded
    for g, e in zip(grads, eager, strict=True):  # the hook ran: same gradients as eager
        torch.testing.assert_close(g, e)
    ids, graphs = _torch_ids(records)
    assert len(ids) == 2 and ids[0].startswith("!0/") and ids[1].startswith("!1/")
    ca = [c for c in report.compiles if c.compiled_autograd is not None]
    assert [c.id for c in ca] == ids
    assert [c.compiled_autograd.id for c in ca] == ["!0", "!1"]
    # the forward keeps its own ids; none collides with a Compiled Autograd one
    assert [c.id for c in report.compiles if c.compiled_autograd is None] == ["0/0"]
    for c, payload in zip(ca, graphs, strict=True):
        rec = c.compiled_autograd
        assert rec.graph.code == payload
        assert len(rec.autograd_nodes) == len(set(_NODE_CALL.findall(payload)))
        assert rec.hooks == ("tensor_pre_hook",) and payload.count("call_hook(") == 1
        assert rec.compiled_backwards == payload.count("call_aot_bwd_prologue(")
        assert rec.called_from == f"{HERE}:{marker_line(HERE, 'backward')}"
        assert c.status == "ok" and c.stages.capture.graph is not None and c.stages.codegen is not None
    assert ca[0].compiled_autograd.recaptured_from is None
    assert ca[1].compiled_autograd.recaptured_from == "!0"  # the grads now exist: a new graph


def test_compiled_autograd_named_in_views(recorded):
    report = recorded[0]
    frames = {f.name: f for f in report.frames}
    assert "compiled autograd: backward #1 (!0)" in frames
    assert frames["compiled autograd: backward #2 (!1)"].compiles == 1
    text = summary_text(report)
    assert "[!0/1/0] compiled autograd: backward #1 (!0): the backward called at" in text.replace("\n", "")
    assert "compiled_autograd_graph" not in text  # nothing of it kept raw
    assert not [e for e in report.unknown_events if "compiled_autograd" in e.name]
    view = build_view(report)
    cv = next(v for v in view.compiles if v.compile_id.startswith("!1/"))
    assert cv.label.startswith("[!1/") and "compiled autograd: backward #2 (!1)" in cv.label
    capture = cv.stages[0]
    titles = [b.title for b in capture.blocks]
    assert titles[:3] == [
        "compiled autograd: backward #2 (!1): the backward it captured",
        "compiled autograd graph (hooks included)",
        "compiled autograd graph (code)",
    ]
    assert dict(capture.blocks[0].rows)["recaptured"] == "yes: the cache missed, after !0"
    assert compiler.Report.from_dict(report.to_dict()) == report


def test_compiled_autograd_ids_after_reset():
    """torch._dynamo.reset() restarts torch's numbering (the forward at 0/0, the capture at
    !0): the second generation's ids are prefixed and collide with nothing."""
    torch._dynamo.reset()
    m = _model()
    with RawTrace() as raw, compiler.recording() as rec:
        _steps(m, torch.compile(m, backend="eager"), 1)
        torch._dynamo.reset()
        _steps(m, torch.compile(m, backend="eager"), 1)
    ids, _ = _torch_ids(raw.records)
    assert len(ids) == 2 and ids[0].split("/")[0] == ids[1].split("/")[0] == "!0"
    ours = [c.id for c in rec.report.compiles]
    assert len(ours) == len(set(ours)) == 4
    assert [c.id for c in rec.report.compiles if c.compiled_autograd] == [ids[0], f"1:{ids[1]}"]
    assert [c.compiled_autograd.id for c in rec.report.compiles if c.compiled_autograd] == ["!0", "1:!0"]


def test_torch_trace_log_loads_the_same():
    """A TORCH_TRACE log of two Compiled Autograd steps (tests/fixtures/traces/README.md)."""
    import os

    from _torch_trace import read_log

    path = os.path.join(
        os.path.dirname(__file__), "fixtures", "traces", "cpu-torch213-compiled-autograd.log.gz"
    )
    ids, graphs = _torch_ids(read_log(path))
    report = compiler.load_trace(path)
    ca = [c for c in report.compiles if c.compiled_autograd]
    assert [c.id for c in ca] == ids and len(ids) == 2
    assert [c.compiled_autograd.graph.code for c in ca] == graphs
    assert [c.name for c in ca] == [
        "compiled autograd: backward #1 (!0)",
        "compiled autograd: backward #2 (!1)",
    ]
    assert ca[1].compiled_autograd.recaptured_from == "!0"


def test_captures_numbered_apart_from_aotinductor(tmp_path):
    """An AOTInductor compile before the first capture takes no capture number: one log of an
    export + AOTInductor run followed by the two Compiled Autograd steps (the two fixtures)."""
    import gzip
    import os

    from _torch_trace import read_log

    here = os.path.join(os.path.dirname(__file__), "fixtures", "traces")
    path = tmp_path / "both.log.gz"
    with gzip.open(path, "wb") as out:
        for name in ("cpu-torch213-export-aoti.log.gz", "cpu-torch213-compiled-autograd.log.gz"):
            with gzip.open(os.path.join(here, name)) as f:
                out.write(f.read())
    ids, _ = _torch_ids(read_log(str(path)))
    report = compiler.load_trace(str(path))
    assert [c.id for c in report.compiles if c.id.startswith("aoti/")] == ["aoti/0"]
    ca = [c for c in report.compiles if c.compiled_autograd]
    assert [c.id for c in ca] == ids and len(ids) == 2
    assert [c.name for c in ca] == [
        "compiled autograd: backward #1 (!0)",
        "compiled autograd: backward #2 (!1)",
    ]

"""``compiler.fill(report)`` only adds: every fact the recording had (a compile's provenance
text, a kernel's nodes, the IR before and after fusion) is in the filled report as it was,
and what the fill adds is marked as regenerated. A training step with a linear layer: its
``addmm`` runs as ``extern_kernels.addmm``, which torch's own provenance map of a cold compile
names (read from torch's structured trace in the test) and the filled report names too."""

from __future__ import annotations

import json

import pytest
import torch

import compiler
import compiler._viewer
from compiler.bench._fill import REGENERATED_MAP
from tests._caches import user_caches_in
from tests._torch_trace import RawTrace, provenance_calls

pytestmark = pytest.mark.child
FILLED = ("kernel nodes", "provenance", "IR before fusion", "IR after fusion", "fusion decisions")


def train_step(x, w, b):
    return (torch.relu(torch.nn.functional.linear(x, w, b)) * 2).sum(dim=1)


def _program():
    w = torch.randn(4, 16, requires_grad=True)
    b = torch.randn(4, requires_grad=True)
    torch.compile(train_step)(torch.randn(8, 16), w, b).sum().backward()


def _facts(report: compiler.Report) -> dict[str, object]:
    (c,) = report.compiles
    fuse = c.stages.fuse
    return {
        "provenance": fuse.provenance,
        "kernel nodes": {k.name: k.nodes for k in report.kernels_of(c.id)},
        "kernel_nodes": set(fuse.kernel_nodes),
        "IR before fusion": fuse.ir_pre_fusion,
        "IR after fusion": fuse.ir_post_fusion,
        "fusion decisions": fuse.fusion_log,
    }


def test_fill_keeps_what_the_recording_had_and_marks_what_it_adds(tmp_path):
    with user_caches_in(str(tmp_path)):
        _program()  # the user's first run: stores the cache entries
        torch._dynamo.reset()
        with compiler.recording() as warm:
            _program()
        torch._dynamo.reset()
        with RawTrace() as raw, compiler.recording(caches=False, fusion_ir=True, fusion_logs=True) as fresh:
            _program()
    torch._dynamo.reset()
    theirs = provenance_calls(raw.records)
    externs = {n: call for call, nodes in theirs.items() if call.startswith("extern_kernels.") for n in nodes}
    assert externs == {"addmm": "extern_kernels.addmm"}  # torch's own map of the cold compile

    # a warm start: the FX graph came from the cache, no node of any kernel
    (c,) = warm.report.compiles
    before = _facts(warm.report)
    assert ("fx_graph", "hit") in [(lk.kind, lk.state) for lk in c.caches]
    assert set(before["kernel nodes"].values()) == {()}
    filled = compiler.fill(warm.report, progress=False)
    (fc,) = filled.compiles
    after = _facts(filled)
    assert fc.regenerated.state == "filled" and fc.regenerated.facts == FILLED, fc.regenerated
    # the recording's provenance text is kept as it was, the regenerated map after it, named so
    old = before["provenance"]
    added = after["provenance"][len(old) + 1 :] if old is not None else after["provenance"]
    assert old is None or after["provenance"].startswith(old + "\n")
    assert list(json.loads(added)) == [REGENERATED_MAP]
    # the extern call torch names, on the node it names (the backward's mm calls torch's map
    # leaves out are added too, each on its node)
    ours = compiler._viewer.extern_nodes(after["provenance"])
    assert {n: ours.get(n) for n in externs} == externs
    assert set(ours.values()) <= {"extern_kernels.addmm", "extern_kernels.mm"}
    # each kernel torch's map names has its nodes; the forward's kernels all have nodes
    assert all(after["kernel nodes"][k.name] for k in filled.kernels_of(fc.id) if k.role == "forward")
    mapped = {n: set(v) for n, v in after["kernel nodes"].items() if n in theirs}
    assert mapped and mapped == {n: theirs[n] for n in mapped}

    # a fill of the cold recording, which has every fact already: nothing it had changes
    (cc,) = fresh.report.compiles
    cold = _facts(fresh.report)
    assert cold["provenance"] and cold["IR before fusion"] and cold["kernel_nodes"]
    refilled = compiler.fill(fresh.report, (cc.id,), progress=False)
    again = _facts(refilled)
    (rc,) = refilled.compiles
    assert rc.regenerated.state == "filled", rc.regenerated
    assert (again["provenance"] + "\n").startswith(cold["provenance"] + "\n")  # kept, maybe added to
    for fact in ("IR before fusion", "IR after fusion", "fusion decisions"):
        assert again[fact] == cold[fact], fact
    assert cold["kernel_nodes"] <= again["kernel_nodes"]
    assert {n: v for n, v in again["kernel nodes"].items() if cold["kernel nodes"][n]} == {
        n: v for n, v in cold["kernel nodes"].items() if v
    }
    # only what the recording lacked is marked as regenerated
    assert set(rc.regenerated.facts) <= {"kernel nodes", "provenance"}
    cold_externs = compiler._viewer.extern_nodes(cold["provenance"])
    again_externs = compiler._viewer.extern_nodes(again["provenance"])
    assert {n: again_externs[n] for n in cold_externs} == cold_externs

"""torch.export + AOTInductor recorded in-process: one compile of its own ("export →
AOTInductor"), with the exported Dim ranges, AOTInductor's graph, its C++ wrapper and
kernels; checked against torch's structured trace read directly, and the package against
eager."""

from __future__ import annotations

import os
import re

import pytest
import torch
from _torch_trace import RawTrace

import compiler
from explorer.model._summary import summary_text


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x).relu()


@pytest.mark.aoti
def test_export_then_aoti_is_its_own_pipeline(tmp_path):
    torch.manual_seed(0)
    m = Net()
    batch = torch.export.Dim("batch", min=2, max=64)
    with compiler.recording() as rec, RawTrace() as raw:
        ep = torch.export.export(m, (torch.randn(8, 4),), dynamic_shapes={"x": {0: batch}})
        path = torch._inductor.aoti_compile_and_package(ep, package_path=str(tmp_path / "net.pt2"))
    x = torch.randn(5, 4)
    torch.testing.assert_close(torch._inductor.aoti_load_package(path)(x), m(x))

    dumps = {meta["graph_dump"]["name"]: payload for meta, payload in raw.records if "graph_dump" in meta}
    (sym,) = [meta["create_symbol"] for meta, _ in raw.records if "create_symbol" in meta]
    (inference,) = [p for meta, p in raw.records if "aot_inference_graph" in meta]

    report = rec.report
    (c,) = report.compiles
    assert (c.id, c.name, c.status) == ("aoti/0", "export → AOTInductor", "ok")
    assert [s for s in compiler.types.STAGES if getattr(c.stages, s) is None] == []
    (dim,) = c.stages.capture.symbols
    assert (
        (dim.symbol, dim.source, dim.vr)
        == (sym["symbol"], sym["source"], sym["vr"])
        == (
            sym["symbol"],
            "L['x'].size()[0]",
            "[2, 64]",
        )
    )
    assert c.stages.autograd.inference.code == inference
    roles = {oc.role: oc.code for oc in c.stages.codegen.output_code}
    assert roles == {
        "aoti wrapper": dumps["inductor_aot_wrapper_code"],
        "aoti kernels": dumps["inductor_aot_kernel_code"],
    }
    names = [k.name for k in report.kernels]
    assert len(names) == dumps["inductor_aot_kernel_code"].count('extern "C"') == 2
    for name in names:  # each kernel is one the wrapper calls
        assert re.search(rf"\b{name}\(", dumps["inductor_aot_wrapper_code"])
    assert all(k.language == "cpp" and k.source.startswith('extern "C"') for k in report.kernels)
    assert report.frames[0].name == "export → AOTInductor" and report.frames[0].compiles == 1
    assert not report.unknown_events
    text = summary_text(report, width=400)
    assert (
        "[aoti/0] export → AOTInductor, 1 graph, 2 kernels (cpp); dynamic dims: x.size()[0] in [2, 64]"
        in text
    )
    assert compiler.Report.from_dict(report.to_dict()) == report


def test_torch_trace_log_loads_the_same():
    """A TORCH_TRACE log of export + AOTInductor (tests/fixtures/traces/README.md)."""
    from _torch_trace import read_log

    path = os.path.join(os.path.dirname(__file__), "fixtures", "traces", "cpu-torch213-export-aoti.log.gz")
    records = read_log(path)
    kernel_file = next(
        p for m, p in records if m.get("graph_dump", {}).get("name") == "inductor_aot_kernel_code"
    )
    (sym,) = [m["create_symbol"] for m, _ in records if "create_symbol" in m]
    report = compiler.load_trace(path)
    (c,) = report.compiles
    assert (c.id, c.name, c.status) == ("aoti/0", "export → AOTInductor", "ok")
    assert [(s.symbol, s.vr) for s in c.stages.capture.symbols] == [(sym["symbol"], "[2, 64]")]
    assert [k.name for k in report.kernels] == re.findall(r'^extern "C"\s+void\s+(\w+)\(', kernel_file, re.M)

"""torch.export's input specs and range constraints (explorer.export_summary), the dims
checked against the create_symbol records torch's own structured trace logs for the export."""

from __future__ import annotations

import pytest
import torch
from _torch_trace import RawTrace

import compiler
import explorer


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 4)
        self.register_buffer("scale", torch.ones(4))

    def forward(self, x, y):
        return torch.relu(self.lin(x)) * self.scale + y


def test_input_specs_and_range_constraints():
    batch = torch.export.Dim("batch", min=2, max=64)
    with RawTrace() as raw:
        ep = torch.export.export(
            Net(), (torch.randn(5, 8), torch.randn(5, 4)), dynamic_shapes={"x": {0: batch}, "y": {0: batch}}
        )
    created = {
        m["create_symbol"]["source"]: m["create_symbol"] for m, _ in raw.records if "create_symbol" in m
    }
    # torch creates one symbol per input dim, then unifies the two (one Dim): one remains
    assert set(created) == {"L['x'].size()[0]", "L['y'].size()[0]"}
    s = explorer.export_summary(ep)
    ((sym, vr),) = s.range_constraints
    assert sym in {c["symbol"] for c in created.values()}
    assert vr == next(c["vr"] for c in created.values() if c["symbol"] == sym) == "[2, 64]"
    assert [(i.kind, i.name, i.target, i.dtype, i.shape) for i in s.inputs] == [
        ("PARAMETER", "p_lin_weight", "lin.weight", "float32", "[4, 8]"),
        ("PARAMETER", "p_lin_bias", "lin.bias", "float32", "[4]"),
        ("BUFFER", "b_scale", "scale", "float32", "[4]"),
        ("USER_INPUT", "x", None, "float32", f"[{sym}, 8]"),
        ("USER_INPUT", "y", None, "float32", f"[{sym}, 4]"),
    ]
    # the same names as the exported graph's placeholders, in order
    assert [i.name for i in s.inputs] == [n.name for n in ep.graph.nodes if n.op == "placeholder"]
    assert s.outputs == (("USER_OUTPUT", "add"),)
    assert s.text().splitlines()[-1] == f"range constraints: {sym} in [2, 64]"
    assert f"  USER_INPUT x: float32 [{sym}, 8]" in s.text().splitlines()
    assert compiler.analysis.export_summary is explorer.export_summary
    with pytest.raises(TypeError, match="expects an ExportedProgram, got Net"):
        explorer.export_summary(Net())

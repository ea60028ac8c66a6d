"""What torch.export decided about a program's inputs: the ExportedProgram's input specs and
range constraints. torch logs the ExportedProgram itself only as a dtrace event (under
``TORCH_DTRACE``), so a recording cannot hold it; ``export_summary(ep)`` reads it from the
program at the call, through its public API (``graph_signature``, ``range_constraints``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class InputSpec:
    kind: str  # USER_INPUT | PARAMETER | BUFFER | CONSTANT_TENSOR | CUSTOM_OBJ | TOKEN
    name: str  # the graph's placeholder
    target: str | None  # the parameter/buffer's name in the module, where it is one
    dtype: str | None
    shape: str | None  # symbolic dims by their symbol: "[s17, 8]"


@dataclass(frozen=True)
class ExportSummary:
    inputs: tuple[InputSpec, ...]
    outputs: tuple[tuple[str, str], ...]  # (kind, name)
    range_constraints: tuple[tuple[str, str], ...]  # (symbol, "[2, 64]")

    def text(self) -> str:
        lines = ["inputs:"]
        for s in self.inputs:
            what = f" = {s.target}" if s.target else ""
            lines.append(f"  {s.kind:<10} {s.name}{what}: {s.dtype or '?'} {s.shape or ''}".rstrip())
        lines.append("outputs: " + ", ".join(f"{n} ({k})" for k, n in self.outputs))
        lines.append(
            "range constraints: " + (", ".join(f"{s} in {r}" for s, r in self.range_constraints) or "none")
        )
        return "\n".join(lines)


def _vr(v: Any) -> str:
    lo, hi = getattr(v, "lower", "?"), getattr(v, "upper", "?")
    return f"[{lo}, {hi}]"


def export_summary(ep: Any) -> ExportSummary:
    """Input specs, output specs and range constraints of a ``torch.export.ExportedProgram``."""
    import torch

    if not isinstance(ep, torch.export.ExportedProgram):
        raise TypeError(f"export_summary expects an ExportedProgram, got {type(ep).__name__}")
    vals = {n.name: n.meta.get("val") for n in ep.graph.nodes if n.op == "placeholder"}
    inputs = []
    for spec in ep.graph_signature.input_specs:
        name = getattr(spec.arg, "name", str(spec.arg))
        val = vals.get(name)
        shape = dtype = None
        if isinstance(val, torch.Tensor):
            shape = "[" + ", ".join(str(d) for d in val.shape) + "]"
            dtype = str(val.dtype).removeprefix("torch.")
        inputs.append(InputSpec(spec.kind.name, name, spec.target, dtype, shape))
    outputs = tuple(
        (s.kind.name, getattr(s.arg, "name", str(s.arg))) for s in ep.graph_signature.output_specs
    )
    ranges = tuple((str(sym), _vr(vr)) for sym, vr in ep.range_constraints.items())
    return ExportSummary(tuple(inputs), outputs, ranges)

"""The records of one compile's stages (capture, autograd, decompose, fuse, codegen), as
torch printed or logged them; compiler/model/_report.py holds the report-wide records."""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ._guards import Guard, parse_guards
from ._paths import frame_kind
from ._tritontypes import TritonBinary


@dataclass(frozen=True)
class StackFrame:
    filename: str
    line: int
    name: str
    code: str | None = None

    @property
    def kind(self) -> str:
        """ "user" (the program's own files), "library" (installed packages, the standard
        library) or "torch"."""
        return frame_kind(self.filename)


@dataclass(frozen=True)
class Node:
    """One FX node, parsed from torch's readable graph code."""

    name: str
    op: str  # placeholder | call_function | call_method | call_module | get_attr | output
    target: str  # e.g. "torch.ops.aten.mm.default", "torch.relu", "operator.matmul"
    args: tuple[str, ...] = ()  # names of the nodes this one reads
    dtype: str | None = None  # torch's short name: f32, bf16, i64, b8 ...
    shape: str | None = None  # "[4, 8]" or symbolic "[s77, 8]"
    stride: str | None = None
    device: str | None = None
    source: str | None = None  # "file.py:16" of the user line that made it
    code: str | None = None  # that user line's code
    module: str | None = None  # nn.Module path, e.g. "layers.0.fc1"
    module_inferred: bool = False  # True when the path came from neighbours, not params
    # a joint graph's: torch's seq_nr (node.meta, heard in-process), whether the node computes
    # the backward, and the forward node it differentiates (torch's, by seq_nr)
    seq_nr: int | None = None
    backward: bool = False
    grad_of: str | None = None


@dataclass(frozen=True)
class Graph:
    """An FX graph as torch printed it (``code``) and as parsed nodes."""

    code: str
    nodes: tuple[Node, ...] = ()

    def op_counts(self) -> dict[str, int]:
        """Count of call targets (ATen ops in AOT/post-grad graphs), the most called first."""
        c = Counter(n.target for n in self.nodes if n.op in ("call_function", "call_method"))
        return dict(sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))

    def op_census(self) -> dict[str, int]:
        """``op_counts``' old name, kept working; each use warns (a census is the model zoo's
        table, docs/census.md)."""
        import warnings

        warnings.warn("Graph.op_census() is now Graph.op_counts()", DeprecationWarning, stacklevel=2)
        return self.op_counts()


@dataclass(frozen=True)
class RoleGraph:
    """A graph of one compiled role: forward, backward or inference."""

    role: str
    graph: Graph


@dataclass(frozen=True)
class SavedTensor:
    """A tensor the forward saves for the backward (an input of the backward graph)."""

    name: str
    dtype: str | None
    shape: str | None
    bytes: int | None  # None when the shape is symbolic


@dataclass(frozen=True)
class Symbol:
    """A dynamic dimension: a size (or stride) torch compiled as a symbol instead of a
    constant (``create_symbol``). Field names are torch's."""

    symbol: str  # "s53"
    # what it stands for: "L['kwargs']['past_key_values'].layers[0].keys.size()[2]" (as the
    # user's code spells it: compiler.analysis.without_local_scope)
    source: str | None = None
    val: str | None = None  # the value seen when it was created (torch's hint)
    vr: str | None = None  # value range, e.g. "[2, int_oo]"
    user_stack: tuple[StackFrame, ...] = ()  # the user code that made torch create it


@dataclass(frozen=True)
class Specialization:
    """A dimension torch fixed to a constant although it was marked or guessed dynamic
    (``symbolic_shape_specialization``), and why."""

    symbol: str | None
    sources: tuple[str, ...]
    value: str | None
    reason: str | None = None
    user_stack: tuple[StackFrame, ...] = ()


@dataclass(frozen=True)
class SideEffect:
    """One object the code Dynamo made mutates after the graph runs, replaying in Python what
    the traced code did to it (torch's ``dynamo_side_effects``, one entry per object)."""

    type: str  # the object's Python type: "dict", "DynamicCache"
    source: str | None  # where Dynamo found it: "L['self']", "created in torch.compile region"
    sites: tuple[StackFrame, ...] = ()  # each mutation's innermost frame, in torch's order


@dataclass(frozen=True)
class Capture:
    graph: Graph | None = None
    guards: str | None = None  # torch's guard tree (dynamo_cpp_guards_str)
    guard_count: int | None = None
    symbols: tuple[Symbol, ...] = ()  # dynamic-shape symbols created (dynamic dimensions)
    specializations: tuple[Specialization, ...] = ()
    shape_guards: tuple[str, ...] = ()
    restarts: tuple[str, ...] = ()  # why Dynamo restarted the analysis
    bytecode_original: str | None = None  # dis of the frame Dynamo rewrote (every frame recorded
    bytecode_modified: str | None = None  # in-process; in torch >= 2.12's logs, resume frames only)
    bytecode_original_source: str | None = None  # both as Python, where depyf decompiled them
    bytecode_modified_source: str | None = None
    bytecode_source_note: str | None = None  # why one has no Python (depyf missing or failing)
    time_s: float | None = None
    side_effects: tuple[SideEffect, ...] = ()  # the mutations its code replays after the graph

    @functools.cached_property
    def guard_list(self) -> tuple[Guard, ...]:
        """The guards of ``guards``, each with its kind, the source of the manager it sits under
        (as the user's code spells it) and its line (compiler/model/_guards.py): read from the
        tree when first asked, not stored."""
        return tuple(parse_guards(self.guards))


@dataclass(frozen=True)
class Autograd:
    joint: Graph | None = None
    forward: Graph | None = None
    backward: Graph | None = None
    inference: Graph | None = None
    saved_tensors: tuple[SavedTensor, ...] = ()
    fw_metadata: str | None = None
    time_s: float | None = None


@dataclass(frozen=True)
class Decompose:
    pre_grad_before: Graph | None = None
    pre_grad_after: Graph | None = None
    post_grad_before: tuple[RoleGraph, ...] = ()
    post_grad: tuple[RoleGraph, ...] = ()
    ops_before: dict[str, int] = field(default_factory=dict)  # Dynamo graph (torch level)
    ops_after: dict[str, int] = field(default_factory=dict)  # post-grad graphs (core ATen)
    time_s: float | None = None


@dataclass(frozen=True)
class KernelNodes:
    """Which graph nodes Inductor fused into one kernel (from torch's own comments)."""

    kernel: str
    nodes: tuple[str, ...]
    aten_ops: tuple[str, ...] = ()


@dataclass(frozen=True)
class AutotuneChoice:
    name: str  # torch's choice name: a template ("cpp_CppMicroGemmFP32Vec_0") or an extern ("_mkl_linear")
    time_ms: float | None  # the benchmark's time; None where it failed (torch: inf)
    config: str = ""  # torch's description: a Triton template's config, an extern's function


@dataclass(frozen=True)
class Autotune:
    """One op Inductor benchmarked choices for (max-autotune), as its feedback hook gave it."""

    op: str  # "packed_linear", "mm", "addmm", …
    inputs: tuple[str, ...]  # the inputs' sizes as torch's AUTOTUNE table prints them: "32x64"
    choices: tuple[AutotuneChoice, ...]  # fastest first
    precompile_s: float | None = None  # the seconds its choices took to precompile, as torch gave them

    @property
    def winner(self) -> str | None:
        """The fastest choice: the one Inductor selects."""
        timed = [c for c in self.choices if c.time_ms is not None]
        return min(timed, key=lambda c: c.time_ms).name if timed else None  # type: ignore[arg-type, return-value]


@dataclass(frozen=True)
class Fuse:
    ir_pre_fusion: tuple[str, ...] = ()
    ir_post_fusion: tuple[str, ...] = ()
    fusion_log: tuple[str, ...] = ()
    kernel_nodes: tuple[KernelNodes, ...] = ()
    provenance: str | None = None  # inductor_provenance_tracking_* where emitted
    time_s: float | None = None
    autotune: tuple[Autotune, ...] = ()  # max-autotune's benchmarked choices, per op


@dataclass(frozen=True)
class OutputCode:
    role: str  # forward | backward | inference
    path: str | None
    code: str
    extern_calls: tuple[str, ...] = ()  # the wrapper's extern calls, the first of each line, in order


@dataclass(frozen=True)
class Kernel:
    compile_id: str
    name: str
    language: str  # triton | cpp
    source: str
    role: str = "forward"
    nodes: tuple[str, ...] = ()  # source FX nodes fused into it, where torch says
    aten_ops: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)  # triton_kernel_info
    binaries: tuple[TritonBinary, ...] = ()  # recording(triton_ir=True): Triton's IR and resources


@dataclass(frozen=True)
class Codegen:
    output_code: tuple[OutputCode, ...] = ()
    kernel_names: tuple[str, ...] = ()
    fx_graph_runnable: str | None = None  # torch's runnable repro of the first graph Inductor got
    fx_graph_runnable_backward: str | None = None  # of the backward graph, where it compiled one
    time_s: float | None = None


@dataclass(frozen=True)
class Stages:
    capture: Capture | None = None
    autograd: Autograd | None = None
    decompose: Decompose | None = None
    fuse: Fuse | None = None
    codegen: Codegen | None = None

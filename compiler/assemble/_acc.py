"""What a build accumulates: one record per compile id as its events arrive (``Acc``), and
the context across events (``Context``); the handlers (compiler/assemble/_collect.py and the
pipelines beside it) fill them, compiler/assemble/_build.py turns them into the report."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import Any

from ..model._report import Kernel, RawEvent
from ..parse import _text
from ..parse._names import CompileId
from ._events import Event


@dataclass
class Kept:
    """The texts a compile's events keep whole, each the last one logged (None: never logged),
    each field named by the rows that fill it: ``keep("graph")`` in compiler/assemble/_stages.py
    (EVENTS), or a handler of compiler/assemble/_collect.py. compiler/assemble/_build.py reads
    every one (tests/test_event_table.py fails on a field nothing reads)."""

    graph: str | None = None  # dynamo_output_graph: Dynamo's FX graph, printed
    guards: str | None = None  # dynamo_cpp_guards_str: the guard tree
    module_stacks: str | None = None  # nn_module_stack: each node's module stack (JSON)
    bytecode_original: str | None = None  # the frame's code (``dis`` listing)
    bytecode_modified: str | None = None  # the code Dynamo runs in its place
    bytecode_original_source: str | None = None  # each as Python, where depyf decompiled it
    bytecode_modified_source: str | None = None
    bytecode_source_note: str | None = None  # why there is no Python
    side_effects: str | None = None  # artifact:dynamo_side_effects: the mutations replayed after the graph
    joint: str | None = None  # aot_joint_graph
    forward: str | None = None  # aot_forward_graph
    backward: str | None = None  # aot_backward_graph
    inference: str | None = None  # aot_inference_graph
    fw_metadata: str | None = None  # artifact:aot_forward_graph_fw_metadata
    seq_nr: str | None = None  # log:seq_nr: the joint graph's nodes' seq_nr lines
    pre_grad_before: str | None = None  # the graph before the pre-grad passes
    pre_grad_after: str | None = None  # and after them
    fx_graph_runnable: str | None = None  # torch's runnable repro of the forward (or inference) graph
    fx_graph_runnable_backward: str | None = None  # and of the backward graph
    error_traceback: str | None = None  # artifact:dynamo_error


KEPT = frozenset(f.name for f in fields(Kept))


@dataclass
class Acc:
    """Everything seen for one compile id, in arrival order."""

    frame_id: int  # torch's
    frame_compile_id: int
    order: int
    key: str = ""  # our compile id: torch's "0/1", or "1:0/1" after the first torch._dynamo.reset()
    frame: int = 0  # our frame id: torch's, offset past earlier generations' frames
    generation: int = 0  # how many torch._dynamo.reset()s came before it in the recording
    started: bool = False  # dynamo_start seen
    start_stack: list[dict] | None = None
    kept: Kept = field(default_factory=Kept)  # the payloads kept whole
    post_grad_before: list[tuple[str | None, str]] = field(default_factory=list)
    post_grad: list[tuple[str | None, str]] = field(default_factory=list)
    ir_pre: list[str] = field(default_factory=list)
    ir_post: list[str] = field(default_factory=list)
    fusion_log: list[str] = field(default_factory=list)
    autotune: list[dict] = field(default_factory=list)  # select_algorithm feedback, per op
    provenance: list[str] = field(default_factory=list)
    outputs: list[tuple[str, str | None, str]] = field(default_factory=list)
    kernel_info: dict[str, dict] = field(default_factory=dict)
    cache: dict[str, str] = field(default_factory=dict)  # {"fx_graph": "hit", ...}
    cache_lookups: list[tuple[str, str, str | None]] = field(default_factory=list)  # (kind, state, payload)
    symbols: list[dict] = field(default_factory=list)  # create_symbol bodies
    specializations: list[dict] = field(default_factory=list)  # symbolic_shape_specialization
    shape_guards: list[str] = field(default_factory=list)
    recompile_reasons: tuple[str, ...] = ()
    metrics: dict[str, Any] | None = None
    bwd_metrics: list[dict] = field(default_factory=list)
    runtime_metrics: list[dict] = field(default_factory=list)
    kernels: list[Kernel] = field(default_factory=list)  # parsed once, in _compile
    phase_times: dict[str, float] = field(default_factory=dict)
    stage_spans: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    open_phases: dict[str, list[float]] = field(default_factory=dict)
    spans: list[tuple[str, float, float]] = field(default_factory=list)  # (phase, begin, end) in us
    last_phase: str | None = None
    compiled_something: bool = False  # any event beyond a recompile_reasons


@dataclass
class Context:
    """What one build accumulates across events."""

    strings: dict[int, str]
    accs: dict[str, Acc] = field(default_factory=dict)
    breaks: list[tuple[str, _text.BreakEvent]] = field(default_factory=list)
    unknown: list[RawEvent] = field(default_factory=list)
    distributed: list[RawEvent] = field(default_factory=list)  # DDP splits, collective schedules
    rank: int | None = None  # torch puts the rank in every event once the process group exists
    autograd: dict[str, dict] = field(default_factory=dict)  # compiled autograd's captures (_autograd)
    unnumbered_captures: int = 0  # the capture being read of a torch that logs no capture id
    exports: dict = field(default_factory=dict)  # torch.export runs (_draft)
    aoti: dict = field(default_factory=lambda: {"n": 0, "open": None, "pending": []})  # (_export)
    cudagraph_logs: dict[str, list[str]] = field(default_factory=dict)  # compile key -> messages (_speed)
    last_compile: str | None = None  # the compile of the last per-compile event (_speed)
    set_by_recording: dict[str, str] = field(default_factory=dict)  # config the recording set
    recording_before: dict[str, str] = field(default_factory=dict)  # its value before the recording

    generation: int = 0
    frame_offset: int = 0
    next_frame: int = 0  # one past the highest frame id so far (ours)

    def key(self, cid: str) -> str:
        return cid if self.generation == 0 else f"{self.generation}:{cid}"

    def acc_for(self, cid: str | None, meta: dict | None = None) -> Acc | None:
        if cid is None:
            return None
        key = self.key(cid)
        a = self.accs.get(key)
        if a is None:
            parsed = CompileId.parse(cid)  # "0/1", or "!0/3/0" (compiled autograd)
            fid, k = parsed.frame, parsed.compile
            a = Acc(fid, k, len(self.accs), key, fid + self.frame_offset, self.generation)
            self.accs[key] = a
            self.next_frame = max(self.next_frame, a.frame + 1)
        return a

    def starts(self, ev: Event) -> None:
        """torch._dynamo.reset() restarts torch's numbering at 0/0: a compile id that starts
        a second time (not a restart attempt of the same compile) opens a new generation."""
        cid = ev.compile_id
        if cid is None or ev.metadata.get("attempt", 0):
            return
        known = self.accs.get(self.key(cid))
        if known is not None and known.started:
            self.new_generation()

    def new_generation(self) -> None:
        self.generation += 1
        self.frame_offset = self.next_frame


def jsonable(meta: dict) -> dict:
    """Event metadata as JSON values (what RawEvent keeps)."""
    try:
        return json.loads(json.dumps(meta, default=str))
    except (TypeError, ValueError):
        return {"repr": repr(meta)}

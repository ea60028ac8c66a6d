"""Per-event handlers: how each structured-trace event becomes facts of one compile. The
table from event names to stages and these handlers is ``_stages.EVENTS``."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..model._report import Kernel, RawEvent
from ..parse import _outputcode, _text
from ._events import Event


@dataclass
class _Acc:
    """Everything seen for one compile id, in arrival order."""

    frame_id: int  # torch's
    frame_compile_id: int
    order: int
    key: str = ""  # our compile id: torch's "0/1", or "1:0/1" after the first torch._dynamo.reset()
    frame: int = 0  # our frame id: torch's, offset past earlier generations' frames
    generation: int = 0  # how many torch._dynamo.reset()s came before it in the recording
    started: bool = False  # dynamo_start seen
    start_stack: list[dict] | None = None
    slots: dict[str, Any] = field(default_factory=dict)  # last value per slot
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
    accs: dict[str, _Acc] = field(default_factory=dict)
    breaks: list[tuple[str, _text.BreakEvent]] = field(default_factory=list)
    unknown: list[RawEvent] = field(default_factory=list)
    distributed: list[RawEvent] = field(default_factory=list)  # DDP splits, collective schedules
    rank: int | None = None  # torch puts the rank in every event once the process group exists
    autograd: dict[str, dict] = field(default_factory=dict)  # compiled autograd's captures (_autograd)
    unnumbered_captures: int = 0  # the capture being read of a torch that logs no capture id
    exports: dict = field(default_factory=dict)  # torch.export runs (_draft)
    aoti: dict = field(default_factory=lambda: {"n": 0, "open": None, "pending": []})  # (_export)

    generation: int = 0
    frame_offset: int = 0
    next_frame: int = 0  # one past the highest frame id so far (ours)

    def key(self, cid: str) -> str:
        return cid if self.generation == 0 else f"{self.generation}:{cid}"

    def acc_for(self, cid: str | None, meta: dict | None = None) -> _Acc | None:
        if cid is None:
            return None
        key = self.key(cid)
        a = self.accs.get(key)
        if a is None:
            fid, k = (int(x) for x in cid.split("/")[-2:])  # "0/1", or "!0/3/0" (compiled autograd)
            a = _Acc(fid, k, len(self.accs), key, fid + self.frame_offset, self.generation)
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


# ---- report-wide events (no compile of their own) ----


def on_intern(ctx: Context, ev: Event) -> None:
    body = ev.body
    if isinstance(body, list) and len(body) == 2:
        ctx.strings[int(body[1])] = str(body[0])


def on_timing(ctx: Context, ev: Event) -> None:
    from ._phases import _timing  # _phases reads _stages' phase tables, which name these handlers

    _timing(ev, ctx.acc_for, ctx.accs, ctx.new_generation)


# ---- per-compile events: handler(a, ev, ctx) ----


def on_start(a: _Acc, ev: Event, ctx: Context) -> None:
    a.started = True
    body = ev.body or {}
    a.start_stack = body.get("stack") if isinstance(body, dict) else None


def on_graph_break(a: _Acc, ev: Event, ctx: Context) -> None:
    if ev.payload:
        ctx.breaks.append((a.key, _text.parse_graph_break(ev.payload)))


def on_recompile_reasons(a: _Acc, ev: Event, ctx: Context) -> None:
    a.recompile_reasons = _text.parse_recompile_payload(ev.payload)


def on_symbol(a: _Acc, ev: Event, ctx: Context) -> None:
    if isinstance(ev.body, dict):
        a.symbols.append(ev.body)


def on_specialization(a: _Acc, ev: Event, ctx: Context) -> None:
    if isinstance(ev.body, dict):
        a.specializations.append(ev.body)


def on_shape_guard(a: _Acc, ev: Event, ctx: Context) -> None:
    body = ev.body or {}
    if isinstance(body, dict) and body.get("expr"):
        a.shape_guards.append(str(body["expr"]))


def on_post_grad_before(a: _Acc, ev: Event, ctx: Context) -> None:
    a.post_grad_before.append((None, ev.payload or ""))


def on_post_grad(a: _Acc, ev: Event, ctx: Context) -> None:
    a.post_grad.append((None, ev.payload or ""))


def on_ir_pre_fusion(a: _Acc, ev: Event, ctx: Context) -> None:
    if ev.payload is not None:  # None: a recording's IR after fusion the compile never reached
        a.ir_pre.append(ev.payload)


def on_ir_post_fusion(a: _Acc, ev: Event, ctx: Context) -> None:
    if ev.payload is not None:
        a.ir_post.append(ev.payload)


def on_autotune(a: _Acc, ev: Event, ctx: Context) -> None:
    a.autotune.append(json.loads(ev.payload or "{}"))


def on_fusion_log(a: _Acc, ev: Event, ctx: Context) -> None:
    a.fusion_log.append(ev.payload or "")


def on_provenance(a: _Acc, ev: Event, ctx: Context) -> None:
    a.provenance.append(ev.payload or "")


def on_output_code(a: _Acc, ev: Event, ctx: Context) -> None:
    body = ev.body or {}
    code = ev.payload or ""
    role = _outputcode.output_role(code) or guess_role(a)
    # post-grad graphs logged since the last output module belong to this one
    a.post_grad_before = [(r or role, g) for r, g in a.post_grad_before]
    a.post_grad = [(r or role, g) for r, g in a.post_grad]
    a.outputs.append((role, body.get("filename") if isinstance(body, dict) else None, code))


def on_triton_kernel_info(a: _Acc, ev: Event, ctx: Context) -> None:
    try:
        info = json.loads(ev.payload or "{}")
    except json.JSONDecodeError:
        info = {}
    if isinstance(info, dict):
        a.kernel_info.update({str(k): v for k, v in info.items() if isinstance(v, dict)})


def on_cache(a: _Acc, ev: Event, ctx: Context) -> None:
    kind, _, state = ev.name[len("artifact:") :].rpartition("_cache_")
    a.cache[kind] = state


def on_metrics(a: _Acc, ev: Event, ctx: Context) -> None:
    a.metrics = ev.body if isinstance(ev.body, dict) else {}


def on_bwd_metrics(a: _Acc, ev: Event, ctx: Context) -> None:
    a.bwd_metrics.append(ev.body if isinstance(ev.body, dict) else {})


def on_runtime_metrics(a: _Acc, ev: Event, ctx: Context) -> None:
    body = ev.body if isinstance(ev.body, dict) else {}
    a.runtime_metrics.append({"event": ev.name, **{k: v for k, v in body.items() if v is not None}})


def on_distributed(a: _Acc, ev: Event, ctx: Context) -> None:
    """DDP's split graphs and Inductor's collective schedules, kept whole (Report.distributed)."""
    meta = {k: v for k, v in ev.metadata.items() if k not in ("has_payload", "attempt")}
    ctx.distributed.append(RawEvent(a.key, ev.name, json.loads(json.dumps(meta, default=str)), ev.payload))


def keep_payload(slot: str):
    """A handler that keeps the event's payload (the last one) under ``slot``."""

    def handler(a: _Acc, ev: Event, ctx: Context) -> None:
        a.slots[slot] = ev.payload

    handler.__name__ = f"keep_{slot}"
    return handler


def guess_role(a: _Acc) -> str:
    if "inference" in a.slots:
        return "inference"
    return "backward" if any(r == "forward" for r, _, _ in a.outputs) else "forward"


_LIMIT_HIT = re.compile(
    r"(recompile|cache)[ _]?(size )?limit (exceeded|hit)|Limit type: \w*recompile_limit", re.I
)


def limit_hit(metrics: Any) -> bool:
    """compilation_metrics of a guard failure that found no room to recompile: torch >= 2.13
    logs one (fail_type "Unsupported", reason "Dynamo recompile limit exceeded") without
    compiling anything; it is the frame's recompile_limit_hit, not a compile."""
    if not isinstance(metrics, dict) or not metrics.get("fail_type"):
        return False
    if metrics["fail_type"] in ("RecompileLimitExceeded", "CacheLimitExceeded", "FailOnRecompileLimitHit"):
        return True
    return bool(_LIMIT_HIT.search(str(metrics.get("fail_reason") or "")))

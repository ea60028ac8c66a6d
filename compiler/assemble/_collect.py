"""Per-event handlers: how each structured-trace event becomes facts of one compile. The
table from event names to stages and these handlers is ``_stages.EVENTS``."""

from __future__ import annotations

import json
from typing import Any

from ..model._report import RawEvent
from ..parse import _outputcode, _text
from ._acc import KEPT, Acc, Context
from ._events import Event
from ._phases import chromium_timing

# ---- report-wide events (no compile of their own) ----


def on_intern(ctx: Context, ev: Event) -> None:
    body = ev.body
    if isinstance(body, list) and len(body) == 2:
        ctx.strings[int(body[1])] = str(body[0])


def on_timing(ctx: Context, ev: Event) -> None:
    chromium_timing(ev, ctx.acc_for, ctx.accs, ctx.new_generation)


# ---- per-compile events: handler(a, ev, ctx) ----


def on_start(a: Acc, ev: Event, ctx: Context) -> None:
    a.started = True
    body = ev.body or {}
    a.start_stack = body.get("stack") if isinstance(body, dict) else None


def on_graph_break(a: Acc, ev: Event, ctx: Context) -> None:
    if ev.payload:
        ctx.breaks.append((a.key, _text.parse_graph_break(ev.payload)))


def on_recompile_reasons(a: Acc, ev: Event, ctx: Context) -> None:
    a.recompile_reasons = _text.parse_recompile_payload(ev.payload)


def on_symbol(a: Acc, ev: Event, ctx: Context) -> None:
    if isinstance(ev.body, dict):
        a.symbols.append(ev.body)


def on_specialization(a: Acc, ev: Event, ctx: Context) -> None:
    if isinstance(ev.body, dict):
        a.specializations.append(ev.body)


def on_shape_guard(a: Acc, ev: Event, ctx: Context) -> None:
    body = ev.body or {}
    if isinstance(body, dict) and body.get("expr"):
        a.shape_guards.append(str(body["expr"]))


def on_post_grad_before(a: Acc, ev: Event, ctx: Context) -> None:
    a.post_grad_before.append((None, ev.payload or ""))


def on_post_grad(a: Acc, ev: Event, ctx: Context) -> None:
    a.post_grad.append((None, ev.payload or ""))


def on_ir_pre_fusion(a: Acc, ev: Event, ctx: Context) -> None:
    if ev.payload is not None:  # None: a recording's IR after fusion the compile never reached
        a.ir_pre.append(ev.payload)


def on_ir_post_fusion(a: Acc, ev: Event, ctx: Context) -> None:
    if ev.payload is not None:
        a.ir_post.append(ev.payload)


def on_autotune(a: Acc, ev: Event, ctx: Context) -> None:
    a.autotune.append(json.loads(ev.payload or "{}"))


_CODES = (("original", "the frame's code"), ("modified", "what Dynamo runs instead"))


def on_bytecode(a: Acc, ev: Event, ctx: Context) -> None:
    """The recording's bytecode hook (compiler/listen/_listeners.py: BytecodeHook): the frame's
    ``dis`` listing and Dynamo's, each as Python where depyf decompiled it, or why not."""
    try:
        facts = json.loads(ev.payload or "{}")
    except json.JSONDecodeError:
        facts = None
    if not isinstance(facts, dict):
        return
    body = ev.body if isinstance(ev.body, dict) else {}
    k = a.kept
    if isinstance(facts.get("original"), str):
        k.bytecode_original = facts["original"]
    if isinstance(facts.get("modified"), str):
        k.bytecode_modified = facts["modified"]
    if isinstance(facts.get("original_source"), str):
        k.bytecode_original_source = facts["original_source"]
    if isinstance(facts.get("modified_source"), str):
        k.bytecode_modified_source = facts["modified_source"]
    errors = [f"{what}: {facts[f'{key}_error']}" for key, what in _CODES if facts.get(f"{key}_error")]
    decompiler = body.get("decompiler")
    if decompiler is None:
        k.bytecode_source_note = "depyf is not installed: no Python (pip install 'pt2-explorer[bytecode]')"
    elif errors:
        k.bytecode_source_note = f"{decompiler} could not decompile " + "; ".join(errors)


def on_fusion_log(a: Acc, ev: Event, ctx: Context) -> None:
    a.fusion_log.append(ev.payload or "")


def on_provenance(a: Acc, ev: Event, ctx: Context) -> None:
    a.provenance.append(ev.payload or "")


def on_runnable(a: Acc, ev: Event, ctx: Context) -> None:
    """torch's runnable repro of a graph Inductor got, logged before Inductor compiles it: the
    first of a compile is its forward (or inference) graph's, a second its backward's."""
    if a.kept.fx_graph_runnable is None:
        a.kept.fx_graph_runnable = ev.payload
    else:
        a.kept.fx_graph_runnable_backward = ev.payload


def on_output_code(a: Acc, ev: Event, ctx: Context) -> None:
    body = ev.body or {}
    code = ev.payload or ""
    role = _outputcode.output_role(code) or guess_role(a)
    # post-grad graphs logged since the last output module belong to this one
    a.post_grad_before = [(r or role, g) for r, g in a.post_grad_before]
    a.post_grad = [(r or role, g) for r, g in a.post_grad]
    a.outputs.append((role, body.get("filename") if isinstance(body, dict) else None, code))


def on_triton_kernel_info(a: Acc, ev: Event, ctx: Context) -> None:
    try:
        info = json.loads(ev.payload or "{}")
    except json.JSONDecodeError:
        info = {}
    if isinstance(info, dict):
        a.kernel_info.update({str(k): v for k, v in info.items() if isinstance(v, dict)})


def on_cache(a: Acc, ev: Event, ctx: Context) -> None:
    kind, _, state = ev.name[len("artifact:") :].rpartition("_cache_")
    a.cache[kind] = state
    a.cache_lookups.append((kind, state, ev.payload))


def on_metrics(a: Acc, ev: Event, ctx: Context) -> None:
    a.metrics = ev.body if isinstance(ev.body, dict) else {}


def on_bwd_metrics(a: Acc, ev: Event, ctx: Context) -> None:
    a.bwd_metrics.append(ev.body if isinstance(ev.body, dict) else {})


def on_runtime_metrics(a: Acc, ev: Event, ctx: Context) -> None:
    body = ev.body if isinstance(ev.body, dict) else {}
    a.runtime_metrics.append({"event": ev.name, **{k: v for k, v in body.items() if v is not None}})


def on_distributed(a: Acc, ev: Event, ctx: Context) -> None:
    """DDP's split graphs and Inductor's collective schedules, kept whole (Report.distributed)."""
    meta = {k: v for k, v in ev.metadata.items() if k not in ("has_payload", "attempt")}
    ctx.distributed.append(RawEvent(a.key, ev.name, json.loads(json.dumps(meta, default=str)), ev.payload))


def keep(name: str):
    """A handler that keeps the event's payload (the last one) whole, as ``Kept.<name>``
    (compiler/assemble/_acc.py); a name that is not a field of ``Kept`` fails here, when the
    table is made."""
    if name not in KEPT:
        raise ValueError(f"keep({name!r}): Kept has no field {name!r} (compiler/assemble/_acc.py)")

    def handler(a: Acc, ev: Event, ctx: Context) -> None:
        setattr(a.kept, name, ev.payload)

    handler.__name__ = f"keep_{name}"
    handler.kept = name  # type: ignore[attr-defined]  # the field it fills (tests/test_event_table.py)
    return handler


def guess_role(a: Acc) -> str:
    if a.kept.inference is not None:
        return "inference"
    return "backward" if any(r == "forward" for r, _, _ in a.outputs) else "forward"


def limit_hit(metrics: Any) -> bool:
    """compilation_metrics of a guard failure that found no room to recompile: torch >= 2.13
    logs one (fail_type "Unsupported", reason "Dynamo recompile limit exceeded") without
    compiling anything; it is the frame's recompile_limit_hit, not a compile."""
    if not isinstance(metrics, dict) or not metrics.get("fail_type"):
        return False
    if metrics["fail_type"] in ("RecompileLimitExceeded", "CacheLimitExceeded", "FailOnRecompileLimitHit"):
        return True
    return _text.says_limit_hit(str(metrics.get("fail_reason") or ""))

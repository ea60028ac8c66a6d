"""Events -> Report. Shared by in-process recordings and TORCH_TRACE logs."""

from __future__ import annotations

from ..model._externcalls import extern_calls
from ..model._phasenames import phase_names
from ..model._report import (
    Autograd,
    Autotune,
    AutotuneChoice,
    Capture,
    Codegen,
    Compile,
    Decompose,
    Fuse,
    Kernel,
    KernelNodes,
    OutputCode,
    RawEvent,
    Report,
    RoleGraph,
    Specialization,
    Stages,
    Symbol,
)
from ..parse import _graphs, _modules, _outputcode, _text
from ..parse._seqnr import parse_seq_nrs, with_seq_nrs
from ..parse._sideeffects import side_effects
from . import _autograd, _draft, _export, _speed
from ._acc import Acc, Context, jsonable
from ._collect import guess_role, limit_hit, on_metrics, on_runtime_metrics, on_start
from ._derive import (
    call_site,
    dedupe_breaks,
    derive_frames,
    derive_recompiles,
    report_device,
    report_kernels,
    stack_frames,
)
from ._events import Event, is_frameless
from ._phases import FAILURE_PHASE_STAGE, union_s, waterfall
from ._stages import EVENTS, IGNORED, lookup

# compilation_metrics keys worth keeping (the rest is config dumps)
_METRIC_KEYS = (
    "entire_frame_compile_time_s", "backend_compile_time_s", "inductor_compile_time_s",
    "code_gen_time_s", "guard_count", "shape_env_guard_count", "graph_op_count",
    "graph_node_count", "graph_input_count", "fail_type", "fail_reason",
    "fail_user_frame_filename", "fail_user_frame_lineno", "recompile_reason", "cache_size",
    "accumulated_cache_size", "has_guarded_code", "structured_logging_overhead_s",
    "dynamo_time_before_restart_s", "triton_compile_time_us", "num_graph_breaks",
    "pre_grad_pass_time_us", "post_grad_pass_time_us", "joint_graph_pass_time_us",
    "is_forward", "inductor_fx_local_cache_hit_count", "inductor_fx_local_cache_miss_count",
    "start_time_us", "start_time",  # when the compile began (wall clock): whose call it was in
)  # fmt: skip


def build(
    events: list[Event],
    *,
    torch_version: str,
    interned: dict[int, str] | None = None,
    error: str | None = None,
    source: str = "in-process",
) -> Report:
    ctx = Context(dict(interned or {}))
    for ev in events:
        if ctx.rank is None and isinstance(ev.metadata.get("rank"), int):
            ctx.rank = ev.metadata["rank"]
        if ev.name in IGNORED or _draft.take(ctx, ev):
            continue
        spec = EVENTS.get(ev.name) or lookup(ev.name)
        if spec is None:
            ctx.unknown.append(RawEvent(ev.compile_id, ev.name, jsonable(ev.metadata), ev.payload))
            continue
        if not spec.per_compile:
            spec.handler(ctx, ev)
            continue
        if _autograd.is_capture_event(ev):  # Compiled Autograd's own tracing: sizes, guards
            continue
        if spec.handler is on_start:
            ctx.starts(ev)
        a = ctx.acc_for(ev.compile_id, ev.metadata)
        if a is None and is_frameless(ev):  # AOTInductor compiles outside any frame
            a = _export.route(ctx, ev, spec.stage, spec.compiled)
            if a is None and ev.name == "create_symbol":
                continue  # an exported dim, kept until its AOTInductor compile (or dropped)
        if a is None:
            if spec.handler is on_runtime_metrics:
                # run-time metrics of no compile (a draft_export leaves them pending, and
                # the next compile flushes them without an id): nothing to file them under
                continue
            ctx.unknown.append(RawEvent(None, ev.name, jsonable(ev.metadata), ev.payload))
            continue
        if spec.compiled and not (spec.handler is on_metrics and limit_hit(ev.body)):
            a.compiled_something = True
        ctx.last_compile = a.key
        spec.handler(a, ev, ctx)

    _speed.attach_cudagraph_logs(ctx)
    accs, strings = ctx.accs, ctx.strings
    compiles = [
        _compile(a, error, strings, ctx)
        for a in sorted(accs.values(), key=lambda a: a.order)
        if a.compiled_something
    ]
    compiles = _autograd.attach(ctx, compiles, lambda a: call_site(a.start_stack, strings))
    compiles = _export.attach(compiles)
    by_id = {c.id: c for c in compiles}
    graph_breaks = dedupe_breaks(ctx.breaks, by_id)
    frames = derive_frames(accs, compiles, strings, graph_breaks)
    kernels = report_kernels(accs, by_id)
    device = report_device(compiles, kernels)
    return Report(
        torch_version=torch_version,
        device=device,
        frames=frames,
        compiles=tuple(compiles),
        graph_breaks=graph_breaks,
        recompiles=derive_recompiles(accs, by_id, strings),
        kernels=kernels,
        unknown_events=tuple(ctx.unknown),
        error=error,
        source=source,
        rank=ctx.rank,
        distributed=tuple(ctx.distributed),
        exports=_draft.runs(ctx),
    )


def _compile(a: Acc, error: str | None, strings: dict[int, str], ctx: Context) -> Compile:
    m = a.metrics or {}
    stage_t = {st: round(union_s(spans), 6) for st, spans in a.stage_spans.items()}
    stages = _stages(a, strings, stage_t)
    caches = _speed.lookups(a)
    config = _speed.config_of(a, caches, ctx)
    cpu_only = bool(a.kernels) and all(k.language == "cpp" for k in a.kernels)
    cudagraphs = _speed.cudagraphs_of(a, config, ctx.cudagraph_logs.get(a.key, []), cpu_only)
    status, err, failed_stage = _status(a, error)
    name, filename, line = _where(m, stages.capture)
    return Compile(
        id=a.key,
        frame=a.frame,
        name=name,
        filename=filename,
        line=int(line) if line is not None else None,
        status=status,
        error=err,
        failed_stage=failed_stage,
        stages=stages,
        metrics=_metrics(a),
        phase_times_s={k: round(v, 6) for k, v in a.phase_times.items()},
        stage_times_s=stage_t,
        compile_time_s=_total_s(a),
        cache=dict(a.cache),
        traceback=a.kept.error_traceback,
        cache_entry=bool(m.get("has_guarded_code", status == "ok")) and status == "ok",
        phases=waterfall(a.spans),
        phase_names=phase_names([*a.phase_times, *(s[0] for s in a.spans)]),
        config=config,
        caches=caches,
        cudagraphs=cudagraphs,
    )


def _stages(a: Acc, strings: dict[int, str], stage_t: dict[str, float]) -> Stages:
    """The five stages' records from what the compile's events kept (parsed here, once)."""
    kept = a.kept
    m = a.metrics or {}
    dyn = _modules.with_module_stacks(_graphs.parse_graph(kept.graph), kept.module_stacks)
    pre_before = _graphs.parse_graph(kept.pre_grad_before)
    fwd = _graphs.parse_graph_from(kept.forward, dyn)
    joint = _graphs.parse_graph_from(kept.joint, dyn)
    joint = with_seq_nrs(joint, parse_seq_nrs(kept.seq_nr))
    bwd = _graphs.parse_graph_from(kept.backward, dyn, forward=fwd or joint)
    post = tuple(RoleGraph(r or guess_role(a), _graphs.parse_graph_from(g, dyn)) for r, g in a.post_grad if g)

    capture = None
    if dyn or kept.guards or a.start_stack is not None or a.symbols or kept.side_effects:
        capture = Capture(
            graph=dyn,
            guards=kept.guards,
            guard_count=m.get("guard_count"),
            symbols=tuple(_symbol(b, strings) for b in a.symbols if b.get("symbol")),
            specializations=tuple(_specialization(b, strings) for b in a.specializations),
            shape_guards=tuple(a.shape_guards),
            restarts=tuple(str(r) for r in (m.get("restart_reasons") or ())),
            bytecode_original=kept.bytecode_original,
            bytecode_modified=kept.bytecode_modified,
            bytecode_original_source=kept.bytecode_original_source,
            bytecode_modified_source=kept.bytecode_modified_source,
            bytecode_source_note=kept.bytecode_source_note,
            time_s=stage_t.get("capture"),
            side_effects=side_effects(kept.side_effects),
        )
    autograd = None
    if any(g is not None for g in (kept.joint, kept.forward, kept.backward, kept.inference)):
        autograd = Autograd(
            joint=joint,
            forward=fwd,
            backward=bwd,
            inference=_graphs.parse_graph_from(kept.inference, dyn),
            saved_tensors=_graphs.saved_tensors(bwd),
            fw_metadata=kept.fw_metadata,
            time_s=stage_t.get("autograd"),
        )
    decompose = None
    if pre_before or post or a.post_grad_before:
        decompose = Decompose(
            pre_grad_before=pre_before,
            pre_grad_after=_graphs.parse_graph(kept.pre_grad_after),
            post_grad_before=tuple(
                RoleGraph(r or guess_role(a), _graphs.parse_graph(g)) for r, g in a.post_grad_before if g
            ),
            post_grad=post,
            ops_before=_graphs.op_counts([dyn or pre_before]),
            ops_after=_graphs.op_counts([rg.graph for rg in post]),
            time_s=stage_t.get("decompose"),
        )
    a.kernels = _parse_kernels(a)
    kernels = a.kernels
    fuse = None
    if a.ir_pre or a.ir_post or a.fusion_log or a.provenance or a.outputs or a.autotune:
        fuse = Fuse(
            ir_pre_fusion=tuple(a.ir_pre),
            ir_post_fusion=tuple(a.ir_post),
            fusion_log=tuple(a.fusion_log),
            kernel_nodes=tuple(KernelNodes(k.name, k.nodes, k.aten_ops) for k in kernels if k.nodes),
            provenance="\n".join(a.provenance) or None,
            time_s=stage_t.get("fuse"),
            autotune=tuple(_autotune(d) for d in a.autotune),
        )
    codegen = None
    if a.outputs or kept.fx_graph_runnable:
        codegen = Codegen(
            output_code=tuple(OutputCode(r, p, c, tuple(extern_calls(c))) for r, p, c in a.outputs),
            kernel_names=tuple(k.name for k in kernels),
            fx_graph_runnable=kept.fx_graph_runnable,
            fx_graph_runnable_backward=kept.fx_graph_runnable_backward,
            time_s=stage_t.get("codegen"),
        )
    return Stages(capture, autograd, decompose, fuse, codegen)


def _status(a: Acc, error: str | None) -> tuple[str, str | None, str | None]:
    """ok or failed, torch's reason, and the stage that was running when it failed."""
    m = a.metrics or {}
    fail_type = m.get("fail_type")
    bwd_fail = next((b for b in a.bwd_metrics if b.get("fail_type")), None)
    status, err, failed_stage = "ok", None, None
    if fail_type or bwd_fail:
        src = m if fail_type else bwd_fail
        status = "failed"
        err = f"{src.get('fail_type')}: {src.get('fail_reason') or ''}".strip()
        failed_stage = _failed_stage(a, err)
    elif a.metrics is None:
        status = "failed"
        err = error or "compile did not finish (no compilation_metrics event)"
        failed_stage = _failed_stage(a, err)
    elif m.get("has_guarded_code") is False and error is not None:
        # a BaseException (KeyboardInterrupt, SystemExit) passes torch's `except Exception`:
        # metrics arrive without fail_type, no code was installed, and it ended the block
        status, err = "failed", error
        failed_stage = _failed_stage(a, err)
    return status, err, failed_stage


def _metrics(a: Acc) -> dict:
    """torch's compilation_metrics, trimmed, with the backward's and the run time's."""
    m = a.metrics or {}
    metrics = {k: m[k] for k in _METRIC_KEYS if k in m}
    if a.bwd_metrics:
        metrics["backward"] = [
            {k: b.get(k) for k in ("inductor_compile_time_s", "code_gen_time_s", "fail_type", "fail_reason")}
            for b in a.bwd_metrics
        ]
    if a.runtime_metrics:
        metrics["runtime"] = a.runtime_metrics
    return metrics


def _total_s(a: Acc) -> float | None:
    """The frame's compile time with its backward's (compiled lazily, at the first backward)."""
    m = a.metrics or {}
    total = m.get("entire_frame_compile_time_s")
    if total is not None:
        total += sum(b.get("inductor_compile_time_s") or 0.0 for b in a.bwd_metrics)
    return total


def _where(m: dict, capture: Capture | None) -> tuple[str | None, str | None, int | None]:
    """The compiled code's name, file and first line (torch's wrapper named by its module)."""
    name, filename, line = m.get("co_name"), m.get("co_filename"), m.get("co_firstlineno")
    wrapped = _text.wrapped_callable(name, filename, capture.guards if capture else None)
    if wrapped:  # torch's wrapper around a torch.nn module: named by the module, at its first traced line
        name = f"{wrapped}.forward"
        first = next((n.source for n in (capture.graph.nodes if capture.graph else ()) if n.source), None)
        if first:
            filename, _, at = first.rpartition(":")
            line = int(at)
    return name, filename, line


def _symbol(body: dict, strings: dict[int, str]) -> Symbol:
    def opt(k):
        return None if body.get(k) is None else str(body[k])

    return Symbol(
        symbol=str(body["symbol"]),
        source=opt("source"),
        val=opt("val"),
        vr=opt("vr"),
        user_stack=stack_frames(body.get("user_stack"), strings),
    )


def _specialization(body: dict, strings: dict[int, str]) -> Specialization:
    sources = body.get("sources")
    return Specialization(
        symbol=None if body.get("symbol") is None else str(body["symbol"]),
        sources=tuple(str(x) for x in sources) if isinstance(sources, list) else (),
        value=None if body.get("value") is None else str(body["value"]),
        reason=None if body.get("reason") is None else str(body["reason"]),
        user_stack=stack_frames(body.get("user_stack"), strings),
    )


def _parse_kernels(a: Acc) -> list[Kernel]:
    """The kernels of every output module of a compile; fused nodes from torch's comments
    above each kernel (GPU) or Inductor's provenance tracking (CPU)."""
    prov = _outputcode.provenance_map(a.provenance)
    cid = a.key
    aoti = [
        k
        for role, _p, code in a.outputs
        if role == "aoti kernels"
        for k in _export.cpp_kernels(cid, code, role)
    ]
    return aoti + [
        Kernel(
            compile_id=cid,
            name=k.name,
            language=k.language,
            source=k.source,
            role=role,
            nodes=k.nodes or prov.get(k.name, ()),
            aten_ops=k.aten_ops,
            metadata=a.kernel_info.get(k.name, {}),
        )
        for role, _path, code in a.outputs
        for k in _outputcode.split_kernels(code)
    ]


def _failed_stage(a: Acc, err: str) -> str:
    if a.last_phase:
        return FAILURE_PHASE_STAGE[a.last_phase]
    # no timing events: the first stage with nothing recorded
    kept = a.kept
    if kept.graph is None:
        return "capture"
    if kept.forward is None and kept.inference is None and kept.joint is None:
        return "autograd"
    if not a.post_grad:
        return "decompose"
    if not a.outputs:
        return "fuse" if not a.ir_post else "codegen"
    return "codegen"


def _autotune(d: dict) -> Autotune:
    choices = [AutotuneChoice(str(c[0]), c[1], str(c[2]) if len(c) > 2 else "") for c in d.get("choices", ())]
    choices.sort(key=lambda ch: (ch.time_ms is None, ch.time_ms or 0.0))
    pre = d.get("precompile_s")
    return Autotune(
        str(d.get("op", "?")),
        tuple(d.get("inputs", ())),
        tuple(choices),
        float(pre) if isinstance(pre, (int, float)) else None,
    )

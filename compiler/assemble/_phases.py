"""torch's timed phases (chromium_event records): seconds per phase and per stage."""

from __future__ import annotations

import json

from ..model import _fastjson
from ..parse._names import is_torch_id
from ._events import Event

# torch's timed phases (chromium_event names) that belong to one stage and do not nest
# inside each other; summed per compile into Compile.stage_times_s.
PHASE_STAGE = {
    "bytecode_tracing": "capture",
    "build_guards": "capture",
    "aot_collect_metadata": "autograd",
    "aot_trace_joint_graph": "autograd",
    "min_cut_rematerialization_partition": "autograd",
    "_recursive_pre_grad_passes": "decompose",
    "_recursive_joint_graph_passes": "decompose",
    "_recursive_post_grad_passes": "decompose",
    "GraphLowering.run": "fuse",  # lowering to Inductor IR
    "Scheduler.__init__": "fuse",  # fusion decisions
    "Scheduler.codegen": "codegen",
    "PythonWrapperCodegen.generate": "codegen",
    "PyCodeCache.load_by_key_path": "codegen",
    "async_compile.wait": "codegen",
}

# Phases that tell which stage was running when a compile failed (last one begun wins).
FAILURE_PHASE_STAGE = {
    **PHASE_STAGE,
    # the user's backend got Dynamo's graph; Inductor's own phases, begun later, override this
    "backend_compile": "backend",
    "create_aot_dispatcher_function": "autograd",
    "compile_fx.<locals>.fw_compiler_base": "decompose",
    "compile_fx.<locals>.bw_compiler": "decompose",
    "inductor_compile": "decompose",
    "fx_codegen_and_compile": "decompose",
    "additional_fake_tensor_prop": "decompose",
    "GraphLowering.codegen": "fuse",
    "Scheduler.fused_nodes": "fuse",
    "code_gen": "codegen",
    "compile_file": "codegen",
}


def chromium_timing(ev: Event, acc_for, accs, new_generation=None) -> None:
    payload = ev.payload
    if not payload:
        return
    try:
        data = _fastjson.loads(payload)
        if type(data) is dict and type(data.get("ts")) is float and abs(data["ts"]) >= 2**63:
            data = json.loads(payload)  # an integer stamp past 64 bits: as json reads it
    except json.JSONDecodeError:
        return
    if type(data) is not dict:
        return
    cid = (data.get("args") or {}).get("compile_id") or ev.compile_id
    if type(cid) is not str or not is_torch_id(cid):
        return
    a = acc_for(cid, ev.metadata)
    name, ph, ts = data.get("name"), data.get("ph"), data.get("ts")
    if type(name) is not str or not isinstance(ts, (int, float)):
        return
    if ph == "B":
        if name in _GENERATION_START and new_generation is not None:
            # they begin before dynamo_start: a compile id whose frame compile already
            # ended is torch numbering again after torch._dynamo.reset()
            if any(n == name for n, _, _ in a.spans):
                old = a
                new_generation()
                a = acc_for(cid, ev.metadata)
                a.open_phases, old.open_phases = old.open_phases, {}  # begun since: the new compile's
        a.open_phases.setdefault(name, []).append(ts)
        if name in FAILURE_PHASE_STAGE:
            a.last_phase = name
    elif ph == "E" and a.open_phases.get(name):
        start = a.open_phases[name].pop()
        a.spans.append((name, start, ts))
        a.phase_times[name] = a.phase_times.get(name, 0.0) + (ts - start) / 1e6
        stage = PHASE_STAGE.get(name)
        if stage:
            a.stage_spans.setdefault(stage, []).append((start, ts))


_GENERATION_START = ("dynamo", "entire_frame_compile")


def union_s(spans: list[tuple[float, float]]) -> float:
    """Seconds covered by possibly nested/overlapping phase spans (microsecond stamps)."""
    total, end = 0.0, None
    for s, e in sorted(spans):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total / 1e6


def waterfall(spans: list[tuple[str, float, float]]):
    """torch's phases of one compile placed in time, outermost first at each start; depth is
    how many of the compile's other phases enclose it."""
    from ..model._pipelinetypes import PhaseSpan

    if not spans:
        return ()
    t0 = min(s for _, s, _ in spans)
    out, open_ends = [], []
    for name, s, e in sorted(spans, key=lambda x: (x[1], -x[2])):
        while open_ends and open_ends[-1] <= s:
            open_ends.pop()
        out.append(PhaseSpan(name, round((s - t0) / 1e6, 6), round((e - s) / 1e6, 6), len(open_ends)))
        open_ends.append(e)
    return tuple(out)

"""A compile's mode and config, its cache lookups and its CUDA graphs, from the events the
build kept (compiler/parse/_speed.py reads torch's texts)."""

from __future__ import annotations

import json
from typing import Any

from ..model._cgfacts import observed_sizes, short_reason
from ..model._speedtypes import CacheLookup, CompileConfig, CudaGraphRun, CudaGraphs
from ..parse import _speed as p
from ._acc import Acc, Context
from ._events import Event


def on_cudagraph_log(ctx: Context, ev: Event) -> None:
    """A message of Inductor's cudagraphs logger: filed under the compile it names in
    brackets or that was running when it was logged; one logged while compiled code ran
    names none, and is filed when the build ends (``attach_cudagraph_logs``)."""
    text = ev.payload or ""
    cid, _what, _fact = p.cudagraph_message(text)
    cid = cid or ev.compile_id
    if cid:
        ctx.cudagraph_logs.setdefault(ctx.key(cid), []).append(text)
    else:
        ctx.cudagraph_logs.setdefault("", []).append(f"{ctx.last_compile or ''}\0{text}")


def attach_cudagraph_logs(ctx: Context) -> None:
    """Messages logged while compiled code ran: under the compile whose function holds the
    line torch's stack names (a skip's "Found from: File ..., line N"), else under the last
    compile before the message (torch logs them on the first calls after a compile)."""
    for item in ctx.cudagraph_logs.pop("", []):
        last, _, text = item.partition("\0")
        key = _compile_at(ctx, p.reason_line(text)) or last
        if key:
            ctx.cudagraph_logs.setdefault(key, []).append(text)


def _compile_at(ctx: Context, where: str | None) -> str | None:
    if not where:
        return None
    file, _, line = where.rpartition(":")
    best = None
    for a in ctx.accs.values():
        m = a.metrics or {}
        first = m.get("co_firstlineno")
        if m.get("co_filename") == file and isinstance(first, int) and first <= int(line):
            if best is None or first > best[0]:
                best = (first, a.key)
    return best[1] if best else None


def on_recording_config(ctx: Context, ev: Event) -> None:
    """What the recording itself set in torch's config (an event the recording adds)."""
    body = ev.body
    for name, values in (body if isinstance(body, dict) else {}).items():
        if isinstance(values, dict):
            if "ours" in values:
                ctx.set_by_recording[str(name)] = str(values["ours"])
            ctx.recording_before[str(name)] = str(values.get("before"))


def lookups(a: Acc) -> tuple[CacheLookup, ...]:
    return tuple(p.cache_lookup(kind, state, payload) for kind, state, payload in a.cache_lookups)


def config_of(a: Acc, caches: tuple[CacheLookup, ...], ctx: Context) -> CompileConfig | None:
    """The mode and options, from torch's list of non-default config in the runnable repro;
    where there is none, from the FX-graph cache key's config against the config Dynamo
    logged (what the backend patched in: the mode's and ``options=``'s settings)."""
    m = a.metrics or {}
    fx = next((c for c in caches if c.kind == "fx_graph" and c.component_lines), None)
    comps = p.components(fx.component_lines) if fx else {}
    options = p.runnable_options(a.kept.fx_graph_runnable)
    source = "runnable repro"
    if options is None and comps:
        options, source = _patched(comps, m.get("inductor_config")), "cache key"
    inductor = options is not None or bool(a.outputs) or fx is not None
    if not inductor and not m:
        return None
    options = dict(options or {})
    ours = {k: options.pop(k) for k in list(options) if ctx.set_by_recording.get(k) == options[k]}
    for k in [k for k in options if ctx.recording_before.get(k) == options[k]]:
        del options[k]  # as it was before any recording: listed only because one set it back
    cudagraphs = _flag(options, comps, "triton.cudagraphs", "fx_kwargs[cudagraphs]")
    autotune = _flag(options, comps, "max_autotune", None)
    return CompileConfig(
        mode=p.mode_of(cudagraphs, autotune) if inductor else None,
        backend="inductor" if inductor else None,
        dynamic=_dynamic(m.get("dynamo_config"), options),
        options=options,
        set_by_recording=ours,
        source=source if inductor else "compile metrics",
    )


def _patched(comps: dict[str, tuple[str, str]], logged: Any) -> dict[str, str]:
    try:
        base = json.loads(logged) if isinstance(logged, str) else {}
    except json.JSONDecodeError:
        base = {}
    out = {}
    for name, (_h, value) in comps.items():
        option = p.inductor_option_of(name)
        if option and isinstance(base, dict) and option in base and str(base[option]) != value:
            out[option] = value
    return out


def _flag(options: dict[str, str], comps: dict, name: str, fx_kwarg: str | None) -> bool:
    if name in options:
        return p.is_true(options[name])
    for comp in (fx_kwarg, f"inductor_config[{name}]"):
        if comp and comp in comps:
            return p.is_true(comps[comp][1])
    return False


def _dynamic(dynamo_config: Any, options: dict[str, str]) -> bool | None:
    """torch.compile(dynamic=True) sets assume_static_by_default=False, dynamic=False sets
    automatic_dynamic_shapes=False; both at their defaults: None (automatic)."""
    try:
        cfg = json.loads(dynamo_config) if isinstance(dynamo_config, str) else {}
    except json.JSONDecodeError:
        cfg = {}
    if not isinstance(cfg, dict) or not cfg:
        cfg = {k[len("dynamo.") :]: v == "True" for k, v in options.items() if k.startswith("dynamo.")}
    if cfg.get("assume_static_by_default") is False:
        return True
    if cfg.get("automatic_dynamic_shapes") is False:
        return False
    return None


def cudagraphs_of(a: Acc, config: CompileConfig | None, logs: list[str], cpu_only: bool) -> CudaGraphs | None:
    """CUDA graphs for one compile: asked for by its mode, skipped at compile time (the
    compile's metrics carry torch's reason) or at run time (torch's cudagraphs logger), else
    used where torch recorded a graph or timed wrapping one."""
    asked = config is not None and config.mode in ("reduce-overhead", "max-autotune")
    compile_reason = ((a.metrics or {}).get("cudagraph_skip_reason") or "").strip() or None
    runs: list[CudaGraphRun] = []
    warnings: list[str] = []
    run_reason = None
    for text in logs:
        _cid, what, fact = p.cudagraph_message(text)
        if what == "run":
            runs.append(fact)
        elif what == "tree" and fact:  # a new tree for a size (symint key) not seen before
            runs.append(CudaGraphRun("new size", None, f"symint key {fact}"))
        elif what == "skip" and run_reason is None:
            run_reason = fact
        elif what == "warning":
            warnings.append(fact)
    wrap_us = sum(r.get("runtime_cudagraphify_time_us") or 0 for r in a.runtime_metrics)
    if not (asked or compile_reason or logs):
        return None
    reason, when = (
        (compile_reason, "compile") if compile_reason else (run_reason, "run" if run_reason else None)
    )
    if reason:
        state = "skipped"
    elif runs or wrap_us:
        state = "used"
    elif asked and cpu_only:
        state, reason, when = (
            "skipped",
            "the graph has no CUDA work (CUDA graphs replay GPU work only)",
            "compile",
        )
    else:
        state = "unknown" if asked else "not asked"
    return CudaGraphs(
        state=state,
        reason=reason,
        when=when,
        where=p.reason_line(reason) if reason else None,
        runs=tuple(runs),
        warnings=tuple(warnings),
        cudagraphify_s=wrap_us / 1e6 if wrap_us else None,
        short_reason=short_reason(reason) if reason else None,
        warned_sizes=tuple(observed_sizes(w) for w in warnings),
    )


def cudagraph_share(report, bench) -> float | None:
    """The share of a benchmark's profiled GPU time (its compiled run's kernels, by the graph
    each ran in) that ran in compiles whose CUDA graphs were used; None where the benchmark
    has no launches or the report no CUDA-graph facts for those compiles."""
    launches = [x for x in bench.launch_rows if x.compile_id is not None]
    by_id = {c.id: c.cudagraphs for c in report.compiles}
    if not launches or not any(by_id.get(x.compile_id) for x in launches):
        return None
    total = sum(x.total_ms for x in launches)
    used = sum(x.total_ms for x in launches if (cg := by_id.get(x.compile_id)) and cg.state == "used")
    return used / total if total else None

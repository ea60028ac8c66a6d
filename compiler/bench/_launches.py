"""Each profiled call taken apart (``Benchmark.launches`` / ``timeline``): which kernel ran,
launched by which CPU op, in which compiled graph (or eager module), and where the call's wall
time went between the host and the device.

The profiler links every GPU kernel to the CPU op that launched it (the innermost op open at
the launch: Inductor's ``triton_…`` record around each Triton launch, ``aten::mm`` around a
cuBLAS call); that op's ancestors name the graph (Dynamo's "Torch-Compiled Region: 0/0",
which keeps two graphs' same-named kernels apart) or, eager, the nn.Module (a record the
benchmark opens around each module's forward while it profiles eager). Each call runs inside a
marker and is synchronised, so a kernel belongs to the call it ran in.
"""

from __future__ import annotations

import contextlib
import statistics
from collections.abc import Iterable
from typing import Any

import torch

from ..model._benchtypes import OWN_RANGES, PROFILER_OPS, Launch, Timeline

CALL = "## pt2-explorer call"
HOST = "## pt2-explorer host"  # the call itself, without the synchronisation after it
MODULE = "## pt2-explorer module: "
REGION = "Torch-Compiled Region: "
GRAPH = "## Call CompiledFxGraph"
GUARDS = "TorchDynamo Cache Lookup"
_CPP_PREFIX = "graph_"


def marked(call, cuda: bool):
    """``call`` inside the call marker, synchronised before the marker closes (GPU)."""

    def run():
        with torch.profiler.record_function(CALL):
            with torch.profiler.record_function(HOST):
                out = call()
            if cuda:
                torch.cuda.synchronize()
        return out

    return run


@contextlib.contextmanager
def module_markers(fn: Any):
    """While eager is profiled: a record named after each submodule's path around its forward
    (forward hooks, removed on exit; they return nothing, so the module computes as before)."""
    if not isinstance(fn, torch.nn.Module):
        yield
        return
    handles, stack = [], []

    def pre(path):
        def hook(_m, _args):
            rf = torch.profiler.record_function(MODULE + path)
            rf.__enter__()
            stack.append(rf)

        return hook

    def post(_m, _args, _out):
        if stack:
            stack.pop().__exit__(None, None, None)

    try:
        for path, m in fn.named_modules():
            handles.append(m.register_forward_pre_hook(pre(path)))
            handles.append(m.register_forward_hook(post, always_call=True))
        yield
    finally:
        for h in handles:
            h.remove()
        while stack:
            stack.pop().__exit__(None, None, None)


def is_range(evt) -> bool:
    """A named range (``record_function``: ours, Dynamo's, Inductor's), which the GPU profiler
    mirrors as a device event: neither a kernel nor time the device was busy."""
    return bool(getattr(evt, "is_user_annotation", False)) or evt.name.startswith(
        (*OWN_RANGES, REGION, GUARDS)
    )


def _ancestor(evt, prefix: str) -> str | None:
    p = evt.cpu_parent
    while p is not None:
        if p.name.startswith(prefix):
            return p.name[len(prefix) :]
        p = p.cpu_parent
    return None


def _is_runtime(name: str) -> bool:
    return name.startswith(("cuda", "cu")) and not name.startswith("cudnn")


def _host_kernel(evt) -> str | None:
    """CPU runs: the kind of a host event that is a kernel (an Inductor C++ kernel, or an
    ATen op called directly by a compiled graph or by eager code), else None."""
    name, parent = evt.name, evt.cpu_parent
    if name.startswith(_CPP_PREFIX) and "_cpp_" in name:
        return "cpp"
    if not name.startswith("aten::"):
        return None
    while parent is not None and parent.name.startswith(MODULE):
        parent = parent.cpu_parent
    if parent is not None and parent.name.startswith(("aten::", _CPP_PREFIX)):
        return None
    return "extern"


def take_apart(
    events: Iterable[Any], cuda: bool, triton_names: set[str]
) -> tuple[tuple[Launch, ...], Timeline | None]:
    """``Benchmark.launches`` and ``timeline`` from the events of calls run under ``marked``;
    ``triton_names``: the report's Triton kernels (any other GPU kernel is an extern one)."""
    events = sorted(events, key=lambda e: e.time_range.start)
    cpu = torch.autograd.DeviceType.CPU
    spans = [
        (e.time_range.start, e.time_range.end) for e in events if e.name == CALL and e.device_type == cpu
    ]
    if not spans:
        return (), None
    rows: dict[tuple, list[float]] = {}
    seen: dict[tuple, dict[int, int]] = {}  # (call, graph, op) -> {op event id: its call number}
    per_call = [_CallFacts() for _ in spans]
    for evt in events:
        i = _call_of(evt.time_range.start, spans)
        if i is None:
            continue
        facts = per_call[i]
        if evt.device_type != cpu:
            if not is_range(evt):  # a kernel or a copy, not a range mirrored on the device
                facts.spans.append((evt.time_range.start, evt.time_range.end))
            continue
        facts.host(evt)
        if evt.name in PROFILER_OPS:  # the profiler's own event: its kernels are an op's, counted there
            continue
        for name, us, op_evt, kind in _kernels_of(evt, cuda, triton_names):
            region = _ancestor(op_evt, REGION) or (_ancestor(evt, REGION) if op_evt is not evt else None)
            if region is None and kind != "cpp":
                kind = "eager"
            idx = None
            if kind == "extern":
                numbers = seen.setdefault((i, region, op_evt.name), {})
                idx = numbers.setdefault(op_evt.id, len(numbers) + 1)
            module = None if region is not None else _module_of(op_evt)
            row = rows.setdefault((name, kind, region, op_evt.name, idx, module), [0, 0.0])
            row[0] += 1
            row[1] += us
            facts.kernel_us += us
            facts.launches += 1
    launches = [
        Launch(
            name=k[0],
            kind=k[1],
            calls=n,
            total_ms=us / 1e3,
            compile_id=k[2],
            op=k[3],
            op_index=k[4],
            module=k[5],
        )
        for k, (n, us) in rows.items()
    ]
    launches.sort(key=lambda r: (-r.total_ms, r.name))
    return tuple(launches), _timeline(per_call, spans, cuda)


def _kernels_of(evt, cuda: bool, triton_names: set[str]):
    """(kernel name, µs, the op that launched it, kind) for each kernel ``evt`` stands for."""
    if cuda:
        op = evt.cpu_parent if _is_runtime(evt.name) and evt.cpu_parent is not None else evt
        for k in evt.kernels:
            yield k.name, k.duration, op, "triton" if k.name in triton_names else "extern"
        return
    kind = _host_kernel(evt)
    if kind:
        yield evt.name, evt.time_range.elapsed_us(), evt, kind


def _module_of(evt) -> str | None:
    if evt.name.startswith(MODULE):
        return evt.name[len(MODULE) :]
    return _ancestor(evt, MODULE)


def _call_of(t: float, spans: list[tuple[float, float]]) -> int | None:
    for i, (a, b) in enumerate(spans):
        if a <= t <= b:
            return i
    return None


class _CallFacts:
    def __init__(self) -> None:
        self.spans: list[tuple[float, float]] = []
        self.kernel_us = 0.0
        self.launches = 0
        self.graphs = 0
        self.regions = 0
        self.guard_us = 0.0
        self.graph_us = 0.0
        self.host_us = 0.0

    def host(self, evt) -> None:
        if evt.device_type != torch.autograd.DeviceType.CPU:
            return
        name, us = evt.name, evt.time_range.elapsed_us()
        if name == GUARDS:
            self.guard_us += us
        elif name.startswith(REGION):  # a compiled frame entered, whatever its backend
            self.regions += 1
        elif name.startswith(GRAPH) and _ancestor(evt, GRAPH) is None:
            self.graphs += 1
            self.graph_us += us
        elif name == HOST:
            self.host_us += us


def _timeline(per_call: list[_CallFacts], spans: list[tuple[float, float]], cuda: bool) -> Timeline:
    n = len(per_call)
    gaps: list[float] = []
    busy = 0.0
    for facts in per_call:
        merged = _union(facts.spans)
        busy += sum(b - a for a, b in merged)
        gaps += [b[0] - a[1] for a, b in zip(merged, merged[1:], strict=False) if b[0] > a[1]]
    kernel = sum(f.kernel_us for f in per_call)

    def median_ms(values) -> float:  # host figures: the first profiled call can be an outlier
        return statistics.median(values) / 1e3

    return Timeline(
        call_ms=median_ms([b - a for a, b in spans]),
        kernel_ms=kernel / n / 1e3,
        busy_ms=(busy if cuda else kernel) / n / 1e3,
        launches=sum(f.launches for f in per_call) / n,
        graphs=sum(f.graphs for f in per_call) / n,
        regions=sum(f.regions for f in per_call) / n,
        guard_ms=median_ms([f.guard_us for f in per_call]),
        graph_host_ms=median_ms([f.graph_us for f in per_call]),
        outside_ms=median_ms([max(f.host_us - f.graph_us - f.guard_us, 0.0) for f in per_call]),
        gaps=len(gaps) / n,
        median_gap_us=statistics.median(gaps) if gaps else None,
        max_gap_us=max(gaps) if gaps else None,
    )


def _union(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out

"""Per-kernel time of a compiled function: torch.profiler rows mapped to the report's kernels.

GPU: each CUDA kernel the profiler saw is one row; Triton kernels carry the name Inductor
gave them in the output code (``triton_poi_fused_gelu_1``), so they match ``Kernel.name``;
anything else (cuBLAS / cuDNN GEMMs, memcpy, memset) is an ``extern`` row.
CPU: Inductor's C++ kernels are invisible to the profiler unless compiled with
``torch._inductor.config.cpp.enable_kernel_profile`` (each kernel then opens a RecordFunction
named ``graph_<n>_<kernel>``); the ATen ops the wrapper calls (``aten::mm``) are ``extern`` rows.
Bytes moved per launch come from Inductor's ``kernel_num_gb`` in the Triton source, present
when the kernel was generated with ``torch._inductor.config.benchmark_kernel`` on.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable
from typing import Any

import torch

from ..model._benchtypes import KernelTime
from ..model._devices import device_peak
from ..model._report import Kernel
from ..parse._kernelnames import cpp_kernel_of_event
from ..parse._kernelnames import kernel_num_gb as num_gb_in
from ._launches import is_range

_COMPILED_REGION = ("## Call CompiledFxGraph", "Torch-Compiled Region", "CompiledFunction")


def peak_gb_per_s(device_name: str) -> float | None:
    """The device's peak memory bandwidth from the datasheet table; None: unknown."""
    p = device_peak(device_name)
    return p.gb_per_s if p else None


def kernel_num_gb(k: Kernel) -> float | None:
    return num_gb_in(k.source)


def profile_calls(call: Callable[[], Any], calls: int, cuda: bool) -> list[Any]:
    """Run ``call`` ``calls`` times under torch.profiler; the FunctionEvents."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with _kineto_quiet(), profile(activities=activities) as prof:
        for _ in range(calls):
            call()
        if cuda:
            torch.cuda.synchronize()
    return list(prof.events())


@contextlib.contextmanager
def _kineto_quiet():
    """Kineto (the profiler's C++ side) writes ``USDT: … profiler_start`` / ``profiler_stop``
    lines to stderr at every profile; its log level is read once, from ``KINETO_LOG_LEVEL``,
    when the first profile starts. Its highest level (USDT) sits above ERROR, so only "6" (the
    end of its levels) silences them. Set for that first start and removed again (the user's
    own value, if any, is kept, and child processes see the environment as it was); the
    program's own stderr is untouched."""
    if "KINETO_LOG_LEVEL" in os.environ:
        yield
        return
    os.environ["KINETO_LOG_LEVEL"] = "6"
    try:
        yield
    finally:
        os.environ.pop("KINETO_LOG_LEVEL", None)


def _in_compiled_region(evt: Any) -> bool:
    p = evt.cpu_parent
    while p is not None:
        if p.name.startswith(_COMPILED_REGION):
            return True
        p = p.cpu_parent
    return False


def kernel_rows(
    events: Iterable[Any],
    kernels: Iterable[Kernel],
    calls: int,
    *,
    cuda: bool,
    top: int | None = None,
    by_event: dict[str, Kernel] | None = None,
) -> tuple[KernelTime, ...]:
    """Aggregate profiler events by name and map them to ``kernels``: CPU events through
    ``by_event`` (``graph_<n>_<kernel>`` -> kernel) where given, else by kernel name. A name
    that kernels of several compiles share (one per graph of a graph break, say; the GPU
    profiler cannot tell them apart) maps to all of them: ``compile_id`` "0/0, 1/0"."""
    by_name: dict[str, Kernel] = {}
    ids: dict[str, list[str]] = {}
    for k in kernels:
        by_name[k.name] = k
        if k.compile_id and k.compile_id not in ids.setdefault(k.name, []):
            ids[k.name].append(k.compile_id)
    agg: dict[str, list] = {}  # name -> [kind, calls, total_us, kernel]
    for evt in events:
        name = evt.name
        if cuda:
            if evt.device_type != torch.autograd.DeviceType.CUDA or is_range(evt):
                continue
            k = by_name.get(name)
            kind = k.language if k is not None else "extern"
        else:
            cpp = cpp_kernel_of_event(name)
            if cpp:
                k = (by_event or {}).get(name) or (None if by_event else by_name.get(cpp))
                kind = "cpp"
            elif (
                name.startswith("aten::")
                and _in_compiled_region(evt)
                and not (evt.cpu_parent and evt.cpu_parent.name.startswith(("aten::", "graph_")))
            ):
                k, kind = None, "extern"
            else:
                continue
        row = agg.setdefault(name, [kind, 0, 0.0, k])
        row[1] += 1
        row[2] += evt.time_range.elapsed_us()
    total = sum(r[2] for r in agg.values()) or 1.0
    rows = []
    for name, (kind, n, us, k) in agg.items():
        gb = kernel_num_gb(k) if k is not None else None
        per_launch_s = us / n / 1e6 if n else 0.0
        rows.append(
            KernelTime(
                name=name,
                kind=kind,
                calls=n,
                total_ms=us / 1e3,
                per_call_ms=us / 1e3 / max(calls, 1),
                share=us / total,
                kernel=k.name if k is not None else None,
                compile_id=_compile_ids(k, ids, exact=bool(by_event) and not cuda),
                gb=gb,
                gb_per_s=gb / per_launch_s if gb is not None and per_launch_s > 0 else None,
            )
        )
    rows.sort(key=lambda r: (-r.total_ms, r.name))
    return tuple(rows[:top] if top else rows)


def _compile_ids(k: Kernel | None, ids: dict[str, list[str]], exact: bool) -> str | None:
    if k is None:
        return None
    if exact:
        return k.compile_id
    return ", ".join(ids.get(k.name) or [k.compile_id or ""]) or None

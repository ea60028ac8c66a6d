"""The benchmark's profile of both arms (``compiler.benchmark``'s ``profile=True``): the compiled
call's kernels (CUDA: torch.profiler, Triton kernels matched to the report by name; CPU: C++
kernels timed through a second compile with kernel profiling on, compiler/bench/_cppprofile.py),
each arm's launches by graph or module and its timeline."""

from __future__ import annotations

import dataclasses

from ..model._report import Kernel
from ..why._backend import backend_of
from . import _launches, _profile
from ._cppprofile import profiling_compile

PROFILED_CALLS = 3


def _sync(cuda: bool) -> None:
    if cuda:
        import torch

        torch.cuda.synchronize()


def profiled(run) -> dict:
    """The profile fields of a benchmark run (compiler/bench/_bench.py's ``_Run``): each kernel's
    time over ``PROFILED_CALLS`` compiled calls, matched to the report's kernels, both arms'
    launches and timelines, and how they were profiled."""
    fields: dict = {}
    source = run.compile_report or run.report
    kernels = list(source.kernels)
    compiled = call = run.compiled_call  # one bound method: ``is`` below tells the two calls apart
    note = None
    by_event: dict[str, Kernel] = {}
    if not run.cuda:
        cpp = any(k.language == "cpp" for k in kernels)
        backend = run.compile_kwargs.get("backend", "inductor")
        other = backend_of(list(source.compiles)) if "backend" not in run.compile_kwargs else None
        if other is not None:  # torch's records: no Inductor compile made these graphs
            backend = "a backend other than Inductor"
        if backend == "inductor" and (cpp or not kernels):
            prof_call, by_event, matched, run.prof_ids = profiling_compile(
                run.fn, run.args, run.kwargs, run.compile_kwargs, source
            )
            if run.known_options or (by_event and matched):
                call = prof_call
                note = (
                    "C++ kernels timed through a second compile with "
                    "torch._inductor.config.cpp.enable_kernel_profile=True (the kernels' RecordFunction); "
                    "same graphs, matched to the report's kernels by frame and kernel name"
                )
            else:
                by_event = {}
                note = (
                    "the compiled callable was passed without its torch.compile options and a default "
                    "compile of the function makes kernels this report does not hold: profiled as it "
                    "is, the ATen ops it calls (C++ kernels are invisible to the profiler unless built "
                    "with cpp.enable_kernel_profile)"
                )
        else:
            name = backend if other is not None else repr(backend)
            note = f"backend {name}: no Inductor kernels; the ATen ops the compiled code calls"
    else:
        note = "CUDA kernels from torch.profiler; Triton kernels matched to the report by name"
        if not any(_profile.kernel_num_gb(k) for k in kernels):
            note += "; bytes moved unknown (compile with torch._inductor.config.benchmark_kernel=True)"
    call()
    _sync(run.cuda)
    events = _profile.profile_calls(_launches.marked(call, run.cuda), PROFILED_CALLS, run.cuda)
    fields["kernels"] = _profile.kernel_rows(
        events, kernels, PROFILED_CALLS, cuda=run.cuda, by_event=by_event
    )
    triton = {k.name for k in kernels if k.language == "triton"}
    launches, fields["timeline"] = _launches.take_apart(events, run.cuda, triton)
    if call is not compiled:  # the profiling compile's ids are not the report's
        ids = getattr(run, "prof_ids", {})
        launches = tuple(
            dataclasses.replace(r, compile_id=ids.get(r.compile_id, r.compile_id)) for r in launches
        )
    fields["launches"] = launches
    with _launches.module_markers(run.fn):
        events = _profile.profile_calls(_launches.marked(run.eager_call, run.cuda), PROFILED_CALLS, run.cuda)
    fields["eager_launches"], fields["eager_timeline"] = _launches.take_apart(events, run.cuda, set())
    fields["profiled_calls"] = PROFILED_CALLS
    fields["profile_note"] = note
    return fields

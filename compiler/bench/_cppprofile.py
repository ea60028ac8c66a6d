"""C++ kernels timed by name: Inductor's C++ kernels are invisible to torch.profiler unless
compiled with ``cpp.enable_kernel_profile``, so the benchmark (compiler/bench/_bench.py) compiles
the function a second time with it on, records that compile, and matches its kernels to the
report's by frame and kernel name."""

from __future__ import annotations

import torch

from ..model._report import Kernel, Report
from ..parse._kernelnames import cpp_events_in


def profiling_compile(fn, args: tuple, kwargs: dict, compile_kwargs: dict, source: Report):
    """Compile fn again with C++ kernel profiling on (same options otherwise); returns the
    call, ``{profiled event name: kernel}``, whether every kernel of that compile is one of
    ``source``'s (same frame, same name), and its compile ids as ``source``'s. Event names are
    ``graph_<n>_<kernel>``, written into each kernel's source; the frame tells two graphs'
    same-named kernels apart."""
    from ..listen._capture import recording

    kw = dict(compile_kwargs)
    mode = kw.pop("mode", None)
    options = dict(kw.pop("options", None) or {})
    if mode not in (None, "default"):
        options.update(torch._inductor.list_mode_options(mode, kw.get("dynamic")))
    options["cpp.enable_kernel_profile"] = True
    compiled = torch.compile(fn, **kw, options=options)
    # caches off: the kernel-to-node map (Inductor's provenance) is what joins kernel time to lines
    with recording(fusion_logs=False, caches=False) as rec:
        compiled(*args, **kwargs)
    assert rec.report is not None
    prof = rec.report

    def frame_of(r: Report, compile_id: str | None) -> tuple:
        c = next((c for c in r.compiles if c.id == compile_id), None)
        return (c.name, c.filename, c.line) if c else (None, None, None)

    theirs: dict[tuple, Kernel] = {}
    for k in source.kernels:  # the last compile of a frame wins: its code is the one that runs
        theirs[(frame_of(source, k.compile_id), k.name)] = k
    by_event: dict[str, Kernel] = {}
    # the second compile's graphs are the report's: same frame, same order
    prof_ids = {c.id: mine.id for c, mine in zip(prof.compiles, source.compiles, strict=False)}
    # and every other compile of it (a frame that compiled here and not in the program): its own
    prof_ids.update({c.id: c.id for c in prof.compiles if c.id not in prof_ids})
    matched = True
    for k in prof.kernels:
        mine = theirs.get((frame_of(prof, k.compile_id), k.name))
        matched = matched and mine is not None
        for event in cpp_events_in(k.name, k.source):
            by_event[event] = mine or k
    return (lambda: compiled(*args, **kwargs)), by_event, matched, prof_ids

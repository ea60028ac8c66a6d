"""The kernels' parts of a compiled call as causes: library kernels compile does not touch
(with their precision and how close to the device's peak they ran), generated kernels held
against eager's, C++ kernels the profile did not see, the kernels of a backend that runs the
graph with eager kernels, and the compile time not yet paid off.
Torch-free."""

from __future__ import annotations

import math
from typing import NamedTuple

from ..model._benchtypes import Benchmark
from ..model._report import Report
from ..model._verdicttypes import Cause
from ._backend import OtherBackend
from ._fixes import INDUCTOR, TF32
from ._gputime import KernelCost, eager_costs
from ._roofline import of_peak, over_peak, precision, roofline
from ._text import short


def library(lib: list[KernelCost], share, bench: Benchmark) -> Cause | None:
    if not lib:
        return None
    ms = sum(k.ms for k in lib)
    ev = []
    places = {p.name: p for p in roofline(tuple(lib), bench)}
    no_tf32 = False
    for k in sorted(lib, key=lambda k: -k.ms)[:3]:
        cuda_mm = k.family == "matmul" and bench.device == "cuda"
        prec, why = precision(k, bench) if cuda_mm else (None, "")
        no_tf32 |= cuda_mm and prec == "fp32"
        p = places.get(k.name)
        at = (
            f", {of_peak(p.of_bound, p.bound)} of the {p.precision or ''} {p.bound}-bound peak".replace(
                "  ", " "
            )
            if p and p.of_bound
            else ""
        )
        ev.append(f"{short(k.name)}: {k.ms:.4g} ms a call ({k.family}{', ' + why if why else ''}{at})")
    if bench.device == "cuda":
        ev.append(
            f"matmul settings while timing: float32_matmul_precision={bench.matmul_precision!r}, "
            f"allow_tf32={bench.allow_tf32}"
            if bench.matmul_precision
            else "matmul precision not recorded"
        )
    fix = TF32 if no_tf32 else None
    return Cause("library", "library kernels compile does not touch", ms, share(ms), tuple(ev), fix)


def generated(
    gen: list[KernelCost],
    share,
    bench: Benchmark,
    missing: list[str],
    cpp_hidden: bool = False,
    attention: bool = False,
) -> Cause | None:
    """``cpp_hidden``: the graphs' C++ kernels were not profiled (``cpp_unprofiled``): the
    rest is not held against all of eager's kernels. ``attention``: the attention cause holds
    eager's fused attention ops, their small helper kernels (cuDNN's seed unpacking) too."""
    if not gen:
        return None
    ms = sum(k.ms for k in gen)
    ev = [f"{len(gen)} kernels, {sum(k.launches for k in gen):.0f} launches a call"]
    eager = [k for k in eager_costs(bench) if not k.library and not (attention and k.family == "attention")]
    if cpp_hidden:
        ev.append("the graphs' C++ kernels were not profiled: these are not compared with eager's kernels")
        slow = False
    elif eager:
        em = sum(k.ms for k in eager)
        verb = "slower than" if ms > em else "faster than"
        ev.insert(
            0, f"{ms:.4g} ms a call, {verb} the {em:.4g} ms of eager's {len(eager)} kernels they replace"
        )
        slow = ms > em
    else:
        missing.append("eager's kernels were not profiled: generated kernels are not compared with eager's")
        slow = False
    places = {p.name: p for p in roofline(tuple(gen), bench)}
    for k in gen[:3]:
        p = places.get(k.name)
        at = (
            f" at {p.gb_per_s:.0f} GB/s, {of_peak(p.of_bound)} of the device's peak bandwidth"
            + (f" ({over_peak(p.of_bound, p.bound)})" if over_peak(p.of_bound, p.bound) else "")
            if p and p.gb_per_s and p.of_bound
            else ""
        )
        ev.append(f"{short(k.name)}: {k.ms:.4g} ms{at}")
    title = "generated kernels slower than eager's" if slow else "generated kernels"
    return Cause("generated" if slow else "generated-ok", title, ms, share(ms), tuple(ev))


def compile_cause(bench: Benchmark, report: Report | None = None) -> Cause:
    """The compile time and when it pays off, from the cold compile (``break_even``); where no
    compile of the function installed code (a frame that fell back to eager), what its compile
    attempts took, as torch's compilation_metrics say."""
    be = break_even(report, bench) if report is not None else None
    if be is not None and be.calls is None:
        ev = (
            f"compile took {be.seconds:.2f} s ({be.which}) and compiled is not faster: it is never paid off",
        )
    elif be is not None:
        ev = (f"compile took {be.seconds:.2f} s ({be.which}); paid off after {math.ceil(be.calls):,} calls",)
    elif bench.compile_time_s is not None:  # no eager timing: no break-even
        ev = (f"compile took {bench.compile_time_s:.2f} s",)
    else:
        ev = ()
    fell = fell_back_time(report)
    ev += (fell,) if fell else () if ev else ("compile time not recorded",)
    return Cause("compile", "compile time not yet paid off", None, None, ev)


class BreakEven(NamedTuple):
    """Calls after which the compile has paid for itself (None: never, compiled is not
    faster), the compile time it is counted from, and which time that is, in words."""

    calls: float | None
    seconds: float
    which: str


def break_even(report: Report, bench: Benchmark) -> BreakEven | None:
    """The break-even from the cold compile: the function's compiles as recorded where none
    hit a cache; where some did, their recorded time plus Inductor's cold compile of the same
    graphs that the fill-in measured (``Regenerated.cold_time_s``), else the warm time, said
    as warm. None where the compile time or a timing is missing."""
    t, e, c = bench.compile_time_s, bench.eager, bench.compiled
    if t is None or e is None or c is None:
        return None
    own = set(bench.compile_ids)
    comps = (
        [x for x in report.compiles if x.id in own]
        if own
        else [x for x in report.compiles if x.status == "ok"]
    )
    hits = [x for x in comps if any(lk.state == "hit" for lk in x.caches)]
    cold = [
        x.regenerated.cold_time_s for x in hits if x.regenerated and x.regenerated.cold_time_s is not None
    ]
    if not comps:  # compiles this report does not hold: their time as the benchmark counted it
        seconds, which = t, "as the benchmark counted it"
    elif not hits:
        seconds, which = t, "cold: no cache hit"
    elif len(cold) == len(hits):
        seconds = t + sum(cold)
        which = (
            f"cold: the recorded {t:.2f} s, whose {len(hits)} compile{'s' * (len(hits) > 1)} hit the caches, "
            f"plus Inductor's cold compile of the same graphs, {sum(cold):.2f} s, measured by the fill-in"
        )
    else:
        seconds = t
        which = (
            f"warm: {len(hits)} of its compiles hit the caches; a cold compile takes longer "
            "(pt2-explorer report REPORT.json --fill measures it)"
        )
    saved_s = (e.median_ms - c.median_ms) / 1e3
    return BreakEven(seconds / saved_s if saved_s > 0 else None, seconds, which)


def fell_back_time(report: Report | None) -> str | None:
    """For frames whose every call runs eagerly: that they fell back, and what their compile
    attempts took (torch's compilation_metrics); None where no frame fell back."""
    if report is None:
        return None
    fallen = {f.id for f in report.frames if f.compiles == 0}
    tried = [c for c in report.compiles if c.frame in fallen]
    if not tried:
        return None
    timed = [c.compile_time_s for c in tried if c.compile_time_s is not None]
    ids = ", ".join(f"[{c.id}]" for c in tried[:4]) + (" …" if len(tried) > 4 else "")
    its = "their compile attempts" if len(tried) > 1 else "its compile attempt"
    took = f"{its} took {sum(timed):.2f} s" if timed else f"torch recorded no time for {its}"
    return f"no compile installed code: {ids} fell back to eager; {took} (torch's compilation_metrics)"


def cpp_unprofiled(report: Report, bench: Benchmark) -> bool:
    """A CPU benchmark whose compiles have Inductor's C++ kernels, none of which the profile
    saw (profiled as the callable is, without ``cpp.enable_kernel_profile``): their time is
    inside the compiled graphs' host time, not host overhead."""
    own = set(bench.compile_ids) or {c.id for c in report.compiles}
    cpp = any(k.language == "cpp" for i in own for k in report.kernels_of(i))
    return bench.device == "cpu" and cpp and not any(x.kind == "cpp" for x in bench.launch_rows)


def unprofiled(ms: float, share, bench: Benchmark) -> Cause | None:
    """The compiled graphs' own time where their C++ kernels were not profiled."""
    if ms <= 0:
        return None
    ev = (
        f"{ms:.4g} ms a call inside the compiled graphs, outside every profiled op: their C++ kernels "
        "run there (and the graphs' wrappers), invisible to the profiler",
        bench.profile_note or "C++ kernels not profiled",
    )
    return Cause("cpp-unprofiled", "generated C++ kernels, not profiled", ms, share(ms), ev)


def backend_cause(ob: OtherBackend, kernels: list[KernelCost], share) -> Cause:
    """The cause: the graphs' kernels (all but the library ones, counted as such) are eager's.
    "eager kernels run the graph" is said where the profile shows it: every kernel an ATen op."""
    ms = sum(k.ms for k in kernels)
    ids = ", ".join(f"[{i}]" for i in ob.compile_ids[:4]) + (" …" if len(ob.compile_ids) > 4 else "")
    if ob.aot:
        ran = f"{ids}: AOTAutograd traced the graphs and no Inductor stage ran (no fusion, no output code)"
    else:
        ran = f"{ids}: Dynamo's graph went to the backend as captured: no AOTAutograd, no Inductor stage ran"
    aten = all(k.kind in ("extern", "eager") for k in kernels)
    ev = [ran]
    if kernels:
        n = sum(k.launches for k in kernels)
        ev.append(
            f"{n:.0f} kernels a call, each an ATen op as eager runs it ({ms:.4g} ms a call), none generated"
            if aten
            else f"{n:.0f} kernels a call ({ms:.4g} ms), none of them Inductor's"
        )
    ev.append(
        "a backend that runs the graph with eager kernels is for checking the capture, not for speed: "
        "at best it matches eager, and its guards and wrappers cost host time"
    )
    who = f"backend {ob.name}" if ob.name else "a backend other than Inductor"
    title = f"{who}: no fused kernels, " + ("eager kernels run the graph" if aten else "no Inductor kernels")
    return Cause("backend", title, ms, share(ms), tuple(ev), INDUCTOR)

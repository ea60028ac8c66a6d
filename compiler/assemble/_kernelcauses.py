"""The kernels' parts of a compiled call as causes: library kernels compile does not touch
(with their precision and how close to the device's peak they ran), generated kernels held
against eager's, C++ kernels the profile did not see, the kernels of a backend that runs the
graph with eager kernels, and the compile time not yet paid off.
Torch-free."""

from __future__ import annotations

from ..model._benchtypes import Benchmark
from ..model._report import Report
from ..model._verdicttypes import Cause
from ._backend import OtherBackend
from ._fixes import INDUCTOR, TF32
from ._gputime import KernelCost, eager_costs
from ._roofline import precision, roofline
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
            f", {of_peak(p.of_bound)} of the {p.precision or ''} {p.bound}-bound peak".replace("  ", " ")
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
            if p and p.gb_per_s and p.of_bound
            else ""
        )
        ev.append(f"{short(k.name)}: {k.ms:.4g} ms{at}")
    title = "generated kernels slower than eager's" if slow else "generated kernels"
    return Cause("generated" if slow else "generated-ok", title, ms, share(ms), tuple(ev))


def compile_cause(bench: Benchmark) -> Cause:
    t = bench.compile_time_s
    if t is None:
        ev = ("compile time not recorded",)
    elif bench.break_even_calls is None:
        ev = (f"compile took {t:.2f} s and compiled is not faster: it is never paid off",)
    else:
        ev = (f"compile took {t:.2f} s; paid off after {bench.break_even_text}",)
    return Cause("compile", "compile time not yet paid off", None, None, ev)


def of_peak(x: float) -> str:
    """A share of a peak, as a percentage that is not 0% where the share is not 0: a kernel at
    16 GB/s of 3350 is at 0.5%, one at 2 GB/s under 0.1%."""
    if x >= 0.01:
        return f"{x:.0%}"
    return f"{x:.1%}" if x >= 0.001 else "under 0.1%"


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

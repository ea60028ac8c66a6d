"""The kernels' parts of a compiled call as causes: library kernels compile does not touch
(with their precision and how close to the device's peak they ran), generated kernels held
against eager's, and the compile time not yet paid off. Torch-free."""

from __future__ import annotations

from ..model._benchtypes import Benchmark
from ..model._verdicttypes import Cause
from ._fixes import TF32
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
    for k in lib[:3]:
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


def generated(gen: list[KernelCost], share, bench: Benchmark, missing: list[str]) -> Cause | None:
    if not gen:
        return None
    ms = sum(k.ms for k in gen)
    ev = [f"{len(gen)} kernels, {sum(k.launches for k in gen):.0f} launches a call"]
    eager = [k for k in eager_costs(bench) if not k.library]
    if eager:
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

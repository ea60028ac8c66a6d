"""Why isn't compiled faster? One verdict per benchmark (``compiler.verdict``), from measured facts.

The compiled call's median time is split into parts that add up to it:

- **library kernels** compile does not touch (cuBLAS / cuDNN GEMMs, attention kernels, ATen
  matmuls on CPU): their profiled time; the evidence says their precision (fp32 without TF32)
  and how close to the device's peak they ran;
- **generated kernels** (Triton / C++) and the other ATen kernels the graph calls: held
  against the eager kernels they replace (eager's kernels other than the library ones), when
  the benchmark profiled eager;
- **the host's time the device waits for** (the median minus the kernels' time), split by the
  profiled timeline into guard evaluation, Python between graphs (more than one graph a call:
  graph breaks) and the rest: launching kernels and the wrappers around them (launch-bound;
  CUDA graphs remove it).

Compile time not yet paid off is said beside them (break-even in calls). A fact the benchmark
did not record is named as missing, never filled in. Torch-free.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model._benchtypes import Benchmark
from ..model._report import Report
from ..parse._speed import short_reason
from ._gputime import KernelCost, eager_costs, kernel_costs
from ._roofline import precision, roofline
from ._speed import cudagraph_share


@dataclass(frozen=True)
class Cause:
    key: str  # library | generated | launch | breaks | compile
    title: str
    ms: float | None  # of the compiled call (None: compile time, paid once)
    share: float | None  # of the compiled call's median
    evidence: tuple[str, ...] = ()


@dataclass(frozen=True)
class Verdict:
    name: str  # the benchmark's
    headline: str
    speedup: float | None
    eager_ms: float | None
    compiled_ms: float | None
    main: str | None  # the key of the cause the headline names
    causes: tuple[Cause, ...] = ()
    missing: tuple[str, ...] = ()  # facts the benchmark did not record, and what that leaves open


def cudagraphs(bench: Benchmark, report: Report | None = None) -> tuple[bool, str]:
    """Whether the compiled arm ran under CUDA graphs, and why we think so: from the report's
    own CUDA-graph facts where it has them (the share of the profiled GPU time that ran in
    compiles whose graphs were used, and each skip's reason), else the benchmark's mode."""
    share = cudagraph_share(report, bench) if report is not None else None
    if share is not None:
        skips = [
            f"[{c.id}] skipped: {short_reason(c.cudagraphs.reason or '')}"
            for c in report.compiles
            if c.cudagraphs is not None and c.cudagraphs.state == "skipped"
        ]
        why = f"{share:.0%} of the profiled GPU time ran under CUDA graphs" + "".join(
            f"; {s}" for s in skips[:3]
        )
        return share > 0.5, why
    on = bench.config.mode == "reduce-overhead"
    return on, f"mode={bench.config.mode or 'default'}: CUDA graphs {'on' if on else 'off'}"


def verdict(report: Report, bench: Benchmark) -> Verdict:
    """The verdict on ``bench`` (one of ``report.benchmarks``, or a mode row's)."""
    e = bench.eager.median_ms if bench.eager else None
    c = bench.compiled.median_ms if bench.compiled else None
    if c is None or not (bench.kernels or bench.launches):
        why = bench.error or ("no compiled timing" if c is None else "no kernel profile (profile=False)")
        return Verdict(bench.name, f"no verdict: {why}", bench.speedup, e, c, None)
    costs = kernel_costs(report, bench)
    missing: list[str] = []
    lib = [k for k in costs if k.library]
    gen = [k for k in costs if not k.library]
    lib_ms, gen_ms = sum(k.ms for k in lib), sum(k.ms for k in gen)
    idle = max(c - lib_ms - gen_ms, 0.0)
    causes = [
        _library(lib, lib_ms, c, bench),
        _generated(gen, gen_ms, c, bench, missing),
        *_host(idle, c, bench, report, missing),
    ]
    causes = [x for x in causes if x is not None]
    causes.append(_compile(bench))
    main = _main(causes, bench)
    return Verdict(
        bench.name,
        _headline(main, bench, report),
        bench.speedup,
        e,
        c,
        main.key if main else None,
        tuple(causes),
        tuple(missing),
    )


def _share(ms: float, c: float) -> float:
    return ms / c if c > 0 else 0.0


def _library(lib: list[KernelCost], ms: float, c: float, bench: Benchmark) -> Cause | None:
    if not lib:
        return None
    ev = []
    places = {p.name: p for p in roofline(tuple(lib), bench)}
    for k in lib[:3]:
        cuda_mm = k.family == "matmul" and bench.device == "cuda"
        prec, why = precision(k, bench) if cuda_mm else (None, "")
        p = places.get(k.name)
        at = (
            f", {p.of_bound:.0%} of the {p.precision or ''} {p.bound}-bound peak".replace("  ", " ")
            if p and p.of_bound
            else ""
        )
        ev.append(f"{_short(k.name)}: {k.ms:.4g} ms a call ({k.family}{', ' + why if why else ''}{at})")
    if bench.device == "cuda":
        ev.append(
            f"matmul settings while timing: float32_matmul_precision={bench.matmul_precision!r}, "
            f"allow_tf32={bench.allow_tf32}"
            if bench.matmul_precision
            else "matmul precision not recorded"
        )
    return Cause("library", "library kernels compile does not touch", ms, _share(ms, c), tuple(ev))


def _generated(
    gen: list[KernelCost], ms: float, c: float, bench: Benchmark, missing: list[str]
) -> Cause | None:
    if not gen:
        return None
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
            f" at {p.gb_per_s:.0f} GB/s, {p.of_bound:.0%} of peak bandwidth"
            if p and p.gb_per_s and p.of_bound
            else ""
        )
        ev.append(f"{_short(k.name)}: {k.ms:.4g} ms{at}")
    title = "generated kernels slower than eager's" if slow else "generated kernels"
    return Cause("generated" if slow else "generated-ok", title, ms, _share(ms, c), tuple(ev))


def _host(idle: float, c: float, bench: Benchmark, report: Report, missing: list[str]) -> list[Cause]:
    if idle <= 0:
        return []
    t = bench.timeline
    on, why = cudagraphs(bench, report)
    what = "the GPU waits for the host" if bench.device == "cuda" else "host time outside kernels"
    if t is None:
        missing.append("no timeline: the host's time is not split into guards, graph breaks and launches")
        ev = (f"{idle:.4g} ms a call: the compiled median minus its kernels' profiled time", why)
        return [Cause("launch", f"{what}: launches, guards, Python (not split)", idle, _share(idle, c), ev)]
    host = max(t.call_ms - t.busy_ms, 1e-9)
    guard = min(t.guard_ms, host)
    between = min(t.outside_ms, host - guard) if t.graphs > 1 else 0.0
    scale = idle / host
    out = []
    breaks = [b for b in report.graph_breaks]
    if guard or between:
        ms = (guard + between) * scale
        ev = [f"guard evaluation {t.guard_ms:.3g} ms a call (profiled)"]
        if t.graphs > 1:
            ev.insert(
                0, f"{t.graphs:.0f} graphs a call, {t.outside_ms:.3g} ms of Python between them (profiled)"
            )
            ev += [f"graph break at {b.filename}:{b.line}: {b.type}" for b in breaks[:3]]
        title = "graph breaks: Python between graphs, guards" if t.graphs > 1 else "guard evaluation"
        out.append(Cause("breaks", title, ms, _share(ms, c), tuple(ev)))
    rest = max(idle - (guard + between) * scale, 0.0)
    gaps = f", median gap {t.median_gap_us:.1f} µs" if t.median_gap_us is not None else ""
    ev = (f"{t.launches:.0f} launches a call, {t.gaps:.0f} idle gaps{gaps}", why)
    title = (
        "launch-bound: the GPU waits between launches"
        if bench.device == "cuda"
        else "host overhead around the kernels"
    )
    out.append(Cause("launch", title, rest, _share(rest, c), ev))
    return out


def _compile(bench: Benchmark) -> Cause:
    t, be = bench.compile_time_s, bench.break_even_calls
    if t is None:
        ev = ("compile time not recorded",)
    elif be is None:
        ev = (f"compile took {t:.3g} s and compiled is not faster: it is never paid off",)
    else:
        ev = (f"compile took {t:.3g} s; paid off after {be:,.0f} calls",)
    return Cause("compile", "compile time not yet paid off", None, None, ev)


def _main(causes: list[Cause], bench: Benchmark) -> Cause | None:
    """The largest part; generated kernels that beat eager's are no cause, unless eager was
    not profiled and they are the largest part (then the headline says they are unjudged)."""
    ranked = [x for x in causes if x.share is not None]
    top = max(ranked, key=lambda x: x.share or 0.0, default=None)
    if top is not None and top.key == "generated-ok" and bench.eager_launches:
        ranked = [x for x in ranked if x.key != "generated-ok"]
        top = max(ranked, key=lambda x: x.share or 0.0, default=None)
    return top


def _headline(main: Cause | None, bench: Benchmark, report: Report | None = None) -> str:
    s = bench.speedup
    lead = f"compiled ×{s:.2f} of eager" if s is not None else "compiled"
    if main is None:
        return f"{lead}: nothing left that compile could win"
    share = f"{main.share:.0%} of the compiled call"
    if main.key == "library":
        detail = next((e for e in main.evidence if "TF32" in e or "tf32" in e), "")
        tail = "; the matmul is fp32 without TF32" if "no TF32" in detail else ""
        return f"{lead}: compile has little left to win here: {share} is library kernels it does not change{tail}"
    if main.key == "launch" and bench.device != "cuda":
        return f"{lead}: host overhead: {share} is outside the kernels (guards, wrappers, launches)"
    if main.key == "launch":
        on, why = cudagraphs(bench, report)
        tip = ""
        if not on and bench.device == "cuda":
            tip = (
                f"; CUDA graphs: {why}"
                if bench.config.mode == "reduce-overhead"
                else "; CUDA graphs are off (mode='reduce-overhead' turns them on)"
            )
        return f"{lead}: launch-bound: {share} is the device waiting for the host{tip}"
    if main.key == "generated-ok":
        return f"{lead}: {share} is generated kernels (eager's kernels were not profiled to compare them)"
    return f"{lead}: {main.title}: {share}"


def _short(name: str, n: int = 60) -> str:
    return name if len(name) <= n else name[: n - 1] + "…"

"""The benchmark's records (``compiler.benchmark``, ``compiler.compare_modes``): timings, the
per-kernel profile, accuracy, the configuration and the whole result. Frozen dataclasses,
saved with the report (``Report.benchmarks``; docs/report-schema.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

# the profiler's named ranges (record_function), never kernels: the benchmark's own markers and
# torch's ("## Call CompiledFxGraph …"); on the GPU the profiler mirrors them as annotations
OWN_RANGES = ("## ",)
# the profiler's own CPU events, which CUPTI links to a kernel already launched by an op: a
# kernel under one is a second count of it
PROFILER_OPS = frozenset({"Activity Buffer Request"})


@dataclass(frozen=True)
class Timing:
    """Times of one arm (eager or compiled), one sample per call, in milliseconds."""

    median_ms: float
    p25_ms: float
    p75_ms: float
    min_ms: float
    max_ms: float
    reps: int
    samples_ms: tuple[float, ...] = ()
    # CPU: how long the median call's threads waited, runnable, for a core (Linux's schedstat
    # run delay); None where not measured (GPU, another OS, files written before it)
    waited_ms: float | None = None

    @property
    def iqr_ms(self) -> float:
        return self.p75_ms - self.p25_ms


@dataclass(frozen=True)
class KernelTime:
    """One row of the per-kernel profile of the compiled run (torch.profiler)."""

    name: str  # as the profiler named it, e.g. "triton_poi_fused_gelu_1", "graph_0_cpp_fused_relu_0"
    kind: str  # triton | cpp | extern (cuBLAS, cuDNN, an ATen op the wrapper calls) | other
    calls: int  # launches over the profiled calls
    total_ms: float  # summed over the profiled calls
    per_call_ms: float  # total_ms / profiled calls of the compiled function
    share: float  # of the summed time of all rows (the rows' shares add up to 1)
    kernel: str | None = None  # the report kernel it is (Kernel.name), None for extern rows
    compile_id: str | None = None  # that kernel's compile
    gb: float | None = None  # bytes moved per launch in GB (Inductor's kernel_num_gb), where known
    gb_per_s: float | None = None  # achieved bandwidth: gb / time per launch


@dataclass(frozen=True)
class Launch:
    """The kernels one place of the run launched, over the profiled calls: one kernel name, from
    one CPU op, in one compiled graph (or, eager, one module)."""

    name: str  # the kernel as the profiler named it (GPU kernel, C++ kernel event, ATen op on CPU)
    kind: str  # triton | cpp | extern
    calls: int
    total_ms: float
    compile_id: str | None = None  # the graph it ran in ("Torch-Compiled Region: 0/0"); None: eager
    op: str | None = None  # the CPU op that launched it: "aten::mm", the Triton kernel's own name
    op_index: int | None = None  # which call of ``op`` in its graph, from 1 (extern kernels)
    module: str | None = None  # eager: the innermost nn.Module path it ran in ("" the root)


@dataclass(frozen=True)
class Timeline:
    """One arm's call as the profiler saw it, per call: where the wall time went between the
    host and the device. Kernel figures are averaged over the profiled calls (as the launches'
    are), host figures are the median call's (the first profiled call can be an outlier)."""

    call_ms: float  # the call, start to its last kernel's end (synchronised)
    kernel_ms: float  # summed kernel time (GPU; CPU: the C++ kernels and ATen ops)
    busy_ms: float  # GPU time with some kernel running (the union of the kernels' spans)
    launches: float  # kernels launched
    graphs: float = 0.0  # compiled graphs run ("## Call CompiledFxGraph": Inductor's alone)
    # compiled frames entered ("Torch-Compiled Region", whatever the backend); None: not recorded
    regions: float | None = None
    guard_ms: float = 0.0  # Dynamo's guard evaluation ("TorchDynamo Cache Lookup")
    graph_host_ms: float = 0.0  # host time inside the compiled graphs (their wrappers, launches)
    outside_ms: float = 0.0  # host time outside the graphs and guards: Python between graphs, wrappers
    gaps: float = 0.0  # idle spans of the GPU between two kernels
    median_gap_us: float | None = None
    max_gap_us: float | None = None


@dataclass(frozen=True)
class Accuracy:
    """Compiled output against eager output, same inputs, same starting state."""

    ok: bool  # every tensor within atol + rtol * |eager|
    max_abs: float
    max_rel: float  # max_abs over the largest |eager| value of that tensor (0 when both are 0)
    atol: float
    rtol: float
    tensors: int  # how many output tensors were compared
    note: str | None = None  # e.g. a structure mismatch, the state left behind
    # the function drew random numbers (dropout): compiled code draws them otherwise than
    # eager unless torch._inductor.config.fallback_random (``random_words``)
    random: bool = False

    @property
    def random_words(self) -> str | None:
        """Why random numbers make the outputs differ, with the setting that draws them as
        eager does; None where the function drew none."""
        return RANDOM if self.random else None


FALLBACK_RANDOM = "torch._inductor.config.fallback_random = True"
RANDOM = (
    "the function draws random numbers (dropout, a random init): compiled code draws them otherwise "
    f"than eager (Inductor's own random kernels), so its outputs differ by design; {FALLBACK_RANDOM} "
    "draws them as eager does, to compare"
)


@dataclass(frozen=True)
class BenchConfig:
    mode: str | None = None  # torch.compile mode: None/"default", "reduce-overhead", "max-autotune"
    dynamic: bool | None = None
    autocast: str | None = None  # autocast dtype ("bfloat16") or None for none
    backend: str | None = None


@dataclass(frozen=True)
class Benchmark:
    """Eager against compiled on the same inputs (``compiler.benchmark``); docs/benchmark.md."""

    name: str
    device: str  # cpu | cuda
    device_name: str  # "NVIDIA H100 80GB HBM3", the CPU's model name
    method: str  # how it was timed, in words
    warmup: int
    config: BenchConfig = field(default_factory=BenchConfig)
    eager: Timing | None = None  # None when that arm raised or was interrupted before a sample
    compiled: Timing | None = None
    speedup: float | None = None  # eager median / compiled median
    threads: int | None = None  # torch.get_num_threads() (CPU)
    compile_time_s: float | None = None  # torch's compilation_metrics of the compiles benchmarked
    stage_times_s: dict[str, float] = field(default_factory=dict)
    break_even_calls: float | None = None  # compile time / time saved per call; None: never
    peak_memory_eager: int | None = None  # bytes, max_memory_allocated over one call (GPU)
    peak_memory_compiled: int | None = None
    accuracy: Accuracy | None = None
    kernels: tuple[KernelTime, ...] = ()
    profiled_calls: int = 0
    profile_note: str | None = None  # how kernels were profiled, or why not
    peak_gb_per_s: float | None = None  # the device's peak memory bandwidth, where known
    state: str = "unchanged"  # unchanged | restored (mutates=True) ; RNG state is always restored
    mutated: tuple[str, ...] = ()  # what the function changed in place (restored)
    error: str | None = None  # an arm that raised (compiled only: eager errors propagate)
    interrupted: bool = False  # KeyboardInterrupt: the samples taken so far
    torch_version: str | None = None
    # "[0/3] <recompile reason>": compiles torch made during the benchmark's calls of the compiled
    # callable (accuracy, warm-up, timed, profiled), none of them the recording's: the benchmark
    # then timed code the program did not run, and no cause is named from it
    compiles_while_timing: tuple[str, ...] = ()
    launches: tuple[Launch, ...] = ()  # the compiled run's kernels by graph and launching op
    timeline: Timeline | None = None  # the compiled call, host against device
    eager_launches: tuple[Launch, ...] = ()  # the eager run's kernels by module and op
    eager_timeline: Timeline | None = None
    matmul_precision: str | None = None  # torch.get_float32_matmul_precision() while timing
    allow_tf32: bool | None = None  # torch.backends.cuda.matmul.allow_tf32 while timing (GPU)
    # the compiles counted as the function's own (compile_time_s, its guards): of a program's
    # several compiled functions (record --bench), those that began during its calls
    compile_ids: tuple[str, ...] = ()
    # the state every benchmark call ran under, as code ("torch.no_grad(), torch.autocast(...)"):
    # the recorded call's (compiler/listen/_callstate.py); "" torch's defaults; None: not said
    context: str | None = None
    # lines the function wrote to stdout and stderr during the benchmark's calls, kept out of the
    # program's output (the program's own calls printed what they print)
    printed_lines: int = 0

    @property
    def launch_rows(self) -> tuple[Launch, ...]:
        """``launches`` without a second count of a kernel: a row whose launching "op" is the
        profiler's own event (CUPTI's "Activity Buffer Request", recorded before 2026-11-26)
        where another row launched that kernel."""
        return _counted_once(self.launches)

    @property
    def eager_launch_rows(self) -> tuple[Launch, ...]:
        """``eager_launches`` without a second count of a kernel (``launch_rows``)."""
        return _counted_once(self.eager_launches)

    @property
    def break_even_text(self) -> str:
        """``12,658 calls`` (the compile time over the time saved a call, rounded up), or why
        there is none."""
        if self.break_even_calls is None:
            return "never (compiled is not faster)" if self.speedup is not None else "—"
        return f"{math.ceil(self.break_even_calls):,} calls"

    @property
    def speedup_words(self) -> str:
        """The speedup said in words: ``compiled is 1.54× slower than eager``."""
        return speedup_words(self.speedup)

    @property
    def kernel_rows(self) -> tuple[KernelTime, ...]:
        """``kernels`` without the profiler's named ranges (``## pt2-explorer host``, a
        benchmark's own marker, recorded as a "kernel" before 2026-11-26 on the GPU), the
        shares taken again over what is left: the per-kernel profile every view shows."""
        rows = tuple(k for k in self.kernels if not k.name.startswith(OWN_RANGES))
        if len(rows) == len(self.kernels):
            return rows
        total = sum(k.total_ms for k in rows) or 1.0
        return tuple(replace(k, share=k.total_ms / total) for k in rows)

    @property
    def timing_notes(self) -> tuple[str, ...]:
        """Cautions on reading the timings: an unstable arm (IQR over 10% of its median),
        medians that differ by less than the spread (``timing_notes`` below), compiles during the
        timed calls."""
        notes = timing_notes(self.eager, self.compiled, cpu=self.device == "cpu")
        if self.compiles_while_timing:
            n = len(self.compiles_while_timing)
            notes += (
                f"compiled while timing: {n} compile{'s' * (n > 1)} during the warm-up and timed calls "
                f"({(self.compiles_while_timing[0].splitlines() or [''])[0]}{' …' if n > 1 else ''}); the compiled arm's times include "
                "them: a guard fails from call to call (see the Recompiles view of a recording)",
            )
        return notes


def _counted_once(launches: tuple[Launch, ...]) -> tuple[Launch, ...]:
    names = {x.name for x in launches if x.op not in PROFILER_OPS}
    return tuple(x for x in launches if not (x.op in PROFILER_OPS and x.name in names))


def speedup_words(speedup: float | None) -> str:
    """``compiled is 1.54× slower than eager`` / ``1.18× faster`` / ``as fast as eager``
    (within 0.5%): "×0.65 of eager" reads as faster to most people."""
    if speedup is None or speedup <= 0:
        return "compiled (no eager time to compare)"
    if abs(speedup - 1) < 0.005:
        return "compiled is as fast as eager (×1.00)"
    if speedup > 1:
        return f"compiled is {speedup:.2f}× faster than eager"
    return f"compiled is {1 / speedup:.2f}× slower than eager"


UNSTABLE_IQR = 0.10  # an arm whose IQR exceeds this fraction of its median is flagged
WAITED = 0.10  # an arm whose median call waited for a core this fraction of its time is flagged


STALL = 3.0  # a sample over this many times its arm's median is a stall
TWO_SPEEDS = 1.5  # neighbouring sorted samples this far apart part two speeds
THREADS = (
    "; on a shared CPU, fewer threads than free cores (OMP_NUM_THREADS=N, or torch.set_num_threads(N)) "
    "or the process pinned to cores (taskset -c 0-3 python …) steadies it"
)


def _shape_note(arm: str, t: Timing, cpu: bool) -> str | None:
    """Samples at two speeds ("bimodal": at least a tenth of them on each side of a gap of 1.5×
    between neighbours), or a few stalls (calls over 3× the median): threads that waited for
    a core (another process, or more OpenMP threads than free cores), with the remedy on CPU."""
    xs = sorted(t.samples_ms)
    n = len(xs)
    if n < 10 or t.median_ms <= 0 or xs[0] <= 0:
        return None
    remedy = THREADS if cpu else ""
    k = max(range(1, n), key=lambda i: xs[i] / xs[i - 1])
    lo, hi = xs[:k], xs[k:]
    if min(len(lo), len(hi)) >= max(2, n // 10) and xs[k] / xs[k - 1] >= TWO_SPEEDS:
        return (
            f"{arm} bimodal: its calls ran at two speeds, {len(lo)} of {n} near {lo[len(lo) // 2]:.4g} ms "
            f"and {len(hi)} near {hi[len(hi) // 2]:.4g} ms: the median falls between them or on one "
            f"side by chance{remedy}"
        )
    stalls = [x for x in xs if x > STALL * t.median_ms]
    if stalls:
        return (
            f"{arm} stalled: {len(stalls)} of {n} calls took over {STALL:g}× the median (up to "
            f"{xs[-1]:.4g} ms against {t.median_ms:.4g} ms): threads that waited for a core{remedy}"
        )
    return None


def timing_notes(eager: Timing | None, compiled: Timing | None, cpu: bool = False) -> tuple[str, ...]:
    """What makes a pair of timings hard to read, in words, each note led by a short label
    before its colon: an arm whose samples ran at two speeds or stalled ("eager bimodal",
    "compiled stalled", with the remedy on a CPU: fewer threads, or pinned), an arm whose IQR
    waited for a core a tenth of its time or more ("eager waited for a core": the machine's load,
    with the remedy), an arm whose IQR
    exceeds 10% of its median ("eager unstable": timed at the host's speed, launch-bound,
    synchronising, or a busy machine), and a difference of medians within the wider IQR ("no
    clear winner")."""
    out = []
    for arm, t in (("eager", eager), ("compiled", compiled)):
        note = _shape_note(arm, t, cpu) if t is not None else None
        if note is not None:
            out.append(note)
    for arm, t in (("eager", eager), ("compiled", compiled)):
        if t is not None and waited(t):
            out.append(
                f"{arm} waited for a core: its median call's threads waited {t.waited_ms:.4g} ms for one, "
                f"against {t.median_ms:.4g} ms a call (other processes held the cores its parallel regions "
                f"needed): its time is the machine's load{THREADS}"
            )
    for arm, t in (("eager", eager), ("compiled", compiled)):
        if t is not None and t.median_ms > 0 and t.iqr_ms > UNSTABLE_IQR * t.median_ms:
            out.append(
                f"{arm} unstable: its middle half spans {t.iqr_ms / t.median_ms:.0%} of its median "
                f"({t.p25_ms:.4g}–{t.p75_ms:.4g} ms); a launch-bound or synchronising call, or a busy "
                "machine: its figure moves between runs"
            )
    if eager is not None and compiled is not None:
        spread = max(eager.iqr_ms, compiled.iqr_ms)
        if within_spread(eager, compiled):
            out.append(
                f"no clear winner: the medians differ by {abs(eager.median_ms - compiled.median_ms):.3g} ms, "
                f"within the wider IQR ({spread:.3g} ms)"
            )
    return tuple(out)


def waited(t: Timing) -> bool:
    """The arm's median call waited for a core a tenth of its time or more (``WAITED``)."""
    return t.waited_ms is not None and t.median_ms > 0 and t.waited_ms >= WAITED * t.median_ms


def within_spread(a: Timing, b: Timing) -> bool:
    """The two medians differ by no more than the wider of their IQRs: within the noise, no
    clear winner (two arms of one benchmark, or one arm in two runs)."""
    return abs(a.median_ms - b.median_ms) <= max(a.iqr_ms, b.iqr_ms)

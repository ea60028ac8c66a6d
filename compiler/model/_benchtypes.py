"""The benchmark's records (``Report.benchmark``, ``compiler.compare_modes``): timings, the
per-kernel profile, accuracy, the configuration and the whole result. Frozen dataclasses,
saved with the report (``Report.benchmarks``; docs/report-schema.md)."""

from __future__ import annotations

from dataclasses import dataclass, field


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
class Accuracy:
    """Compiled output against eager output, same inputs, same starting state."""

    ok: bool  # every tensor within atol + rtol * |eager|
    max_abs: float
    max_rel: float  # max_abs over the largest |eager| value of that tensor (0 when both are 0)
    atol: float
    rtol: float
    tensors: int  # how many output tensors were compared
    note: str | None = None  # e.g. a structure mismatch, random numbers drawn


@dataclass(frozen=True)
class BenchConfig:
    mode: str | None = None  # torch.compile mode: None/"default", "reduce-overhead", "max-autotune"
    dynamic: bool | None = None
    autocast: str | None = None  # autocast dtype ("bfloat16") or None for none
    backend: str | None = None


@dataclass(frozen=True)
class Benchmark:
    """Eager against compiled on the same inputs (``Report.benchmark``); docs/benchmark.md."""

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
    compiles_while_timing: tuple[str, ...] = ()  # "[0/3] <recompile reason>": torch compiled mid-run

    @property
    def timing_notes(self) -> tuple[str, ...]:
        """Cautions on reading the timings: an unstable arm (IQR over 10% of its median),
        medians that differ by less than the spread (compiler/bench/_timing.py), compiles during the
        timed calls."""
        from ..bench._timing import timing_notes

        notes = timing_notes(self.eager, self.compiled)
        if self.compiles_while_timing:
            n = len(self.compiles_while_timing)
            notes += (
                f"compiled while timing: {n} compile{'s' * (n > 1)} during the warm-up and timed calls "
                f"({self.compiles_while_timing[0]}{' …' if n > 1 else ''}); the compiled arm's times include "
                "them: a guard fails from call to call (see the Recompiles view of a recording)",
            )
        return notes

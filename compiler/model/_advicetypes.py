"""``advise``'s records (``compiler.advise``, ``pt2-explorer advise``): a fix that is a setting
of torch's, and one measured row per fix: the run's counts, its own benchmark against its own
eager, whether its outputs agree with the unfixed run's. Frozen dataclasses, torch-free;
docs/advise.md."""

from __future__ import annotations

from dataclasses import dataclass

from ._benchtypes import Timing, speedup_words
from ._report import Report

BASELINE = "baseline"  # the row of the program (or function) as it is, no fix applied
# a Fix's setting that is regional compilation: its key the path of the repeated blocks
# (``transformer.h``), whose class's forward is wrapped in this function (compiler/bench/_settings.py)
REGIONAL_SETTING = "torch.compiler.nested_compile_region"


@dataclass(frozen=True)
class Fix:
    """A change that is one of torch's settings, applied before anything compiles."""

    name: str  # "capture_scalar_outputs", "dynamic", "reduce-overhead", ...
    code: str  # the one-line change to make, as code (the verdict's ``Cause.fix`` where it has one)
    # what is set: (torch's config module, its key, the value); the module
    # "torch.set_float32_matmul_precision" is that function, called with the value; a key
    # ending ".add" adds to that set the function the value names ("PACKAGE:dotted.name")
    settings: tuple[tuple[str, str, object], ...]
    cuda_only: bool = False  # needs a CUDA device (CUDA graphs, TF32)
    why: str = ""  # the verdict's cause that calls for it, or "asked for (--try)"

    @property
    def lines(self) -> tuple[str, ...]:
        """The settings as the lines of code that make them."""
        return tuple(
            f"type(model.{key}[0]).forward = {module}(type(model.{key}[0]).forward)"
            if module == REGIONAL_SETTING
            else f"{module}({value!r})"
            if module.endswith("precision")
            else f"{module}.{key}({str(value).rpartition(':')[2]})"  # a set's add: the function's name
            if key.endswith(".add")
            else f"{module}.{key} = {value!r}"
            for module, key, value in self.settings
        )


@dataclass(frozen=True)
class AdviceRow:
    """One run: the program (or function) with one fix applied, or none (``BASELINE``), and
    one benchmarked function of it."""

    fix: str  # the fix's name, or BASELINE
    code: str | None  # the one-line change to make (None for the baseline)
    function: str | None = None  # the benchmark's name ("Net", "train_step")
    lines: tuple[str, ...] = ()  # the settings measured, as code (Fix.lines)
    why: str = ""  # why the fix was tried
    graphs: float | None = None  # compiled graphs a call of the function (its profile)
    breaks: int | None = None  # graph-break sites in the run's report
    recompiles: int | None = None  # recompiles in the run's report
    eager: Timing | None = None  # this run's own eager arm
    compiled: Timing | None = None  # and compiled arm, timed interleaved with it
    speedup: float | None = None  # eager median / compiled median, both of this run
    compile_s: float | None = None  # the function's compile time in this run (Benchmark.compile_time_s)
    cautions: tuple[str, ...] = ()  # Benchmark.timing_notes
    agree: bool | None = None  # outputs within tolerance of the baseline's; None: not compared
    agreement: str = ""  # in words: the tolerance, the largest difference and where
    error: str | None = None  # the run crashed, or the function was not benchmarked
    notes: tuple[str, ...] = ()  # e.g. the program set the same setting itself
    path: str | None = None  # the run's report file (the CLI's runs)
    report: Report | None = None  # the run's report (in memory: compiler.advise)
    # what the baseline's verdict says the fix can win at most (``Cause.gain``), and the cause
    predicted: float | None = None
    predicted_from: str = ""
    measured: float | None = None  # the gain measured: this row's speedup over the baseline's
    versus: str = ""  # the two held together, in words: as predicted, or which was wrong
    compiled_anew: tuple[str, ...] = ()  # Benchmark.compiles_while_timing: the row is not ranked
    unranked: str | None = None  # why the row is not ranked (compiled anew, eager arms that disagree)
    rank: str = ""  # "1", "=2" (a tie: within the noise of the row beside it); "" not ranked

    @property
    def speedup_words(self) -> str:
        """``1.18× faster`` / ``1.54× slower`` / ``as fast as eager (×1.00)``: this run's
        compiled against this run's eager, said as ``Benchmark.speedup_words`` says it."""
        if self.speedup is None:
            return "—"
        return speedup_words(self.speedup).removeprefix("compiled is ").removesuffix(" than eager")

    @property
    def ok(self) -> bool:
        """Ran, benchmarked, and its outputs agree (or it is the baseline)."""
        return self.error is None and self.speedup is not None and self.agree is not False


@dataclass(frozen=True)
class Advice:
    """Each fix measured (``rows``: best first, the baseline among them)."""

    name: str  # the program ("train.py", "-m pkg.train") or the function
    device: str  # cpu | cuda
    rows: tuple[AdviceRow, ...] = ()
    separate: bool = True  # each row a fresh process running the whole program (the CLI)
    notes: tuple[str, ...] = ()  # said under the table (e.g. why a fix was not offered)
    out: str | None = None  # the directory of the runs' reports (the CLI)

    @property
    def baseline(self) -> tuple[AdviceRow, ...]:
        return tuple(r for r in self.rows if r.fix == BASELINE)


@dataclass(frozen=True)
class AdviceRun:
    """What one run of ``pt2-explorer advise`` left: its report and its last calls' outputs
    (``compiler._viewer.save_outputs``), or how it failed; ``compiler._viewer.advice_from_runs``
    reads them."""

    fix: Fix | None  # None: the baseline, the program as it is
    report: str | None  # the report file the run wrote (None: none)
    outputs: str | None = None  # the file of its last calls' inputs and outputs
    error: str | None = None  # how the run failed ("exited with status 1: RuntimeError: ...")
    notes: tuple[str, ...] = ()  # e.g. a setting the program made itself, over the fix's


@dataclass(frozen=True)
class CompileAdviceRow:
    """One fix of ``advise --compile-time``: its run with cold caches, the same again with its
    caches warm, and the benchmark of its program's main compiled function."""

    fix: str  # the fix's name, or BASELINE
    code: str | None  # the change to make, as code (None for the baseline)
    lines: tuple[str, ...] = ()  # the settings measured, as code (Fix.lines)
    why: str = ""  # why it was tried
    compile_s: float | None = None  # the run's compile time, every compile's (ProgramTime.wall_s)
    compiles: int | None = None  # the run's compiles
    hits: int | None = None  # of them, those with a cache hit (FX graph or AOTAutograd)
    saved_s: float | None = None  # the baseline's compile time less this row's
    warm_s: float | None = None  # the same fix in a fresh process, its caches kept warm
    warm_hits: int | None = None
    function: str | None = None  # the benchmarked function whose steady state is shown
    eager: Timing | None = None  # its run's eager arm
    compiled: Timing | None = None  # and compiled arm: the steady state
    speedup: float | None = None
    slower: str = ""  # the steady state dropped beyond the spread: said in words
    cautions: tuple[str, ...] = ()  # Benchmark.timing_notes
    agree: bool | None = None  # outputs within tolerance of the baseline's; None: not compared
    agreement: str = ""
    error: str | None = None  # the run crashed, or was skipped
    notes: tuple[str, ...] = ()
    path: str | None = None  # the cold run's report
    warm_path: str | None = None  # the warm run's report
    rank: str = ""  # "1" … by compile time saved; "" not ranked

    @property
    def speedup_words(self) -> str:
        if self.speedup is None:
            return "—"
        return speedup_words(self.speedup).removeprefix("compiled is ").removesuffix(" than eager")


@dataclass(frozen=True)
class CompileAdvice:
    """``advise --compile-time``: each fix's compile time measured, most saved first."""

    name: str
    device: str
    rows: tuple[CompileAdviceRow, ...] = ()
    notes: tuple[str, ...] = ()
    out: str | None = None

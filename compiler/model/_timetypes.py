"""Where a compile's seconds went, placed under the heads a user can act on (Dynamo tracing,
AOTAutograd, each Inductor pass, scheduling and fusion, codegen, kernel compiles,
autotuning, cache lookups, waiting on compile workers), with what is left unplaced as its own
head; and the same summed over a program. Made from torch's timed phases
(``Compile.phases``) by ``compiler.analysis.compile_time`` / ``program_time``."""

from __future__ import annotations

from dataclasses import dataclass

# the heads, in the pipeline's order: key -> what the user reads
HEADS = {
    "dynamo": "Dynamo tracing",
    "aot": "AOTAutograd",
    "passes": "Inductor passes",
    "lowering": "lowering to Inductor's IR",
    "fusion": "scheduling and fusion",
    "codegen": "codegen",
    "kernels": "kernel compiles",
    "autotune": "autotuning",
    "cache": "cache lookups",
    "workers": "waiting on compile workers",
    "unplaced": "unplaced",
}


@dataclass(frozen=True)
class TimeRow:
    """One of torch's phases (or a kind of them) under its head: its seconds in the compile,
    children left out (each second counted once)."""

    head: str  # a key of HEADS
    phase: str  # torch's phase name ("pass.post_grad_passes.reinplace_inplaceable_ops")
    seconds: float
    count: int = 1  # how many spans of that phase (the C++ compiles of a compile's kernels)


@dataclass(frozen=True)
class CompileTime:
    """One compile's wall time placed under the heads: the heads add up to ``wall_s``."""

    compile_id: str
    wall_s: float  # torch's entire_frame_compile, plus the backward's inductor_compile
    heads: dict[str, float]  # every key of HEADS, in its order; "unplaced" is the rest of wall_s
    rows: tuple[TimeRow, ...] = ()  # the heads' parts, largest first
    # autotuning torch timed outside the compile, at the first call (Triton's configs)
    after_s: float = 0.0
    saved_s: float | None = None  # what the compile's cache hits saved, as torch says
    hits: tuple[str, ...] = ()  # the caches that hit ("fx_graph", "aotautograd")


@dataclass(frozen=True)
class Cost:
    """One cost of a program's compiles: a phase under its head, summed over the compiles of
    one code object, with where that code is."""

    head: str
    phase: str
    seconds: float
    where: str | None  # "modeling_gpt2.py:312" or the module: the code whose compiles paid it
    name: str | None  # the compiled code's name ("GPT2Block.forward")
    compiles: int  # how many compiles of that code paid it


@dataclass(frozen=True)
class Repeats:
    """Compiles of one code object with the same graph: N identical compiles of one thing
    (a transformer's blocks compiled one by one)."""

    name: str | None
    where: str | None
    compile_ids: tuple[str, ...]
    seconds: float  # all of them together


@dataclass(frozen=True)
class ProgramTime:
    """A program's compile time under the heads, its largest costs and its repeated compiles."""

    wall_s: float
    heads: dict[str, float]
    compiles: tuple[CompileTime, ...] = ()
    top: tuple[Cost, ...] = ()  # the 10 largest, largest first
    repeats: tuple[Repeats, ...] = ()

"""What a recording says while torch compiles (``compiler.recording(on_progress=...)``): one
``Progress`` per change, read from torch's events as they arrive (compiler/listen/_progress.py)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Progress:
    compile_id: str  # torch's id, "0/1"
    stage: str  # the furthest of STAGES its events have reached
    frame: str | None = None  # the function Dynamo compiles (its code's name)
    filename: str | None = None  # where it is defined (co_filename, co_firstlineno)
    line: int | None = None
    called_from: str | None = (
        None  # "file:line": where ``frame`` is a library's, the program's line that led there
    )
    graph_nodes: int | None = None  # FX nodes of Dynamo's graph, once Dynamo has it
    phase: str | None = None  # the innermost of torch's timed phases (dynamo_timed) now open
    autotuning: str | None = None  # the op whose choices Inductor benchmarks, or the kernel Triton tunes
    kernel: str | None = None  # the kernel whose compile began last (Inductor's name)
    kernel_n: int | None = None  # its place among the compile's kernels (1-based)
    kernels: int | None = None  # the compile's kernels (its output code's; None before torch logs it)
    kernels_done: int | None = None  # kernels compile workers finished (where torch says so)
    waiting: bool = False  # waiting on compile workers (async_compile.wait)
    ended: bool = False  # its compilation_metrics came and no phase of it is open
    stage_since: float = 0.0  # time.monotonic() when this compile reached ``stage``
    compile_since: float = 0.0  # time.monotonic() of its first event

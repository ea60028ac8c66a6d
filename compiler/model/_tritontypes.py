"""What Triton made of one Inductor kernel (recorded with ``recording(triton_ir=True)``): its
IR at every level and the compiled binary's resources, as Triton reported them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class TritonBinary:
    """One compiled variant of a kernel (autotuning compiles one per config)."""

    hash: str  # Triton's cache key of this variant
    config: dict[str, Any] = field(default_factory=dict)  # constexpr block sizes, num_warps, num_stages
    chosen: bool = False  # the config that runs: the only one, or autotuning's pick (.best_config)
    num_warps: int | None = None
    num_stages: int | None = None
    shared: int | None = None  # bytes of shared memory per block
    n_regs: int | None = None  # registers per thread (ptxas), from loading the binary
    n_spills: int | None = None  # registers spilled to local memory
    target: str | None = None  # "cuda:90"
    ir: dict[str, str] = field(default_factory=dict)  # level (ttir, ttgir, llir, ptx, sass) -> text
    # level -> the kernel's function in its text: the index of its first line and of the line
    # after its last (compiler/model/_irbounds.py); the whole text where none is found
    ir_bounds: dict[str, tuple[int, ...]] = field(default_factory=dict)
    line_offset: int = 0  # kernel file line - Kernel.source line (Triton's locations name the file)
    regs_per_sm: int | None = None  # the device's limits, for occupancy
    threads_per_sm: int | None = None
    shared_per_sm: int | None = None

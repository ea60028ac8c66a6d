"""Each kernel against the machine (``compiler.analysis.roofline``): achieved bytes/s and FLOP/s against
the device's peaks, memory- or compute-bound, and how close to that bound it ran.

The peaks come from the datasheet table (compiler/model/_devices.py) keyed by the benchmark's
device name; an unknown device, or a CPU run, has no roofline and says so. The precision of a
matmul is read from its output's dtype (else the dtype its kernel's name says: ``…bf16bf16…``,
``…f32f32…``, ``s1688gemm``), the benchmark's TF32 setting and the library kernel's own name
(cuBLAS names its kernels ``…f32f32_tf32f32…`` when it runs TF32, ``…ffma…`` or ``sgemm`` on
the CUDA cores)."""

from __future__ import annotations

from dataclasses import dataclass

from ..model._benchtypes import Benchmark
from ..model._devices import DevicePeak, device_peak
from ..parse._kernelnames import matmul_math, operand_dtype
from ._gputime import KernelCost


@dataclass(frozen=True)
class Placement:
    """One kernel on the device's roofline."""

    name: str
    seconds: float  # per launch
    gb_per_s: float | None  # achieved
    tflops: float | None  # achieved
    precision: str | None  # the peak its FLOPs are held against: fp32 | tf32 | bf16
    bound: str | None  # memory | compute; None: neither count known
    of_bound: float | None  # achieved over the bound's peak
    note: str = ""


def of_peak(x: float, bound: str | None = None) -> str:
    """A share of a peak, as a percentage that is not 0% where the share is not 0 (a kernel at
    16 GB/s of 3350 is at 0.5%, one at 2 GB/s under 0.1%); with ``bound``, one over 100% says
    why (``over_peak``)."""
    why = over_peak(x, bound) if bound else ""
    if x >= 0.01:
        return f"{x:.0%}" + (f" ({why})" if why else "")
    return f"{x:.1%}" if x >= 0.001 else "under 0.1%"


def over_peak(x: float, bound: str | None) -> str:
    """Why a kernel ran over its bound's peak, "" where it did not: a memory-bound kernel's
    bytes are counted as all read from DRAM, and those its reads found in L2 never went there
    (the figure is kept as the counts give it, not capped); a compute-bound one ran above the
    datasheet's peak (its clock)."""
    if x <= 1.0:
        return ""
    return (
        "L2 hits: bytes counted as DRAM's came from L2" if bound == "memory" else "over the datasheet's peak"
    )


def no_roofline(bench: Benchmark) -> str | None:
    """Why ``bench`` has no roofline (a CPU run, a device not in the table); None: it has one."""
    if bench.device != "cuda":
        return (
            "CPU run: no roofline (the CPU's peaks are not tabled; its kernels are timed and joined to lines)"
        )
    if device_peak(bench.device_name) is None:
        return f"{bench.device_name}: not in the table of device peaks, so no roofline (no guess)"
    return None


def roofline(costs: tuple[KernelCost, ...], bench: Benchmark) -> tuple[Placement, ...]:
    """A placement for each kernel with a known byte or FLOP count; () without a roofline."""
    peak = device_peak(bench.device_name) if bench.device == "cuda" else None
    if peak is None:
        return ()
    out = []
    for c in costs:
        if not c.launches or (c.bytes is None and c.flops is None):
            continue
        out.append(_place(c, peak, bench))
    return tuple(out)


def precision(c: KernelCost, bench: Benchmark) -> tuple[str | None, str]:
    """The peak a kernel's FLOPs are held against, and the evidence in words."""
    name = c.name.lower()
    # the dtype of its graph node's output, else what the kernel's own name says
    dtype, said = (c.dtype, "") if c.dtype else (operand_dtype(name), " (its kernel name says so)")
    if dtype in ("bf16", "f16"):
        return "bf16", f"{dtype} operands{said}"
    if dtype != "f32":
        return None, "dtype unknown: no graph node of it, and its kernel name does not say"
    math = matmul_math(name)
    if math == "tf32":
        return "tf32", "cuBLAS ran TF32 (its kernel name says tf32)"
    if math == "fp32":
        return "fp32", "fp32 on the CUDA cores, no TF32 (its kernel name says so)"
    if bench.allow_tf32 or bench.matmul_precision in ("high", "medium"):
        return "tf32", f"TF32 allowed (float32_matmul_precision={bench.matmul_precision!r})"
    if bench.matmul_precision == "highest":
        return "fp32", "float32_matmul_precision='highest': no TF32"
    return "fp32", "fp32; the TF32 setting was not recorded"


def _place(c: KernelCost, peak: DevicePeak, bench: Benchmark) -> Placement:
    secs = c.ms / 1e3 / c.launches
    gbs = c.bytes / 1e9 / secs if c.bytes and secs > 0 else None
    tfl = c.flops / 1e12 / secs if c.flops and secs > 0 else None
    prec, why = precision(c, bench) if c.flops else (None, "")
    peak_tf = peak.tflops(prec) if prec else None
    if c.flops and c.bytes and peak_tf:
        ridge = peak_tf * 1e12 / (peak.gb_per_s * 1e9)  # FLOP per byte where the roofs meet
        intensity = c.flops / c.bytes
        if intensity >= ridge:
            return Placement(
                c.name, secs, gbs, tfl, prec, "compute", tfl / peak_tf if tfl else None,
                f"{intensity:.0f} FLOP/B, above the ridge at {ridge:.0f}: {why}",
            )  # fmt: skip
        return Placement(
            c.name, secs, gbs, tfl, prec, "memory", gbs / peak.gb_per_s if gbs else None,
            f"{intensity:.1f} FLOP/B, below the ridge at {ridge:.0f}",
        )  # fmt: skip
    if c.bytes:
        note = (
            "no FLOP count (Inductor counts none for pointwise and reduction kernels): held against bandwidth"
        )
        return Placement(c.name, secs, gbs, tfl, prec, "memory", gbs / peak.gb_per_s if gbs else None, note)
    return Placement(c.name, secs, gbs, tfl, prec, None, None, "bytes unknown")

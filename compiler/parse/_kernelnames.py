"""What a kernel's name, as the profiler or Inductor gives it, says: the C++ kernel a CPU
profiler event runs (``graph_0_cpp_fused_add_0``), a library kernel (cuBLAS, CUTLASS, cuDNN,
flash attention), the math a cuBLAS kernel ran (TF32 or FP32), an op's family; and the
traffic Inductor wrote into a Triton kernel's metadata (``kernel_num_gb``)."""

from __future__ import annotations

import re

_CPP_EVENT = re.compile(r"^graph_\d+_(cpp_\w+)$")  # Inductor's record_function around a C++ kernel
_GRAPH_EVENT = re.compile(r"\bgraph_\d+_(\w+)")  # such an event's name in the output code
_LIBRARY = re.compile(r"gemm|gemv|cublas|cutlass|xmma|nvjet|cudnn|flash|fmha|conv|wgrad|dgrad", re.I)
_ATTENTION = re.compile(r"flash|fmha", re.I)
_REDUCTION = re.compile(r"sum|mean|var|norm|softmax|amax|max|min|reduce")
_TF32 = re.compile(r"tf32")
_FP32 = re.compile(r"ffma|sgemm|f32f32_f32f32")
_NUM_GB = re.compile(r"['\"]kernel_num_gb['\"]\s*:\s*([0-9.eE+-]+)")


def cpp_kernel_of_event(name: str) -> str | None:
    """``graph_0_cpp_fused_add_0`` -> ``cpp_fused_add_0``: the C++ kernel a profiler event runs."""
    m = _CPP_EVENT.match(name)
    return m.group(1) if m else None


def cpp_events_in(kernel: str, source: str | None) -> set[str]:
    """The profiler events (``graph_N_<kernel>``) that a compile's output code names for
    ``kernel`` (one scan of the code for every event name, none compiled per kernel)."""
    return {m[0] for m in _GRAPH_EVENT.finditer(source or "") if m[1] == kernel}


def is_library_kernel(name: str) -> bool:
    """Does the name say a library kernel (matmul, convolution, attention: cuBLAS, cuDNN, ...)?"""
    return _LIBRARY.search(name) is not None


def is_attention_kernel(name: str) -> bool:
    return _ATTENTION.search(name) is not None


def is_reduction_op(base: str) -> bool:
    """An op's base name (``aten.sum``'s ``sum``) that reduces."""
    return _REDUCTION.search(base) is not None


def matmul_math(name: str) -> str | None:
    """What a cuBLAS kernel's (lower-case) name says it ran: ``"tf32"``, ``"fp32"`` (the CUDA
    cores), or None where it says neither."""
    if _TF32.search(name):
        return "tf32"
    if _FP32.search(name):
        return "fp32"
    return None


def kernel_num_gb(source: str | None) -> float | None:
    """The GB a Triton kernel moves, as Inductor wrote it into the kernel's metadata."""
    m = _NUM_GB.search(source or "")
    return float(m.group(1)) if m else None

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
# the operands' dtype a library kernel's name says, the first that matches: cuBLAS's
# ``sm80_xmma_gemm_bf16bf16_bf16f32_f32`` and ``ampere_fp16_s16816gemm``, CUTLASS's ``s1688gemm``
# (fp32 operands, TF32 math) and ``simt_sgemm``, a template's ``<float, …>`` or ``__nv_bfloat16``
_DTYPES = (
    ("bf16", re.compile(r"bf16|bfloat16")),
    ("f16", re.compile(r"(?<!b)f16|fp16|hgemm|__half|half_t|c10::half|(?<![a-z])h\d{4,5}gemm")),
    ("f32", re.compile(r"f32|sgemm|(?<![a-z])s\d{4,5}(?:gemm|fprop|dgrad|wgrad)|ffma|\bfloat\b")),
)
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


def operand_dtype(name: str) -> str | None:
    """The operands' dtype a library kernel's (lower-case) name says: ``"bf16"``, ``"f16"``,
    ``"f32"``; None where it says none (``nvjet_sm90_tst_…``)."""
    return next((dtype for dtype, pattern in _DTYPES if pattern.search(name)), None)


def kernel_num_gb(source: str | None) -> float | None:
    """The GB a Triton kernel moves, as Inductor wrote it into the kernel's metadata."""
    m = _NUM_GB.search(source or "")
    return float(m.group(1)) if m else None

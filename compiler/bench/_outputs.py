"""The outputs of a compiled function's last call, kept from one run and compared with
another's (``advise``): each tensor named by where it sits (``out[0]``, ``out['logits']``,
``out.loss``), copied to the CPU and saved with ``torch.save`` (tensors only: read back with
``weights_only=True``, no class of the program needed), then held against the unfixed run's
within a stated tolerance, the largest difference named."""

from __future__ import annotations

import dataclasses
import io
import math
import os
from typing import Any

import torch

from ..model._atomic import write_file
from ._accuracy import compare

FP32 = (1e-3, 1e-3)  # (atol, rtol): as the benchmark's accuracy check holds compiled to eager
LOW = (5e-2, 5e-2)  # an output in bf16 / fp16
TF32 = (1e-2, 1e-2)  # fp32 matmuls in TF32 (10 mantissa bits) under set_float32_matmul_precision("high")


def named(x: Any, where: str, depth: int = 0) -> list[tuple[str, torch.Tensor]]:
    """The tensors in ``x`` (through lists, tuples, dicts, dataclasses and objects'
    attributes), each with its place: ``out[0]``, ``out['logits']``, ``out.loss``."""
    if isinstance(x, torch.Tensor):
        return [(where, x)]
    if depth > 6:
        return []
    if isinstance(x, (list, tuple)):
        return [t for i, v in enumerate(x) for t in named(v, f"{where}[{i}]", depth + 1)]
    if isinstance(x, dict):
        return [t for k, v in x.items() for t in named(v, f"{where}[{k!r}]", depth + 1)]
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        fields = [(f.name, getattr(x, f.name)) for f in dataclasses.fields(x)]
    else:
        attrs = getattr(x, "__dict__", None)
        fields = list(attrs.items()) if isinstance(attrs, dict) and not callable(x) else []
    return [t for k, v in fields for t in named(v, f"{where}.{k}", depth + 1)]


def _copied(pairs: list[tuple[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    with torch.no_grad():
        return {k: t.detach().to("cpu", copy=True) for k, t in pairs}


def kept(args: tuple, kwargs: dict, out: Any) -> dict[str, dict[str, torch.Tensor]]:
    """A call's inputs and output, as copied tensors by place."""
    return {
        "inputs": _copied(named(tuple(args), "args") + named(dict(kwargs), "kwargs")),
        "outputs": _copied(named(out, "out")),
    }


def save_outputs(calls, path: str | os.PathLike[str]) -> str:
    """Save each compiled function's last call (``compiler.compiled_calls()``'s ``called``:
    its inputs and output as the program got them), named as ``benchmark_calls`` names its
    benchmarks, to ``path`` (``torch.save``); returns ``path``."""
    from ._calls import unique_names

    data = {
        name: kept(c.args, c.kwargs, c.output) for c, name in zip(calls, unique_names(calls), strict=True)
    }
    buf = io.BytesIO()
    torch.save(data, buf)
    return write_file(path, buf.getvalue())  # whole or not at all


def load_outputs(path: str | os.PathLike[str]) -> dict[str, dict[str, dict[str, torch.Tensor]]]:
    return torch.load(path, weights_only=True)


def tolerance(fix_names: tuple[str, ...], tensors: list[torch.Tensor]) -> tuple[float, float, str]:
    """(atol, rtol, in words) for comparing two runs' outputs: fp32's, TF32's where a run
    lowered the matmul precision, bf16/fp16's where an output is in that dtype."""
    if any(t.dtype in (torch.bfloat16, torch.float16) for t in tensors):
        return (*LOW, "bf16/fp16 outputs")
    if "float32_matmul_precision" in fix_names:
        return (*TF32, "fp32 matmuls in TF32")
    return (*FP32, "fp32")


def agreement(base: dict, fixed: dict, fix_names: tuple[str, ...] = ()) -> tuple[bool | None, str]:
    """Whether ``fixed``'s last call (``kept``) gives the baseline's outputs, in words: the
    tolerance and the largest difference with its place. Not compared (None) where the
    inputs of the last call differ: the runs did not make the same call."""
    bi, fi = base["inputs"], fixed["inputs"]
    atol, rtol, kind = tolerance(fix_names, [*base["outputs"].values(), *bi.values()])
    tol = f"atol={atol:g}, rtol={rtol:g} ({kind})"
    ok, worst, where = _held(bi, fi, atol, rtol)
    if not ok:
        return None, (
            f"not compared: the last call's inputs differ from the baseline's ({where}; {tol}): "
            "unseeded random inputs, or inputs made by the compiled code"
        )
    ok, worst, where = _held(base["outputs"], fixed["outputs"], atol, rtol)
    n = len(base["outputs"])
    if not n:
        return None, "not compared: the function returned no tensor"
    verdict = "yes" if ok else "NO"
    return ok, f"{verdict}: {n} tensor{'s' * (n != 1)}, largest difference {where}; {tol}"


def _held(a: dict, b: dict, atol: float, rtol: float) -> tuple[bool, float, str]:
    """Every tensor of ``a`` within tolerance of ``b``'s at the same place; the largest
    absolute difference and where it is."""
    if list(a) != list(b):
        missing = [k for k in a if k not in b] or [k for k in b if k not in a]
        return False, math.inf, f"the tensors differ: {', '.join(missing[:3]) or 'their order'}"
    ok, worst, where = True, 0.0, "0 (identical)"
    for k in a:
        acc = compare([a[k]], [b[k]], atol, rtol)
        ok = ok and acc.ok
        if acc.max_abs > worst or not acc.ok and worst == 0.0:
            worst = acc.max_abs
            where = f"{acc.max_abs:.3g} at {k}" + (f" ({acc.note})" if acc.note else "")
    return ok, worst, where

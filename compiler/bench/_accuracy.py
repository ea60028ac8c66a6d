"""Accuracy of compiled against eager (``compiler.benchmark``, docs/benchmark.md): every tensor
of the outputs (through tuples, dicts, dataclasses, objects' attributes) compared with dtype-
and autocast-aware tolerances, NaN on one side only an infinite error; outputs copied before
the state is restored; with ``mutates=True`` the state each arm leaves compared too."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import torch

from ..model._benchtypes import Accuracy

_PLAIN = (str, bytes, int, float, bool, complex, type(None))


def tensors(x: Any, depth: int = 0) -> list[Any]:
    """Tensors (and plain values) in an output, in order: through lists, tuples, dicts,
    dataclasses and other objects' attributes (e.g. transformers' caches); other leaves dropped."""
    if isinstance(x, torch.Tensor) or isinstance(x, _PLAIN):
        return [x]
    if depth > 6:
        return []
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in tensors(v, depth + 1)]
    if isinstance(x, dict):
        return [t for v in x.values() for t in tensors(v, depth + 1)]
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return [t for f in dataclasses.fields(x) for t in tensors(getattr(x, f.name), depth + 1)]
    attrs = getattr(x, "__dict__", None)
    if isinstance(attrs, dict) and not callable(x):
        return [t for v in attrs.values() for t in tensors(v, depth + 1)]
    return []


def _tolerances(outputs: list[Any], low_precision: bool = False) -> tuple[float, float]:
    """bf16/fp16 tolerances when an output is in that dtype or the run is under a 16-bit
    autocast (whose outputs a final fp32 op, a residual add say, may promote); else fp32's."""
    low = low_precision or any(
        isinstance(t, torch.Tensor) and t.dtype in (torch.bfloat16, torch.float16) for t in outputs
    )
    return (5e-2, 5e-2) if low else (1e-3, 1e-3)


def compare(
    eager_out: Any, compiled_out: Any, atol: float | None, rtol: float | None, low_precision: bool = False
) -> Accuracy:
    """Max abs / rel error of compiled against eager. ``max_rel`` = max |c - e| over the
    largest |e| of that tensor; ``ok``: every element within atol + rtol * |e|."""
    es, cs = tensors(eager_out), tensors(compiled_out)
    a_default, r_default = _tolerances(es, low_precision)
    atol = a_default if atol is None else atol
    rtol = r_default if rtol is None else rtol
    note = None
    ok, max_abs, max_rel, n = True, 0.0, 0.0, 0
    if len(es) != len(cs):
        return Accuracy(
            False, math.inf, math.inf, atol, rtol, 0, f"{len(es)} eager outputs, {len(cs)} compiled"
        )
    for e, c in zip(es, cs):
        if not isinstance(e, torch.Tensor) or not isinstance(c, torch.Tensor):
            if not _plain_equal(e, c):
                ok, note = False, f"non-tensor outputs differ: {e!r} vs {c!r}"[:300]
            continue
        n += 1
        if e.shape != c.shape:
            ok, note = False, f"shapes differ: {tuple(e.shape)} vs {tuple(c.shape)}"
            max_abs = max_rel = math.inf
            continue
        if e.numel() == 0:
            continue
        ef, cf = e.detach().double(), c.detach().to(e.device).double()
        if not e.is_floating_point() and not e.is_complex():
            diff = (ef - cf).abs()
        else:
            # NaN on both sides agrees; NaN on one side only is an infinite error
            diff = torch.where(ef.isnan() & cf.isnan(), torch.zeros_like(ef), (ef - cf).abs()).nan_to_num(
                math.inf, math.inf
            )
            lone = int((ef.isnan() ^ cf.isnan()).sum())
            if lone:
                note = f"{lone} NaN in one output only (compiled {int(cf.isnan().sum())}, eager {int(ef.isnan().sum())})"
        d = float(diff.max())
        scale = float(ef.abs().nan_to_num(0.0, 0.0, 0.0).max())
        max_abs = max(max_abs, d)
        max_rel = max(max_rel, d / scale if scale > 0 else (0.0 if d == 0 else math.inf))
        if not bool((diff <= atol + rtol * ef.abs().nan_to_num(0.0, 0.0, 0.0)).all()):
            ok = False
    return Accuracy(ok, max_abs, max_rel, atol, rtol, n, note)


def _plain_equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:
        return a is b


def frozen(out: Any) -> list[Any]:
    """The output's tensors (and plain values), flattened and copied: what ``compare`` reads."""
    with torch.no_grad():
        return [t.detach().clone() if isinstance(t, torch.Tensor) else t for t in tensors(out)]


def with_state(acc: Accuracy, eager: dict, compiled: dict, atol, rtol, low: bool) -> Accuracy:
    """Add the state each arm left behind (``mutates=True``): the tensors eager changed, after
    one eager call and after one compiled call from the same start. A difference is a finding."""
    names = list(eager)
    state = compare([eager[n] for n in names], [compiled[n] for n in names], atol, rtol, low)
    if state.ok:
        return dataclasses.replace(acc, tensors=acc.tensors + state.tensors)
    differ = [n for n in names if not compare(eager[n], compiled[n], atol, rtol, low).ok]
    note = (
        f"the state left by the compiled call differs from eager's: {', '.join(differ[:6])}"
        f"{' …' if len(differ) > 6 else ''} (max abs {state.max_abs:.3g}, max rel {state.max_rel:.3g})"
    )
    return dataclasses.replace(
        acc,
        ok=False,
        max_abs=max(acc.max_abs, state.max_abs),
        max_rel=max(acc.max_rel, state.max_rel),
        tensors=acc.tensors + state.tensors,
        note=f"{acc.note}; {note}" if acc.note else note,
    )

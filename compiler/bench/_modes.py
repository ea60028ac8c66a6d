"""``compiler.compare_modes``: one function under several torch.compile settings, each
recorded and benchmarked against eager, side by side.

Each configuration is compiled fresh inside its own ``compiler.recording(caches=False)`` (Dynamo's
caches are reset before each one, ``torch._dynamo.reset()``, so no configuration reuses
another's compile: compiled functions of yours recompile at their next call), then
``compiler.benchmark`` times it against eager on the same inputs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import torch

from ..listen._capture import recording
from ..model._benchtypes import BenchConfig
from ..model._modetypes import ModeComparison, ModeRow, load_modes  # noqa: F401 - read without torch there
from ..model._options import BenchOptions
from ..model._subject import remember
from ._bench import benchmark_report


def _label(mode: str, dynamic: bool, autocast: torch.dtype | None) -> str:
    parts = [mode]
    if dynamic:
        parts.append("dynamic")
    if autocast is not None:
        parts.append(str(autocast).removeprefix("torch."))
    return " · ".join(parts)


def _on_cuda(args: tuple, fn) -> bool:
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    if isinstance(fn, torch.nn.Module):
        tensors += list(fn.parameters())[:1]
    return any(t.is_cuda for t in tensors)


def compare_modes(
    fn,
    *args,
    modes: Iterable[str] = ("default", "reduce-overhead"),
    dynamic: Iterable[bool] = (False,),
    autocast: Iterable[torch.dtype | None] = (None,),
    max_autotune: bool = False,
    backend: str = "inductor",
    **kwargs,
) -> ModeComparison:
    """Record and benchmark ``fn(*args, **kwargs)`` under every combination of ``modes`` ×
    ``dynamic`` × ``autocast`` (an autocast dtype such as ``torch.bfloat16``, or None), each
    against eager under the same autocast. ``max_autotune=True`` adds ``"max-autotune"``
    (slow: it benchmarks kernel configurations while compiling). ``reduce-overhead`` (CUDA
    graphs) is skipped with the reason on CPU. Eager itself is the baseline of every row
    (speedup 1 by definition), so it is no row of its own. Keywords named in ``BenchOptions``
    (``reps``, ``warmup``, ``profile``, ``mutates``, ``progress``, ``atol``, ``rtol``) are each
    benchmark's, ``name`` the comparison's (compiler/model/_options.py); others go to ``fn``."""
    options, kwargs = BenchOptions.split(kwargs)
    if options.compiled is not None:
        raise TypeError("compare_modes() compiles fn under each mode itself: it takes no compiled=")
    modes = [m for m in modes if m != "eager"]
    if max_autotune and "max-autotune" not in modes:
        modes.append("max-autotune")
    cuda = _on_cuda(args, fn)
    device_type = "cuda" if cuda else "cpu"
    rows: list[ModeRow] = []
    for ac in autocast:
        for dyn in dynamic:
            for mode in modes:
                cfg = BenchConfig(
                    mode=mode,
                    dynamic=dyn,
                    autocast=str(ac).removeprefix("torch.") if ac is not None else None,
                    backend=backend,
                )
                label = _label(mode, dyn, ac)
                if mode == "reduce-overhead" and not cuda:
                    rows.append(
                        ModeRow(label, cfg, skipped="CUDA graphs need a CUDA device; the inputs are on CPU")
                    )
                    continue
                rows.append(
                    _one(
                        fn,
                        args,
                        kwargs,
                        cfg,
                        label,
                        ac,
                        device_type,
                        backend,
                        dataclasses.replace(options, name=label),
                    )
                )
    return ModeComparison(tuple(rows), options.name or getattr(fn, "__name__", type(fn).__name__))


def _one(fn, args, kwargs, cfg, label, ac, device_type, backend, options: BenchOptions) -> ModeRow:
    compile_kwargs: dict = {"backend": backend, "dynamic": cfg.dynamic}
    if cfg.mode != "default":
        compile_kwargs["mode"] = cfg.mode
    torch._dynamo.reset()
    compiled = torch.compile(fn, **compile_kwargs)
    if ac is not None:

        def eager(*a, **k):
            with torch.autocast(device_type, dtype=ac):
                return fn(*a, **k)

        def run(*a, **k):
            with torch.autocast(device_type, dtype=ac):
                return compiled(*a, **k)
    else:
        eager, run = fn, compiled
    rec = recording(caches=False)  # each configuration compiled cold, as the module says
    try:
        with rec:
            run(*args, **kwargs)
    except Exception as e:
        return ModeRow(label, cfg, report=rec.report, error=f"{type(e).__name__}: {e}")
    report = rec.report
    assert report is not None
    remember(report, eager, run, args, kwargs, compile_kwargs)
    try:
        benchmark_report(report, None, (), {}, config=cfg, **options.keywords())
    except Exception as e:
        return ModeRow(label, cfg, report=report, error=f"{type(e).__name__}: {e}")
    return ModeRow(label, cfg, report=report)

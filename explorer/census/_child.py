"""One census case, in its own fresh process: ``python -m explorer.census._child JOB_JSON``.

Builds the model (its factory, eagerly, outside the recording), then compiles and runs it
under ``compiler.recording()`` as the mode says, writes the report and a small result file
(how it ended, wall time, peak memory). The parent (``_run.py``) turns both into the row; where
this process dies or hangs, the recording's journal holds what it compiled until then.
"""

from __future__ import annotations

import json
import math
import os
import resource
import sys
import time

from ._cases import Case, Settings, load_source


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    line = text.splitlines()[0] if text else ""
    return f"{type(e).__name__}: {line}" if line else type(e).__name__


def _tensors(out):
    """The tensors of a model's output, in order (ModelOutput, tuples, lists, dicts)."""
    import torch

    if isinstance(out, torch.Tensor):
        yield out
    elif isinstance(out, dict):  # transformers' ModelOutput is an OrderedDict
        for v in out.values():
            yield from _tensors(v)
    elif isinstance(out, (tuple, list)):
        for v in out:
            yield from _tensors(v)


def loss_of(out):
    """The output's ``loss`` where the model computed one, else the mean of its first
    floating-point tensor that needs a gradient."""
    loss = getattr(out, "loss", None)
    if loss is not None:
        return loss
    for t in _tensors(out):
        if t.is_floating_point() and t.requires_grad:
            return t.float().mean()
    raise ValueError("the model's output has no tensor that needs a gradient: no training step")


def _call_args(inputs, batch: int, device: str):
    """(args, kwargs) of a call with ``batch`` examples, on ``device``."""
    import torch

    given = inputs(batch) if callable(inputs) else inputs
    move = lambda v: v.to(device) if isinstance(v, torch.Tensor) else v  # noqa: E731
    if isinstance(given, dict):
        return (), {k: move(v) for k, v in given.items()}
    if isinstance(given, (tuple, list)):
        return tuple(move(v) for v in given), {}
    return (move(given),), {}


def run_mode(model, inputs, mode: str, settings: Settings):
    """Compile ``model`` as the mode says and call it twice (static: the same inputs, so a
    recompile is one the model's own state causes; dynamic: batch 2 then 3). Returns the
    compiled model and the last call's arguments."""
    import torch

    train = mode.startswith("train")
    dynamic = mode.endswith("dynamic")
    model.to(settings.device)
    model.train(train)
    opts = {"backend": settings.backend, "dynamic": dynamic}
    if settings.compile_mode:
        opts["mode"] = settings.compile_mode
    compiled = torch.compile(model, **opts)
    for batch in (2, 3) if dynamic else (2, 2):
        args, kwargs = _call_args(inputs, batch, settings.device)
        if train:
            loss_of(compiled(*args, **kwargs)).backward()
            model.zero_grad(set_to_none=True)
        else:
            with torch.no_grad():
                compiled(*args, **kwargs)
    return compiled, args, kwargs


def _bench(report, model, compiled, args, kwargs) -> float | None:
    import functools

    b = report.benchmark(
        functools.partial(model, *args, **kwargs),
        compiled=functools.partial(compiled, *args, **kwargs),
        progress=False,
    )
    return b.speedup


def run_case(job: dict) -> dict:
    """Run the job's case; returns the result (also what the report file does not hold)."""
    case = Case(**job["case"])
    settings = Settings(**{**job["settings"], "modes": tuple(job["settings"]["modes"])})
    t0 = time.perf_counter()
    result: dict = {"error": None, "phase": None, "speedup": None}
    try:
        model, inputs = load_source(case.importable).models[case.model]()
    except Exception as e:  # the factory failed: nothing compiled
        result.update(error=_first_line(e), phase="build")
        return _finish(result, t0)
    import compiler

    rec = compiler.recording(journal=job.get("journal"), caches=not settings.fresh)
    compiled = args = kwargs = None
    try:
        with rec:
            compiled, args, kwargs = run_mode(model, inputs, case.mode, settings)
    except Exception as e:  # the model failed under torch.compile: a row with its first line
        result.update(error=_first_line(e), phase="run")
    report = rec.report
    if settings.bench and result["error"] is None and not case.mode.startswith("train"):
        try:
            result["speedup"] = _bench(report, model, compiled, args, kwargs)
        except Exception as e:
            result.update(error=_first_line(e), phase="bench")
    report.to_json(job["report"])
    return _finish(result, t0)


def _finish(result: dict, t0: float) -> dict:
    if not math.isfinite(result.get("speedup") or 0.0):  # a census holds finite numbers only
        result["speedup"] = None
    result["wall_s"] = round(time.perf_counter() - t0, 3)
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return result


def main(argv: list[str]) -> int:
    job = json.loads(argv[0])
    gb = job["settings"].get("memory_gb")
    if gb and gb < 2**32:  # the address space it may map (none past 4 EiB): past it, allocations fail
        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = int(gb * 2**30)
        resource.setrlimit(
            resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard)
        )
    result = run_case(job)
    tmp = job["result"] + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f)
    os.replace(tmp, job["result"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

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
import traceback

from ._cases import GPU_SHARE_ENV, Case, Settings, load_source


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


def compile_options(mode: str, settings: Settings) -> dict:
    """``torch.compile``'s keywords for a case: the census's backend and mode, and static
    shapes unless the mode is dynamic."""
    opts = {"backend": settings.backend, "dynamic": mode.endswith("dynamic")}
    if settings.compile_mode:
        opts["mode"] = settings.compile_mode
    return opts


def run_mode(model, inputs, mode: str, settings: Settings, batch: int = 2, precision: str = "fp32"):
    """Compile ``model`` as the mode says and call it twice (static: the same inputs, so a
    recompile is one the model's own state causes; dynamic: ``batch`` then ``batch + 1``).
    Returns the compiled model and the last call's arguments."""
    import torch

    from ._speed import precision_context

    train = mode.startswith("train")
    dynamic = mode.endswith("dynamic")
    model.to(settings.device)
    model.train(train)
    compiled = torch.compile(model, **compile_options(mode, settings))
    for b in (batch, batch + 1) if dynamic else (batch, batch):
        args, kwargs = _call_args(inputs, b, settings.device)
        if train:
            with precision_context(precision, settings.device):
                loss = loss_of(compiled(*args, **kwargs))
            loss.backward()
            model.zero_grad(set_to_none=True)
        else:
            with torch.no_grad(), precision_context(precision, settings.device):
                compiled(*args, **kwargs)
    return compiled, args, kwargs


class _Ours(Exception):
    """A step of the census itself failed (not the model's): said as the row's error."""


def _fail(result: dict, phase: str, e: BaseException, cause: BaseException | None = None) -> None:
    """The row's error: the first one only (a later one is a consequence), said with its
    traceback (``cause``'s where given) in the case's log."""
    said = str(e) if isinstance(e, _Ours) else _first_line(e)
    if result["error"] is None:
        result.update(error=said, phase=phase)
    print(f"census: {phase} failed: {said}", file=sys.stderr)
    traceback.print_exception(cause or e, file=sys.stderr)


def run_case(job: dict) -> dict:
    """Run the job's case; returns the result (also what the report file does not hold).
    Every failure is the row's first cause, in words, and its traceback in the log; the
    result is written whatever fails after the model was built."""
    case = Case(**job["case"])
    settings = Settings.from_dict(job["settings"])
    t0 = time.perf_counter()
    result: dict = {"error": None, "phase": None, "speedup": None}
    try:
        source = load_source(case.importable)
        model, inputs = source.models[case.model]()
    except Exception as e:  # the factory failed: nothing compiled
        _fail(result, "build", e)
        return _finish(result, t0)
    batch = case.batch or 2
    import compiler

    rec = compiler.recording(journal=job.get("journal"), caches=not settings.fresh)
    compiled = args = kwargs = None
    try:
        with rec:
            compiled, args, kwargs = run_mode(model, inputs, case.mode, settings, batch, case.precision)
    except Exception as e:  # the model failed under torch.compile, or the recording never started
        if rec.report is None:  # the block never ran: the recording's own start failed
            _fail(result, "record", _Ours(f"the recording did not start: {_first_line(e)}"), e)
            return _finish(result, t0)
        _fail(result, "run", e)
    report = rec.report
    if settings.bench and result["error"] is None:
        try:
            from ._speed import device_turn, measure

            with device_turn(settings.device):
                result.update(
                    measure(
                        report,
                        model,
                        compiled,
                        args,
                        kwargs,
                        train=case.mode.startswith("train"),
                        compile_options=compile_options(case.mode, settings),
                        precision=case.precision,
                        device=settings.device,
                        loss_of=loss_of,
                    )
                )
        except Exception as e:
            _fail(result, "bench", e)
    try:
        report.to_json(job["report"])
    except Exception as e:
        _fail(result, "report", e)
    return _finish(result, t0)


def _finish(result: dict, t0: float) -> dict:
    if not math.isfinite(result.get("speedup") or 0.0):  # a census holds finite numbers only
        result["speedup"] = None
    result["wall_s"] = round(time.perf_counter() - t0, 3)
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return result


def _gpu_share(device: str) -> None:
    """Where ``N`` cases share this process's GPU, hold it to 1/N of the GPU's memory (torch's
    caching allocator refuses past it: an out-of-memory is this case's error, not a neighbour's)."""
    share = int(os.environ.get(GPU_SHARE_ENV) or 1)
    if share > 1 and device.startswith("cuda"):
        import torch

        torch.cuda.set_per_process_memory_fraction(1 / share)


def main(argv: list[str]) -> int:
    job = json.loads(argv[0])
    gb = job["settings"].get("memory_gb")
    if gb and gb < 2**32:  # the memory it may write (none past 4 EiB): past it, allocations fail
        # RLIMIT_DATA, not RLIMIT_AS: CUDA reserves a large range of address space when torch first
        # touches it (Dynamo does, on a GPU machine, also for a CPU model), and an address-space
        # limit refuses that reservation ("CUDA error: out of memory"); a reservation is no data
        _soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        limit = int(gb * 2**30)
        resource.setrlimit(
            resource.RLIMIT_DATA, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard)
        )
    try:
        _gpu_share(job["settings"].get("device", "cpu"))
        result = run_case(job)
    except BaseException as e:  # a failure of ours outside every step: still the row's first cause
        result = {"error": f"census case failed: {_first_line(e)}", "phase": "census"}
        traceback.print_exception(e, file=sys.stderr)
    tmp = job["result"] + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f)
    os.replace(tmp, job["result"])
    return 0


if __name__ == "__main__":
    status = main(sys.argv[1:])
    # the case is done and written: exit now, without the interpreter's teardown (after a 2.5B
    # model on the H100 it took over 80 s, past the case's time limit)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)

"""One case's speed, in its own process (``_child.py``): eager against compiled as
``compiler.benchmark`` times them (median and spread, on the CPU each arm's wait for a core,
peak memory, compile time and break-even calls), an eval call or a training step (forward, loss, backward and an optimizer step, its
state restored around each call: ``mutates=True``), in float32 or under bf16 autocast (AMP);
and the verdict's first cause (``compiler.analysis.verdict``) where compiled is slower or barely faster.
"""

from __future__ import annotations

import contextlib
import math
import os

from ._speedview import GROUPS
from ._table import BARELY  # a speedup under it is "barely faster": its row carries the verdict's cause

LR = 1e-4  # the training step's SGD: a step that changes the weights, with no state of its own


def precision_context(precision: str, device: str):
    """What the model's calls run under: nothing (fp32), or bf16 autocast (amp)."""
    import torch

    if precision == "amp":
        return torch.autocast(device.split(":")[0], dtype=torch.bfloat16)
    return contextlib.nullcontext()


@contextlib.contextmanager
def device_turn(device: str):
    """The GPU to this case alone while it is timed: the cases of every census on this machine
    that time on ``device`` take turns (an exclusive lock on a file named after it and the GPU
    the process sees), while others compile beside it. On the CPU nothing is taken (``--jobs`` defaults to 1 there with
    ``--bench``)."""
    if device == "cpu":
        yield
        return
    import fcntl
    import tempfile

    # the GPU itself: a case given one GPU of several (CUDA_VISIBLE_DEVICES) takes turns with its cases only
    seen = os.environ.get("CUDA_VISIBLE_DEVICES", "").strip()
    name = "".join(c if c.isalnum() else "_" for c in device + (f"-gpu{seen}" if seen else ""))
    path = os.path.join(tempfile.gettempdir(), f"pt2-explorer-census-{name}.lock")
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def step_fns(model, compiled, args, kwargs, train: bool, precision: str, device: str, loss_of):
    """(eager, compiled) callables of one step with no arguments: the eval call under
    ``no_grad``, or the training step (zero_grad, forward, loss, backward, SGD step)."""
    import torch

    if not train:

        def run(m):
            def call():
                with torch.no_grad(), precision_context(precision, device):
                    return m(*args, **kwargs)

            return call

        return run(model), run(compiled)
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=LR)

    def trainer(m):
        def step():
            opt.zero_grad(set_to_none=False)
            with precision_context(precision, device):
                loss = loss_of(m(*args, **kwargs))
            loss.backward()
            opt.step()
            return loss.detach()

        return step

    return trainer(model), trainer(compiled)


def measure(
    report,
    model,
    compiled,
    args,
    kwargs,
    *,
    train: bool,
    precision: str,
    device: str,
    loss_of,
    compile_options: dict | None = None,
) -> dict:
    """The case's speed fields (``CensusRow``'s), from one benchmark appended to ``report``;
    ``compile_options``: what ``compiled`` was compiled with (the verdict names its backend)."""
    from compiler import benchmark
    from compiler.analysis import verdict

    eager_fn, compiled_fn = step_fns(model, compiled, args, kwargs, train, precision, device, loss_of)
    low = precision == "amp"
    b = benchmark(
        report,
        eager_fn,
        compiled=compiled_fn,
        compile_options=compile_options,
        mutates=train,
        name=f"{'train step' if train else 'eval'} {precision}",
        progress=False,
        atol=1e-2 if low else None,
        rtol=1e-2 if low else None,
    )
    out = speed_fields(b)
    if b.speedup is not None and b.speedup < BARELY:
        try:
            v = verdict(report, b)
        except Exception as e:  # a verdict that cannot be made: said, never a lost row
            out["cause"] = f"no verdict: {type(e).__name__}: {e}"
        else:
            out.update(cause_of(v, b.device))
    return out


def speed_fields(b) -> dict:
    """The benchmark's figures a census row keeps."""

    def mb(n):
        return round(n / 2**20, 1) if n is not None else None

    out = {
        "speedup": b.speedup,
        "eager_ms": b.eager.median_ms if b.eager else None,
        "eager_iqr_ms": b.eager.iqr_ms if b.eager else None,
        "compiled_ms": b.compiled.median_ms if b.compiled else None,
        "compiled_iqr_ms": b.compiled.iqr_ms if b.compiled else None,
        "eager_waited_ms": b.eager.waited_ms if b.eager else None,
        "compiled_waited_ms": b.compiled.waited_ms if b.compiled else None,
        "peak_mb_eager": mb(b.peak_memory_eager),
        "peak_mb_compiled": mb(b.peak_memory_compiled),
        "break_even_calls": b.break_even_calls,
        "bench_error": b.error,
        "accurate": b.accuracy.ok if b.accuracy is not None else None,
    }
    return {k: (round(v, 6) if isinstance(v, float) and math.isfinite(v) else v) for k, v in out.items()}


def cause_of(v, device: str = "cpu") -> dict:
    """The verdict's first cause: its key (``breaks``, ``launch``, ``library``, …), its
    title, its group among the census's slower rows (``group_of``), and the headline."""
    if v.unread:  # the figures carry no cause: the benchmark compiled anew, or no clear winner
        anew = v.unread.startswith("the benchmark compiled anew")
        group = "compiled anew while timing" if anew else "no clear winner"
        return {"cause_key": "none", "cause": v.unread, "cause_group": group, "verdict": v.headline}
    main = next((c for c in v.causes if c.key == v.main), None)
    detail = main.title if main is not None else "no cause found"
    group = group_of(main, device) if main is not None else "no cause found"
    return {"cause_key": v.main or "none", "cause": detail, "cause_group": group, "verdict": v.headline}


def group_of(main, device: str) -> str:
    """The slower rows' group of a first cause, in a few words: the same for every row it
    holds (a title names one frame or a count of sites; the group does not)."""
    if main.key == "launch":
        return "launch-bound" if device.startswith("cuda") else "host overhead"
    if main.key == "library":  # the fix of an fp32 matmul without TF32 (compiler.analysis's TF32)
        tf32 = main.fix is not None and "set_float32_matmul_precision" in main.fix
        return "fp32 GEMMs without TF32" if tf32 else "library kernels"
    if main.key == "backend":  # "backend aot_eager: no fused kernels, …": the backend's name
        return main.title.split(":")[0]
    return GROUPS.get(main.key, main.title)

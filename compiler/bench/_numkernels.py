"""The first generated kernel whose output diverges (``compiler.numerics``).

Where the cause has a fix that is an Inductor config change (rounding inside a fusion,
random numbers, the bisector's config flip), the call is compiled and run twice more under
torch's ``DebugMode`` with ``DebugMode.record_outputs()`` (torch.utils._debug_mode: the mode
hides itself while compiling and, at run time, keeps each Triton kernel launch with its
arguments cloned after it ran): once as the program compiles it, once with the fix. The
launches are paired in order; the first kernel whose written arguments (``out_ptr*``,
``in_out_ptr*``) differ beyond their dtype's tolerance is the first where compiled and eager
part. Where the fix changes which kernels run (another fusion), the launches are paired only
up to the first that differs, and that is said. On the CPU, where DebugMode records no C++
kernel, the launches are read from the wrapper module as it runs (``_numwrapper.py``: each
kernel's tensor arguments after it ran, compared whole: what it read is equal on both sides
until a kernel before it differs).

torch.utils._debug_mode is read here only (the internals we read live in one place).
"""

from __future__ import annotations

import torch

from ..listen._callstate import replaying
from ..model._numericstypes import TensorError
from ._numrun import Runner, error
from ._numwrapper import WrapperLaunches

WRITTEN = ("out_ptr", "in_out_ptr")


def launches(
    runner: Runner, what: str, config: dict, cuda: bool = True
) -> list[tuple[str, dict[str, torch.Tensor]]]:
    """Each kernel launch of one fresh compiled run: (kernel name, its written arguments after
    the launch; on the CPU, every tensor argument)."""
    import torch._inductor.config as inductor_config

    runner.spend(what)
    torch.compiler.reset()
    compiled = torch.compile(runner.fn, backend=runner.backend, **runner.compile_options)
    if not cuda:
        try:
            with inductor_config.patch(config), replaying(runner.state):
                runner.state.seed_rng()
                compiled(*runner.args, **runner.kwargs)  # the compile, untraced
            runner.snapshot.restore()
            with inductor_config.patch(config), replaying(runner.state):
                runner.state.seed_rng()
                with WrapperLaunches() as wrapper:
                    compiled(*runner.args, **runner.kwargs)
        finally:
            runner.snapshot.restore()
        return wrapper.launches
    from torch.utils._debug_mode import DebugMode

    try:
        with inductor_config.patch(config), replaying(runner.state):
            runner.state.seed_rng()
            with DebugMode() as mode, DebugMode.record_outputs():
                compiled(*runner.args, **runner.kwargs)
    finally:
        runner.snapshot.restore()
    out = []
    for call in mode.operators:
        name = getattr(call, "kernel_name", None)
        record = getattr(call, "record", None) or {}
        if name is None:
            continue
        written = {
            k: v
            for k, v in (record.get("output") or {}).items()
            if isinstance(v, torch.Tensor) and k.startswith(WRITTEN)
        }
        out.append((name, written))
    return out


def first_kernel(
    runner: Runner, fix: dict, cuda: bool = True
) -> tuple[str | None, TensorError | None, str | None]:
    """(the first diverging kernel, its error, a note on what was not narrowed down)."""
    how = "DebugMode" if cuda else "the wrapper's kernel calls"
    plain = launches(runner, f"kernels as the program compiles them ({how})", {}, cuda)
    if not plain:
        return None, None, "no generated kernel ran"
    fixed = launches(
        runner, f"kernels with {', '.join(f'{k} = {v!r}' for k, v in fix.items())} ({how})", fix, cuda
    )
    for i, ((a, outs_a), (b, outs_b)) in enumerate(zip(plain, fixed)):
        if a != b:
            return None, None, f"the fix changes which kernels run from launch {i + 1} ({a} against {b})"
        for arg, t in outs_a.items():
            if arg in outs_b:
                err = error(f"{a} {arg}", outs_b[arg], t)
                if not err.ok:
                    return a, err, None
    return None, None, "every kernel launch writes what it writes with the fix"

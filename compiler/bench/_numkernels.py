"""The first generated kernel whose output diverges, on the GPU (``compiler.numerics``).

Where the cause has a fix that is an Inductor config change (rounding inside a fusion,
random numbers, the bisector's config flip), the call is compiled and run twice more under
torch's ``DebugMode`` with ``DebugMode.record_outputs()`` (torch.utils._debug_mode: the mode
hides itself while compiling and, at run time, keeps each Triton kernel launch with its
arguments cloned after it ran): once as the program compiles it, once with the fix. The
launches are paired in order; the first kernel whose written arguments (``out_ptr*``,
``in_out_ptr*``) differ beyond their dtype's tolerance is the first where compiled and eager
part. Where the fix changes which kernels run (another fusion), the launches are paired only
up to the first that differs, and that is said. Triton kernels only: on the CPU, Inductor's C++
kernels are not recorded by DebugMode.

torch.utils._debug_mode is read here only (the internals we read live in one place).
"""

from __future__ import annotations

import torch

from ..listen._callstate import replaying
from ..model._numericstypes import TensorError
from ._numrun import Runner, error

WRITTEN = ("out_ptr", "in_out_ptr")


def launches(runner: Runner, what: str, config: dict) -> list[tuple[str, dict[str, torch.Tensor]]]:
    """Each Triton kernel launch of one fresh compiled run: (kernel name, its written
    arguments after the launch)."""
    import torch._inductor.config as inductor_config
    from torch.utils._debug_mode import DebugMode

    runner.spend(what)
    torch.compiler.reset()
    compiled = torch.compile(runner.fn, backend=runner.backend, **runner.compile_options)
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


def first_kernel(runner: Runner, fix: dict) -> tuple[str | None, TensorError | None, str | None]:
    """(the first diverging kernel, its error, a note on what was not narrowed down)."""
    plain = launches(runner, "kernels as the program compiles them (DebugMode)", {})
    if not plain:
        return None, None, "no Triton kernel ran (on the CPU, DebugMode does not record C++ kernels)"
    fixed = launches(
        runner, f"kernels with {', '.join(f'{k} = {v!r}' for k, v in fix.items())} (DebugMode)", fix
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

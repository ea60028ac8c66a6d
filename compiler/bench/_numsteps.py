"""A training step compared over N steps (``compiler.numerics(step, *args, steps=N)``).

The step runs N times eagerly, then (everything it changed put back: parameters, buffers,
gradients, optimizer state, the random-number state: ``Snapshot``, compiler/bench/_state.py)
N times compiled, one compile for all N. After each step the loss (the step's first output
tensor, where it returns one) and every tensor the step can reach (parameters, optimizer
state) are compared against the tolerance of their dtype; the first step where one crosses
it is ``Numerics.first_step``. Everything is put back at the end.
"""

from __future__ import annotations

from dataclasses import replace

import torch

from ..listen._callstate import replaying
from ..model._numericstypes import Numerics, StepError
from ._numrun import Runner, copies, error, worst


def compare_steps(runner: Runner, name: str, steps: int) -> Numerics:
    if steps < 1:
        raise ValueError(f"steps must be at least 1, not {steps}")
    eager = _steps(runner, runner.fn, steps)
    runner.spend(f"{steps} steps compiled")
    torch.compiler.reset()
    compiled_fn = torch.compile(runner.fn, backend=runner.backend, **runner.compile_options)
    compiled = _steps(runner, compiled_fn, steps)
    rows = []
    for i, ((e_loss, e_state), (c_loss, c_state)) in enumerate(zip(eager, compiled, strict=True), start=1):
        loss = error(f"step {i} loss", e_loss, c_loss) if e_loss is not None else None
        state = [error(k, v, c_state[k]) for k, v in e_state.items() if k in c_state]
        bad = worst(state)
        ok = (loss is None or loss.ok) and all(s.ok for s in state)
        rows.append(StepError(i, loss, bad, ok))
    first = next((s.step for s in rows if not s.ok), None)
    result = Numerics(name, runner.state.words(), max_runs=runner.max_runs)
    return replace(result, steps=tuple(rows), first_step=first, runs=runner.runs)


def _steps(runner: Runner, fn, n: int) -> list[tuple[torch.Tensor | None, dict[str, torch.Tensor]]]:
    """``n`` calls of ``fn`` from the call's state; after each, its loss and the state's
    tensors; then everything put back."""
    out = []
    try:
        with replaying(runner.state):
            runner.state.seed_rng()
            for _ in range(n):
                got = copies(fn(*runner.args, **runner.kwargs))
                loss = next((t for t in got if isinstance(t, torch.Tensor)), None)
                out.append((loss, runner.snapshot.values()))
    finally:
        runner.snapshot.restore()
    return out

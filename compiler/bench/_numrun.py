"""The runs ``compiler.numerics`` makes and the errors it measures: eager and compiled (each
compiled run a fresh compile, counted against ``max_runs``) from the call's state, everything
the call changes put back after each; a tensor's error against its dtype's tolerance
(``TOLERANCES``, compiler/model/_numericstypes.py)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from ..listen._callstate import CallState, replaying
from ..model._numericstypes import TOLERANCES, TensorError
from ._accuracy import tensors
from ._reach import roots
from ._state import Snapshot


class OutOfRuns(Exception):
    """The bound on compiled runs is reached (``max_runs``)."""


class Runner:
    """Runs the call eagerly or compiled, from the call's state, and counts the compiled runs."""

    def __init__(
        self,
        fn,
        args: tuple,
        kwargs: dict,
        state: CallState,
        compile_options: dict,
        max_runs: int,
        progress: Callable[[str], None] | None,
    ):
        self.fn, self.args, self.kwargs, self.state = fn, args, kwargs, state
        self.compile_options = {k: v for k, v in compile_options.items() if k != "backend"}
        self.backend = compile_options.get("backend", "inductor")
        self.max_runs, self.runs = max_runs, 0
        self.drew = False  # whether an eager run drew random numbers
        self.progress = progress
        self.snapshot = Snapshot(roots(fn, args, kwargs))

    def say(self, what: str) -> None:
        if self.progress is not None:
            self.progress(f"numerics: run {self.runs}/{self.max_runs}: {what}")

    def spend(self, what: str) -> None:
        """Count one compiled run; OutOfRuns where the bound is reached."""
        if self.runs >= self.max_runs:
            raise OutOfRuns(what)
        self.runs += 1
        self.say(what)

    def eager(self, fn=None, args: tuple | None = None, kwargs: dict | None = None, rng=None) -> list:
        return self._run(fn or self.fn, self.args if args is None else args, kwargs, rng, eager=True)

    def compiled(
        self,
        what: str,
        *,
        fn=None,
        args: tuple | None = None,
        kwargs: dict | None = None,
        config: dict | None = None,
        backend: str | None = None,
        rng=None,
    ) -> list:
        """One fresh compile of ``fn`` (the call's own by default) under the Inductor
        ``config`` changes, with ``backend`` (the call's by default), run once."""
        self.spend(what)
        import torch._inductor.config as inductor_config

        torch.compiler.reset()
        compiled = torch.compile(fn or self.fn, backend=backend or self.backend, **self.compile_options)
        with inductor_config.patch(config or {}):
            return self._run(compiled, self.args if args is None else args, kwargs, rng)

    def _run(self, fn, args: tuple, kwargs: dict | None, rng, eager: bool = False) -> list:
        try:
            with replaying(self.state):
                if rng is not None:
                    torch.set_rng_state(rng)
                else:
                    self.state.seed_rng()
                before = _rng_now()
                out = fn(*args, **(self.kwargs if kwargs is None else kwargs))
                if eager and not self.drew:
                    self.drew = _rng_now() != before
                return copies(out)
        finally:
            self.snapshot.restore()


def _rng_now() -> list[bytes]:
    """The generators' states (CPU's, each initialised GPU's), to tell a call drew from them."""
    states = [torch.get_rng_state()]
    if torch.cuda.is_initialized():
        states += torch.cuda.get_rng_state_all()
    return [bytes(s.numpy()) for s in states]


def copies(out: Any) -> list:
    """The output's tensors (through tuples, dicts, dataclasses), detached copies."""
    with torch.no_grad():
        return [t.detach().clone() if isinstance(t, torch.Tensor) else t for t in tensors(out)]


def tolerance(dtype: torch.dtype) -> tuple[float, float]:
    """(rtol, atol) for ``dtype``: TOLERANCES; 0, 0 (exact) for integers and bool."""
    return TOLERANCES.get(str(dtype), (0.0, 0.0))


def error(name: str, e: Any, c: Any) -> TensorError:
    """``c`` (compiled) against ``e`` (eager): see ``TensorError``."""
    if not isinstance(e, torch.Tensor) or not isinstance(c, torch.Tensor):
        same = e == c if not isinstance(c, torch.Tensor) and not isinstance(e, torch.Tensor) else False
        return TensorError(name, type(e).__name__, (), 0.0 if same else math.inf, 0.0, 0.0, 0.0, bool(same))
    rtol, atol = tolerance(e.dtype)
    shape = tuple(e.shape)
    if tuple(c.shape) != shape:
        note = f"shapes differ: {shape} eager, {tuple(c.shape)} compiled"
        return TensorError(name, str(e.dtype), shape, math.inf, math.inf, rtol, atol, False, note)
    if e.numel() == 0:
        return TensorError(name, str(e.dtype), shape, 0.0, 0.0, rtol, atol, True)
    ef, cf = e.detach().double(), c.detach().to(e.device).double()
    both_nan = ef.isnan() & cf.isnan()
    diff = torch.where(both_nan, torch.zeros_like(ef), (ef - cf).abs()).nan_to_num(math.inf, math.inf)
    ok = bool((diff <= atol + rtol * ef.abs().nan_to_num(0.0)).all())
    max_abs = float(diff.max())
    scale = float(ef.abs().nan_to_num(0.0, 0.0, 0.0).max())
    max_rel = max_abs / scale if scale else (0.0 if max_abs == 0 else math.inf)
    return TensorError(name, str(e.dtype), shape, max_abs, max_rel, rtol, atol, ok)


def errors(eager: list, compiled: list, prefix: str = "output") -> tuple[TensorError, ...]:
    if len(eager) != len(compiled):
        note = f"{len(eager)} tensors eager, {len(compiled)} compiled"
        return (TensorError(prefix, "", (), math.inf, math.inf, 0.0, 0.0, False, note),)
    names = [prefix] if len(eager) == 1 else [f"{prefix} {i}" for i in range(len(eager))]
    return tuple(
        error(n, e, c)
        for n, e, c in zip(names, eager, compiled)
        # plain values alike on both sides (a None returned) are not outputs to measure
        if isinstance(e, torch.Tensor) or isinstance(c, torch.Tensor) or e != c
    )


def worst(errs: tuple[TensorError, ...] | list[TensorError], name: str | None = None) -> TensorError | None:
    """The error that most matters: the first failing one with the largest error, else the
    largest; renamed ``name`` where given."""
    if not errs:
        return None
    bad = [e for e in errs if not e.ok]
    pick = max(bad or errs, key=lambda e: e.max_abs)
    if name is not None:
        from dataclasses import replace

        pick = replace(pick, name=name)
    return pick


def agree(eager: list, compiled: list) -> tuple[bool, float]:
    errs = errors(eager, compiled)
    return all(e.ok for e in errs), max((e.max_abs for e in errs), default=0.0)

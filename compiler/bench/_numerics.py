"""Where compiled diverges from eager, and why (``compiler.numerics``, docs/numerics.md).

Eager and compiled run on the same inputs, from the same random-number state, under the
program's own context (grad and inference mode, autocast, the modules' ``training`` flags:
``replaying``, compiler/listen/_callstate.py); whatever a run changes in place (parameters,
buffers, optimizer state) is put back after it (``Snapshot``, compiler/bench/_state.py). In
order:

1. each output's error against the tolerance of its dtype (``TOLERANCES``,
   compiler/model/_numericstypes.py);
2. where the call is an nn.Module's, the first module whose output diverges
   (compiler/bench/_nummodules.py);
3. the cause, by re-running with one thing changed, and the fix as code
   (compiler/bench/_numcause.py);
4. with ``steps=N``, a training step run N times each way, and the first step whose loss or
   parameters cross the tolerance (compiler/bench/_numsteps.py).

Each compiled run compiles afresh (``torch.compiler.reset()`` before it: a config change
only takes effect in a new compile), so the program's compiled functions compile again at
their next call. ``max_runs`` bounds the compiled runs; a progress line goes to stderr with
each, and what the bound left open is said in ``Numerics.not_narrowed``.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any

import torch

from ..listen._callstate import CallState, capture, modules_in, replaying
from ..model._numericstypes import TOLERANCES, Numerics, TensorError
from ._accuracy import tensors
from ._reach import roots
from ._state import Snapshot

OPTIONS = (
    "steps",
    "max_runs",
    "modules",
    "classify",
    "state",
    "compile_options",
    "name",
    "progress",
    "report",
    "compile_ids",
)


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
    return tuple(error(n, e, c) for n, e, c in zip(names, eager, compiled))


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


def numerics(fn, *args, **kwargs) -> Numerics:
    """Run ``fn(*args, **kwargs)`` eagerly and compiled, and say where and why they differ
    (module docstring). Keywords of its own (the rest go to ``fn``): ``steps`` (compare a
    training step after each of N steps), ``max_runs`` (bound on compiled runs, 40),
    ``modules`` (look for the first diverging module, True), ``classify`` (look for the
    cause, True), ``state`` (a ``CallState``: the context the call ran under; default the
    context now), ``compile_options`` (torch.compile's keywords), ``name``, ``progress``
    (progress lines on stderr, True), ``report`` (a report to append the result to, in
    ``report.numerics``)."""
    options = {k: kwargs.pop(k) for k in OPTIONS if k in kwargs}
    report = options.pop("report", None)
    ids = tuple(options.pop("compile_ids", ()))
    result = run_numerics(fn, args, kwargs, **options)
    if ids:
        from dataclasses import replace

        result = replace(result, compile_ids=ids)
    if report is not None:
        report.numerics = (*report.numerics, result)
    return result


def run_numerics(
    fn,
    args: tuple,
    kwargs: dict,
    *,
    steps: int | None = None,
    max_runs: int = 40,
    modules: bool = True,
    classify: bool = True,
    state: CallState | None = None,
    compile_options: dict | None = None,
    name: str | None = None,
    progress: bool | Callable[[str], None] = True,
) -> Numerics:
    """``numerics`` with ``fn``'s keywords apart from its own."""
    from ._numcause import find_cause
    from ._nummodules import first_module
    from ._numsteps import compare_steps

    if max_runs < 1:
        raise ValueError(f"max_runs must be at least 1, not {max_runs}")
    say = _progress(progress)
    state = state if state is not None else capture(modules_in(fn, *args, *kwargs.values()))
    runner = Runner(fn, args, kwargs, state, dict(compile_options or {}), max_runs, say)
    name = name or _name(fn)
    if steps is not None:
        return compare_steps(runner, name, steps)
    notes: list[str] = []
    eager = runner.eager()
    compiled = runner.compiled("compiled as the program compiles it")
    outputs = errors(eager, compiled)
    result = Numerics(name, state.words(), outputs=outputs, max_runs=max_runs)
    mods: tuple = ()
    first = None
    if modules and not result.ok:
        mods, first, left = first_module(runner, outputs)
        notes += left
    cause, trials = None, ()
    if classify and not result.ok:
        cause, trials, left = find_cause(runner, eager)
        notes += left
    from dataclasses import replace

    return replace(
        result,
        modules=mods,
        first_module=first,
        trials=trials,
        cause=cause,
        runs=runner.runs,
        not_narrowed=tuple(notes),
    )


def _progress(progress: bool | Callable[[str], None]) -> Callable[[str], None] | None:
    if callable(progress):
        return progress
    if not progress:
        return None
    return lambda line: print(line, file=sys.stderr, flush=True)


def _name(fn) -> str:
    fn = getattr(fn, "_orig_mod", fn)
    owner = getattr(fn, "__self__", None)
    if isinstance(fn, torch.nn.Module) or isinstance(owner, torch.nn.Module):
        return type(owner if owner is not None else fn).__name__
    return getattr(fn, "__name__", None) or type(fn).__name__

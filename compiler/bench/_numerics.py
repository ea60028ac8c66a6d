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

import sys
from collections.abc import Callable

import torch

from ..listen._callstate import CallState, capture, modules_in
from ..model._numericstypes import Numerics
from ._accuracy import tensors
from ._numcause import find_cause
from ._numkernels import first_kernel as kernel_search
from ._nummodules import first_module
from ._numrun import OutOfRuns, Runner, errors
from ._numsteps import compare_steps

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
    kernel, kernel_error = None, None
    fix = config_of(cause.fix) if cause is not None and cause.fix else None
    if fix is not None:
        try:
            kernel, kernel_error, left_k = kernel_search(runner, fix, cuda=_on_cuda(args, kwargs, fn))
        except OutOfRuns:
            left_k = "the bound on runs was reached"
        except Exception as e:  # a torch whose DebugMode lacks what is read (older than 2.10)
            left_k = f"not measured: {type(e).__name__}: {str(e).strip()[:200]}"
        if left_k:
            notes.append(f"the first diverging kernel: {left_k}")
    from dataclasses import replace

    return replace(
        result,
        first_kernel=kernel,
        kernel_error=kernel_error,
        modules=mods,
        first_module=first,
        trials=trials,
        cause=cause,
        runs=runner.runs,
        not_narrowed=tuple(notes),
    )


def config_of(fix: str) -> dict | None:
    """``torch._inductor.config.NAME = VALUE`` as {NAME: VALUE}; None for other code."""
    import ast

    head, _, value = fix.partition(" = ")
    if not head.startswith("torch._inductor.config.") or not value:
        return None
    try:
        return {head.removeprefix("torch._inductor.config."): ast.literal_eval(value)}
    except (ValueError, SyntaxError):
        return None


def _on_cuda(args: tuple, kwargs: dict, fn) -> bool:
    found = [t for t in tensors((args, kwargs)) if isinstance(t, torch.Tensor)]
    module = getattr(fn, "__self__", fn)
    if isinstance(module, torch.nn.Module):
        found += list(module.parameters())[:1]
    return any(t.is_cuda for t in found)


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

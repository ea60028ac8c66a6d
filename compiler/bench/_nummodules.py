"""The first nn.Module whose output diverges (``compiler.numerics``).

One eager run with forward hooks (torch's public ``register_forward_pre_hook`` and
``register_forward_hook``) on every module keeps each module's first call: its inputs, the
random-number state at its start, its output, and when it ended (execution order). A
whole-model graph has no module boundaries to compare at (its fusions cross them, and hooks
traced into it would make each boundary an output, changing what is fused), so each module is
compiled alone and run on the inputs eager gave it.

The search goes down the module tree: of a diverging module's children (those it called, in
execution order), the first that diverges alone is searched next; where none does, the
divergence arises between its children (a fusion across their boundaries) and that module
is the first. Each module compiled is one run against ``max_runs``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from ..model._numericstypes import ModuleError, TensorError
from ._numrun import OutOfRuns, Runner, copies, errors, worst


@dataclass
class _Call:
    path: str
    module: torch.nn.Module
    args: tuple
    kwargs: dict
    rng: torch.Tensor
    output: list | None = None
    order: int = -1


def _module_of(fn) -> torch.nn.Module | None:
    fn = getattr(fn, "_orig_mod", fn)
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, torch.nn.Module):
        return owner
    return fn if isinstance(fn, torch.nn.Module) else None


def record_calls(runner: Runner, root: torch.nn.Module) -> dict[str, _Call]:
    """One eager run of the call with each module's first call kept (module docstring)."""
    calls: dict[str, _Call] = {}
    ended = [0]
    handles = []

    def before(path):
        def hook(module, args, kwargs):
            if path not in calls:
                with torch.no_grad():
                    kept = tuple(_detach(a) for a in args), {k: _detach(v) for k, v in kwargs.items()}
                calls[path] = _Call(path, module, kept[0], kept[1], torch.get_rng_state())

        return hook

    def after(path):
        def hook(module, args, kwargs, output):
            call = calls.get(path)
            if call is not None and call.output is None:
                call.output = copies(output)
                call.order = ended[0]
                ended[0] += 1

        return hook

    try:
        for path, m in root.named_modules():
            handles.append(m.register_forward_pre_hook(before(path), with_kwargs=True))
            handles.append(m.register_forward_hook(after(path), with_kwargs=True))
        runner.eager()
    finally:
        for h in handles:
            h.remove()
    return {p: c for p, c in calls.items() if c.output is not None}


def _detach(v: Any) -> Any:
    if isinstance(v, torch.Tensor):
        return v.detach().clone().requires_grad_(v.requires_grad)
    if isinstance(v, (list, tuple)):
        return type(v)(_detach(x) for x in v) if not hasattr(v, "_fields") else type(v)(*map(_detach, v))
    if isinstance(v, dict):
        return {k: _detach(x) for k, x in v.items()}
    return v


def _children(calls: dict[str, _Call], parent: str) -> list[_Call]:
    """The modules ``parent`` called, nearest first (a ModuleList is never called: its
    members are), in the order their forwards ended."""
    out = []
    for path, call in calls.items():
        if path == parent or not (parent == "" or path.startswith(parent + ".")):
            continue
        above = path.rsplit(".", 1)[0] if "." in path else ""
        while above != parent and above not in calls:
            above = above.rsplit(".", 1)[0] if "." in above else ""
        if above == parent:
            out.append(call)
    return sorted(out, key=lambda c: c.order)


def first_module(
    runner: Runner, outputs: tuple[TensorError, ...]
) -> tuple[tuple[ModuleError, ...], str | None, list[str]]:
    """The modules checked, in execution order; the first module whose output diverges; what
    the bound on runs left open."""
    root = _module_of(runner.fn)
    if root is None:
        return (), None, []  # a plain function: no module boundaries to compare at
    calls = record_calls(runner, root)
    top = calls.get("")
    kind = type(root).__name__
    checked = [ModuleError("", kind, top.order if top else 0, worst(outputs, "(the module called)"))]
    parent, notes = "", []
    while True:
        found = None
        for call in _children(calls, parent):
            try:
                err = _alone(runner, call)
            except OutOfRuns:
                notes.append(
                    f"not narrowed below {parent or kind!r}: the bound on runs (max_runs={runner.max_runs}) "
                    f"was reached before {call.path!r} was compiled"
                )
                return _ordered(checked), parent, notes
            except Exception as e:  # the module does not compile or run alone
                line = str(e).strip().splitlines()[0][:200] if str(e).strip() else ""
                note = f"not compiled alone: {type(e).__name__}: {line}"
                checked.append(ModuleError(call.path, type(call.module).__name__, call.order, None, note))
                continue
            checked.append(ModuleError(call.path, type(call.module).__name__, call.order, err))
            if not err.ok:
                found = call
                break
        if found is None:
            return _ordered(checked), parent, notes
        parent = found.path


def _alone(runner: Runner, call: _Call) -> TensorError:
    """``call``'s module compiled alone, on the inputs eager gave it, against eager's output."""
    compiled = runner.compiled(
        f"module {call.path!r} ({type(call.module).__name__}) compiled alone",
        fn=call.module,
        args=call.args,
        kwargs=call.kwargs,
        rng=call.rng,
    )
    return worst(errors(call.output or [], compiled, call.path), call.path)  # type: ignore[return-value]


def _ordered(checked: list[ModuleError]) -> tuple[ModuleError, ...]:
    return tuple(sorted(checked, key=lambda m: m.order))

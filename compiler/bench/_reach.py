"""What a function can reach, and so change: its arguments, the nn.Module or bound object it
is, a partial's arguments, its closure cells and the globals its code names, one level into the
functions it calls (compiler/bench/_state.py snapshots them; docs/benchmark.md)."""

from __future__ import annotations

import functools
import types
from dataclasses import dataclass
from typing import Any

import torch


@dataclass
class Globals:
    """The globals a function's code names, as slots of its module's namespace."""

    namespace: dict
    names: tuple[str, ...]


def roots(fn: Any, args: tuple, kwargs: dict) -> list[tuple[str, Any]]:
    """The named objects the function can reach: arguments, itself (a module, the object of a
    bound method, a partial's arguments), its closure and the globals it names."""
    out: list[tuple[str, Any]] = [(f"args[{i}]", a) for i, a in enumerate(args)]
    out += [(k, v) for k, v in kwargs.items()]
    seen_fns: set[int] = set()

    def add_function(f: Any, depth: int) -> None:
        if id(f) in seen_fns or depth > 2:
            return
        seen_fns.add(id(f))
        if isinstance(f, torch.nn.Module):
            out.append((_label(f, "module"), f))
            f = type(f).forward
        if isinstance(f, functools.partial):
            out.extend((f"partial.args[{i}]", a) for i, a in enumerate(f.args))
            out.extend((f"partial.{k}", v) for k, v in f.keywords.items())
            f = f.func
        if isinstance(f, types.MethodType):
            out.append(("self", f.__self__))
            f = f.__func__
        f = getattr(f, "_torchdynamo_orig_callable", f)
        f = getattr(f, "__wrapped__", f)
        if not isinstance(f, types.FunctionType):
            return
        code = f.__code__
        for name, cell in zip(code.co_freevars, f.__closure__ or ()):
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            out.append((name, value))
            if isinstance(value, types.FunctionType):
                add_function(value, depth + 1)
        names = tuple(dict.fromkeys(n for n in _global_names(code) if n in f.__globals__))
        values = [(n, f.__globals__[n]) for n in names if not isinstance(f.__globals__[n], types.ModuleType)]
        if values:
            out.append(("globals", Globals(f.__globals__, tuple(n for n, _ in values))))
        for _name, value in values:
            if isinstance(value, types.FunctionType):
                add_function(value, depth + 1)

    add_function(fn, 0)
    return out


def _global_names(code: types.CodeType) -> list[str]:
    names = list(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names += _global_names(c)
    return names


def _label(obj: Any, default: str) -> str:
    return type(obj).__name__ if obj is not None else default

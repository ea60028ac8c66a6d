"""State safety for benchmarks: find the tensors a function can change, snapshot, restore.

A benchmark calls the user's function many times. If it changes state (``w.add_(1)``, an
optimizer step, ``loss.backward()`` accumulating grads), those calls would silently corrupt
the user's objects. We find what the function can reach (its arguments, an nn.Module it is,
the globals and closure cells its code names, one level into the functions it calls),
snapshot every tensor there (CUDA tensors to host memory) with its version counter, and
after one eager call see what changed. The caller refuses (default) or allows the change
(``mutates=True``); either way everything is restored. Random-number state is always
restored. See docs/benchmark.md.
"""

from __future__ import annotations

import functools
import types
from typing import Any

import torch

_MAX_DEPTH = 3
_MAX_ITEMS = 10_000


class StateMutationError(ValueError):
    """Raised by ``Report.benchmark`` when the function changes state and ``mutates`` is False."""


def roots(fn: Any, args: tuple, kwargs: dict) -> list[tuple[str, Any]]:
    """The named objects the function can reach: arguments, itself, its globals and closure."""
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
        for name in _global_names(code):
            if name in f.__globals__:
                value = f.__globals__[name]
                if isinstance(value, types.ModuleType):
                    continue
                out.append((name, value))
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


class Snapshot:
    """Every tensor reachable from ``roots``: value (CUDA on host), version, grad, and each
    optimizer's state; ``changed()`` names what differs, ``restore()`` puts it back."""

    def __init__(self, named_roots: list[tuple[str, Any]]):
        self.tensors: dict[int, tuple[str, torch.Tensor, int, torch.Tensor]] = {}
        self.grads: dict[
            int, tuple[str, torch.Tensor, torch.Tensor | None, int | None, torch.Tensor | None]
        ] = {}
        self.optimizers: dict[int, tuple[str, torch.optim.Optimizer, dict, list]] = {}
        self._seen: set[int] = set()
        for name, obj in named_roots:
            self._walk(name, obj, 0)
        self.rng_cpu = torch.get_rng_state()
        self.rng_cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None

    # ---- discovery -----------------------------------------------------------------
    def _walk(self, name: str, obj: Any, depth: int) -> None:
        if id(obj) in self._seen or depth > _MAX_DEPTH or len(self._seen) > _MAX_ITEMS:
            return
        if isinstance(obj, (str, bytes, int, float, bool, type(None), types.FunctionType, type)):
            return
        self._seen.add(id(obj))
        if isinstance(obj, torch.Tensor):
            self._tensor(name, obj)
        elif isinstance(obj, torch.nn.Module):
            for pname, p in obj.named_parameters():
                self._tensor(f"{name}.{pname}", p)
                self._grad(f"{name}.{pname}.grad", p)
            for bname, b in obj.named_buffers():
                self._tensor(f"{name}.{bname}", b)
        elif isinstance(obj, torch.optim.Optimizer):
            state = {k: {sk: _copy(sv) for sk, sv in v.items()} for k, v in obj.state.items()}
            groups = [{k: _copy(v) for k, v in g.items() if k != "params"} for g in obj.param_groups]
            self.optimizers[id(obj)] = (name, obj, state, groups)
            for i, g in enumerate(obj.param_groups):
                for j, p in enumerate(g["params"]):
                    self._tensor(f"{name}.param_groups[{i}].params[{j}]", p)
                    self._grad(f"{name}.param_groups[{i}].params[{j}].grad", p)
        elif isinstance(obj, (list, tuple)):
            for i, v in enumerate(obj):
                self._walk(f"{name}[{i}]", v, depth + 1)
        elif isinstance(obj, dict):
            for k, v in list(obj.items())[:1000]:
                self._walk(f"{name}[{k!r}]", v, depth + 1)

    def _tensor(self, name: str, t: torch.Tensor) -> None:
        if id(t) in self.tensors or t.is_meta:
            return
        with torch.no_grad():
            saved = t.detach().to("cpu", copy=True) if t.is_cuda else t.detach().clone()
        self.tensors[id(t)] = (name, t, _ver(t), saved)

    def _grad(self, name: str, p: torch.Tensor) -> None:
        g = p.grad
        saved = None if g is None else (g.detach().to("cpu", copy=True) if g.is_cuda else g.detach().clone())
        self.grads[id(p)] = (name, p, g, None if g is None else _ver(g), saved)

    # ---- compare / restore ---------------------------------------------------------------
    def changed(self) -> list[str]:
        out = []
        for name, t, version, saved in self.tensors.values():
            if _ver(t) != version or not _same(t, saved):
                out.append(name)
        for name, p, g, version, _saved in self.grads.values():
            if p.grad is not g or (g is not None and _ver(g) != version):
                out.append(name)
        for name, opt, state, groups in self.optimizers.values():
            now = [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups]
            if len(opt.state) != len(state) or any(
                not _equal_values(s, opt.state.get(k, {})) for k, s in state.items()
            ):
                out.append(f"{name}.state")
            if not all(_equal_values(a, b) for a, b in zip(groups, now)):
                out.append(f"{name}.param_groups")
        return out

    def rng_changed(self) -> bool:
        return not torch.equal(torch.get_rng_state(), self.rng_cpu)

    def restore(self) -> None:
        with torch.no_grad():
            for _name, t, _version, saved in self.tensors.values():
                if not _same(t, saved):
                    t.copy_(saved)
            for _name, p, g, _version, saved in self.grads.values():
                if g is not None and saved is not None and not _same(g, saved):
                    g.copy_(saved)
                p.grad = g
        for _name, opt, state, groups in self.optimizers.values():
            opt.state.clear()
            opt.state.update({k: {sk: _copy(sv) for sk, sv in v.items()} for k, v in state.items()})
            for g, saved in zip(opt.param_groups, groups):
                g.update({k: _copy(v) for k, v in saved.items()})
        self.restore_rng()

    def restore_rng(self) -> None:
        torch.set_rng_state(self.rng_cpu)
        if self.rng_cuda is not None:
            torch.cuda.set_rng_state_all(self.rng_cuda)


def _ver(t: torch.Tensor) -> int:
    """The tensor's version counter (bumped by every in-place op); inference tensors have none."""
    try:
        return t._version
    except RuntimeError:
        return -1


def _copy(v: Any) -> Any:
    if isinstance(v, torch.Tensor):
        return v.detach().clone()
    if isinstance(v, (list, tuple)):
        return type(v)(_copy(x) for x in v)
    if isinstance(v, dict):
        return {k: _copy(x) for k, x in v.items()}
    return v


def _same(t: torch.Tensor, saved: torch.Tensor) -> bool:
    other = t.detach().cpu() if t.is_cuda else t.detach()
    if other.shape != saved.shape or other.dtype != saved.dtype:
        return False
    if other.is_floating_point() or other.is_complex():
        return bool(torch.equal(other.isnan(), saved.isnan())) and bool(
            torch.equal(torch.nan_to_num(other), torch.nan_to_num(saved))
        )
    return bool(torch.equal(other, saved))


def _equal_values(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and _same(b, a.cpu())
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal_values(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_equal_values(x, y) for x, y in zip(a, b))
    try:
        return bool(a == b)
    except Exception:
        return a is b

"""State safety for benchmarks: snapshot what a function can change, restore it (what it can
reach: compiler/bench/_reach.py).

A benchmark calls the user's function many times. If it changes state (``w.add_(1)``, an
optimizer step, ``loss.backward()`` accumulating grads, ``self.ema = ...``, ``log.append(y)``,
a scheduler's ``last_epoch``), those calls would silently corrupt the user's objects. We find
what the function can reach — its arguments, the nn.Module or bound object it is, the globals
and closure cells its code names, one level into the functions it calls — and remember two
things about it:

* **tensors by value**: every tensor (CUDA ones copied to host memory) with its version
  counter, and the ``.grad`` of every tensor that requires grad;
* **bindings by identity**: every *slot* that holds a value — an object's attribute, a list
  item, a dict entry, a module's parameter, buffer or public attribute, a global the function
  names — and the object in it. A slot rebound (``self.ema = new``), added or removed
  (``append``) is a change, as is a different number in it (``last_epoch += 1``).

After one eager call ``changed()`` names what differs; the caller refuses (default) or allows
it (``mutates=True``); either way ``restore()`` puts back every binding, then every tensor's
value. Random-number state is always restored. Objects without a ``__dict__`` (C extension
types, ``__slots__`` classes), iterators and files are not tracked. See docs/benchmark.md.
"""

from __future__ import annotations

import functools
import logging
import types
from dataclasses import dataclass
from typing import Any

import torch

from ._reach import Globals

_MAX_DEPTH = 4
_MAX_ITEMS = 10_000
_MAX_DICT = 1000
_PLAIN = (str, bytes, int, float, bool, complex, type(None))
_ATOMIC = (
    *_PLAIN,
    type,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.ModuleType,
    functools.partial,
    torch.dtype,
    torch.device,
    # the process's logging registry is not the function's state: a logger the function
    # names leads to logging's manager, whose dict of loggers grows while torch compiles
    # (Inductor's loggers are made as its modules are first imported); put back, it would
    # drop loggers torch's modules still hold, and a handler on the new one would hear nothing
    logging.Filterer,  # loggers and handlers
    logging.Manager,
    logging.PlaceHolder,
)


class StateMutationError(ValueError):
    """Raised by ``compiler.benchmark`` when the function changes state and ``mutates`` is False."""


class SnapshotError(MemoryError):
    """The snapshot of the function's state did not fit in memory: nothing was run."""


@dataclass
class _Slot:
    """A container whose contents are remembered by identity: ``kind`` list | dict | attrs
    (an object's ``__dict__``); ``keys``: only these keys (globals, a module's public
    attributes); ``attr``: name the keys as attributes (``name.key``), else items (``name[key]``)."""

    name: str
    container: Any
    kind: str
    saved: Any
    keys: frozenset | None = None
    attr: bool = False

    def _now(self) -> Any:
        return vars(self.container) if self.kind == "attrs" else self.container

    def _label(self, key: Any) -> str:
        if self.attr:
            return f"{self.name}.{key}" if self.name else str(key)
        return f"{self.name}[{key!r}]"

    def changes(self) -> list[str]:
        now = self._now()
        if self.kind == "list":
            if len(now) != len(self.saved):
                return [f"{self.name} (a list of {len(self.saved)} items, now {len(now)})"]
            return [
                self._label(i) for i, (a, b) in enumerate(zip(self.saved, now)) if not _same_binding(a, b)
            ]
        out = []
        keys = self.keys
        for k, v in self.saved.items():
            if k not in now:
                out.append(f"{self._label(k)} (deleted)")
            elif not _same_binding(v, now[k]):
                out.append(self._label(k))
        for k in now:
            if k not in self.saved and (keys is None or k in keys) and not _untracked(k, self):
                out.append(f"{self._label(k)} (added)")
        return out

    def restore(self) -> None:
        if not self.changes():
            return
        now = self._now()
        if self.kind == "list":
            now[:] = self.saved
            return
        for k in [k for k in now if k not in self.saved and (self.keys is None or k in self.keys)]:
            if not _untracked(k, self):
                del now[k]
        for k, v in self.saved.items():
            if k not in now or now[k] is not v:
                now[k] = v


def _untracked(key: Any, slot: _Slot) -> bool:
    """A module's private attributes (hooks, torch's caches) are not its state for us."""
    return slot.kind == "attrs" and isinstance(slot.container, torch.nn.Module) and str(key).startswith("_")


def _same_binding(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, _PLAIN):
        return a == b
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same_binding(x, y) for x, y in zip(a, b))
    return False


class Snapshot:
    """Every tensor and every binding reachable from ``roots`` (module docstring), and each
    optimizer's state; ``changed()`` names what differs, ``restore()`` puts it back."""

    def __init__(self, named_roots: list[tuple[str, Any]]):
        self.tensors: dict[int, tuple[str, torch.Tensor, int, torch.Tensor]] = {}
        self.grads: dict[
            int, tuple[str, torch.Tensor, torch.Tensor | None, int | None, torch.Tensor | None]
        ] = {}
        self.optimizers: dict[int, tuple[str, torch.optim.Optimizer, dict, list]] = {}
        self.slots: list[_Slot] = []
        self.bytes = 0
        self._seen: set[int] = set()
        try:
            for name, obj in named_roots:
                self._walk(name, obj, 0)
        except (torch.OutOfMemoryError, MemoryError, RuntimeError) as e:
            if isinstance(e, RuntimeError) and "memory" not in str(e):
                raise
            raise SnapshotError(
                f"not enough memory to snapshot the state the function can reach ({len(self.tensors)} "
                f"tensors, {self.bytes / 2**20:,.0f} MiB copied so far) before benchmarking it; the "
                f"function was not called. The benchmark keeps a copy of every tensor it can change "
                f"(CUDA tensors in host memory) to restore them. Free memory, or benchmark a function "
                f"that reaches less. ({type(e).__name__}: {str(e)[:200]})"
            ) from e
        self.rng_cpu = torch.get_rng_state()
        self.rng_cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None

    # ---- discovery -----------------------------------------------------------------
    def _walk(self, name: str, obj: Any, depth: int) -> None:
        if isinstance(obj, _ATOMIC) or id(obj) in self._seen:
            return
        if depth > _MAX_DEPTH or len(self._seen) > _MAX_ITEMS:
            return
        self._seen.add(id(obj))
        if isinstance(obj, torch.Tensor):
            self._tensor(name, obj)
        elif isinstance(obj, Globals):
            g = obj.namespace
            self.slots.append(_Slot("", g, "dict", {n: g[n] for n in obj.names}, frozenset(obj.names), True))
            for n in obj.names:
                self._walk(n, g[n], depth)
        elif isinstance(obj, torch.nn.Module):
            self._module(name, obj, depth)
        elif isinstance(obj, torch.optim.Optimizer):
            self._optimizer(name, obj)
        elif isinstance(obj, list):
            self.slots.append(_Slot(name, obj, "list", list(obj)))
            for i, v in enumerate(obj[:_MAX_DICT]):
                self._walk(f"{name}[{i}]", v, depth + 1)
        elif isinstance(obj, tuple):
            for i, v in enumerate(obj[:_MAX_DICT]):
                self._walk(f"{name}[{i}]", v, depth + 1)
        elif isinstance(obj, dict):
            self.slots.append(_Slot(name, obj, "dict", dict(obj)))
            for k, v in list(obj.items())[:_MAX_DICT]:
                self._walk(f"{name}[{k!r}]", v, depth + 1)
        elif isinstance(getattr(obj, "__dict__", None), dict):  # a plain object: its attributes
            attrs = vars(obj)
            self.slots.append(_Slot(name, obj, "attrs", dict(attrs), attr=True))
            for k, v in list(attrs.items())[:_MAX_DICT]:
                self._walk(f"{name}.{k}", v, depth + 1)

    def _module(self, name: str, m: torch.nn.Module, depth: int) -> None:
        for mod_name, sub in m.named_modules(prefix=name, remove_duplicate=True):
            self._seen.add(id(sub))
            # parameters, buffers and submodules rebound; public attributes (training, self.ema)
            for d in (sub._parameters, sub._buffers, sub._modules):
                self.slots.append(_Slot(mod_name, d, "dict", dict(d), attr=True))
            public = {k: v for k, v in vars(sub).items() if not k.startswith("_")}
            self.slots.append(_Slot(mod_name, sub, "attrs", public, attr=True))
            for k, v in public.items():
                self._walk(f"{mod_name}.{k}", v, depth + 1)
        for pname, p in m.named_parameters(prefix=name):
            self._tensor(pname, p)
        for bname, b in m.named_buffers(prefix=name):
            self._tensor(bname, b)

    def _optimizer(self, name: str, opt: torch.optim.Optimizer) -> None:
        state = {k: {sk: _copy(sv) for sk, sv in v.items()} for k, v in opt.state.items()}
        groups = [{k: _copy(v) for k, v in g.items() if k != "params"} for g in opt.param_groups]
        self.optimizers[id(opt)] = (name, opt, state, groups)
        for i, g in enumerate(opt.param_groups):
            for j, p in enumerate(g["params"]):
                self._tensor(f"{name}.param_groups[{i}].params[{j}]", p)

    def _tensor(self, name: str, t: torch.Tensor) -> None:
        if id(t) in self.tensors or t.is_meta:
            return
        with torch.no_grad():
            saved = t.detach().to("cpu", copy=True) if t.is_cuda else t.detach().clone()
        self.bytes += saved.numel() * saved.element_size()
        self.tensors[id(t)] = (name, t, _ver(t), saved)
        if t.requires_grad and id(t) not in self.grads:
            g = t.grad
            gsaved = (
                None if g is None else (g.detach().to("cpu", copy=True) if g.is_cuda else g.detach().clone())
            )
            self.grads[id(t)] = (f"{name}.grad", t, g, None if g is None else _ver(g), gsaved)

    # ---- compare / restore ---------------------------------------------------------------
    def changed(self) -> list[str]:
        out = []
        for slot in self.slots:
            out += slot.changes()
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
        return list(dict.fromkeys(out))

    def values(self, names: list[str] | None = None) -> dict[str, torch.Tensor]:
        """Copies of the tracked tensors now (those named, or all): to compare the state two
        calls leave behind."""
        keep = None if names is None else set(names)
        with torch.no_grad():
            return {
                name: t.detach().to("cpu", copy=True)
                for name, t, _v, _s in self.tensors.values()
                if keep is None or name in keep
            }

    def rng_changed(self) -> bool:
        """Whether the call drew random numbers: the CPU generator's state, or a GPU's (dropout
        on CUDA draws from the device's generator), moved."""
        if not torch.equal(torch.get_rng_state(), self.rng_cpu):
            return True
        if self.rng_cuda is None:
            return False
        now = torch.cuda.get_rng_state_all()
        return len(now) != len(self.rng_cuda) or any(
            not torch.equal(a, b) for a, b in zip(now, self.rng_cuda)
        )

    def restore(self) -> None:
        for slot in self.slots:  # the original objects back in their places, then their values
            slot.restore()
        with torch.no_grad():
            for _name, t, _version, saved in self.tensors.values():
                if not _same(t, saved):
                    t.copy_(saved)
            for _name, p, g, _version, saved in self.grads.values():
                if g is not None and saved is not None and not _same(g, saved):
                    g.copy_(saved)
                p.grad = g
        for _name, opt, state, groups in self.optimizers.values():
            for k in [k for k in opt.state if k not in state]:
                del opt.state[k]
            for k, saved in state.items():
                now = opt.state.setdefault(k, {})
                for sk in [sk for sk in now if sk not in saved]:
                    del now[sk]
                _put_back(now, saved)
            for g, saved in zip(opt.param_groups, groups):
                _put_back(g, saved)
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


def _put_back(now: dict, saved: dict) -> None:
    """``saved``'s values back into the dict ``now``: a tensor into the tensor already there
    (same shape, dtype and device), in place, so the optimizer's state keeps its tensors'
    identities (a compiled optimizer step guards on them: new objects would recompile it on
    every restore); anything else as a copy."""
    with torch.no_grad():
        for k, v in saved.items():
            cur = now.get(k)
            if (
                isinstance(v, torch.Tensor)
                and isinstance(cur, torch.Tensor)
                and (cur.shape, cur.dtype, cur.device) == (v.shape, v.dtype, v.device)
            ):
                cur.copy_(v)
            else:
                now[k] = _copy(v)


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

"""What a program compiled, and the last call of each (``compiler.compiled_calls``): for
``pt2-explorer record --bench``, which benchmarks each compiled function on its recorded call
after the program ends.

Torch keeps neither a compiled function's callable nor its arguments, and no hook of its
gives a compiled call's arguments, so while the block runs ``torch.compile`` is this module's
function, which calls torch's own with the same arguments and returns what it returns:
- a compiled nn.Module (torch's ``OptimizedModule``, returned as is) gets a forward pre-hook
  (``register_forward_pre_hook``, torch's public API) that keeps its last call's arguments;
- a compiled function (or a module's ``compile()``, which compiles its ``_call_impl``) is
  returned wrapped (``functools.wraps``: its name, docstring and ``__wrapped__`` are the
  compiled function's) by a function that keeps its last call's arguments, then calls it.

Each call's span on the wall clock (``time.time_ns() // 1000``, torch's clock for a compile's
``start_time_us``) is kept too, 16 bytes a call: a compile that began inside a call is that
callable's own (``compiles_of``), so each function's compile time is its own.

Each kept call also keeps the state it ran under (compiler/listen/_callstate.py: grad and
inference mode, autocast, the default dtype, the precision and determinism flags, the modules'
``training`` flags, the random-number state), read at the call's start, so a benchmark times the
graph the program ran; and, at the call's end, each argument tensor's shape and version counter
(``ArgFacts``), so a benchmark can tell an argument changed since (resized, written in place,
a generator run out) and time nothing on it.

Kept are references, not copies: the last call's tensors, and its output, stay alive until
the next call of the same function (one batch more in memory per compiled function). When the
block ends, also where the program raised, ``torch.compile`` is given back, the hooks are
removed and a wrapped function only calls the compiled one: a later call (a benchmark's, the
program's own after the block) runs as without us, its state neither read nor kept.
"""

from __future__ import annotations

import functools
import inspect
import time
from array import array
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

from ._callstate import CallState, capture, modules_in


@dataclass
class CompiledCall:
    """One compiled callable of the program, with its last call."""

    name: str  # the function's or the module's class name ("Net", "train_step")
    eager: Any  # what was compiled
    compiled: Any  # what torch.compile returned (the program calls it)
    compile_kwargs: dict = field(default_factory=dict)
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    calls: int = 0
    output: Any = None  # what the last call returned
    # each call's start and end, µs on the wall clock (a call inside a call of itself: the outer)
    starts: array = field(default_factory=lambda: array("q"))
    ends: array = field(default_factory=lambda: array("q"))
    depth: int = 0
    state: CallState | None = None  # what the last call ran under (its start)
    facts: ArgFacts | None = None  # its arguments as the call left them
    _modules: tuple = (None, [])  # (ids of the module objects, their modules): read once per set

    def enter(self) -> None:
        if not self.depth:
            self.starts.append(time.time_ns() // 1000)
            self.state = capture(self._modules_now())
        self.depth += 1

    def leave(self) -> None:
        self.depth = max(self.depth - 1, 0)
        if not self.depth and len(self.ends) < len(self.starts):
            self.ends.append(time.time_ns() // 1000)
            self.facts = ArgFacts.of(self.args, self.kwargs)

    def _modules_now(self) -> list[torch.nn.Module]:
        """The modules whose ``training`` flag the call depends on: the compiled module's, and
        those of modules passed as arguments (read again only when those objects change)."""
        objs = [
            self.eager,
            *(a for a in (*self.args, *self.kwargs.values()) if isinstance(a, torch.nn.Module)),
        ]
        key = tuple(id(o) for o in objs)
        if self._modules[0] != key:
            self._modules = (key, modules_in(*objs))
        return self._modules[1]

    def span_at(self, t_us: int) -> int | None:
        """The start of this callable's call that was running at ``t_us``; None if none was."""
        i = bisect_right(self.starts, t_us) - 1
        if i < 0:
            return None
        end = self.ends[i] if i < len(self.ends) else None  # a call still running: no end yet
        return self.starts[i] if end is None or t_us <= end else None


@dataclass(frozen=True)
class ArgFacts:
    """A call's arguments as the call left them: each tensor's shape and version counter (a
    write in place moves it), each generator's state; the top level and one level into lists,
    tuples and dicts."""

    tensors: tuple[tuple[str, torch.Tensor, tuple, int], ...]
    generators: tuple[tuple[str, Any], ...]

    @staticmethod
    def of(args: tuple, kwargs: dict) -> ArgFacts:
        tensors: list = []
        gens: list = []

        def one(label: str, v: Any) -> None:
            if isinstance(v, torch.Tensor):
                tensors.append((label, v, tuple(v.shape), v._version))
            elif inspect.isgenerator(v) or isinstance(v, Iterator):
                gens.append((label, v))

        for i, a in enumerate(args):
            one(f"argument {i + 1}", a)
            inner = a.items() if isinstance(a, dict) else enumerate(a) if isinstance(a, list | tuple) else ()
            for k, v in list(inner)[:1000]:
                one(f"argument {i + 1}[{k!r}]", v)
        for k, v in kwargs.items():
            one(f"{k}=", v)
        return ArgFacts(tuple(tensors), tuple(gens))

    def changed(self) -> list[str]:
        """The arguments that are no longer what the call got, each in words."""
        out = []
        for label, t, shape, version in self.tensors:
            if tuple(t.shape) != shape:
                out.append(f"{label} was resized since the call ({list(shape)} then, {list(t.shape)} now)")
            elif t._version != version:
                out.append(f"{label} was written in place since the call (its version counter moved)")
        for label, g in self.generators:
            if inspect.isgenerator(g) and inspect.getgeneratorstate(g) == inspect.GEN_CLOSED:
                out.append(f"{label} is a generator that has run out")
            else:
                out.append(f"{label} is an iterator: a second call would not get what the call got")
        return out


class CompiledCalls:
    """``with compiled_calls() as calls:`` the program runs; ``calls.called`` lists each
    compiled callable called at least once, in the order of its first call."""

    def __init__(self) -> None:
        self.seen: list[CompiledCall] = []
        self._torch_compile = None
        self._installed = None
        self._open = False  # inside the block: calls are kept
        self._hooks: list[Any] = []  # the modules' hook handles, removed when the block ends

    @property
    def called(self) -> list[CompiledCall]:
        return [c for c in self.seen if c.calls]

    def __enter__(self) -> CompiledCalls:
        self._torch_compile = torch.compile
        # one bound method, kept: each ``self._compile`` is a new object, never ``is`` the last
        self._installed = self._compile
        torch.compile = self._installed
        self._open = True
        return self

    def __exit__(self, *exc) -> bool:
        if torch.compile is self._installed:  # torch.compile as it was (unless changed since)
            torch.compile = self._torch_compile
        self._open = False
        for handle in self._hooks:
            handle.remove()
        self._hooks.clear()
        return False

    def _compile(self, model=None, **kwargs):
        if model is None:  # @torch.compile(mode=...): a decorator is asked for
            return lambda fn: self._compile(fn, **kwargs)
        out = self._torch_compile(model, **kwargs)
        entry = CompiledCall(_name(model), model, out, dict(kwargs))
        self.seen.append(entry)
        if isinstance(out, torch.nn.Module):

            def keep(_module, args, kw):
                entry.args, entry.kwargs = args, dict(kw)
                entry.calls += 1
                entry.enter()

            def kept(_module, _args, _kw, output):
                entry.output = output
                entry.leave()

            self._hooks.append(out.register_forward_pre_hook(keep, with_kwargs=True))
            # always_call: a forward that raised ends its span too
            self._hooks.append(out.register_forward_hook(kept, with_kwargs=True, always_call=True))
            return out

        @functools.wraps(out)
        def call(*args, **kw):
            if not self._open:  # after the block: torch's compiled function alone
                return out(*args, **kw)
            entry.args, entry.kwargs = args, kw
            entry.calls += 1
            entry.output = None
            entry.enter()
            try:
                entry.output = out(*args, **kw)
            finally:
                entry.leave()
            return entry.output

        entry.compiled = call
        return call


def compiles_of(calls: list[CompiledCall], compiles) -> list[list[str]] | None:
    """For each of ``calls``, the ids of the ``compiles`` (a report's) that began during one
    of its calls, by torch's ``start_time_us`` of each compile (compilation_metrics); one
    inside calls of two callables is the innermost's (the later start). None where a compile's
    start time is not recorded (a torch that does not log it)."""
    out: list[list[str]] = [[] for _ in calls]
    for c in compiles:
        t = c.metrics.get("start_time_us")
        if t is None and c.metrics.get("start_time") is not None:
            t = int(c.metrics["start_time"] * 1e6)
        if t is None:
            return None
        starts = [call.span_at(int(t)) for call in calls]
        inside = [(s, i) for i, s in enumerate(starts) if s is not None]
        if inside:
            out[max(inside)[1]].append(c.id)
    return out


def _name(obj) -> str:
    if isinstance(obj, torch.nn.Module):
        return type(obj).__name__
    inner = getattr(obj, "__self__", None)  # a module's _call_impl (nn.Module.compile)
    if isinstance(inner, torch.nn.Module):
        return type(inner).__name__
    return getattr(obj, "__name__", None) or type(obj).__name__


def compiled_calls() -> CompiledCalls:
    """Keep each compiled callable of the block and its last call (module docstring)."""
    return CompiledCalls()

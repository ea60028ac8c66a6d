"""Would these inputs recompile? torch's guards evaluated for new inputs, as Dynamo does on
each call, without calling the function (``would_recompile``), or the call itself under torch's
``fail_on_recompile`` stance (``would_recompile(..., run=True)``)."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

from ..listen import _torch


@dataclass(frozen=True)
class RecompileCheck:
    """The answer for one set of inputs."""

    would_recompile: bool
    function: str  # the compiled frame: "fn" or "Net.forward"
    matching_entry: str | None = None  # the compile id whose guards pass ("0/1")
    failures: tuple[str, ...] = ()  # torch's reason per entry tried, newest first
    limit_hit: bool = False  # every entry failed and the frame is full: it would run uncompiled
    entries: int = 0  # compiled entries the frame holds
    ran: bool = False  # run=True: the function was called
    note: str | None = None  # what was not checked

    def __str__(self) -> str:
        if not self.would_recompile and self.matching_entry is None:
            head = f"{self.function}: no recompile: every frame's guards passed"
        elif not self.would_recompile:
            head = f"{self.function}: no recompile: the guards of [{self.matching_entry}] pass"
        elif self.limit_hit:
            head = (
                f"{self.function}: guards fail and the recompile limit ({self.entries} entries) is "
                "reached: it would run uncompiled"
            )
        elif self.entries == 0:
            head = f"{self.function}: not compiled yet: the first call compiles it"
        else:
            head = f"{self.function}: would recompile"
        shown = self.failures if self.would_recompile else ()
        lines = [head] + ["  " + ln for r in shown for ln in r.splitlines()]
        if self.note:
            lines.append(f"  ({self.note})")
        return "\n".join(lines)

    def _repr_pretty_(self, p, cycle) -> None:  # IPython shows the sentence
        p.text(str(self))


class NotCompiledError(TypeError):
    """would_recompile was given something torch.compile did not make."""


def would_recompile(fn: Any, *args: Any, run: bool = False, **kwargs: Any) -> RecompileCheck:
    """Would calling ``fn`` (what torch.compile returned) with these inputs recompile, and
    which guard fails? torch's guards of ``fn``'s frame are evaluated for the inputs, as
    Dynamo does on each call: ``fn`` is not called and its cache is not changed. ``run=True``
    calls it once under ``torch.compiler.set_stance("fail_on_recompile")`` instead."""
    orig = _torch.compiled_original(fn)
    if orig is None:
        raise NotCompiledError(
            f"would_recompile: {getattr(fn, '__qualname__', type(fn).__name__)} is not a torch.compile'd "
            "function or module (pass what torch.compile returned)"
        )
    func = getattr(orig, "__func__", orig)
    code = func.__code__
    name = _name(fn, func)
    if run:
        return _run(fn, name, code, args, kwargs)
    f_locals = _frame_locals(orig, func, args, kwargs)
    entries = _torch.cache_entries(code)
    failures = []
    for entry in entries:
        reason = _torch.check_entry(entry, f_locals)
        if reason is None:
            return RecompileCheck(
                False, name, _torch.entry_compile_id(entry), tuple(failures), entries=len(entries), note=_OWN_FRAME
            )  # fmt: skip
        failures.append(reason)
    return RecompileCheck(
        True,
        name,
        failures=tuple(failures),
        limit_hit=bool(entries) and len(entries) >= _torch.recompile_limit(),
        entries=len(entries),
        note=_OWN_FRAME,
    )


_OWN_FRAME = "checked: the guards of the function's own frame; frames after a graph break only with run=True"


def _run(fn, name: str, code, args, kwargs) -> RecompileCheck:
    """Call ``fn`` under fail_on_recompile: torch raises where any frame (also one after a
    graph break) would recompile; what ran before that point has run."""
    entries = len(_torch.cache_entries(code))
    try:
        with _torch.fail_on_recompile():
            fn(*args, **kwargs)
    except RuntimeError as e:
        msg = str(e)
        if "fail_on_recompile" not in msg:
            raise
        head, _, rest = msg.partition("\n")
        return RecompileCheck(
            True, name, failures=tuple(ln.strip() for ln in ([head] + rest.splitlines()) if ln.strip()),
            entries=entries, ran=True,
            note="the call ran up to the frame that would recompile",
        )  # fmt: skip
    return RecompileCheck(False, name, None, entries=entries, ran=True, note="the call ran once")


def _frame_locals(orig, func, args, kwargs) -> dict[str, Any]:
    """The frame's locals on entry, as Dynamo's guards read them (``L['x']``): the bound
    arguments with their defaults, and the closure's free variables."""
    bound_args = (orig.__self__, *args) if inspect.ismethod(orig) else args
    bound = inspect.signature(func).bind(*bound_args, **kwargs)
    bound.apply_defaults()
    f_locals = dict(bound.arguments)
    for var, cell in zip(func.__code__.co_freevars, func.__closure__ or (), strict=False):
        try:
            f_locals[var] = cell.cell_contents
        except ValueError:  # an empty cell
            pass
    return f_locals


def _name(fn, func) -> str:
    mod = getattr(fn, "_orig_mod", None)
    if mod is not None:
        return f"{type(mod).__name__}.forward"
    return getattr(func, "__qualname__", func.__name__)

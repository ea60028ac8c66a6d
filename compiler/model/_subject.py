"""What a report remembers of the call it recorded (``compiler.record``, ``%%compile``,
``compare_modes``), so that ``compiler.benchmark(report)`` needs no arguments: in memory only, never
saved (it is not a field of the report)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ._report import Report


@dataclass
class Subject:
    """What a report remembers so that ``compiler.benchmark(report)`` needs no arguments."""

    eager: Callable
    compiled: Callable | None
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    compile_kwargs: dict = field(default_factory=dict)
    # the report's compiles that are this callable's own (record --bench: those that began
    # during its calls); None: all of the report's
    compile_ids: frozenset[str] | None = None
    # the state the remembered call ran under (compiler/listen/_callstate.py's CallState), put
    # back around every call of the benchmark; None: the state when the benchmark runs
    state: Any = None


def remember(
    report: Report,
    eager,
    compiled,
    args=(),
    kwargs=None,
    compile_kwargs=None,
    compile_ids=None,
    state=None,
) -> None:
    """Remember the subject beside the report (not serialised: not a field of the report);
    ``state``: what the call ran under (``CallState``), None for the state a benchmark of it
    finds (a call made where the benchmark is made: ``%%compile``'s cell, the Benchmark button)."""
    ids = frozenset(compile_ids) if compile_ids is not None else None
    # kept on the report (an attribute its class leaves open, not a field: never saved,
    # compared or copied by dataclasses.replace), dropped with it
    report._subject = Subject(
        eager, compiled, tuple(args), dict(kwargs or {}), dict(compile_kwargs or {}), ids, state
    )


def subject_of(report: Report) -> Subject | None:
    return getattr(report, "_subject", None)

"""What a report remembers of the call it recorded (``compiler.record``, ``%%compile``,
``compare_modes``), so that ``report.benchmark()`` needs no arguments: in memory only, never
saved (it is not a field of the report)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ._report import Report


@dataclass
class Subject:
    """What a report remembers so that ``report.benchmark()`` needs no arguments."""

    eager: Callable
    compiled: Callable | None
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    compile_kwargs: dict = field(default_factory=dict)
    # the report's compiles that are this callable's own (record --bench: those that began
    # during its calls); None: all of the report's
    compile_ids: frozenset[str] | None = None


def remember(
    report: Report, eager, compiled, args=(), kwargs=None, compile_kwargs=None, compile_ids=None
) -> None:
    """Attach the subject to the report (not serialised: not a dataclass field)."""
    ids = frozenset(compile_ids) if compile_ids is not None else None
    object.__setattr__(
        report,
        "_subject",
        Subject(eager, compiled, tuple(args), dict(kwargs or {}), dict(compile_kwargs or {}), ids),
    )


def subject_of(report: Report) -> Subject | None:
    return getattr(report, "_subject", None)

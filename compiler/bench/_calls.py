"""Benchmark each compiled function of a program on its last call (``pt2-explorer record
--bench``): after the program ends, in its process, with the compiled callable it made (no
second compile), the arguments of its last call and the state that call ran under (grad and
inference mode, autocast, ...: compiler/listen/_callstate.py), put back around every call the
benchmark makes. A callable whose arguments changed since that call (resized, written in place,
an iterator) is not timed: one line says which.

A function that changes state in place (a training step: parameters, optimizer state,
buffers; RNG) is benchmarked as ``mutates=True`` does: the state check finds the change,
nothing is left changed, and the benchmark runs again with the state snapshotted and restored
around every call; its ``Benchmark.state`` says ``restored`` and ``mutated`` names what it
changed. A benchmark that fails is one line in the returned notes, not the end of the others.
"""

from __future__ import annotations

from ..listen._calls import CompiledCall, compiles_of
from ..model._report import Report
from ..model._subject import remember
from ._bench import benchmark
from ._state import StateMutationError
from ._timing import progress_line


def benchmark_calls(
    report: Report, calls: list[CompiledCall], *, progress=True, reps: int | None = None, profile: bool = True
) -> list[str]:
    """Append one benchmark per compiled callable of ``calls`` to ``report.benchmarks``;
    returns one line per callable that was not benchmarked (and why). ``profile``: each
    benchmark profiles the compiled kernels (``BenchOptions.profile``)."""
    notes: list[str] = []
    names = unique_names(calls)
    owned = compiles_of(calls, report.compiles) or [None] * len(calls)
    line = progress_line(progress)  # one line for them all, its time from the first
    for n, (call, name, ids) in enumerate(zip(calls, names, owned, strict=True), 1):
        progress = line if len(calls) == 1 else _counted(line, n, len(calls))
        changed = call.facts.changed() if call.facts is not None else []
        if changed:
            notes.append(
                f"{name}: not benchmarked: its last call's arguments changed since: {'; '.join(changed)}"
            )
            continue
        remember(
            report, call.eager, call.compiled, call.args, call.kwargs, call.compile_kwargs, ids, call.state
        )
        try:
            try:
                benchmark(report, name=name, progress=progress, reps=reps, profile=profile)
            except StateMutationError:  # a training step: its state restored around each call
                benchmark(report, name=name, progress=progress, reps=reps, profile=profile, mutates=True)
        except Exception as e:  # SnapshotError, the program's own error in a call: a note
            notes.append(f"{name}: not benchmarked: {type(e).__name__}: {error_line(e)}")
    return notes


def _counted(line, n: int, total: int):
    """``line`` with each of its texts led by "n of total": which callable is being timed."""
    return lambda text, final=False: line(f"{n} of {total}: {text}", final)


def unique_names(calls: list[CompiledCall]) -> list[str]:
    """Each callable's name; a second ``step`` is ``step#2``."""
    seen: dict[str, int] = {}
    out = []
    for c in calls:
        seen[c.name] = seen.get(c.name, 0) + 1
        out.append(c.name if seen[c.name] == 1 else f"{c.name}#{seen[c.name]}")
    return out


def error_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:300] if text else ""

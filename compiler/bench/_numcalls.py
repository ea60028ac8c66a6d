"""``pt2-explorer numerics``: each compiled function of a program compared against eager on its
last call (``compiler.numerics``), after the program ends, in its process, with the arguments
of that call and the state it ran under (compiler/listen/_callstate.py); each result appended to
``report.numerics`` with the ids of the compiles made during its calls. A callable whose
arguments changed since that call is not compared: one line says which."""

from __future__ import annotations

from ..listen._calls import CompiledCall, compiles_of
from ..model._report import Report
from ._calls import error_line, unique_names
from ._numerics import numerics


def numerics_calls(
    report: Report,
    calls: list[CompiledCall],
    *,
    max_runs: int = 40,
    steps: int | None = None,
    progress: bool = True,
) -> list[str]:
    """Append one ``Numerics`` per compiled callable of ``calls`` to ``report.numerics``;
    returns one line per callable that was not compared (and why)."""
    notes: list[str] = []
    owned = compiles_of(calls, report.compiles) or [None] * len(calls)
    for call, name, ids in zip(calls, unique_names(calls), owned, strict=True):
        changed = call.facts.changed() if call.facts is not None else []
        if changed:
            notes.append(
                f"{name}: not compared: its last call's arguments changed since: {'; '.join(changed)}"
            )
            continue
        try:
            numerics(
                call.eager,
                *call.args,
                **call.kwargs,
                state=call.state,
                compile_options=call.compile_kwargs,
                name=name,
                max_runs=max_runs,
                steps=steps,
                progress=progress,
                report=report,
                compile_ids=tuple(ids or ()),
            )
        except Exception as e:  # the program's own error in a run, a snapshot too large: a note
            notes.append(f"{name}: not compared: {type(e).__name__}: {error_line(e)}")
    return notes

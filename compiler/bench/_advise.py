"""``advise``: each fix the verdict calls for, tried and measured (docs/advise.md).

Two ways, one result (``Advice``, its rows built by compiler/why/_advice.py):

- ``advice_from_runs``: ``pt2-explorer advise`` ran the whole program once as it is and once
  per fix, each a fresh process under ``record --bench`` with the fix's settings made at
  start-up; this reads what each run left (its report, its last calls' outputs).
- ``advise(fn, *args)``: a function of the current process. A fresh process cannot make an
  arbitrary function again, so each fix is tried here: Dynamo reset (``torch._dynamo.reset()``),
  ``fn`` compiled again under the fix's settings (torch's ``config.patch``), called as given,
  recorded and benchmarked (``compiler.benchmark``); the state ``fn`` reaches is put back before
  each row, so every row starts from the same state and random numbers.
"""

from __future__ import annotations

import os
from typing import Any

import torch

from ..listen._capture import recording
from ..model._advicetypes import Advice, AdviceRow, AdviceRun, Fix
from ..model._report import Report, load
from ..model._subject import remember
from ..why._advice import advice_row, fix_named, fixes_for, ranked
from ._bench import benchmark_report
from ._calls import error_line
from ._outputs import agreement, kept, load_outputs
from ._reach import roots
from ._settings import patched
from ._state import Snapshot, StateMutationError


def _agree(row: AdviceRow, base: dict | None, mine: dict | None, fix: Fix) -> AdviceRow:
    import dataclasses

    name = row.function
    if base is None or mine is None or name not in base or name not in mine:
        return dataclasses.replace(row, agreement="not compared: no saved outputs of this function")
    ok, words = agreement(base[name], mine[name], (fix.name,))
    return dataclasses.replace(row, agree=ok, agreement=words)


def advice_from_runs(name: str, runs: list[AdviceRun], out: str | None = None) -> Advice:
    """The advice of ``pt2-explorer advise``'s runs: the baseline first in ``runs``, then one
    run per fix. A run that failed is a row saying how; each fix's outputs are held against
    the baseline's (``agreement``)."""
    base_run, *fix_runs = runs
    if base_run.report is None:
        raise ValueError(f"the baseline run left no report: {base_run.error}")
    base_report = load(base_run.report)
    base_out = _outputs(base_run.outputs)
    rows: list[AdviceRow] = [
        advice_row(None, base_report, b, path=base_run.report, agreement="the reference")
        for b in base_report.benchmarks
    ]
    for run in fix_runs:
        fix = run.fix
        assert fix is not None
        report = load(run.report) if run.report and os.path.isfile(run.report) else None
        if run.error or report is None or not report.benchmarks:
            why = run.error or ("no report written" if report is None else "nothing was benchmarked")
            # a run cut short: no counts of it (its report holds what it did before it failed)
            rows.append(advice_row(fix, None, None, error=why, path=run.report, notes=run.notes))
            continue
        mine = _outputs(run.outputs)
        by_name = {x.name: x for x in base_report.benchmarks}
        for b in report.benchmarks:
            base = (base_report, by_name[b.name]) if b.name in by_name else None
            row = advice_row(fix, report, b, path=run.report, notes=run.notes, base=base)
            rows.append(_agree(row, base_out, mine, fix))
    return Advice(name, _device(base_report), ranked(rows), separate=True, out=out)


def _outputs(path: str | None) -> dict | None:
    """A run's saved last calls; None where it saved none, or what it saved cannot be read."""
    try:
        return load_outputs(path) if path and os.path.isfile(path) else None
    except Exception:  # a file cut short: "not compared", as with none
        return None


def _device(report: Report) -> str:
    return "cuda" if any(b.device == "cuda" for b in report.benchmarks) else "cpu"


def advise(
    fn,
    *args,
    tries: tuple[str, ...] = (),
    calls: list[tuple] | None = None,
    compile_kwargs: dict[str, Any] | None = None,
    reps: int | None = None,
    warmup: int | None = None,
    progress=True,
    name: str | None = None,
    **kwargs,
) -> Advice:
    """Compile ``fn``, call it on ``args`` (or on each argument tuple of ``calls`` in turn, as
    a program would: sizes that change make recompiles; the last call is benchmarked),
    benchmark it, and try each fix its verdict calls for, and those named in ``tries``
    (``compiler.analysis`` ``FIXES``' names): each recompiled from a reset Dynamo under the
    fix's settings, called the same way, benchmarked, its last output held against the
    baseline's. Returns an ``Advice`` whose rows are best first. The baseline's exception
    is yours and propagates; a fix whose run raises is a row saying so. Dynamo is reset
    before each row and after the last: your compiled functions recompile at their next call."""
    if calls is not None and args:
        raise ValueError("give the arguments either as *args or as calls=[(args...), ...], not both")
    calls = [tuple(c) for c in calls] if calls is not None else [tuple(args)]
    if not calls:
        raise ValueError("calls is empty: nothing to call")
    for n in tries:
        fix_named(n)  # an unknown name: a ValueError before anything runs
    compile_kwargs = dict(compile_kwargs or {})
    label = name or getattr(fn, "__name__", None) or type(fn).__name__
    snap = Snapshot(roots(fn, tuple(a for c in calls for a in c), kwargs))
    run = _InProcess(fn, calls, kwargs, compile_kwargs, label, reps, warmup, progress, snap)
    try:
        report, bench, base_out = run.one(None)
        rows = [advice_row(None, report, bench, keep_report=True, agreement="the reference")]
        cuda = bench.device == "cuda"
        for fix in fixes_for(report, tries):
            rows.append(run.fix_row(fix, cuda, base_out, (report, bench)))
    finally:
        snap.restore()
        torch._dynamo.reset()
    return Advice(label, "cuda" if cuda else "cpu", ranked(rows), separate=False)


class _InProcess:
    def __init__(self, fn, calls, kwargs, compile_kwargs, label, reps, warmup, progress, snap) -> None:
        self.fn, self.calls, self.kwargs, self.compile_kwargs = fn, calls, kwargs, compile_kwargs
        self.label, self.reps, self.warmup, self.progress, self.snap = label, reps, warmup, progress, snap

    def one(self, fix: Fix | None):
        """Compile and call under ``fix`` from the saved state, record, benchmark; the
        report, its benchmark and the last call's inputs and output (copied)."""
        self.snap.restore()
        torch._dynamo.reset()
        with patched(fix):
            compiled = torch.compile(self.fn, **self.compile_kwargs)
            with recording(caches=False) as rec:  # each fix compiled cold: every stage, its compile time
                for a in self.calls:
                    out = compiled(*a, **self.kwargs)
            last = {self.label: kept(self.calls[-1], self.kwargs, out)}
            del out
            report = rec.report
            assert report is not None
            remember(report, self.fn, compiled, self.calls[-1], self.kwargs, self.compile_kwargs)
            options = dict(reps=self.reps, warmup=self.warmup, progress=self.progress, name=self.label)
            try:
                bench = benchmark_report(report, None, (), {}, **options)
            except StateMutationError:  # a training step: its state restored around each call
                bench = benchmark_report(report, None, (), {}, mutates=True, **options)
        return report, bench, last

    def fix_row(self, fix: Fix, cuda: bool, base_out: dict, base=None) -> AdviceRow:
        if fix.cuda_only and not cuda:
            return advice_row(
                fix, None, None, error="skipped: it needs a CUDA device; the function ran on CPU"
            )
        try:
            report, bench, mine = self.one(fix)
        except (KeyboardInterrupt, MemoryError):
            raise
        except Exception as e:
            return advice_row(fix, None, None, error=f"raised {type(e).__name__}: {error_line(e)}")
        row = advice_row(fix, report, bench, keep_report=True, base=base)
        return _agree(row, base_out, mine, fix)

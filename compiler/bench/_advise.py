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

import dataclasses
import os
from typing import Any

import torch

from ..assemble._compiletime import program_time
from ..listen._capture import recording
from ..model._advicetypes import BASELINE, Advice, AdviceRow, AdviceRun, CompileAdvice, CompileAdviceRow, Fix
from ..model._benchtypes import Benchmark
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


def compile_advice_from_runs(
    name: str, runs: list[tuple[AdviceRun, AdviceRun | None]], out: str | None = None
) -> CompileAdvice:
    """``advise --compile-time``'s result: ``runs`` holds, per row, its run with cold caches
    and the same again warm (None: none), the baseline's pair first. Each row's compile time is
    its report's (``program_time``: every compile's wall time, placed under the heads); its
    steady state the benchmark of the baseline's slowest compiled function; its outputs held
    against the baseline's. Rows that ran and agree are ranked by compile time saved."""
    (base_run, base_warm), *fix_runs = runs
    if base_run.report is None:
        raise ValueError(f"the baseline run left no report: {base_run.error}")
    base_report = load(base_run.report)
    main = max(
        (b for b in base_report.benchmarks if b.compiled is not None),
        key=lambda b: b.compiled.median_ms,  # type: ignore[union-attr]
        default=None,
    )
    base_out = _outputs(base_run.outputs)
    base = _compile_row(None, base_run, base_warm, main, None)
    rows = [dataclasses.replace(base, agreement="the reference")]
    for cold, warm in fix_runs:
        row = _compile_row(cold.fix, cold, warm, main, base)
        if row.error is None and main is not None:
            mine = _outputs(cold.outputs)
            if base_out is None or mine is None or main.name not in base_out or main.name not in mine:
                row = dataclasses.replace(row, agreement="not compared: no saved outputs of this function")
            else:
                ok, words = agreement(base_out[main.name], mine[main.name], (row.fix,))
                row = dataclasses.replace(row, agree=ok, agreement=words)
        rows.append(row)
    return CompileAdvice(name, _device(base_report), _ranked_by_saving(rows), out=out)


def _compile_row(
    fix: Fix | None, run: AdviceRun, warm: AdviceRun | None, main: Benchmark | None, base
) -> CompileAdviceRow:
    row = CompileAdviceRow(
        fix.name if fix else BASELINE,
        fix.code if fix else None,
        lines=fix.lines if fix else (),
        why=fix.why if fix else "",
        error=run.error,
        notes=tuple(dict.fromkeys(run.notes + (warm.notes if warm is not None else ()))),  # each once
        path=run.report,
        warm_path=warm.report if warm is not None else None,
    )
    report = load(run.report) if run.report and os.path.isfile(run.report) else None
    if run.error or report is None:
        return dataclasses.replace(row, error=run.error or "no report written")
    t = program_time(report)
    row = dataclasses.replace(
        row, compile_s=t.wall_s, compiles=len(t.compiles), hits=sum(bool(c.hits) for c in t.compiles)
    )
    if base is not None and base.compile_s is not None:
        row = dataclasses.replace(row, saved_s=round(base.compile_s - t.wall_s, 6))
    if warm is not None:
        w = load(warm.report) if warm.report and os.path.isfile(warm.report) else None
        if warm.error or w is None:
            row = dataclasses.replace(
                row, notes=(*row.notes, f"its warm run: {warm.error or 'no report written'}")
            )
        else:
            wt = program_time(w)
            row = dataclasses.replace(row, warm_s=wt.wall_s, warm_hits=sum(bool(c.hits) for c in wt.compiles))
    bench = next((b for b in report.benchmarks if main is not None and b.name == main.name), None)
    if bench is None:
        said = "nothing was benchmarked" if main is None else f"{main.name} was not benchmarked"
        return dataclasses.replace(row, notes=(*row.notes, f"no steady state: {said}"))
    row = dataclasses.replace(
        row,
        function=bench.name,
        eager=bench.eager,
        compiled=bench.compiled,
        speedup=bench.speedup,
        cautions=bench.timing_notes,
    )
    if base is not None and _speedup_below(row, base):
        row = dataclasses.replace(
            row,
            slower=f"steady state slower: {row.speedup:.3g}× eager against the baseline's {base.speedup:.3g}× "
            "(their spreads, eager's middle half over compiled's, do not overlap)",
        )
    return row


def _span(r) -> tuple[float, float] | None:
    if r.eager is None or r.compiled is None or r.compiled.p25_ms <= 0 or r.compiled.p75_ms <= 0:
        return None
    return r.eager.p25_ms / r.compiled.p75_ms, r.eager.p75_ms / r.compiled.p25_ms


def _speedup_below(row, base) -> bool:
    """``row``'s speedup over its own eager is below the baseline's beyond both spreads."""
    a, b = _span(row), _span(base)
    return a is not None and b is not None and a[1] < b[0]


def _ranked_by_saving(rows: list[CompileAdviceRow]) -> tuple[CompileAdviceRow, ...]:
    """Most compile time saved first (the baseline saves 0): the rows that ran and whose
    outputs agree; then those whose outputs differ; then those that failed or were skipped."""

    def bad(r: CompileAdviceRow) -> int:
        return 2 if r.error or r.compile_s is None else 1 if r.agree is False else 0

    out = sorted(rows, key=lambda r: (bad(r), r.compile_s if r.compile_s is not None else 0.0))
    n = 0
    for i, r in enumerate(out):
        if bad(r) == 0:
            n += 1
            out[i] = dataclasses.replace(r, rank=str(n))
    return tuple(out)


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

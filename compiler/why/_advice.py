"""Which fixes ``advise`` tries, and its rows from each run's report and benchmark. Torch-free.

A fix is one of torch's own settings (``torch._dynamo.config``, ``torch._inductor.config``,
``torch.set_float32_matmul_precision``), tried only where a verdict's cause calls for it: the
cause's fix text (``Cause.fix``, compiler/why/_fixes.py) is the fix's ``code``. Max-autotune
is called for by a call spent in kernels (the verdict's headline names library kernels, or
generated kernels slower than eager's). A fix for CUDA is never offered on CPU. ``--try``
(``tries=``) forces fixes by name.
"""

from __future__ import annotations

import dataclasses

from ..model._advicetypes import BASELINE, AdviceRow, Fix
from ..model._benchtypes import Benchmark, within_spread
from ..model._report import Report
from ._carry import bound
from ._fixes import (
    CAPTURE_DYNAMIC,
    CAPTURE_SCALAR,
    DYNAMIC,
    LOGGING,
    LOGGING_CODE,
    RECOMPILE_LIMIT,
    REDUCE_OVERHEAD,
    TF32,
)
from ._verdict import verdict

DYNAMO, INDUCTOR = "torch._dynamo.config", "torch._inductor.config"
MAX_AUTOTUNE = (
    "torch._inductor.config.max_autotune = True  # Inductor benchmarks kernel choices (GEMMs) while compiling"
)

# every fix advise knows, by name; ``code`` is the verdict's text for it
FIXES: dict[str, Fix] = {
    f.name: f
    for f in (
        Fix("capture_scalar_outputs", CAPTURE_SCALAR, ((DYNAMO, "capture_scalar_outputs", True),)),
        Fix(
            "capture_dynamic_output_shape_ops",
            CAPTURE_DYNAMIC,
            ((DYNAMO, "capture_dynamic_output_shape_ops", True),),
        ),
        # what torch.compile(dynamic=True) sets: every size symbolic from the first compile
        Fix("dynamic", DYNAMIC, ((DYNAMO, "assume_static_by_default", False),)),
        # named cache_size_limit before torch 2.7: compiler/bench/_settings.py sets the one torch has
        Fix("recompile_limit", RECOMPILE_LIMIT, ((DYNAMO, "recompile_limit", 64),)),
        # what mode="reduce-overhead" adds to the default mode's options
        Fix("reduce-overhead", REDUCE_OVERHEAD, ((INDUCTOR, "triton.cudagraphs", True),), cuda_only=True),
        Fix(
            "float32_matmul_precision",
            TF32,
            (("torch.set_float32_matmul_precision", "", "high"),),
            cuda_only=True,
        ),
        Fix("max_autotune", MAX_AUTOTUNE, ((INDUCTOR, "max_autotune", True),)),
    )
}
_BY_CODE = {f.code: f for f in FIXES.values()}


IGNORE_LOGGING = "ignore_logging"  # a logging fix's name: ignore_logging:LOGGER:METHOD


def logging_fix(logger: str, method: str) -> Fix:
    """Make ``logger``'s ``method`` calls no-ops in compiled code (torch's
    ``ignore_logging_functions``): the function is ``logging.Logger.<method>``, which the
    logger's package adds to ``logging.Logger`` where it is not the standard library's
    (transformers' ``warning_once``); the setting names that package, imported at start-up
    where the function is not there yet (compiler/bench/_settings.py)."""
    package = logger.split(".")[0] if logger != "root" else ""
    target = f"{package}:logging.Logger.{method}"
    code = LOGGING.format(logger=logger, method=method)
    return Fix(
        f"{IGNORE_LOGGING}:{logger}:{method}", code, ((DYNAMO, "ignore_logging_functions.add", target),)
    )


def fix_named(name: str) -> Fix:
    """The fix called ``name`` (``ignore_logging:LOGGER:METHOD`` for a logging call); a
    ValueError naming the ones there are."""
    head, _, rest = name.partition(":")
    logger, _, method = rest.rpartition(":")
    if head == IGNORE_LOGGING and logger and method.isidentifier():
        return logging_fix(logger, method)
    try:
        return FIXES[name]
    except KeyError:
        known = ", ".join([*FIXES, f"{IGNORE_LOGGING}:LOGGER:METHOD"])
        raise ValueError(f"no fix named {name!r}: the fixes are {known}") from None


def _fix_of(code: str) -> Fix | None:
    """The fix whose code is a cause's ``code``: one of ``FIXES``, or a logging fix."""
    m = LOGGING_CODE.search(code)
    return logging_fix(m.group(2), m.group(1)) if m else _BY_CODE.get(code)


def fixes_for(report: Report, tries: tuple[str, ...] = ()) -> tuple[Fix, ...]:
    """The fixes the verdicts of ``report``'s benchmarks call for, each with the cause that
    calls for it (``Fix.why``), in the catalogue's order; then the ones in ``tries`` that are
    not among them. A CUDA-only fix is not offered where every benchmark ran on CPU (one in
    ``tries`` is kept: its row says it was skipped)."""
    forced = [fix_named(n) for n in tries]
    why: dict[str, str] = {}
    found: dict[str, Fix] = dict(FIXES)
    cuda = any(b.device == "cuda" for b in report.benchmarks)
    for b in report.benchmarks:
        v = verdict(report, b)
        if b.compiles_while_timing:  # it timed a graph the program did not run: nothing to go by
            continue
        # no clear winner: the causes' parts are still measured; their fixes are tried, and the
        # fixes' own runs settle what the unsteady timings could not
        unsteady = "; the verdict named no cause: its timings were unsteady" if v.unread else ""
        for c in v.causes:
            fix = _fix_of(c.fix or "")
            if fix is not None and (cuda or not fix.cuda_only):
                found.setdefault(fix.name, fix)
                why.setdefault(fix.name, f"{c.title} (the verdict on {b.name}{unsteady})")
        if v.main in ("library", "generated"):  # the call is its kernels: try other kernel choices
            title = next((c.title for c in v.causes if c.key == v.main), v.main)
            why.setdefault("max_autotune", f"{title} (the verdict on {b.name})")
    out = [dataclasses.replace(f, why=why[f.name]) for f in found.values() if f.name in why]
    out += [dataclasses.replace(f, why="asked for (--try)") for f in forced if f.name not in why]
    return tuple(out)


def advice_row(
    fix: Fix | None,
    report: Report | None,
    bench: Benchmark | None,
    *,
    error: str | None = None,
    path: str | None = None,
    keep_report: bool = False,
    agreement: str = "",
    notes: tuple[str, ...] = (),
    base: tuple[Report, Benchmark] | None = None,
) -> AdviceRow:
    """A row of ``fix``'s run (None: the baseline) for one benchmark of its report: the run's
    counts, its own eager and compiled timings, their cautions; ``error`` where it crashed.
    ``base``: the baseline's report and benchmark of the same function, to hold the fix's
    measured gain against what the baseline's verdict predicted (``compare``)."""
    row = AdviceRow(
        fix.name if fix else BASELINE,
        fix.code if fix else None,
        bench.name if bench else None,
        lines=fix.lines if fix else (),
        why=fix.why if fix else "",
        error=error or (bench.error if bench else None),
        path=path,
        report=report if keep_report else None,
        agreement=agreement,
        notes=notes,
    )
    if report is not None:
        row = dataclasses.replace(row, breaks=len(report.graph_breaks), recompiles=len(report.recompiles))
    if bench is None:
        return row
    row = dataclasses.replace(
        row,
        graphs=bench.timeline.graphs if bench.timeline is not None else None,
        eager=bench.eager,
        compiled=bench.compiled,
        speedup=bench.speedup,
        compile_s=bench.compile_time_s,
        cautions=bench.timing_notes,
        compiled_anew=bench.compiles_while_timing,
    )
    if fix is not None and base is not None and report is not None:
        row = compare(row, fix, base, (report, bench))
    return row


BAND = 0.15  # measured and predicted agree within this, or the rows' own spread where wider
# two runs' eager arms (each a fresh process) differ by this much on a steady machine: the same
# eager call timed minutes apart; beyond it (and their spread), the runs were timed at other speeds
EAGER_DRIFT = 0.10


def _same_eager(a, b) -> bool:
    """Two runs' eager arms agree: within the wider IQR, or within ``EAGER_DRIFT`` of the baseline."""
    return within_spread(a, b) or abs(a.median_ms - b.median_ms) <= EAGER_DRIFT * b.median_ms


def compare(
    row: AdviceRow, fix: Fix, base: tuple[Report, Benchmark], mine: tuple[Report, Benchmark]
) -> AdviceRow:
    """The fix's predicted gain (the baseline's verdict: its cause's ``Cause.gain``) beside the
    measured one (this row's speedup over the baseline's, each against its own eager), and
    which was wrong where they disagree beyond the band (``BAND``, or the four arms' widest
    IQR over its median): a gain over the bound says the verdict was wrong (its share was too
    small); one under it, the fix did not take where the fixed run's verdict still names the
    cause, else the verdict was wrong."""
    b = base[1]
    v = verdict(*base)
    cause = next((c for c in v.causes if c.fix == fix.code), None)
    if cause is None and fix.name == "max_autotune":  # called for by a call spent in kernels
        cause = next((c for c in v.causes if c.key == v.main), None)
    gain = None if cause is None else cause.gain or (bound(cause.share) if cause.share is not None else None)
    row = dataclasses.replace(row, predicted=gain, predicted_from=cause.title if cause else "")
    if b.speedup and row.speedup:
        row = dataclasses.replace(row, measured=row.speedup / b.speedup)
    arms = [t for t in (b.eager, b.compiled, row.eager, row.compiled) if t is not None and t.median_ms > 0]
    band = max([BAND] + [t.iqr_ms / t.median_ms for t in arms])
    if row.eager is not None and b.eager is not None and not _same_eager(row.eager, b.eager):
        why = (
            f"its eager arm ({row.eager.median_ms:.4g} ms) disagrees with the baseline's ({b.eager.median_ms:.4g} ms) "
            f"beyond their spread and {EAGER_DRIFT:.0%}: the two runs were timed at different speeds; run advise again"
        )
        return dataclasses.replace(row, unranked=why, versus="not compared: " + why.split(":")[0])
    if row.measured is None or gain is None:
        said = "the baseline's verdict names no cause" if v.unread else "no bound from the cause's share"
        return dataclasses.replace(row, versus=f"no prediction: {said}")
    g, m = gain, row.measured
    head = f"predicted up to ~{g:.3g}× ({cause.title}), measured {m:.3g}×"
    if m > g * (1 + band):
        words = f"{head}: the verdict was wrong, the fix won more than its cause's share allows"
    elif m < g / (1 + band):
        still = next(
            (c for c in verdict(*mine).causes if c.key == cause.key and (c.share or 0) >= 0.05), None
        )
        words = (
            f"{head}: the fix did not take, {still.title} is still {still.share:.0%} of the fixed call"
            if still is not None
            else f"{head}: the verdict was wrong, its cause is gone from the fixed run and the call won less"
        )
    else:
        words = f"{head}: as predicted (within ±{band:.0%})"
    return dataclasses.replace(row, versus=words)


def ranked(rows: list[AdviceRow]) -> tuple[AdviceRow, ...]:
    """Best first: rows that ran and agree, by their own speedup; then rows whose outputs
    differ; then the ones that crashed or have no timing. Each function's rows together, in
    the order its baseline row came. A row that compiled anew while timing, or whose eager arm
    disagrees with the baseline's (``compare``), is marked and not ranked; rows whose speedups'
    spreads overlap (eager's middle half over compiled's) are ties ("=2")."""
    rows = [
        dataclasses.replace(r, unranked=f"compiled anew while timing: {r.compiled_anew[0]}")
        if r.compiled_anew and r.unranked is None
        else r
        for r in rows
    ]
    order = {r.function: i for i, r in enumerate(rows) if r.fix == BASELINE}

    def key(r: AdviceRow):
        return (
            order.get(r.function, len(order)),
            r.error is not None or r.speedup is None,
            r.unranked is not None,
            r.agree is False,
            -(r.speedup or 0.0),
        )

    out = sorted(rows, key=key)
    n, last = 0, None
    for i, r in enumerate(out):
        if r.error or r.speedup is None or r.unranked or r.agree is False:
            last = None
            continue
        if last is not None and last.function == r.function and _overlap(last, r):
            label = out[i - 1].rank.lstrip("=")
            out[i - 1] = dataclasses.replace(out[i - 1], rank="=" + label)
            out[i] = r = dataclasses.replace(r, rank="=" + label)
        else:
            n = n + 1 if last is not None and last.function == r.function else 1
            out[i] = r = dataclasses.replace(r, rank=str(n))
        last = r
    return tuple(out)


def _overlap(a: AdviceRow, b: AdviceRow) -> bool:
    """Their speedups' spreads overlap: eager's middle half over compiled's, each row's."""

    def span(r):
        return r.eager.p25_ms / r.compiled.p75_ms, r.eager.p75_ms / r.compiled.p25_ms

    if None in (a.eager, a.compiled, b.eager, b.compiled):
        return False
    (lo1, hi1), (lo2, hi2) = span(a), span(b)
    return lo1 <= hi2 and lo2 <= hi1

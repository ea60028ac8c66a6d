"""Which fixes ``advise`` tries, and its rows from each run's report and benchmark. Torch-free.

A fix is one of torch's own settings (``torch._dynamo.config``, ``torch._inductor.config``,
``torch.set_float32_matmul_precision``), tried only where a verdict's cause calls for it: the
cause's fix text (``Cause.fix``, compiler/assemble/_fixes.py) is the fix's ``code``. Max-autotune
is called for by a call spent in kernels (the verdict's headline names library kernels, or
generated kernels slower than eager's). A fix for CUDA is never offered on CPU. ``--try``
(``tries=``) forces fixes by name.
"""

from __future__ import annotations

import dataclasses

from ..model._advicetypes import BASELINE, AdviceRow, Fix
from ..model._benchtypes import Benchmark
from ..model._report import Report
from ._fixes import CAPTURE_DYNAMIC, CAPTURE_SCALAR, DYNAMIC, RECOMPILE_LIMIT, REDUCE_OVERHEAD, TF32
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


def fix_named(name: str) -> Fix:
    """The fix called ``name``; a ValueError naming the ones there are."""
    try:
        return FIXES[name]
    except KeyError:
        raise ValueError(f"no fix named {name!r}: the fixes are {', '.join(FIXES)}") from None


def fixes_for(report: Report, tries: tuple[str, ...] = ()) -> tuple[Fix, ...]:
    """The fixes the verdicts of ``report``'s benchmarks call for, each with the cause that
    calls for it (``Fix.why``), in the catalogue's order; then the ones in ``tries`` that are
    not among them. A CUDA-only fix is not offered where every benchmark ran on CPU (one in
    ``tries`` is kept: its row says it was skipped)."""
    forced = [fix_named(n) for n in tries]
    why: dict[str, str] = {}
    cuda = any(b.device == "cuda" for b in report.benchmarks)
    for b in report.benchmarks:
        v = verdict(report, b)
        if v.unread:  # the figures carry no cause (compiled anew, no clear winner): no fix is called for
            continue
        for c in v.causes:
            fix = _BY_CODE.get(c.fix or "")
            if fix is not None and (cuda or not fix.cuda_only):
                why.setdefault(fix.name, f"{c.title} (the verdict on {b.name})")
        if v.main in ("library", "generated"):  # the call is its kernels: try other kernel choices
            title = next((c.title for c in v.causes if c.key == v.main), v.main)
            why.setdefault("max_autotune", f"{title} (the verdict on {b.name})")
    out = [dataclasses.replace(f, why=why[f.name]) for f in FIXES.values() if f.name in why]
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
) -> AdviceRow:
    """A row of ``fix``'s run (None: the baseline) for one benchmark of its report: the run's
    counts, its own eager and compiled timings, their cautions; ``error`` where it crashed."""
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
    return dataclasses.replace(
        row,
        graphs=bench.timeline.graphs if bench.timeline is not None else None,
        eager=bench.eager,
        compiled=bench.compiled,
        speedup=bench.speedup,
        compile_s=bench.compile_time_s,
        cautions=bench.timing_notes,
    )


def ranked(rows: list[AdviceRow]) -> tuple[AdviceRow, ...]:
    """Best first: rows that ran and agree, by their own speedup; then rows whose outputs
    differ; then the ones that crashed or have no timing. Each function's rows together, in
    the order its baseline row came."""
    order = {r.function: i for i, r in enumerate(rows) if r.fix == BASELINE}

    def key(r: AdviceRow):
        return (
            order.get(r.function, len(order)),
            r.error is not None or r.speedup is None,
            r.agree is False,
            -(r.speedup or 0.0),
        )

    return tuple(sorted(rows, key=key))

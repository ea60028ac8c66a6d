"""One number per fact between the Why view, the Benchmark view and the summary: the speedup
(in the same words), the compile time, the break-even, each kernel's time a call, the mode;
and no row of either is the tool's own profiler range. Read on every GPU recording that
carries a benchmark (the causes, the why cases, the MLP block) and on the modes file's rows."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

import compiler
import compiler._viewer
import explorer

DATA = Path(__file__).parent.parent / "notebooks" / "data"
RECORDINGS = sorted(
    p.name for p in DATA.glob("h100-*.json.gz") if "bench" in p.name or "why" in p.name or "cause" in p.name
)


def _pairs():
    for name in RECORDINGS:
        r = compiler.load(DATA / name)
        for b in r.benchmarks:
            yield name, r, b
    m = compiler.load_modes(DATA / "h100-modes-mlp.json.gz")
    for row in m.rows:
        if row.benchmark is not None and row.report is not None:
            yield f"modes:{row.label}", row.report, row.benchmark


CASES = list(_pairs())


def test_the_recordings_are_there():
    assert len(CASES) >= 14  # 7 causes, 3 why cases, the MLP block, the modes' rows


@pytest.mark.parametrize("name, r, b", CASES, ids=[c[0] for c in CASES])
def test_why_and_benchmark_agree(name, r, b):
    why, bench = explorer.text(r, "why"), explorer.text(r, "bench")
    v = compiler.analysis.verdict(r, b)
    # the speedup, in the same words, from the same medians
    # (first, or within a "no clear winner (…)" headline, where the figures carry no cause)
    assert v.headline.startswith((b.speedup_words + ": ", f"no clear winner ({b.speedup_words}, as timed): "))
    assert b.speedup_words in bench and f"{b.name} ({b.device_name}, mode={v.mode}): {v.headline}" in why
    # the mode: as compiled, in both
    assert f"setup: torch.compile(mode={v.mode}," in bench
    # the compile time and the break-even: one figure each
    if b.compile_time_s is not None:
        assert (
            f"compile {b.compile_time_s:.2f} s" in bench and f"compile took {b.compile_time_s:.2f} s" in why
        )
        be = compiler._viewer.break_even(r, b)  # from the cold compile, and said which it used
        if be is not None and be.calls is not None:
            calls = f"{math.ceil(be.calls):,} calls"
            assert f"pays off after {calls} (counted from {be.seconds:.2f} s, {be.which})" in bench
            assert f"paid off after {calls}" in why and f"({be.which})" in why
    # each kernel's time a call: the Benchmark row, and the Why rows of that kernel summed
    costs = compiler.analysis.kernel_costs(r, b)
    for k in b.kernel_rows:
        mine = [c.ms for c in costs if c.name == k.name]
        assert sum(mine) == pytest.approx(k.per_call_ms, rel=1e-6), k.name
    # no row is the tool's own profiler range, in either view
    assert not re.search(r"^## ", bench + why, re.M) and "## pt2-explorer" not in bench + why
    # the parts of the call add up to its median
    parts = [c for c in v.causes if c.ms is not None]
    assert sum(c.ms for c in parts) == pytest.approx(b.compiled.median_ms)

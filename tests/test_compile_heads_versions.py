"""What grew between two torch versions (issue 53, item 4): ``pt2-explorer diff`` of one
program recorded under torch 2.13 and 2.14.1 (tests/fixtures/reports/README.md) puts each pair
of compiles' heads side by side and names the head that changed most over the program. Each
compile's placed seconds are checked against torch's own compilation_metrics, kept in each
report as torch logged them."""

from __future__ import annotations

from pathlib import Path

import pytest

import compiler
from compiler._viewer import HEADS
from compiler.analysis import compile_time
from explorer import cli

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "reports"
A, B = (FIXTURES / f"cpu-torch{v}-train-step.json.gz" for v in ("213", "2141"))


def _torch_wall(c) -> float:
    """The compile's seconds as torch's compilation_metrics state them: the frame's, and the
    Inductor compile of its backward (compiled at the first .backward())."""
    m = c.metrics or {}
    back = m.get("backward") or []
    return m["entire_frame_compile_time_s"] + sum(b.get("inductor_compile_time_s") or 0 for b in back)


def test_diff_of_two_torch_versions_names_the_head_that_changed_most(capsys):
    a, b = compiler.load(A), compiler.load(B)
    assert a.torch_version == "2.13.0+cpu" and b.torch_version == "2.14.1+cu130"
    pairs = [(x, y) for x in a.compiles for y in b.compiles if x.id == y.id and x.phases and y.phases]
    assert [x.id for x, _ in pairs] == [f"{i}/0" for i in range(13)]
    totals = {k: [0.0, 0.0] for k in HEADS}
    for x, y in pairs:
        for side, c in enumerate((x, y)):
            t = compile_time(c)
            assert t.wall_s == pytest.approx(_torch_wall(c), abs=2e-3), c.id  # torch's own seconds
            assert sum(t.heads.values()) == pytest.approx(t.wall_s, abs=1e-3)
            for k, v in t.heads.items():
                totals[k][side] += v
    most = max(totals, key=lambda k: abs(totals[k][1] - totals[k][0]))
    assert cli.main(["diff", str(A), str(B)]) == 0
    out = capsys.readouterr().out.splitlines()
    ta, tb = totals[most]
    assert out[-1] == f"  compile time: the head that changed most is {HEADS[most]}, {ta:.3f} s → {tb:.3f} s"
    # the training step's forward and backward: its line names the heads that moved beyond the floors
    (line,) = [x for x in out if x.startswith("  2/0 compile time ")]
    x, y = pairs[2]
    assert line.startswith(
        f"  2/0 compile time {compile_time(x).wall_s:.3f} s → {compile_time(y).wall_s:.3f} s; "
    )
    # the cache keys of two torch versions differ in dozens of config entries: a few are said
    (keys,) = [x for x in out if x.startswith("  2/0 key components that differ: ")]
    assert keys.endswith(" more (--full: both keys)") and keys.count("; ") == 6

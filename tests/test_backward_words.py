"""No backward words for a program without a backward: the kernel line table says a kernel
with no line ran in "a backward that autograd's engine ran" only where the report holds a
backward graph (a compile's AOTAutograd backward, or Compiled Autograd's); a kernel run inside
a compile the report does not hold says that instead."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import compiler

DATA = Path(__file__).resolve().parent.parent / "notebooks" / "data"


def _unplaced(report) -> set[str]:
    (b,) = report.benchmarks
    costs = compiler.analysis.kernel_costs(report, b)
    return {g.key for g in compiler.analysis.cost_groups(costs, "line") if g.key.startswith("(no line")}


def _without_backward(report):
    def strip(c):
        a = c.stages.autograd
        if a is None or a.backward is None:
            return c
        return dataclasses.replace(
            c, stages=dataclasses.replace(c.stages, autograd=dataclasses.replace(a, backward=None))
        )

    return dataclasses.replace(report, compiles=tuple(strip(c) for c in report.compiles))


def test_backward_words_only_where_the_report_holds_a_backward():
    r = compiler.load(DATA / "h100-gpt2-train-bench.json.gz")  # a training step: backward graphs
    assert any(c.stages.autograd and c.stages.autograd.backward for c in r.compiles)
    assert _unplaced(r) == {
        "(no line: outside the compiled graphs (eager code, or autograd's engine running a backward))",
        "(no line: a kernel whose nodes torch's provenance did not log)",
        "(no line: run inside [6/0], a graph with no kernels of its own: a backward that autograd's "
        "engine ran there, which torch's provenance does not place)",
    }
    # the same kernels in a report with no backward graph: no backward named
    assert _unplaced(_without_backward(r)) == {
        "(no line: outside the compiled graphs (eager code))",
        "(no line: a kernel whose nodes torch's provenance did not log)",
        "(no line: run inside [6/0], a graph with no kernels of its own, which torch's provenance "
        "does not place)",
    }


def test_a_compile_the_report_does_not_hold_is_said():
    r = _without_backward(compiler.load(DATA / "h100-gpt2-train-bench.json.gz"))
    r = dataclasses.replace(r, compiles=tuple(c for c in r.compiles if c.id != "6/0"))
    assert "(no line: run inside [6/0], a compile this report does not hold)" in _unplaced(r)
    assert not any("backward" in key for key in _unplaced(r))

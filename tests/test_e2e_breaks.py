"""End to end: graph breaks recorded in-process (backend="eager"; torch 2.13's texts).

Every compiled function lives in this file; the expected lines are found through the
``# BREAK:<name>`` markers, so editing the file never breaks the tests.
"""

from __future__ import annotations

import pytest
import torch
from _e2e import marker_line, source_line

import compiler

HERE = __file__


def data_dependent(x):
    x = x * 2
    if x.sum() > 0:  # BREAK:ddb
        x = x + 1
    return x - 1


def printing(x):
    x = x * 2
    print("pt2-explorer test print")  # BREAK:print
    return x + 1


def item(x):
    x = x * 2
    s = x.sum().item()  # BREAK:item
    return x + s


def item_in_print(x):
    x = x * 2
    print("pt2-explorer test", x.sum().item())  # BREAK:two
    return x + 1


def explicit(x):
    x = x * 2
    torch._dynamo.graph_break()  # BREAK:explicit
    return x + 1


def helper(x):
    x = x + 1
    torch._dynamo.graph_break()  # BREAK:helper
    return x * 3


def calls_helper(x):
    x = x * 2
    x = helper(x)  # CALL:helper
    return x - 1


def calls_helper_twice(x):
    x = helper(x)
    x = helper(x)
    return x - 1


@torch.compiler.disable
def not_compiled(x):
    return x * 3


def calls_disabled(x):
    x = x * 2
    x = not_compiled(x)  # BREAK:disable
    return x + 1


def _record(fn, *inputs, **compile_kwargs):
    """Compile fn (eager backend), call it on each input; check results against eager."""
    compiled = torch.compile(fn, backend="eager", **compile_kwargs)
    with compiler.recording() as rec:
        outs = [compiled(x) for x in inputs]
    for x, out in zip(inputs, outs):
        torch.testing.assert_close(out, fn(x))
    assert rec.report is not None
    return rec.report


def _innermost(b: compiler.types.GraphBreak):
    f = b.user_stack[-1]
    return f.filename, f.line, f.name, f.code


CASES = [
    # (function, marker, torch 2.13's break type, torch's graph-break id, a hint of torch's)
    (
        data_dependent,
        "ddb",
        "Data-dependent branching",
        "GB0170",
        "Use `torch.cond` to express dynamic control flow.",  # 2.11 and 2.13 (2.13 adds more)
    ),
    (
        printing,
        "print",
        "Failed to trace builtin operator",
        "GB0059",
        "Avoid calling builtin `print`",
    ),
    (
        item,
        "item",
        "Unsupported Tensor.item() call with capture_scalar_outputs=False",
        "GB0124",
        "Set `torch._dynamo.config.capture_scalar_outputs = True`",
    ),
    (
        explicit,
        "explicit",
        "Call to `torch._dynamo.graph_break()`",
        "GB0025",
        "Remove the `torch._dynamo.graph_break()` call.",
    ),
    (
        calls_disabled,
        "disable",
        "Skip calling `torch.compiler.disable()`d function",
        "GB0098",
        "Remove the `torch.compiler.disable` call",
    ),
]


@pytest.mark.parametrize(("fn", "marker", "btype", "gb_id", "hint"), CASES, ids=[c[1] for c in CASES])
def test_one_break(fn, marker, btype, gb_id, hint):
    report = _record(fn, torch.randn(8))
    line = marker_line(HERE, f"BREAK:{marker}")

    assert len(report.graph_breaks) == 1, report.graph_breaks
    (b,) = report.graph_breaks
    assert b.type == btype
    assert b.gb_id == gb_id
    assert b.filename == HERE
    assert b.line == line
    assert b.count == 1
    assert b.compile_id == "0/0"
    assert b.compile_ids == ("0/0",)
    assert b.hints, "torch gives hints for this break"
    assert any(hint in h for h in b.hints), b.hints
    assert b.explanation
    # torch states the type on a line of its own (after "Encountered graph break when
    # attempting to trace CALL..." for breaks met while tracing a call)
    assert btype in [ln.strip() for ln in b.reason.splitlines()]
    assert _innermost(b) == (HERE, line, fn.__name__, source_line(HERE, line))
    # the frame before the break compiled; the rest of the function resumes in a new frame
    assert report.compiles[0].id == "0/0"
    assert report.compiles[0].name == fn.__name__
    assert report.compiles[0].filename == HERE
    assert all(c.status == "ok" for c in report.compiles)
    assert report.frames[0].name == fn.__name__
    assert report.frames[0].filename == HERE
    assert report.frames[0].line == fn.__code__.co_firstlineno
    assert report.recompiles == ()
    assert report.unknown_events == ()


def test_break_inside_helper_is_one_site_counted_per_hit():
    """Dynamo reports a break in an inlined helper twice per hit (while inlining it into the
    caller's frame, then in the helper's own frame): one entry, at the helper's line."""
    # two compiles of calls_helper (static shapes 4 then 6), each hits the break once
    report = _record(calls_helper, torch.randn(4), torch.randn(6), torch.randn(6), dynamic=False)
    line = marker_line(HERE, "BREAK:helper")
    call_line = marker_line(HERE, "CALL:helper")

    assert len(report.graph_breaks) == 1, report.graph_breaks
    (b,) = report.graph_breaks
    assert (b.filename, b.line) == (HERE, line)
    assert b.type == "Call to `torch._dynamo.graph_break()`"
    assert b.count == 2
    assert b.compile_id == "0/0"
    # every compile torch logged it in: the caller's (inlining) and the helper's own, twice
    assert b.compile_ids == ("0/0", "1/0", "0/1", "1/1")
    assert b.hints == ("Remove the `torch._dynamo.graph_break()` call.",)
    assert _innermost(b) == (HERE, line, "helper", source_line(HERE, line))
    # the caller's frame sits right above the helper in the user stack
    caller = b.user_stack[-2]
    assert (caller.filename, caller.line, caller.name) == (HERE, call_line, "calls_helper")

    by_name = {f.name: f for f in report.frames}
    assert by_name["calls_helper"].compiles == 2
    assert by_name["helper"].compiles == 2
    assert by_name["helper"].line == helper.__code__.co_firstlineno
    assert [r.compile_id for r in report.recompiles if r.failed_entry == "0/0"] == ["0/1"]


def test_helper_called_twice_counts_two_hits():
    """Two calls of the helper in one function: the break is hit twice (once per call, the
    second time while compiling the resumed caller): one site, count 2."""
    report = _record(calls_helper_twice, torch.randn(4))
    line = marker_line(HERE, "BREAK:helper")

    assert [(b.filename, b.line, b.count) for b in report.graph_breaks] == [(HERE, line, 2)]
    (b,) = report.graph_breaks
    assert b.type == "Call to `torch._dynamo.graph_break()`"
    assert _innermost(b) == (HERE, line, "helper", source_line(HERE, line))
    # the caller while inlining (0/0), the helper's own frame (1/0: the echo of that hit), the
    # resumed caller's compile while inlining the second call (3/0)
    assert b.compile_ids == ("0/0", "1/0", "3/0")


def test_breaks_of_one_function_in_order():
    """All the kinds of break in one function: one entry each, in the order hit."""

    def many(x):
        x = x * 2
        if x.sum() > 0:  # MANY:ddb
            x = x + 1
        print("pt2-explorer test print")  # MANY:print
        s = x.sum().item()  # MANY:item
        torch._dynamo.graph_break()  # MANY:explicit
        x = helper(x)
        x = not_compiled(x)  # MANY:disable
        return x + s

    report = _record(many, torch.randn(8))
    got = [(b.type, b.line, b.count) for b in report.graph_breaks]
    assert got == [
        ("Data-dependent branching", marker_line(HERE, "MANY:ddb"), 1),
        ("Failed to trace builtin operator", marker_line(HERE, "MANY:print"), 1),
        (
            "Unsupported Tensor.item() call with capture_scalar_outputs=False",
            marker_line(HERE, "MANY:item"),
            1,
        ),
        ("Call to `torch._dynamo.graph_break()`", marker_line(HERE, "MANY:explicit"), 1),
        ("Call to `torch._dynamo.graph_break()`", marker_line(HERE, "BREAK:helper"), 1),
        ("Skip calling `torch.compiler.disable()`d function", marker_line(HERE, "MANY:disable"), 1),
    ]
    assert all(b.filename == HERE for b in report.graph_breaks)
    # each break after the first happens while compiling the frame that resumes after the last
    ids = [b.compile_id for b in report.graph_breaks]
    assert ids[0] == "0/0" and len(set(ids)) == len(ids)
    names = {c.id: c.name for c in report.compiles}
    assert names[ids[1]].startswith("torch_dynamo_resume_in_many_at_")
    assert all(c.status == "ok" for c in report.compiles)


def test_two_breaks_on_one_line_are_two_sites(capsys):
    r = _record(item_in_print, torch.ones(3))
    line = marker_line(HERE, "BREAK:two")
    got = [(b.line, b.type, b.count, b.gb_id) for b in r.graph_breaks]
    assert got == [
        (line, "Unsupported Tensor.item() call with capture_scalar_outputs=False", 1, "GB0124"),
        (line, "Failed to trace builtin operator", 1, "GB0059"),
    ]

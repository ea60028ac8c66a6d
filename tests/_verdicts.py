"""Shared by the tests that read a kept H100 report's verdict: the report, its one benchmark and
the verdict on it; a cause of a verdict by its key."""

from __future__ import annotations

import compiler
from compiler.analysis import verdict


def judged(path):
    """(report, its one benchmark, the verdict on it)."""
    r = compiler.load(path)
    (b,) = r.benchmarks
    return r, b, verdict(r, b)


def cause(v, key):
    return next(c for c in v.causes if c.key == key)


def steady(b):
    """``b`` with each arm's middle half at its median: the same medians, timed without spread
    (no caution holds), so that the verdict names its causes."""
    import dataclasses

    def still(t):
        return dataclasses.replace(t, p25_ms=t.median_ms, p75_ms=t.median_ms, waited_ms=None)

    return dataclasses.replace(b, eager=still(b.eager), compiled=still(b.compiled))

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

"""A compile's kernels in one table, the most expensive first: by measured time where a
benchmark profiled them (``Benchmark.kernels``), else by size (lines of source, graph nodes
fused); and the extern calls its wrapper makes (``extern_kernels.addmm``: library kernels such
as cuBLAS / MKL matmuls, which Inductor calls instead of generating)."""

from __future__ import annotations

import re
from collections import Counter

from compiler import Compile, Kernel, Report

from ._viewtypes import Table

# a call in the wrapper's code (not a comment): Inductor's extern kernels, ATen fallbacks
_EXTERN = re.compile(r"\b(extern_kernels\.\w+|torch\.ops\.aten\.\w+(?:\.\w+)?)\(")


def extern_calls(code: str) -> list[str]:
    """The extern calls of wrapper code: the first of each line that is not a comment (found
    by one search for the calls, not a match tried at every line: a big log's wrappers are
    megabytes)."""
    calls, line = [], -1
    for m in _EXTERN.finditer(code):
        start = code.rfind("\n", 0, m.start()) + 1
        if start != line:
            line = start
            if not code[start : m.start()].lstrip().startswith("#"):
                calls.append(m[1])
    return calls


def kernel_times(report: Report, compile_id: str) -> dict[str, float]:
    """Milliseconds per call of each of the compile's kernels, from its latest benchmark's profile."""
    out: dict[str, float] = {}
    for b in report.benchmarks:
        for kt in b.kernels:
            if kt.kernel and kt.compile_id in (None, compile_id):
                out[kt.kernel] = kt.per_call_ms
    return out


def _size(k: Kernel) -> tuple[int, int]:
    return len(k.source.splitlines()), len(k.nodes)


def kernels_table(report: Report, c: Compile, lines: dict[str, str] | None = None) -> Table | None:
    """``lines``: each kernel's source lines (the user's code its fused nodes came from)."""
    kernels = report.kernels_of(c.id)
    if not kernels:
        return None
    times = kernel_times(report, c.id)
    ordered = sorted(kernels, key=lambda k: (-times.get(k.name, -1.0), [-n for n in _size(k)], k.name))
    rows = tuple(
        (
            k.role,
            k.name,
            k.language,
            str(_size(k)[0]),
            str(_size(k)[1]) if k.nodes else "",
            (lines or {}).get(k.name, ""),
        )
        + (
            (f"{times[k.name]:.4g}" if k.name in times else "",) if times else ()
        )  # as the Benchmark tab says it
        for k in ordered
    )
    by = "time per call (the benchmark's profile)" if times else "size"
    columns = ("role", "kernel", "language", "lines", "nodes fused", "from") + (
        ("ms per call",) if times else ()
    )
    return Table(f"kernels ({len(kernels)}, the largest {by} first)", columns, rows)


def extern_table(c: Compile) -> Table | None:
    """The extern calls in the compile's wrapper modules, per role, with how many calls each."""
    cg = c.stages.codegen
    rows = []
    for oc in cg.output_code if cg else ():
        for call, n in Counter(extern_calls(oc.code)).most_common():
            rows.append((oc.role, call, str(n)))
    if not rows:
        return None
    return Table(
        "extern calls (library kernels the wrapper calls, not generated)",
        ("role", "call", "calls"),
        tuple(rows),
    )

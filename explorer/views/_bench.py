"""Benchmarks as views: tables (view model), text, static HTML (tables + inline plotly charts)
and the notebook widget (tables + interactive charts). ``compare_modes`` results: pages._modes."""

from __future__ import annotations

import math

from compiler import Report
from compiler._viewer import benchmark_mode, break_even
from compiler.analysis import figure
from compiler.types import Accuracy, Benchmark

from ..base._types import Table
from ..lower._html import esc, frag, table_html
from ..lower._text import table_text


def ms_text(x: float | None) -> str:
    return "—" if x is None else f"{figure(x)} ms"


def _bytes(x: int | None) -> str:
    return "—" if x is None else f"{x / 2**20:.1f} MiB"


def summary_lines(b: Benchmark, report: Report | None = None) -> list[str]:
    out = [f"{b.name} on {b.device_name} ({b.device}, {b.threads} threads)"]
    if b.error:
        out.append(f"finding: {b.error}")
    if b.interrupted:
        out.append("interrupted: the samples taken before Ctrl-C")
    if b.eager and b.compiled:
        out.append(
            f"eager {ms_text(b.eager.median_ms)} (IQR {b.eager.iqr_ms:.3g}), compiled {ms_text(b.compiled.median_ms)} "
            f"(IQR {b.compiled.iqr_ms:.3g}), {b.compiled.reps} reps: {b.speedup_words}"
        )
        out += [f"caution, {note}" for note in b.timing_notes]
    if b.compile_time_s is not None:
        stages = ", ".join(f"{k} {v:.2f} s" for k, v in b.stage_times_s.items())
        be = break_even(report, b) if report is not None else None
        calls = be.calls if be is not None else b.break_even_calls
        if calls is None:
            pays = "never pays off" + (" (compiled is not faster)" if b.speedup is not None else "")
        elif be is not None:  # from the cold compile where the fill-in measured it, and said which
            pays = f"pays off after {math.ceil(calls):,} calls (counted from {be.seconds:.2f} s, {be.which})"
        else:
            pays = f"pays off after {b.break_even_text}"
        if be is not None and b.break_even_calls is not None and be.calls != b.break_even_calls:
            pays += f"; from the compile time the benchmark recorded: {b.break_even_text}"
        own = f" of {', '.join(f'[{i}]' for i in b.compile_ids)}" if b.compile_ids else ""
        out.append(f"compile {b.compile_time_s:.2f} s{own} ({stages}); {pays}")
    if b.accuracy:
        out.append(accuracy_line(b.accuracy))
    if b.peak_memory_eager is not None:
        out.append(
            f"peak memory: eager {_bytes(b.peak_memory_eager)}, compiled {_bytes(b.peak_memory_compiled)}"
        )
    if b.mutated:
        out.append(f"state changed by the function and restored: {', '.join(b.mutated)}")
    if b.context is not None:  # the recorded call's state, put back around every call
        out.append(f"every call timed under the call's own state: {b.context or 'torch defaults'}")
    if b.printed_lines:
        out.append(
            f"the function wrote {b.printed_lines} lines during the benchmark's calls (kept out of the "
            "program's output)"
        )
    if b.matmul_precision is not None:
        tf32 = "" if b.allow_tf32 is None else f", allow_tf32={b.allow_tf32}"
        out.append(f"matmul settings while timing: float32_matmul_precision={b.matmul_precision}{tf32}")
    out.append(setup_line(b, benchmark_mode(report, b)))
    out.append(f"method: {b.method}")
    return out


def accuracy_line(a: Accuracy) -> str:
    """Whether compiled's outputs match eager's, with the figures; where they differ because
    the function draws random numbers, that first, with the setting that draws as eager does."""
    figures = f"max abs {a.max_abs:.3g}, max rel {a.max_rel:.3g} (atol {a.atol:g}, rtol {a.rtol:g})"
    note = f"; {a.note}" if a.note else ""
    if a.ok:
        return f"outputs match: {figures}{note}"
    if a.random:
        return (
            f"FINDING: outputs differ beyond tolerance, as expected here: {a.random_words}: {figures}{note}"
        )
    return f"FINDING: outputs differ beyond tolerance: {figures}{note}"


def setup_line(b: Benchmark, mode: str) -> str:
    """How the benchmark was set up: torch.compile's settings (``mode``: as the function was
    compiled, ``compiler._viewer.benchmark_mode``), autocast, the warm-up calls, the state, the torch
    version, the output tensors compared."""
    c = b.config
    line = (
        f"setup: torch.compile(mode={mode}, dynamic={c.dynamic}, backend={c.backend or 'inductor'}), "
        f"autocast {c.autocast or 'off'}; {b.warmup} warm-up calls; state {b.state}"
    )
    if b.torch_version:
        line += f"; torch {b.torch_version}"
    if b.accuracy:
        line += f"; {b.accuracy.tensors} output tensors compared"
    return line


def timing_table(b: Benchmark) -> Table:
    rows = []
    for arm, t in (("eager", b.eager), ("compiled", b.compiled)):
        if t is not None:
            rows.append(
                (
                    arm,
                    f"{t.median_ms:.4g}",
                    f"{t.p25_ms:.4g}",
                    f"{t.p75_ms:.4g}",
                    f"{t.min_ms:.4g}",
                    f"{t.max_ms:.4g}",
                    str(t.reps),
                )
            )
    return Table("Time per call (ms)", ("arm", "median", "p25", "p75", "min", "max", "reps"), tuple(rows))


def sample_lines(b: Benchmark) -> list[str]:
    """Each arm's samples, one per timed call, in the order they were taken."""
    return [
        f"{arm} samples (ms): {' '.join(f'{x:.4g}' for x in t.samples_ms)}"
        for arm, t in (("eager", b.eager), ("compiled", b.compiled))
        if t is not None and t.samples_ms
    ]


def kernel_table(b: Benchmark, top: int = 20) -> Table:
    rows = tuple(
        (
            k.name if k.kernel in (None, k.name) else f"{k.name} ({k.kernel})",  # the report's kernel
            k.kind,
            k.compile_id or "",
            str(k.calls),
            f"{k.total_ms:.4g}",
            f"{k.per_call_ms:.4g}",
            f"{k.share:.1%}",
            "" if k.gb is None else f"{k.gb:.4g}",
            "" if k.gb_per_s is None else f"{k.gb_per_s:.0f}",
        )
        for k in b.kernel_rows[:top]
    )
    title = f"Kernels of the compiled run ({b.profiled_calls} profiled calls)"
    columns = (
        "kernel",
        "kind",
        "compile",
        "launches",
        "total ms",
        "ms a call",
        "of kernel time",
        "GB",
        "GB/s",
    )
    return Table(title, columns, rows)


def bench_text(report: Report) -> str:
    if not report.benchmarks:
        return "No benchmarks: call compiler.benchmark(report) (or %%compile --bench).\n"
    out = []
    for b in report.benchmarks:
        out += summary_lines(b, report)
        out.append(table_text(timing_table(b)))
        out += sample_lines(b)
        if b.kernel_rows:
            out.append(table_text(kernel_table(b)))
    return "\n".join(out).rstrip() + "\n"


def bench_html(report: Report | None, benchmarks: tuple[Benchmark, ...], *, static: bool) -> str:
    """The Benchmark section: summary, tables, and (static page) the charts inline, plotly.js
    once; where plotly is not installed, the page without charts and a note saying so."""
    try:
        from ..lower import _charts
    except ImportError as e:  # plotly missing: the tables are the facts, the charts only draw them
        _charts = None
        parts = [f'<div class="note">no charts: {esc(str(e))} (pip install plotly)</div>']
    else:
        parts = []
    first = True
    for b in benchmarks:
        lines = summary_lines(b, report)
        parts.append(f"<h3>{esc(lines[0])}</h3>" + "".join(f"<div>{esc(x)}</div>" for x in lines[1:]))
        if static and _charts is not None:
            for fig in _charts.benchmark_figures(b):
                parts.append(_charts.figure_html(fig, include_plotlyjs=first))
                first = False
        parts.append(table_html(timing_table(b)))
        if samples := sample_lines(b):
            parts.append(
                f"<details><summary>samples</summary><pre>{esc(chr(10).join(samples))}</pre></details>"
            )
        if b.kernel_rows:
            parts.append(table_html(kernel_table(b)))
            if b.profile_note:
                parts.append(f'<div class="note">{esc(b.profile_note)}</div>')
    return "".join(parts)


def bench_widget(report: Report):
    """Tables as HTML plus the charts, interactive, in Output widgets."""
    import ipywidgets as w

    from ..lower import _charts

    children = []
    for b in report.benchmarks:
        children.append(w.HTML(frag(bench_html(report, (b,), static=False))))
        out = w.Output()
        with out:
            for fig in _charts.benchmark_figures(b):
                _charts.show(fig)
        children.append(out)
    return w.VBox(children)

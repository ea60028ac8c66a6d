"""Why isn't compiled faster? One verdict per benchmark, then where its kernel time went: on the
model's lines, its modules (beside eager's), its op families, and each kernel against the
device's roofline. Built from ``compiler.analysis.verdict``, ``compiler.analysis.kernel_costs`` and
``compiler.analysis.roofline``: facts the benchmark measured, nothing guessed."""

from __future__ import annotations

from compiler import Report
from compiler._viewer import module_name, no_roofline, of_peak
from compiler.analysis import cost_groups, figure, kernel_costs, roofline, verdict
from compiler.types import Benchmark, Cause, Launch, Timeline, Verdict

from ..base._types import Table
from ..lower._terminal import printable
from ..lower._text import table_text
from ..model._summary import places
from ._bench import accuracy_line

TOP = 12  # rows of each table


def _pct(x: float | None) -> str:
    return "" if x is None else f"{x:.0%}"


def _ms(x: float | None) -> str:
    return figure(x)  # no float noise: a part of 5.551e-17 ms is 0


def _ranked(v: Verdict) -> list[Cause]:
    """The causes as ``Verdict.fixes`` orders them: the headline's first, then by share."""
    return sorted(v.causes, key=lambda c: (c.key != v.main, -(c.share or 0.0)))


def change_lines(v: Verdict) -> list[str]:
    """Each cause's change to make, the headline's first: ``fix`` where it is code to paste,
    ``advice`` where it is a change in words; each fix with what it can win at most. None
    where the verdict names no cause (``Verdict.unread``)."""
    out: list[str] = []
    if v.unread:
        return out
    for c in _ranked(v):
        if c.fix:
            gain = f" — {c.gain_words}" if c.gain_words else ""
            out.append(f"fix ({c.title}): {c.fix}{gain}")
        elif c.advice:
            out.append(f"advice ({c.title}): {c.advice}")
    return out


def verdict_line(v: Verdict) -> str:
    """The verdict in one line: the speedup in words, the first cause, and its change (the
    headline's cause's own, else the first cause's that has one, named)."""
    main = next((c for c in v.causes if c.key == v.main), None)
    line = f"{v.name}: {v.headline}"
    if v.unread:  # no cause named: no change to make either
        return line
    if main is not None and (main.fix or main.advice):
        return line + (f"; fix: {main.fix}" if main.fix else f"; advice: {main.advice}")
    other = next((c for c in _ranked(v) if c.fix or c.advice), None)
    if other is not None:
        word = "fix" if other.fix else "advice"
        line += f"; {word} for {other.title}: {other.fix or other.advice}"
    return line


def verdict_lines(report: Report) -> list[str]:
    """``why NAME: …``: each benchmark's verdict in one line (``verdict_line``), and where its
    outputs differ from eager's, why (``accuracy_line``); escaped."""
    out = []
    for b in report.benchmarks:
        out.append(printable(f"why {verdict_line(verdict(report, b))}"))
        if b.accuracy is not None and not b.accuracy.ok:
            out.append(printable(f"why {b.name}: {accuracy_line(b.accuracy)}"))
    return out


def why_tables(report: Report, b: Benchmark) -> tuple[list[str], list[Table]]:
    """The verdict as lines (headline, each cause with its share and evidence, what is
    missing) and the tables: causes, lines, modules, op families, roofline."""
    v = verdict(report, b)
    lines = [f"{b.name} ({b.device_name}, mode={v.mode}): {v.headline}"]
    if b.matmul_precision is not None and b.device == "cuda":  # TF32 is a CUDA setting
        tf32 = "" if b.allow_tf32 is None else f", allow_tf32={b.allow_tf32}"
        lines.append(f"matmul settings while timing: float32_matmul_precision={b.matmul_precision}{tf32}")
    causes = Table(
        "where the compiled call's time goes",
        ("cause", "ms a call", "of the call", "evidence"),
        tuple((c.title, _ms(c.ms), _pct(c.share), "; ".join(c.evidence)) for c in v.causes),
    )
    lines += change_lines(v)
    if b.accuracy is not None and not b.accuracy.ok:
        lines.append(accuracy_line(b.accuracy))
    lines += [f"not recorded: {m}" for m in v.missing]
    costs = kernel_costs(report, b)
    tables = [causes]
    if not costs:
        return lines, tables
    tables.append(_group_table("the lines of your model that cost the most kernel time", "line", costs, b))
    tables.append(
        _group_table("by module (eager's kernel time for the same module beside it)", "module", costs, b)
    )
    tables.append(_group_table("by op family", "family", costs, b))
    tables.append(_kernel_table(costs, b))
    if b.timeline or b.eager_timeline:
        tables.append(_timeline_table(b))
    for arm, launches in (("compiled", b.launch_rows), ("eager", b.eager_launch_rows)):
        if launches:
            tables.append(_launch_table(arm, launches, b.name))
    return lines, tables


def _num(x: float | None) -> str:
    return figure(x, ".6g")


TIMELINE = (
    ("call (ms)", "call_ms"),
    ("kernels (ms)", "kernel_ms"),
    ("device busy (ms)", "busy_ms"),
    ("launches", "launches"),
    ("graphs", "graphs"),
    ("compiled frames entered", "regions"),
    ("guards (ms)", "guard_ms"),
    ("host inside graphs (ms)", "graph_host_ms"),
    ("host outside graphs and guards (ms)", "outside_ms"),
    ("idle gaps between kernels", "gaps"),
    ("median gap (µs)", "median_gap_us"),
    ("longest gap (µs)", "max_gap_us"),
)


def _timeline_table(b: Benchmark) -> Table:
    arms: list[tuple[str, Timeline | None]] = [("compiled", b.timeline), ("eager", b.eager_timeline)]
    rows = tuple((label, *(_num(getattr(t, f)) if t else "" for _, t in arms)) for label, f in TIMELINE)
    return Table("one call, host against device (profiled, per call)", ("", "compiled", "eager"), rows)


def _launch_table(arm: str, launches: tuple[Launch, ...], model: str) -> Table:
    rows = tuple(
        (
            r.name if len(r.name) <= 60 else r.name[:59] + "…",
            r.kind,
            r.compile_id or "",
            r.op or "",
            "" if r.op_index is None else str(r.op_index),
            "" if r.module is None else module_name(r.module, model),
            str(r.calls),
            _num(r.total_ms),
        )
        for r in launches[:TOP]
    )
    cols = ("kernel", "kind", "graph", "launched by", "call #", "module", "launches", "total ms")
    return Table(f"the {arm} run's kernels by where they were launched", cols, rows)


def _group_table(title: str, by: str, costs, b: Benchmark) -> Table:
    groups = cost_groups(costs, by, b)[:TOP]
    key = {"line": "line", "module": "module", "family": "family"}[by]
    if by == "module":
        rows = tuple((g.key, _ms(g.ms), _pct(g.share), str(g.kernels), _ms(g.eager_ms)) for g in groups)
        return Table(title, (key, "ms a call", "of kernel time", "kernels", "eager ms"), rows)
    label = places if by == "line" else str
    rows = tuple((label(g.key), _ms(g.ms), _pct(g.share), str(g.kernels)) for g in groups)
    return Table(title, (key, "ms a call", "of kernel time", "kernels"), rows)


def _kernel_table(costs, b: Benchmark) -> Table:
    places = {p.name: p for p in roofline(costs, b)}
    rows = []
    for c in costs[:TOP]:
        p = places.get(c.name)
        rows.append(
            (
                c.name if len(c.name) <= 60 else c.name[:59] + "…",
                ("library " if c.library else "") + c.kind,
                _ms(c.ms),
                _pct(c.share),
                f"{c.launches:g}",
                ", ".join(c.nodes[:4]) + (" …" if len(c.nodes) > 4 else ""),
                "" if p is None or p.gb_per_s is None else f"{p.gb_per_s:.0f}",
                "" if p is None or p.tflops is None else f"{p.tflops:.1f}",
                ""
                if p is None or p.bound is None
                else f"{p.bound}, {of_peak(p.of_bound, p.bound) if p.of_bound is not None else ''}",
            )
        )
    why_not = no_roofline(b)
    title = "each kernel against the machine" + (f" ({why_not})" if why_not else f" ({b.device_name})")
    cols = (
        "kernel",
        "kind",
        "ms a call",
        "of kernel time",
        "launches a call",
        "nodes",
        "GB/s",
        "TFLOP/s",
        "bound, % of it",
    )
    return Table(title, cols, tuple(rows))


def why_text(report: Report) -> str:
    benches = [b for b in report.benchmarks]
    if not benches:
        return "No benchmarks: call compiler.benchmark(report) (or %%compile --bench) for a verdict.\n"
    out = []
    for b in benches:
        lines, tables = why_tables(report, b)
        out += lines + [""] + [table_text(t) for t in tables]
    return "\n".join(out).rstrip() + "\n"


def why_html(report: Report) -> str:
    """The Why tab: each benchmark's verdict, every kernel, line and break site a way in and
    each fix a code block with a copy button (``_whyhtml.py``)."""
    from ._whyhtml import WHY_CSS, why_page_html

    parts = []
    for b in report.benchmarks:
        lines, tables = why_tables(report, b)
        parts.append(why_page_html(report, b, lines, tables, change_lines(verdict(report, b))))
    return f"<style>{WHY_CSS}</style>" + "".join(parts) if parts else ""

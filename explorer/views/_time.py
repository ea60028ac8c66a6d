"""Where compile time goes: each compile's timed phases as torch logs them (chromium events,
``Compile.phases``) — a waterfall as text (``pt2-explorer report --view time``) and as a plotly
chart (notebook and static page); a cold compile beside a warm one (cache hits) of the same
frame, phase by phase, when both were recorded."""

from __future__ import annotations

from collections import defaultdict

from compiler import Report
from compiler.types import Compile

from ..base._phasenames import MIN_SHARE, names_said, phase_label, shown_phases
from ..base._phasenames import phase_span as _total
from ..lower._fit import table_lines, width
from ..model._summary import display_name, secs, where

BAR = 40  # characters of the widest bar in the text waterfall


def heading(c: Compile) -> str:
    """``[1/0] forward — compile time 47.02 s``: the compile's one figure, as the compiles
    tab says it (``Compile.compile_time_s``); where its phases spread over a longer stretch
    of the run (the backward compiles at the first ``.backward()``), that stretch beside it."""
    total = c.compile_time_s if c.compile_time_s is not None else _total(c)
    out = f"[{c.id}] {display_name(c.name)} — compile time {secs(total)}"
    if _total(c) - total >= 0.01:
        out += f", its phases spread over {secs(_total(c))} of the run"
    return out


def _cache_state(c: Compile) -> str:
    if not c.cache:
        return ""
    hits = sorted(k for k, v in c.cache.items() if v == "hit")
    if hits:
        return "warm (cache hit: " + ", ".join(hits) + ")"
    return "cold (cache " + ", ".join(f"{k} {v}" for k, v in sorted(c.cache.items())) + ")"


def cold_warm_pairs(report: Report) -> list[tuple[Compile, Compile]]:
    """(cold, warm) compiles of one code object: the first without a cache hit, the first
    with one after it."""
    by_code: dict[tuple, list[Compile]] = defaultdict(list)
    for c in report.compiles:
        if c.phases:
            by_code[(c.name, c.filename, c.line)].append(c)
    out = []
    for cs in by_code.values():
        cold = next((c for c in cs if c.cache and "hit" not in c.cache.values()), None)
        warm = next((c for c in cs if "hit" in c.cache.values()), None)
        if cold is not None and warm is not None:
            out.append((cold, warm))
    return out


def phase_totals(c: Compile) -> dict[str, float]:
    out: dict[str, float] = defaultdict(float)
    for p in c.phases:
        out[p.name] += p.duration_s
    return dict(out)


def time_text(report: Report) -> str:
    """Each compile's phases as a tree (a phase's children indented under it), its start and
    length, and a bar on the compile's span; at a terminal's width (``_fit``) the bars are
    shorter and the phase names wrap inside their column, a row never across the next."""
    lines = []
    room = width()
    bar_width = BAR if room is None else max(10, min(BAR, room // 3))
    for c in report.compiles:
        if not c.phases:
            continue
        total = _total(c)
        state = _cache_state(c)
        lines.append(heading(c) + f"  {where(c.filename, c.line)}" + (f"  {state}" if state else ""))
        rows = []
        for p in shown_phases(c):
            lead = int(round(bar_width * p.start_s / total)) if total else 0
            size = max(1, int(round(bar_width * p.duration_s / total))) if total else 1
            bar = (" " * lead + "█" * size).ljust(bar_width)
            rows.append(
                (
                    bar,
                    f"{p.start_s:7.3f} +{p.duration_s:7.3f} s",
                    f"{'  ' * p.depth}{phase_label(p.name, names_said(c))}",
                )
            )
        lines += table_lines(None, rows, keep=(0, 1), indent=2)
        lines.append("")
    for cold, warm in cold_warm_pairs(report):
        lines.append(f"cold [{cold.id}] vs warm [{warm.id}]: {display_name(cold.name)}")
        a, b = phase_totals(cold), phase_totals(warm)
        names = sorted(set(a) | set(b), key=lambda n: -max(a.get(n, 0.0), b.get(n, 0.0)))
        rows = [
            (f"{_s(a.get(n)):>9}", f"{_s(b.get(n)):>9}", phase_label(n, names_said(cold, warm)))
            for n in names
            if max(a.get(n, 0.0), b.get(n, 0.0)) >= MIN_SHARE * max(_total(cold), 1e-9)
        ]
        lines += table_lines(None, rows, keep=(0, 1), indent=2)
        lines.append("")
    if not lines:
        return "No timed phases recorded (torch logs them from 2.5 on, in chromium_event records).\n"
    return "\n".join(lines)


def _s(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f} s"


def time_figure(report: Report, compile_id: str | None = None):
    """A plotly waterfall of one compile's phases (default: the longest compile); with a
    cold/warm pair of its frame, the warm compile's phases beside it."""
    import plotly.graph_objects as go

    from ..lower._charts import chart_text

    timed = [c for c in report.compiles if c.phases]
    if not timed:
        return None
    c = report.compile(compile_id) if compile_id else max(timed, key=_total)
    rows = [(c, p) for p in shown_phases(c)]
    warm = next((w for cold, w in cold_warm_pairs(report) if cold.id == c.id), None)
    if warm is not None:
        rows += [(warm, p) for p in shown_phases(warm)]
    labels = [
        f"[{x.id}] " + "\u2007" * (2 * p.depth) + chart_text(phase_label(p.name, names_said(x)))
        for x, p in rows
    ]
    fig = go.Figure(
        go.Bar(
            y=labels[::-1],
            x=[p.duration_s for _, p in rows][::-1],
            base=[p.start_s for _, p in rows][::-1],
            orientation="h",
            marker_color=["#1f6feb" if x is c else "#2da44e" for x, _ in rows][::-1],
            hovertemplate="%{y}: %{x:.3f} s from %{base:.3f} s<extra></extra>",
        )
    )
    title = chart_text(heading(c))
    if warm is not None:
        title += f" — warm [{warm.id}] {_total(warm):.2f} s in green"
    fig.update_layout(
        title=title, xaxis_title="seconds from the compile's start", height=120 + 18 * len(rows), width=900
    )
    return fig


def time_html(report: Report) -> str:
    """The static page's "Compile time" section: each compile's waterfall (longest first), and
    cold beside warm, as plain HTML bars: the page keeps no script but its own and stays small
    (``time_figure`` is the interactive plotly chart of the same rows)."""
    from html import escape

    parts = []
    for c in sorted((c for c in report.compiles if c.phases), key=_total, reverse=True):
        total = _total(c) or 1.0
        state = _cache_state(c)
        rows = "".join(
            f'<div class="pt2x-ph"><span style="padding-left:{p.depth}em">{escape(phase_label(p.name, names_said(c)))}</span>'
            f'<span class="pt2x-ph-track"><span class="pt2x-ph-bar" style="margin-left:{100 * p.start_s / total:.2f}%;'
            f'width:{max(0.3, 100 * p.duration_s / total):.2f}%" title="{p.start_s:.3f} s + {p.duration_s:.3f} s">'
            f"</span></span><span>{p.duration_s:.3f} s</span></div>"
            for p in shown_phases(c)
        )
        head = heading(c) + (f" · {state}" if state else "")
        parts.append(f"<h4>{escape(head)}</h4>{rows}")
    for cold, warm in cold_warm_pairs(report):
        a, b = phase_totals(cold), phase_totals(warm)
        names = sorted(set(a) | set(b), key=lambda n: -max(a.get(n, 0.0), b.get(n, 0.0)))[:20]
        body = "".join(
            f"<tr><td>{escape(phase_label(n, names_said(cold, warm)))}</td><td>{_s(a.get(n))}</td><td>{_s(b.get(n))}</td></tr>"
            for n in names
        )
        parts.append(
            f"<h4>cold [{escape(cold.id)}] vs warm [{escape(warm.id)}]</h4>"
            f"<table><tr><th>phase</th><th>cold</th><th>warm</th></tr>{body}</table>"
        )
    return "".join(parts)  # styled by the page's one stylesheet (_html.CSS: .pt2x .pt2x-ph…)

"""Plotly figures of benchmarks: eager vs compiled with spread, per-kernel share, achieved
bandwidth against the device's peak (GPU), and modes side by side. Interactive in the notebook
(plotly's own MIME renderer, ``application/vnd.plotly.v1+json``, whose JupyterLab extension
ships in the plotly wheel); inlined into the static page (``figure_html``).
"""

from __future__ import annotations

import html
import math

import plotly.graph_objects as go

from compiler.types import Benchmark

TOP_KERNELS = 12
MIME = "application/vnd.plotly.v1+json"  # rendered by plotly's JupyterLab extension


def show(fig: go.Figure) -> None:
    """Display ``fig`` in a notebook as plotly's MIME bundle alone. ``display(fig)`` goes through
    plotly's default renderer in a kernel, "plotly_mimetype+notebook": its first use imports
    nbformat (jsonschema: ~3 s here) and pushes the whole plotly.js (4.6 MB) into the output,
    which the browser then parses: the Benchmark tab came ~14 s after its timing was done."""
    import json

    import plotly.io as pio
    from IPython.display import display

    data = json.loads(pio.to_json(fig, validate=False))
    data["config"] = {"displaylogo": False}
    display({MIME: data}, raw=True)


def chart_text(text: str) -> str:
    """User text (function, kernel and configuration names) for plotly, which renders a subset
    of HTML tags in titles, labels and hover text: escaped, so it reads as written."""
    return html.escape(str(text), quote=False)


def timing_figure(b: Benchmark) -> go.Figure:
    """Median per call of each arm, error bars from the 25th to the 75th percentile."""
    arms = [(n, t) for n, t in (("eager", b.eager), ("compiled", b.compiled)) if t is not None]
    fig = go.Figure(
        go.Bar(
            x=[n for n, _ in arms],
            y=[t.median_ms for _, t in arms],
            error_y=dict(
                type="data",
                symmetric=False,
                array=[t.p75_ms - t.median_ms for _, t in arms],
                arrayminus=[t.median_ms - t.p25_ms for _, t in arms],
            ),
            marker_color=["#8c959f", "#1f6feb"][: len(arms)],
            hovertemplate="%{x}: median %{y:.4g} ms<extra></extra>",
        )
    )
    speed = f" — {b.speedup_words}" if b.speedup else ""
    fig.update_layout(
        title=f"{chart_text(b.name)}: time per call{speed}",
        yaxis_title="ms (median, IQR bars)",
        height=320,
        width=480,
    )
    return fig


def short_name(name: str, width: int = 44) -> str:
    """A kernel name cut to ``width`` characters for an axis label (cuBLAS names run to 100+);
    the whole name stays in the hover text and the table."""
    return chart_text(name if len(name) <= width else name[: width - 1] + "…")


def kernels_figure(b: Benchmark, top: int = TOP_KERNELS) -> go.Figure:
    """Share of the profiled time per kernel, largest first (top N)."""
    rows = list(b.kernel_rows[:top])[::-1]
    labels: list[str] = []
    for k in rows:  # axis labels must stay distinct after cutting
        label = short_name(k.name)
        while label in labels:
            label += " "
        labels.append(label)
    fig = go.Figure(
        go.Bar(
            x=[k.share for k in rows],
            y=labels,
            orientation="h",
            customdata=[[k.kind, k.per_call_ms, k.compile_id or "", chart_text(k.name)] for k in rows],
            hovertemplate="%{customdata[3]}<br>%{customdata[0]} · %{customdata[1]:.4g} ms per call · "
            "%{x:.1%}<extra>%{customdata[2]}</extra>",
        )
    )
    fig.update_layout(
        title=f"{chart_text(b.name)}: top kernels by share of time",
        xaxis_tickformat=".0%",
        height=140 + 30 * len(rows),
        width=760,
        margin=dict(l=320, t=60, b=40),
        yaxis=dict(tickmode="linear", automargin=True),  # every kernel labelled
    )
    return fig


def roofline_figure(b: Benchmark) -> go.Figure | None:
    """Achieved GB/s per kernel that knows its bytes moved, against the device's peak; None
    when no kernel knows its bytes. Each of the largest kernels is its own trace, named in the
    legend (labels on the points overlapped wherever kernels took about the same time); the
    rest share one. The GB/s axis is logarithmic, from below the slowest kernel to above the
    peak: kernels at 0.5% of the peak and at 95% both read. Where every kernel is far below
    the peak, the title says why: too few bytes a launch to fill the memory system."""
    rows = [k for k in b.kernel_rows if k.gb_per_s is not None]
    if not rows:
        return None

    def per_launch(k) -> float:
        return k.per_call_ms / max(k.calls / max(b.profiled_calls, 1), 1)

    fig = go.Figure()
    named, rest = rows[:LEGEND_KERNELS], rows[LEGEND_KERNELS:]
    groups = [([k], middle_cut(k.name)) for k in named]
    if rest:
        groups.append((rest, f"{len(rest)} other kernel{'s' * (len(rest) != 1)}"))
    for ks, label in groups:
        fig.add_scatter(
            x=[per_launch(k) for k in ks],
            y=[k.gb_per_s for k in ks],
            mode="markers",
            marker=dict(size=9, symbol=_SYMBOLS[len(fig.data) % len(_SYMBOLS)]),
            name=label,
            customdata=[chart_text(k.name) for k in ks],
            hovertemplate="%{customdata}<br>%{y:.3g} GB/s, %{x:.4g} ms per launch<extra></extra>",
        )
    ys = [k.gb_per_s for k in rows if k.gb_per_s > 0]
    lo = min(ys, default=1.0) / 2
    hi = 1.5 * max([b.peak_gb_per_s or 0] + ys)
    if b.peak_gb_per_s:
        fig.add_hline(y=b.peak_gb_per_s, line_dash="dash")
        fig.add_annotation(  # not add_hline's own: plotly places that at y, not log10(y), on a log axis
            text=f"peak {b.peak_gb_per_s:.0f} GB/s",
            xref="paper",
            x=0,
            xanchor="left",
            y=math.log10(b.peak_gb_per_s),
            yanchor="bottom",
            showarrow=False,
        )
    fig.update_layout(
        title=dict(
            text=f"{chart_text(b.name)}: achieved bandwidth ({chart_text(b.device_name)}){far_below(b, rows)}"
        ),
        xaxis_title="ms per launch",
        yaxis_title="GB/s (log)",
        xaxis_type="log",
        yaxis_type="log",
        yaxis_range=[math.log10(lo), math.log10(hi)],
        yaxis_tickvals=log_ticks(lo, hi),
        height=ROOFLINE_HEIGHT,
        width=960,
        margin=ROOFLINE_MARGIN,
        legend=dict(title_text="kernel", font=dict(size=11)),
    )
    return fig


ROOFLINE_HEIGHT = 420
ROOFLINE_MARGIN = dict(l=80, r=20, t=90, b=60)
LEGEND_KERNELS = 8  # kernels named in the legend, the largest by time; the rest share one entry
_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "cross", "triangle-down", "star", "hexagon")
FAR_BELOW = 0.1  # every kernel under this share of the peak: the title says why


def middle_cut(name: str, width: int = 48) -> str:
    """A kernel name cut in its middle to ``width`` characters: Inductor's names of one family
    differ at their end (``…_native_layer_norm_view_2``, ``…_view_4``)."""
    if len(name) <= width:
        return chart_text(name)
    tail = width // 3
    return chart_text(name[: width - tail - 1] + "…" + name[-tail:])


def log_ticks(lo: float, hi: float) -> list[float]:
    """The ticks of a log axis from ``lo`` to ``hi``: 1, 2, 3 and 5 of each decade, or the decades
    alone where those are more than eight (plotly's own labels every 2 and 5 of many decades
    as a bare digit: "5 2 1000 5 2 100")."""
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    fine = [m * 10.0**e for e in range(first, last + 1) for m in (1, 2, 3, 5) if lo <= m * 10.0**e <= hi]
    return fine if len(fine) <= 8 else [10.0**e for e in range(first, last + 1) if lo <= 10.0**e <= hi]


def far_below(b: Benchmark, rows) -> str:
    """The title's second line where every kernel is far below the device's peak bandwidth:
    the most bytes one moves a launch and its time, too little data for the memory system."""
    if not b.peak_gb_per_s or any(k.gb_per_s >= FAR_BELOW * b.peak_gb_per_s for k in rows):
        return ""
    top = max(rows, key=lambda k: k.gb_per_s)
    most = max(k.gb or 0 for k in rows)
    return (
        f"<br><sup>every kernel under {FAR_BELOW:.0%} of the peak (the fastest {top.gb_per_s:.3g} GB/s):"
        f" each moves at most {_bytes(most)} a launch, too little to fill the memory system;"
        " its time is the launch's fixed cost</sup>"
    )


def _bytes(gb: float) -> str:
    n = gb * 1e9
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} B"


def modes_figure(comparison) -> go.Figure:
    """One bar per configuration: compiled median with IQR, eager of that row beside it; each
    bar carries its row's label and index (customdata), which hover shows and a click on the
    static page follows to the recording."""
    index = {id(r): i for i, r in enumerate(comparison.rows)}
    rows = [r for r in comparison.rows if r.benchmark is not None and r.benchmark.compiled is not None]
    labels = [chart_text(r.label) for r in rows]
    fig = go.Figure()
    for arm, color in (("eager", "#8c959f"), ("compiled", "#1f6feb")):
        ts = [getattr(r.benchmark, arm) for r in rows]
        fig.add_bar(
            name=arm,
            x=labels,
            y=[t.median_ms if t else None for t in ts],
            error_y=dict(
                type="data",
                symmetric=False,
                array=[t.p75_ms - t.median_ms if t else 0 for t in ts],
                arrayminus=[t.median_ms - t.p25_ms if t else 0 for t in ts],
            ),
            marker_color=color,
            customdata=[[chart_text(r.label), r.benchmark.speedup or 0, index[id(r)]] for r in rows],
            hovertemplate="%{customdata[0]} · " + arm + " %{y:.4g} ms · ×%{customdata[1]:.2f}<extra></extra>",
        )
    fig.update_layout(
        barmode="group",
        title=f"{chart_text(comparison.name)}: modes and settings",
        yaxis_title="ms per call (median, IQR bars)",
        height=380,
        width=120 + 110 * max(len(rows), 2),
    )
    return fig


def benchmark_figures(b: Benchmark) -> list[go.Figure]:
    """The figures that have data: none for a benchmark whose compiled arm raised at once."""
    figs = [timing_figure(b)] if b.eager or b.compiled else []
    if b.kernel_rows:
        figs.append(kernels_figure(b))
    roof = roofline_figure(b)
    if roof is not None:
        figs.append(roof)
    return figs


def figure_html(fig: go.Figure, *, include_plotlyjs: bool, div_id: str | None = None) -> str:
    """The figure as an HTML fragment; plotly.js inlined when asked (once per page: offline).
    Interactive (hover shows the numbers): staticPlot would drop that, and the page's script
    is the same size either way."""
    return fig.to_html(
        full_html=False, include_plotlyjs=include_plotlyjs, config={"displaylogo": False}, div_id=div_id
    )

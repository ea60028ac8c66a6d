"""Plotly figures of benchmarks: eager vs compiled with spread, per-kernel share, achieved
bandwidth against the device's peak (GPU), and modes side by side. Interactive in the notebook
(plotly's own MIME renderer, ``application/vnd.plotly.v1+json``, whose JupyterLab extension
ships in the plotly wheel); inlined into the static page (``figure_html``).
"""

from __future__ import annotations

import html

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
    when no kernel knows its bytes."""
    rows = [k for k in b.kernel_rows if k.gb_per_s is not None]
    if not rows:
        return None
    top = 1.1 * max([b.peak_gb_per_s or 0] + [k.gb_per_s for k in rows])
    fig = go.Figure(
        go.Scatter(
            x=[k.per_call_ms / max(k.calls / max(b.profiled_calls, 1), 1) for k in rows],
            y=[k.gb_per_s for k in rows],
            mode="markers+text" if len(rows) <= 8 else "markers",  # names on the points when few
            text=[short_name(k.name, 32) for k in rows],
            textposition=[label_position(k.gb_per_s, b.peak_gb_per_s, top) for k in rows],
            cliponaxis=False,
            customdata=[chart_text(k.name) for k in rows],
            hovertemplate="%{customdata}<br>%{y:.0f} GB/s, %{x:.4g} ms per launch<extra></extra>",
        )
    )
    if b.peak_gb_per_s:
        fig.add_hline(
            y=b.peak_gb_per_s,
            line_dash="dash",
            annotation_text=f"peak {b.peak_gb_per_s:.0f} GB/s",
            annotation_position="right",  # in the right margin, beside the line: no point there
        )
    fig.update_layout(
        title=f"{chart_text(b.name)}: achieved bandwidth ({chart_text(b.device_name)})",
        xaxis_title="ms per launch",
        yaxis_title="GB/s",
        xaxis_type="log",
        height=ROOFLINE_HEIGHT,
        width=720,
        margin=ROOFLINE_MARGIN,
        yaxis_range=[0, top],  # from 0: vs the peak
    )
    return fig


ROOFLINE_HEIGHT = 380
ROOFLINE_MARGIN = dict(l=80, r=120, t=60, b=60)
LABEL_PX = 22  # a point's label above it: marker radius, gap and one 12 px line of text


def label_position(y: float, peak: float | None, top: float) -> str:
    """A point's label above it, or below where above would reach the peak line."""
    if not peak or y >= peak:
        return "top center"
    plot_px = ROOFLINE_HEIGHT - ROOFLINE_MARGIN["t"] - ROOFLINE_MARGIN["b"]
    return "top center" if (peak - y) * plot_px / top > LABEL_PX else "bottom center"


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

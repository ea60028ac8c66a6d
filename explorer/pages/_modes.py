"""``compiler.compare_modes`` results as views: one table (view model) lowered to text, to a
static page (the chart inline, each configuration linked to its recording) and to the
notebook widget (the chart, and a table whose rows open their recording)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ..base._types import Table
from ..views._bench import ms_text, summary_lines

COLUMNS = ("configuration", "eager", "compiled", "speedup", "compile", "pays off", "caution")


def modes_table(comparison) -> Table:
    """One row per configuration; a skipped or failed one says why in the "caution" column."""
    rows = []
    for r in comparison.rows:
        b = r.benchmark
        if r.skipped or r.error or b is None:
            why = r.skipped or r.error or "no benchmark"
            rows.append((r.label, "—", "—", "—", "—", "—", f"{'skipped' if r.skipped else 'failed'}: {why}"))
            continue
        rows.append(
            (
                r.label,
                ms_text(b.eager.median_ms if b.eager else None),
                ms_text(b.compiled.median_ms if b.compiled else None),
                f"×{b.speedup:.2f}" if b.speedup else "—",
                f"{b.compile_time_s:.1f} s" if b.compile_time_s is not None else "—",
                b.break_even_text,
                "; ".join(n.split(":", 1)[0] for n in b.timing_notes),  # labels; the summary says why
            )
        )
    return Table(f"{comparison.name}: modes", COLUMNS, tuple(rows))


def modes_text(comparison) -> str:
    """The table, then each configuration's benchmark summary."""
    from ..lower._text import table_text

    out = [table_text(modes_table(comparison))]
    for r in comparison.rows:
        if r.benchmark is not None:
            out.append(f"\n[{r.label}]")
            out += summary_lines(r.benchmark, r.report)
    return "\n".join(out).rstrip() + "\n"


def _slug(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", label).strip("-").lower() or "row"


def modes_page(comparison, links: list[str | None] | None = None) -> str:
    """A self-contained page: the chart (plotly.js inline), the table with each configuration
    linked to its recording (``links[i]``: another page, or by default its section below), and
    each configuration's benchmark. Clicking a bar follows its configuration's link."""
    from ..lower._charts import figure_html, modes_figure
    from ..lower._html import CSS, esc
    from ..views._bench import bench_html

    if links is None:
        links = [f"#mode-{i}" if r.report is not None else None for i, r in enumerate(comparison.rows)]
    table = modes_table(comparison)
    head = "".join(f"<th>{esc(c)}</th>" for c in table.columns)
    body = []
    for i, row in enumerate(table.rows):
        first = esc(row[0]) if links[i] is None else f'<a href="{esc(links[i])}">{esc(row[0])}</a>'
        body.append(f"<tr><td>{first}</td>" + "".join(f"<td>{esc(v)}</td>" for v in row[1:]) + "</tr>")
    sections = []
    for i, r in enumerate(comparison.rows):
        if r.benchmark is None:
            continue
        own = links[i] if links[i] and not links[i].startswith("#") else None
        more = f'<div><a href="{esc(own)}">open the recording of {esc(r.label)}</a></div>' if own else ""
        sections.append(
            f'<section id="mode-{i}"><h2>{esc(r.label)}</h2>{more}{bench_html(r.report, (r.benchmark,), static=False)}</section>'
        )
    chart = figure_html(modes_figure(comparison), include_plotlyjs=True, div_id="pt2x-modes")
    script = (  # a bar's customdata[2] is its row: follow that row's link
        "window.addEventListener('load',function(){var d=document.getElementById('pt2x-modes');"
        f"var links={json.dumps(links)};"
        "if(d&&d.on)d.on('plotly_click',function(e){var l=links[e.points[0].customdata[2]];if(l)location.href=l;});});"
    )
    title = esc(comparison.name or "modes")
    return (
        f'<!doctype html><html><head><meta charset="utf-8"><title>PT2 Explorer — {title}: modes</title>'
        f'<style>{CSS}</style></head><body><div class="pt2x"><h2>{title}: modes and settings</h2>{chart}'
        f"<h3>{esc(table.title)}</h3><table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
        f"{''.join(sections)}</div><script>{script}</script></body></html>"
    )


def save_modes_html(comparison, path: str | os.PathLike[str]) -> list[str]:
    """``path``: the modes page; beside it one explorer page per configuration's recording
    (``<name>.<i>-<label>.html``), which the table and the bars link to. Returns the paths."""
    from compiler._viewer import write_file

    from ._page import report_html

    path = Path(path)
    links: list[str | None] = []
    written = []
    for i, r in enumerate(comparison.rows):
        if r.report is None:
            links.append(None)
            continue
        page = path.with_name(f"{path.stem}.{i}-{_slug(r.label)}.html")
        written.append(write_file(page, report_html(r.report, title=f"{comparison.name}: {r.label}")))
        links.append(page.name)
    write_file(path, modes_page(comparison, links))
    return [os.fspath(path), *written]


def modes_widget(comparison):
    """The modes chart and the table, each row with a button that opens its recording."""
    import ipywidgets as w

    from ..lower import _charts
    from ..lower._html import esc, frag, fragment_css
    from ._widgets import Explorer

    chart = w.Output()
    with chart:
        _charts.show(_charts.modes_figure(comparison))
    opened = w.VBox()
    table = modes_table(comparison)
    cell = "padding:2px 6px;border-bottom:1px solid #d0d7de;font-size:12px"
    cells: list[w.Widget] = [w.HTML(f'<b style="{cell}">{esc(c)}</b>') for c in table.columns]
    for r, row in zip(comparison.rows, table.rows):
        if r.report is not None:
            btn = w.Button(
                description=r.label, tooltip=f"open the recording of {r.label}", layout=w.Layout(width="auto")
            )
            btn.on_click(lambda _b, r=r: setattr(opened, "children", (Explorer(r.report, title=r.label),)))
            cells.append(btn)
        else:
            cells.append(w.HTML(f'<span style="{cell}">{esc(row[0])}</span>'))
        cells += [w.HTML(f'<span style="{cell}">{esc(v)}</span>') for v in row[1:]]
    grid = w.GridBox(cells, layout=w.Layout(grid_template_columns=f"repeat({len(table.columns)}, auto)"))
    title = w.HTML(fragment_css() + frag(f"<h3>{esc(table.title)}</h3>"))  # the stylesheet, once
    return w.VBox([chart, title, grid, opened])


def show_modes(comparison) -> None:
    """Display a ``compiler.compare_modes`` result in a notebook (``modes_widget`` is the widget)."""
    from IPython.display import display

    display(modes_widget(comparison))

"""A census as views: one table (the explorer's ``Table``) lowered to the terminal, to a
static page (sortable columns, a filter box, the rows grouped by break type, each row linked
to its model's full report page) and to the notebook widget (filters, and a button per row
that opens that model's report in the explorer); two censuses' differences: _diffview.py."""

from __future__ import annotations

import os
from collections import Counter, defaultdict

from ..base._types import Table
from ..lower._fit import width
from ..lower._html import CSS, esc
from ..lower._text import table_text
from ._pagerows import COLUMNS, PAGE_COLUMNS, PAGE_CSS, cache_words, odd_notes, page_row, row_links
from ._speedview import clip, fmt_speedup, speed_html, speed_text
from ._table import STATUSES, Census, CensusRow

# the terminal's table, narrower (the break types and errors follow it in full): 100 columns
TEXT_COLUMNS = ("model", "mode", "status", "graphs", "breaks", "recomp", "compile", "speedup", "cause")
WIDTH = 100
SORTS = {
    "model": lambda r: (r.model, r.mode),
    "status": lambda r: (r.status, r.model),
    "compile": lambda r: -(r.compile_time_s or 0),
    "breaks": lambda r: -len(r.breaks),
    "recompiles": lambda r: -len(r.recompiles),
    "family": lambda r: (r.family or "", r.model),
}


def select(
    census: Census,
    *,
    status: str | None = None,
    family: str | None = None,
    mode: str | None = None,
    break_type: str | None = None,
    sort: str | None = None,
) -> list[CensusRow]:
    """The rows that match (``break_type``: a GB id, or words of the type, any case)."""
    rows = [
        r
        for r in census.rows
        if (status is None or r.status == status)
        and (family is None or r.family == family)
        and (mode is None or r.mode == mode)
        and (break_type is None or any(_is_type(b, break_type) for b in r.breaks))
    ]
    return sorted(rows, key=SORTS[sort]) if sort else rows


def _is_type(b, wanted: str) -> bool:
    w = wanted.lower()
    return (b.gb_id or "").lower() == w or w in b.type.lower()


def _breaks_cell(r: CensusRow, named: bool = True) -> str:
    """Each break type of the row with its count; ``named=False``: by GB id alone (the text at
    a terminal's width, whose "by break type" lines name them)."""
    counts = Counter(f"{b.gb_id or '?'} {b.type}" if named or not b.gb_id else b.gb_id for b in r.breaks)
    return "; ".join(f"{t}" + (f" ×{n}" if n > 1 else "") for t, n in counts.items()) or "—"


def _ms(median: float | None, iqr: float | None) -> str:
    if median is None:
        return "—"
    return f"{median:.3g} ms" + (f" ±{iqr / 2:.2g}" if iqr else "")


def _cells(r: CensusRow, named: bool = True) -> tuple[str, ...]:
    status = f"error: {r.error}" if r.status == "error" and r.error else r.status
    return (
        r.model,
        r.mode,
        r.precision,
        r.family or "",
        status,
        str(r.graphs),
        _breaks_cell(r, named),
        str(len(r.recompiles)) if r.recompiles else "0",
        f"{r.compile_time_s:.1f} s" if r.compile_time_s is not None else "—",
        str(r.kernels),
        fmt_speedup(r.speedup),
        _ms(r.eager_ms, r.eager_iqr_ms),
        _ms(r.compiled_ms, r.compiled_iqr_ms),
        (r.cause or "") if r.slower else "",
    )


def census_table(census: Census, rows: list[CensusRow] | None = None, named: bool = True) -> Table:
    """``named=False``: breaks by GB id alone (``_breaks_cell``)."""
    rows = census.rows if rows is None else rows
    return Table(_title(census), COLUMNS, tuple(_cells(r, named) for r in rows))


def _text_cells(r: CensusRow) -> tuple[str, ...]:
    ids = list(dict.fromkeys(b.gb_id or "?" for b in r.breaks))
    breaks = f"{ids[0]}" + (f" +{len(ids) - 1}" if len(ids) > 1 else "") if ids else "—"
    return (
        r.model,
        r.mode + (f" {r.precision}" if r.precision != "fp32" else ""),
        r.status,
        str(r.graphs),
        breaks,
        str(len(r.recompiles)),
        f"{r.compile_time_s:.1f} s" if r.compile_time_s is not None else "—",
        fmt_speedup(r.speedup),
        (r.cause_key or "") if r.slower else "",
    )


def _title(census: Census) -> str:
    return f"census{': ' + census.title if census.title else ''} — torch {census.torch_version or '?'}"


def text_table(census: Census, rows: list[CensusRow], width: int = WIDTH) -> Table:
    """The terminal's table: ``TEXT_COLUMNS``, the model's name cut (…) so that a line fits
    ``width``."""
    cells = [_text_cells(r) for r in rows]
    rest = (
        sum(max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(TEXT_COLUMNS) if i) if cells else 0
    )
    room = max(12, width - rest - 2 * (len(TEXT_COLUMNS) - 1))
    cells = [(clip(c[0], room), *c[1:]) for c in cells]
    return Table(clip(_title(census), width), TEXT_COLUMNS, tuple(cells))


def headline(rows) -> str:
    """``47 rows: 30 one graph (64%), 12 graph break (26%), …``"""
    counts = Counter(r.status for r in rows)
    n = len(rows) or 1
    parts = [f"{k} {counts[k]} ({100 * counts[k] / n:.0f}%)" for k in STATUSES if counts[k]]
    return f"{len(rows)} rows: " + ", ".join(parts)


def by_break_type(rows) -> list[tuple[str, str | None, str, list[str]]]:
    """(GB id, link, type, the rows breaking on it), the most common first."""
    groups: dict[tuple, list[str]] = defaultdict(list)
    links: dict[tuple, str | None] = {}
    for r in rows:
        for b in r.breaks:
            k = (b.gb_id or "?", b.type)
            links[k] = b.link
            if r.key not in groups[k]:
                groups[k].append(r.key)
    return [(k[0], links[k], k[1], v) for k, v in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))]


def census_text(census: Census, rows: list[CensusRow] | None = None, *, details: bool = True) -> str:
    """The table, the status counts, the rows by break type, then each recompile's guard."""
    rows = list(census.rows if rows is None else rows)
    out = [table_text(text_table(census, rows, width() or WIDTH)), headline(rows)]
    out += speed_text(rows, width() or WIDTH)
    groups = by_break_type(rows)
    if groups:
        out += ["", "by break type:"]
        out += [clip(f"  {gb} {t}: {len(keys)} — {', '.join(keys)}", WIDTH) for gb, _link, t, keys in groups]
    if details:
        rec = [(r.key, x) for r in rows for x in r.recompiles]
        if rec:
            out += ["", "recompiles (the guard that failed):"]
            out += [clip(f"  {k} [{x.compile_id}] {short_reason(x.reason)}", WIDTH) for k, x in rec]
    if census.problems:
        out += ["", "left out (the census names these paths; they were not read):"]
        out += [f"  {p}" for p in census.problems]
    return "\n".join(out).rstrip() + "\n"


def short_reason(reason: str) -> str:
    """``0/0: self.steps == 0  # self.steps += 1  # m.py:38 in forward (HINT: …)`` ->
    ``self.steps == 0  (m.py:38 in forward)``: the guard's code and where it came from."""
    from compiler._viewer import without_entry

    parts = [p.strip() for p in without_entry(reason).split("  # ")]
    where = parts[-1].split(" (HINT")[0] if len(parts) >= 3 else None
    return parts[0] + (f"  ({os.path.basename(where)})" if where else "")


_JS = """
const t=document.getElementById('census');const f=document.getElementById('filter');
f.addEventListener('input',()=>{const q=f.value.toLowerCase();
 t.querySelectorAll('tbody tr').forEach(tr=>tr.hidden=!tr.textContent.toLowerCase().includes(q));});
t.querySelectorAll('th').forEach((th,i)=>th.addEventListener('click',()=>{
 const rows=[...t.tBodies[0].rows];const asc=th.dataset.asc!=='1';th.dataset.asc=asc?'1':'0';
 const v=r=>{const s=r.cells[i].dataset.v??r.cells[i].textContent;const n=parseFloat(s);return isNaN(n)?s:n;};
 rows.sort((a,b)=>{const x=v(a),y=v(b);return (x>y?1:x<y?-1:0)*(asc?1:-1);});
 rows.forEach(r=>t.tBodies[0].appendChild(r));}));
document.querySelectorAll('a.gb-filter').forEach(a=>a.addEventListener('click',e=>{
 e.preventDefault();f.value=a.dataset.q;f.dispatchEvent(new Event('input'));}));
"""


def _link_cell(text: str, href: str | None) -> str:
    return f'<a href="{esc(href)}">{esc(text)}</a>' if href else esc(text)


def census_page(census: Census, links: dict[str, str] | None = None, notes: list[str] | None = None) -> str:
    """A self-contained page: the headline, the rows by break type (a click filters the
    table), the table (a click on a header sorts it), each model linked to ``links[key]``;
    ``notes`` and the census's own problems (paths not read) under the table."""
    links = links or {}
    notes = [*census.problems, *(notes or [])]
    rows = census.rows
    groups = "".join(
        f'<li>{_link_cell(gb, link)} {esc(t)}: <a href="#" class="gb-filter" data-q="{esc(gb if gb != "?" else t)}">'
        f"{len(keys)} row{'s' if len(keys) != 1 else ''}</a> — {esc(', '.join(keys))}</li>"
        for gb, link, t, keys in by_break_type(rows)
    )
    head = "".join(f"<th>{esc(c)}</th>" for c in PAGE_COLUMNS)
    reports, odd = row_links(rows, links), odd_notes(rows)
    body = "".join(page_row(r, reports.get(r.key), odd.get(r.key), _link_cell) for r in rows)
    odd_words = f'<p class="note">{len(odd)} rows marked odd: {esc(cache_words(census))}</p>' if odd else ""
    title = esc(census_table(census).title)
    css = PAGE_CSS
    return (
        f'<!doctype html><html><head><meta charset="utf-8"><title>PT2 Explorer — {title}</title>'
        f'<style>{CSS}{css}</style></head><body><div class="pt2x"><h2>{title}</h2>'
        f"<p>{esc(headline(rows))}</p>"
        + speed_html(list(rows), esc)
        + (f"<h3>by break type</h3><ul>{groups}</ul>" if groups else "")
        + f'<input id="filter" placeholder="filter rows" size="40"><table id="census"><thead><tr>{head}</tr>'
        f"</thead><tbody>{body}</tbody></table>{odd_words}"
        + (
            '<h3>left out</h3><ul class="left-out">' + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>"
            if notes
            else ""
        )
        + f"</div><script>{_JS}</script></body></html>"
    )


def save_census_html(census: Census, path: str, *, reports: bool = True, progress=None) -> list[str]:
    """``path``: the census page; with ``reports``, beside it each row's report as its own
    page (``_rowpages.py``), which the row links to. ``progress``: a progress line
    (``compiler._viewer.LineProgress``), n of N row pages. Returns the paths."""
    from compiler._viewer import write_file

    from ._rowpages import row_reports, write_row_pages

    links: dict[str, str] = {}
    written: list[str] = []
    notes: list[str] = []
    if reports:
        found, notes = row_reports(census)
        links, written, unread = write_row_pages(census, path, found, progress or (lambda *a, **k: None))
        notes += unread
    write_file(path, census_page(census, links, notes))
    return [path, *written]


def census_widget(census: Census):
    """Filters (status, family, break type), the table, and a button per row that opens that
    model's report in the explorer."""
    import ipywidgets as w

    from compiler import load

    from ..lower._html import frag, fragment_css
    from ..pages._widgets import Explorer

    def opts(values):
        return [("all", None)] + [(v, v) for v in sorted({v for v in values if v})]

    status = w.Dropdown(options=opts(r.status for r in census.rows), description="status")
    family = w.Dropdown(options=opts(r.family for r in census.rows), description="family")
    btype = w.Dropdown(options=opts(b.gb_id for r in census.rows for b in r.breaks), description="break")
    grid, opened = w.VBox(), w.VBox()
    cell = "padding:2px 6px;border-bottom:1px solid #d0d7de;font-size:12px"

    def open_report(r):
        path = census.report_path(r)
        if path and os.path.exists(path):
            opened.children = (Explorer(load(path), title=f"{r.model} ({r.mode})"),)

    def redraw(_change=None):
        rows = select(census, status=status.value, family=family.value, break_type=btype.value)
        cells: list = [w.HTML(f'<b style="{cell}">{esc(c)}</b>') for c in COLUMNS]
        for r in rows:
            btn = w.Button(
                description=r.model, tooltip=f"open the report of {r.key}", layout=w.Layout(width="auto")
            )
            btn.on_click(lambda _b, r=r: open_report(r))
            cells += [btn] + [w.HTML(f'<span style="{cell}">{esc(v)}</span>') for v in _cells(r)[1:]]
        layout = w.Layout(grid_template_columns=f"repeat({len(COLUMNS)}, auto)")
        summary = frag(f"<p>{esc(headline(rows))}</p>" + speed_html(rows, esc))
        grid.children = (w.HTML(summary), w.GridBox(cells, layout=layout))

    for d in (status, family, btype):
        d.observe(redraw, names="value")
    redraw()
    title = w.HTML(fragment_css() + frag(f"<h3>{esc(census_table(census).title)}</h3>"))
    return w.VBox([title, w.HBox([status, family, btype]), grid, opened])


def show(census: Census) -> None:
    """Display the census widget in a notebook."""
    from IPython.display import display

    display(census_widget(census))

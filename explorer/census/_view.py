"""A census as views: one table (the explorer's ``Table``) lowered to the terminal, to a
static page (sortable columns, a filter box, the rows grouped by break type, each row linked
to its model's full report page) and to the notebook widget (filters, and a button per row
that opens that model's report in the explorer); two censuses' differences likewise."""

from __future__ import annotations

import os
from collections import Counter, defaultdict

from ..base._types import Table
from ..lower._html import CSS, esc
from ..lower._text import table_text
from ._diff import CensusDiff
from ._table import STATUSES, Census, CensusRow

COLUMNS = (
    "model",
    "mode",
    "family",
    "status",
    "graphs",
    "breaks",
    "recompiles",
    "compile",
    "kernels",
    "speedup",
)
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


def _breaks_cell(r: CensusRow) -> str:
    counts = Counter(f"{b.gb_id or '?'} {b.type}" for b in r.breaks)
    return "; ".join(f"{t}" + (f" ×{n}" if n > 1 else "") for t, n in counts.items()) or "—"


def _cells(r: CensusRow) -> tuple[str, ...]:
    status = f"error: {r.error}" if r.status == "error" and r.error else r.status
    return (
        r.model,
        r.mode,
        r.family or "",
        status,
        str(r.graphs),
        _breaks_cell(r),
        str(len(r.recompiles)) if r.recompiles else "0",
        f"{r.compile_time_s:.1f} s" if r.compile_time_s is not None else "—",
        str(r.kernels),
        f"×{r.speedup:.2f}" if r.speedup else "—",
    )


def census_table(census: Census, rows: list[CensusRow] | None = None) -> Table:
    rows = census.rows if rows is None else rows
    title = f"census{': ' + census.title if census.title else ''} — torch {census.torch_version or '?'}"
    return Table(title, COLUMNS, tuple(_cells(r) for r in rows))


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
    out = [table_text(census_table(census, rows)), headline(rows)]
    groups = by_break_type(rows)
    if groups:
        out += ["", "by break type:"]
        out += [f"  {gb} {t}: {len(keys)} — {', '.join(keys)}" for gb, _link, t, keys in groups]
    if details:
        rec = [(r.key, x) for r in rows for x in r.recompiles]
        if rec:
            out += ["", "recompiles (the guard that failed):"]
            out += [f"  {k} [{x.compile_id}] {short_reason(x.reason)}" for k, x in rec]
    if census.problems:
        out += ["", "left out (the census names these paths; they were not read):"]
        out += [f"  {p}" for p in census.problems]
    return "\n".join(out).rstrip() + "\n"


def short_reason(reason: str) -> str:
    """``0/0: self.steps == 0  # self.steps += 1  # m.py:38 in forward (HINT: …)`` ->
    ``self.steps == 0  (m.py:38 in forward)``: the guard's code and where it came from."""
    from compiler.analysis import without_entry

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


def _row_html(r: CensusRow, link: str | None) -> str:
    cells = _cells(r)
    breaks = "; ".join(
        f'{_link_cell(b.gb_id or "?", b.link)} {esc(b.type)} <span class="where">{esc(b.where)}</span>'
        for b in r.breaks
    )
    sortv = {7: r.compile_time_s or 0, 9: r.speedup or 0}
    tds = [f"<td>{_link_cell(cells[0], link)}</td>"]
    for i, c in enumerate(cells[1:], start=1):
        body = breaks if i == 5 and r.breaks else esc(c)
        v = f' data-v="{sortv[i]}"' if i in sortv else ""
        cls = f' class="st-{r.status.replace(" ", "-")}"' if i == 3 else ""
        tds.append(f"<td{v}{cls}>{body}</td>")
    return f"<tr>{''.join(tds)}</tr>"


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
    head = "".join(f"<th>{esc(c)}</th>" for c in COLUMNS)
    body = "".join(_row_html(r, links.get(r.key)) for r in rows)
    title = esc(census_table(census).title)
    css = ".st-error{color:#b00}.st-graph-break{color:#a60}.st-recompiles{color:#06c}.where{color:#666}th{cursor:pointer}"
    return (
        f'<!doctype html><html><head><meta charset="utf-8"><title>PT2 Explorer — {title}</title>'
        f'<style>{CSS}{css}</style></head><body><div class="pt2x"><h2>{title}</h2>'
        f"<p>{esc(headline(rows))}</p>"
        + (f"<h3>by break type</h3><ul>{groups}</ul>" if groups else "")
        + f'<input id="filter" placeholder="filter rows" size="40"><table id="census"><thead><tr>{head}</tr>'
        f"</thead><tbody>{body}</tbody></table>"
        + (
            '<h3>left out</h3><ul class="left-out">' + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>"
            if notes
            else ""
        )
        + f"</div><script>{_JS}</script></body></html>"
    )


def save_census_html(census: Census, path: str, *, reports: bool = True) -> list[str]:
    """``path``: the census page; with ``reports``, beside it each row's report as its own
    page (``<path stem>.reports/<case>.html``), which the row links to. Returns the paths."""
    from compiler import load, write_file

    from ..pages._page import report_html

    links: dict[str, str] = {}
    written: list[str] = []
    notes: list[str] = []
    if reports:
        stem = os.path.splitext(os.path.basename(path))[0] + ".reports"
        for r in census.rows:
            src = census.report_path(r)
            if src is None:
                if r.report is not None:
                    notes.append(f"{r.key}: its report {r.report} is missing or reached through a link")
                continue
            try:
                rep = load(src)
            except (ValueError, OSError) as e:
                notes.append(
                    f"{r.key}: its report is not read: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
                )
                continue
            name = os.path.basename(src).split(".json")[0] + ".html"
            page = os.path.join(os.path.dirname(os.path.abspath(path)), stem, name)
            os.makedirs(os.path.dirname(page), exist_ok=True)
            written.append(write_file(page, report_html(rep, title=f"{r.model} ({r.mode})")))
            links[r.key] = f"{stem}/{name}"
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
        grid.children = (w.HTML(frag(f"<p>{esc(headline(rows))}</p>")), w.GridBox(cells, layout=layout))

    for d in (status, family, btype):
        d.observe(redraw, names="value")
    redraw()
    title = w.HTML(fragment_css() + frag(f"<h3>{esc(census_table(census).title)}</h3>"))
    return w.VBox([title, w.HBox([status, family, btype]), grid, opened])


def show(census: Census) -> None:
    """Display the census widget in a notebook."""
    from IPython.display import display

    display(census_widget(census))


def _change_lines(c) -> list[str]:
    return [f"  {c.key}: " + "; ".join(c.worse + c.better)]


def diff_text(d: CensusDiff) -> str:
    """Regressions first, then fixes, then the rows one census lacks."""
    out = [f"census diff: {d.a} → {d.b}", ""]
    out.append(f"regressions ({len(d.regressions)}):")
    out += [ln for c in d.regressions for ln in _change_lines(c)] or ["  none"]
    out.append(f"fixes ({len(d.fixes)}):")
    out += [ln for c in d.fixes for ln in _change_lines(c)] or ["  none"]
    out.append(f"unchanged: {d.unchanged}")
    if d.only_a:
        out.append(f"only in {d.a}: {', '.join(d.only_a)}")
    if d.only_b:
        out.append(f"only in {d.b}: {', '.join(d.only_b)}")
    return "\n".join(out) + "\n"


def diff_page(d: CensusDiff) -> str:
    def section(title: str, changes, cls: str) -> str:
        items = "".join(
            f"<li><b>{esc(c.key)}</b>: "
            + "; ".join(f'<span class="{cls}">{esc(x)}</span>' for x in c.worse)
            + ("; " if c.worse and c.better else "")
            + "; ".join(f'<span class="fix">{esc(x)}</span>' for x in c.better)
            + "</li>"
            for c in changes
        )
        return f"<h3>{esc(title)} ({len(changes)})</h3><ul>{items or '<li>none</li>'}</ul>"

    only = "".join(
        f"<p>only in {esc(name)}: {esc(', '.join(keys))}</p>"
        for name, keys in ((d.a, d.only_a), (d.b, d.only_b))
        if keys
    )
    title = esc(f"census diff: {d.a} → {d.b}")
    return (
        f'<!doctype html><html><head><meta charset="utf-8"><title>PT2 Explorer — {title}</title>'
        f'<style>{CSS}.worse{{color:#b00}}.fix{{color:#070}}</style></head><body><div class="pt2x"><h2>{title}</h2>'
        f"{section('regressions', d.regressions, 'worse')}{section('fixes', d.fixes, 'fix')}"
        f"<p>unchanged: {d.unchanged}</p>{only}</div></body></html>"
    )

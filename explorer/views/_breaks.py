"""The graph breaks view: each break site with where, why, torch's hints, its stack and the
graphs around it, as text, as the static page's HTML and as the notebook's tab (each break's
HTML with buttons that open the graphs before and after it). Its facts are the view model's
``BreakView`` (``model/_view.py``), each built once as data (``base/_types.py``: ``Labelled``
lines of ``Span``s, the stack's frames and the links to the graphs around the break among
them; the source ``Excerpt``) and drawn by ``lower/``'s generic lowerings, as text and as HTML."""

from __future__ import annotations

from ..base._types import BreakView, ExplorerView, hits
from ..lower._html import error_html, esc, fact_html, frag
from ..lower._text import fact_lines

_NONE = "No graph breaks: each compiled frame is one graph."


def breaks_text(view: ExplorerView) -> str:
    out: list[str] = []
    if view.summary.error:  # users land on this view: say first how the program ended
        out += [f"The recorded program ended with: {view.summary.error}", ""]
    if not view.breaks:
        return "\n".join(out + [_NONE])
    for b in view.breaks:
        gb = f"  {b.gb_id}" if b.gb_id else ""
        out.append(f"{b.site}  {b.type}{gb}  ({hits(b.count, b.compile_ids)})")
        out += [f"  {line}" for f in b.facts for line in fact_lines(f)]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def break_html(b: BreakView) -> str:
    gb = f' <span class="gb">{esc(b.gb_id)}</span>' if b.gb_id else ""
    return (
        f'<div class="break" id="break-{esc(b.site)}"><div><b>{esc(b.site)}</b>  '
        f'<span class="type">{esc(b.type)}</span>{gb}  {esc(hits(b.count, b.compile_ids))}</div>'
        + "".join(fact_html(f) for f in b.facts)
        + f"<details><summary>torch's full reason</summary><pre>{esc(b.reason)}</pre></details></div>"
    )


def breaks_html(view: ExplorerView) -> str:
    if not view.breaks:
        return error_html(view) + f'<div class="note">{esc(_NONE)}</div>'
    return error_html(view) + "".join(break_html(b) for b in view.breaks)


def breaks_widget(app):
    """One row per break site, with buttons that open the graphs before and after it."""
    import ipywidgets as w

    view = app.view
    if not view.breaks:
        return w.HTML(frag(breaks_html(view)))
    rows: list = []
    if view.summary.error:  # users land on this tab: how the program ended comes first
        rows.append(w.HTML(frag(error_html(view))))
    for b in view.breaks:
        rows.append(w.HTML(frag(break_html(b))))
        buttons = []
        for label, cid in (("graph before", b.graph_before), ("graph after", b.graph_after)):
            if cid:
                btn = w.Button(description=f"{label} [{cid}]", layout=w.Layout(width="auto"))
                btn.on_click(lambda _b, cid=cid: app.select(cid, "capture"))
                buttons.append(btn)
        if buttons:
            rows.append(w.HBox(buttons))
    return w.VBox(rows)

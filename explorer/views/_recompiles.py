"""The recompiles view: each frame's compiles in order, each recompile with the guard that
failed (where it came from, the other entries that failed, what it compiled as dynamic) and
every compile's dynamic dimensions; as text, as the static page's HTML (with each recompile's
diff against the compile it replaced) and as the notebook's tab (a button per recompile that
shows that diff). Its facts are the view model's (``model/_recompiles.py``)."""

from __future__ import annotations

from ..base._types import DynamicDim, ExplorerView, RecompileView, Table
from ..diffs._pagediffs import recompile_diffs_html
from ..lower._html import esc, frag, table_html


def recompiles_text(view: ExplorerView) -> str:
    out: list[str] = []
    for t in view.timelines:
        limit = "  (recompile limit hit)" if t.limit_hit else ""
        out.append(f"{t.frame}  {t.where}{limit}")
        for e in t.entries:
            out.append(f"  [{e.compile_id}] {e.status}: {e.label}")
    if not view.recompiles:
        out.append("No recompiles.")
    for r in view.recompiles:
        out.append("")
        out.append(f"[{r.compile_id}] {r.frame}: guards of [{r.failed_entry}] failed")
        for x in r.reasons:  # continuation lines (torch's "User stack trace:") indented under it
            out.append("  reason: " + "\n          ".join(x.strip().splitlines()))
        if r.failing_guard:
            out.append(f"  failing guard: {r.failing_guard}")
        if r.guard_from:
            out.append(f"  guard from: {r.guard_from}")
        for x in r.also_failed:
            out.append(f"  also failed: [{x.entry}] {x.reason}")
            if x.guard:
                out.append(f"    guard: {x.guard}")
        if r.dynamic_note:
            out.append(f"  {r.dynamic_note}")
    if view.dynamic_dims:
        out += ["", "Dynamic dimensions:"]
        out += [f"  {dynamic_dim_text(d)}" for d in view.dynamic_dims]
    return "\n".join(out).rstrip() + "\n"


def dynamic_dim_text(d: DynamicDim) -> str:
    """``[0/1] s27 = kwargs['input_ids'].size()[1] in [2, int_oo] (seen 24)`` or
    ``[0/0] specialized x.size()[0] = 8: range_refined_to_singleton at f.py:4``."""
    if d.specialized is None and d.reason is None:
        vr = f" in {d.range}" if d.range else ""
        seen = f" (seen {d.seen})" if d.seen is not None else ""
        return f"[{d.compile_id}] {d.symbol} = {d.dim}{vr}{seen}"
    reason = f": {d.reason}" if d.reason else ""
    at = f" at {d.at}" if d.at else ""
    return f"[{d.compile_id}] specialized {d.dim} = {d.specialized}{reason}{at}"


def recompiles_html(view: ExplorerView) -> str:
    """Each frame's compiles, each recompile with its failing guard, the dynamic dimensions."""
    parts = []
    for t in view.timelines:
        limit = (
            ' <span class="error">recompile limit hit: later calls run uncompiled</span>'
            if t.limit_hit
            else ""
        )
        items = "".join(
            f'<li class="{esc(e.status)}">[{esc(e.compile_id)}] {esc(e.label)}</li>' for e in t.entries
        )
        parts.append(
            f'<h3>{esc(t.frame)} <span class="meta">{esc(t.where)}</span>{limit}</h3><ol class="tl">{items}</ol>'
        )
    if not view.recompiles:
        parts.append('<div class="note">No recompiles.</div>')
    for r in view.recompiles:
        guards = "".join(f'<div class="{"fail" if g.failing else ""}">{esc(g.text)}</div>' for g in r.guards)
        reasons = "".join(f"<div><b>reason:</b> {esc(x)}</div>" for x in r.reasons)
        parts.append(
            f'<div class="break" id="recompile-{esc(r.compile_id)}"><b>[{esc(r.compile_id)}] {esc(r.frame)}</b>'
            f": the guards of [{esc(r.failed_entry or '?')}] failed{reasons}"
            + (
                f"<div><b>failing guard:</b> <code>{esc(r.failing_guard)}</code></div>"
                if r.failing_guard
                else ""
            )
            + _recompile_facts_html(r)
            + (
                f'<details open><summary>guards of [{esc(r.failed_entry or "?")}]</summary><pre class="guards">{guards}</pre></details>'
                if guards
                else ""
            )
            + "</div>"
        )
    if view.dynamic_dims:
        parts.append(dynamic_dims_html(view.dynamic_dims))
    return "".join(parts)


def _recompile_facts_html(r: RecompileView) -> str:
    """Under the failing guard: where it came from, the other entries that failed, and what
    the recompile compiled as dynamic (bold)."""
    out = []
    if r.guard_from:
        out.append(f"<div><b>guard from:</b> {esc(r.guard_from)}</div>")
    for x in r.also_failed:
        guard = f'<div class="meta">guard: <code>{esc(x.guard)}</code></div>' if x.guard else ""
        out.append(f"<div><b>also failed:</b> [{esc(x.entry or '?')}] {esc(x.reason)}{guard}</div>")
    if r.dynamic_note:
        out.append(f'<div class="dynamic">{esc(r.dynamic_note)}</div>')
    return "".join(out)


def dynamic_dims_html(dims: tuple[DynamicDim, ...]) -> str:
    """Every compile's symbols and specializations, one row each."""
    rows = []
    for d in dims:
        if d.specialized is None and d.reason is None:
            cells = (d.symbol or "", d.dim, d.range or "", d.seen or "", "")
        else:
            at = f" at {d.at}" if d.at else ""
            cells = (d.symbol or "", d.dim, "", "", f"= {d.specialized}: {d.reason or '?'}{at}")
        rows.append((f"[{d.compile_id}]", *cells))
    return table_html(
        Table(
            "Dynamic dimensions",
            ("compile", "symbol", "dimension", "range", "seen", "specialized"),
            tuple(rows),
        )
    )


def recompiles_page_html(view: ExplorerView) -> str:
    """The static page's tab: the view, then each recompile's diff with the compile it replaced."""
    return recompiles_html(view) + recompile_diffs_html(view)


def recompiles_widget(app):
    """Per recompile a button to diff it with the compile whose guards failed (the failing
    guard marked), then the recompiles view."""
    import ipywidgets as w

    body = w.HTML(frag(recompiles_html(app.view)))
    buttons = []
    for r in app.view.recompiles:
        before = r.diff_from
        if before is None:
            continue
        btn = w.Button(description=f"diff [{before}] → [{r.compile_id}]", layout=w.Layout(width="auto"))
        btn.tooltip = f"compare compile {before} with {r.compile_id}: guards, graphs, kernels"
        btn.on_click(lambda _b, a=before, b=r.compile_id: app.diff_compiles(a, b, out=app.recompile_diff))
        buttons.append(btn)
    # the buttons first (the guard lists below can run long), their diff right under them
    if not buttons:
        return body
    return w.VBox([w.HBox(buttons, layout=w.Layout(flex_flow="row wrap")), app.recompile_diff, body])

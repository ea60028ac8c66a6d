"""The Why tab's HTML, where every name is a way in: a kernel opens its compile's code and
selects its nodes in the fuse graph (``a.pt2x-why-link[data-compile][data-kernel]``); a line of
the model opens the source around it with the kernels it made (a ``<details>``: no script);
a break site opens the break in the Breaks tab (``a.pt2x-why-link[data-break]``); a cause's
fix is a code block with a copy button. The links are followed by the page's script
(``pages/_page.py``), which opens the tab and compile and then follows the Compiles tab's own
links (extension/src/graph/links.ts); in the notebook, by the explorer widget, which opens the
compile's codegen stage or the break from the kernel and brings the place into view
(``pages/_widgets.py``: ``Explorer.go_to``)."""

from __future__ import annotations

from compiler import Report
from compiler.analysis import kernel_costs, verdict
from compiler.types import Benchmark, Verdict

from ..base._types import Excerpt, Table
from ..lower._html import esc, fact_html, table_html
from ..model._summary import places, where_source
from ..model._view import build_view, source_context

# the copy button: the clipboard where the page may write to it, else the text selected for Ctrl+C
_COPY = (
    "const c=this.parentElement.querySelector('code');const t=c.textContent;const ok=()=>{this.textContent='copied'};"
    "if(navigator.clipboard){navigator.clipboard.writeText(t).then(ok,()=>{})}"
    "else{const r=document.createRange();r.selectNodeContents(c);const s=getSelection();"
    "s.removeAllRanges();s.addRange(r);document.execCommand('copy');ok()}"
)
WHY_CSS = (
    ".pt2x .pt2x-fix{margin:4px 0}.pt2x .pt2x-fix pre{display:inline-block;margin:2px 6px 2px 0;"
    "vertical-align:middle}.pt2x button.pt2x-copy{vertical-align:middle}"
    ".pt2x a.pt2x-why-link{cursor:pointer;color:#0969da}.pt2x .break.pt2x-flash{background:#fff8c5}"
)


def fix_html(title: str, fix: str, gain: str | None) -> str:
    """A cause's fix: what it fixes, the code in a block, and a button that copies it."""
    said = f"fix ({title})" + (f" — {gain}" if gain else "")
    return (
        f'<div class="pt2x-fix"><div class="note">{esc(said)}</div><pre><code>{esc(fix)}</code></pre>'
        f'<button type="button" class="pt2x-copy" title="copy the fix" onclick="{esc(_COPY)}">copy</button></div>'
    )


def kernel_link(name: str | None, compile_id: str | None, text: str) -> str:
    """``text`` a link to the report's kernel ``name`` of ``compile_id`` (none for a library
    kernel, which is no kernel of the report's: plain text)."""
    if not compile_id or not name:
        return esc(text)
    return (
        f'<a class="pt2x-why-link" data-compile="{esc(compile_id)}" data-kernel="{esc(name)}" '
        f'title="its code, and its nodes in the graph of [{esc(compile_id)}]">{esc(text)}</a>'
    )


def _cells(row: tuple[str, ...]) -> str:
    return "".join(f"<td>{c}</td>" for c in row)


def _table(t: Table, rows: list[tuple[str, ...]]) -> str:
    """``t``'s head over rows of cells already HTML."""
    head = "".join(f"<th>{esc(c)}</th>" for c in t.columns)
    body = "".join(f"<tr>{_cells(r)}</tr>" for r in rows)
    return f"<h3>{esc(t.title)}</h3><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _causes_html(t: Table, v: Verdict, sites: list[tuple[str, str]]) -> str:
    """The causes, each break site in their evidence a link to the break."""

    def ev(item: str) -> str:
        # the evidence names a site by its file's name and line ("m.py:72: <type> (GB…)")
        site = next((s for s, type_ in sites if f"{s.rsplit('/', 1)[-1]}: " in item and type_ in item), None)
        if site is None:
            return esc(item)
        return f'<a class="pt2x-why-link" data-break="{esc(site)}" title="the break, in the Breaks tab">{esc(item)}</a>'

    rows = [
        (*(esc(x) for x in r[:-1]), "; ".join(ev(e) for e in c.evidence)) for r, c in zip(t.rows, v.causes)
    ]
    return _table(t, rows)


def _lines_html(t: Table, costs) -> str:
    """Each row's lines: a ``<details>`` that opens the source around each line and the kernels
    made from it, each a link."""
    by_label: dict[str, list] = {}
    for c in costs:
        if c.lines:
            by_label.setdefault(places(", ".join(c.lines)), []).append(c)
    rows = []
    for label, *rest in t.rows:
        lines = dict.fromkeys(x for c in by_label.get(label, ()) for x in c.lines)
        parts = []
        for line in lines:
            path, _, no = line.rpartition(":")
            context, unread = source_context(path, int(no)) if no.isdigit() else ((), None)
            mine = [c for c in costs if line in c.lines]
            if context:
                excerpt = fact_html(Excerpt(context))
            else:  # the file is not here: the line's code as recorded, and why
                code = next(
                    (c.code[c.lines.index(line)] for c in mine if len(c.code) > c.lines.index(line)), ""
                )
                excerpt = (f'<pre class="src">{esc(code)}</pre>' if code else "") + (
                    f'<div class="note">{esc(unread)}</div>' if unread else ""
                )
            kernels = ", ".join(kernel_link(c.kernel, c.compile_id, c.name) for c in mine)
            parts.append(f"<div><b>{esc(where_source(line))}</b>{excerpt}<div>kernels: {kernels}</div></div>")
        cell = f"<details><summary>{esc(label)}</summary>{''.join(parts)}</details>" if parts else esc(label)
        rows.append((cell, *(esc(x) for x in rest)))
    return _table(t, rows)


def _kernels_html(t: Table, costs) -> str:
    by_name = {c.name: c for c in costs}
    rows = []
    for name, *rest in t.rows:
        full = next(
            (c for n, c in by_name.items() if n == name or (name.endswith("…") and n.startswith(name[:-1]))),
            None,
        )
        link = kernel_link(full.kernel, full.compile_id, name) if full is not None else esc(name)
        rows.append((link, *(esc(x) for x in rest)))
    return _table(t, rows)


def why_page_html(
    report: Report, bench: Benchmark, lines: list[str], tables: list[Table], changes: list[str]
) -> str:
    """One benchmark's part of the Why tab: the headline, its notes, each fix as a code block
    with a copy button, then the tables with their ways in."""
    v = verdict(report, bench)
    costs = kernel_costs(report, bench)
    view = build_view(report)
    sites = [(bv.site, b.type) for b, bv in zip(report.graph_breaks, view.breaks)]
    out = [f"<h3>{esc(lines[0])}</h3>"]
    out += [f'<div class="note">{esc(x)}</div>' for x in lines[1:] if x not in changes]
    for c in sorted(v.causes, key=lambda c: (c.key != v.main, -(c.share or 0.0))):
        if c.fix:
            out.append(fix_html(c.title, c.fix, c.gain_words))
        elif c.advice:
            out.append(f'<div class="note">{esc(f"advice ({c.title}): {c.advice}")}</div>')
    for t in tables:
        if t.title == "where the compiled call's time goes":
            out.append(_causes_html(t, v, sites))
        elif t.title.startswith("the lines of your model"):
            out.append(_lines_html(t, costs))
        elif t.title.startswith("each kernel against the machine"):
            out.append(_kernels_html(t, costs))
        else:
            out.append(table_html(t))
    return "".join(out)

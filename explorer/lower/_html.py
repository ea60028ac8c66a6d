"""The view model lowered to HTML: the fragments the static page (``pages/_page.py``) and the
notebook widgets (``pages/_widgets.py``) are made of.

Every user-controlled string goes through ``esc`` (or pygments, which escapes). Fragments
need no JavaScript (``<details>`` for collapsing), so they work inside ipywidgets.HTML, where
scripts do not run; the one exception is the graph view, which is a script: in the notebook an
anywidget (``graph/_widget.py``), on the static page the bundle inlined once beside each graph's
data as JSON (``graph/_view.py``).
"""

from __future__ import annotations

import functools
import html
import re
from pathlib import Path

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import CppLexer, PythonLexer, TextLexer

from ..base._types import (
    Block,
    BreakView,
    CodeBlock,
    CompileView,
    DynamicDim,
    ExplorerView,
    GraphBlock,
    LinesBlock,
    RecompileView,
    StackLine,
    StageView,
    Table,
    hits,
)
from ..graph._view import graph_static_html
from ._pagelines import LineTable

esc = functools.partial(html.escape, quote=True)
_LEXERS = {"python": PythonLexer, "triton": PythonLexer, "cpp": CppLexer}
# the static page's code highlighting (extension/src/highlight, highlight.js): the page ships
# code as text and highlights a block in the browser when it is first shown
HIGHLIGHT_BUNDLE = Path(__file__).parent.parent / "static" / "highlight.js"
_BROWSER_LANGUAGES = {"python": "python", "triton": "python", "cpp": "cpp"}
CODE_LIMIT = 400_000  # characters of one code block shown; the rest is cut with a note
HIGHLIGHT_LIMIT = 100_000  # longer code is shown plain: highlighting it costs seconds

CSS = """
.pt2x .pt2x-ph{display:flex;gap:8px;font:12px monospace}
.pt2x .pt2x-ph>span:first-child{width:34%;overflow:hidden;white-space:nowrap}
.pt2x .pt2x-ph-track{flex:1;background:#f6f8fa}
.pt2x .pt2x-ph-bar{display:block;height:12px;background:#1f6feb}
.pt2x{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;font-size:13px;color:#1f2328;line-height:1.4}
.pt2x h2{font-size:16px;margin:6px 0}.pt2x h3{font-size:14px;margin:10px 0 4px}
.pt2x .meta{color:#57606a}.pt2x .headline{font-weight:600;margin:4px 0}
.pt2x .glance{margin:4px 0 8px 0;padding:0;list-style:none}
.pt2x .glance li{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;padding:1px 0}
.pt2x .glance .brk::before{content:"break  ";color:#cf222e;font-weight:600}
.pt2x .glance .rcp::before{content:"recompile  ";color:#9a6700;font-weight:600}
.pt2x .error{color:#cf222e;font-weight:600}
.pt2x table{border-collapse:collapse;margin:4px 0}
.pt2x td,.pt2x th{border:1px solid #d0d7de;padding:2px 6px;text-align:left;vertical-align:top;font-size:12px;overflow-wrap:anywhere}
.pt2x th{background:#f6f8fa}
.pt2x pre{background:#f6f8fa;padding:6px;overflow:auto;max-height:480px;font-size:12px;margin:2px 0}
.pt2x .src .hl{background:#ffebe9;font-weight:600}
.pt2x .src span.no{color:#8c959f;display:inline-block;min-width:3em}
.pt2x .guards .fail{background:#ffebe9;color:#cf222e;font-weight:600}
.pt2x .break{border-left:4px solid #cf222e;padding:2px 8px;margin:8px 0}
.pt2x .type{color:#cf222e;font-weight:600}
.pt2x .note{color:#57606a;font-style:italic}
.pt2x details>summary{cursor:pointer;font-weight:600;margin:3px 0}
.pt2x .graph{overflow:auto;max-height:640px;border:1px solid #d0d7de;background:#fff}
.pt2x .tl li.failed{color:#cf222e}
.pt2x .why{white-space:pre-wrap}
.pt2x a.cid{cursor:pointer}
.pt2x .pt2x-swatch{display:inline-block;width:14px;height:14px;border:1px solid #8c959f;vertical-align:middle}
.pt2x a.pt2x-node-link,.pt2x a.pt2x-kernel-link,.pt2x a.pt2x-code-link,.pt2x a.pt2x-line-link{cursor:pointer;color:#0969da}
.pt2x tr.pt2x-flash{background:#fff8c5}
.pt2x .stack{font-size:12px}.pt2x .stack .lib{color:#8c959f}.pt2x .stack .yours{font-weight:700}
.pt2x .gb{color:#57606a;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
.pt2x .dynamic{font-weight:700;margin:2px 0}
.pt2x a.button{display:inline-block;border:1px solid #d0d7de;border-radius:4px;padding:2px 8px;margin:4px 4px 4px 0;background:#f6f8fa;color:#1f2328;text-decoration:none}
.pt2x .hljs-keyword,.pt2x .hljs-doctag,.pt2x .hljs-type,.pt2x .hljs-variable.language_{color:#d73a49}
.pt2x .hljs-title,.pt2x .hljs-title.class_,.pt2x .hljs-title.function_{color:#6f42c1}
.pt2x .hljs-literal,.pt2x .hljs-number,.pt2x .hljs-meta,.pt2x .hljs-operator,.pt2x .hljs-attr,.pt2x .hljs-variable{color:#005cc5}
.pt2x .hljs-string,.pt2x .hljs-regexp,.pt2x .hljs-meta .hljs-string{color:#032f62}
.pt2x .hljs-built_in,.pt2x .hljs-symbol{color:#e36209}
.pt2x .hljs-comment,.pt2x .hljs-code{color:#6a737d}
"""


def _pygments_css() -> str:
    """Pygments' token colours, scoped to the explorer (its full ``get_style_defs`` also
    emits unscoped rules, ``pre { line-height: 125% }``, that would restyle the whole page)."""
    fmt = HtmlFormatter(style="default")
    scope = ".pt2x .highlight"
    return "\n".join(fmt.get_background_style_defs(scope) + fmt.get_token_style_defs(scope))


def frag(body: str) -> str:
    """A fragment inside the explorer's scope (``.pt2x``: the stylesheet's rules apply)."""
    return f'<div class="pt2x">{body}</div>'


def browser_highlighting() -> bool:
    """Can the static page highlight code in the browser (the bundle is built)?"""
    return HIGHLIGHT_BUNDLE.exists()


def code_html(code: str, language: str, *, lazy: bool = False) -> str:
    """The code, highlighted by pygments; ``lazy`` (the static page, with the highlighting
    bundle inlined: ``pages/_page.py``): as text, marked with its language for the browser to
    highlight when the block is first shown (highlighting every block of a big log here
    took most of the page's time)."""
    note = ""
    if len(code) > CODE_LIMIT:
        note = f'<div class="note">showing the first {CODE_LIMIT:,} of {len(code):,} characters</div>'
        code = code[:CODE_LIMIT]
    if len(code) > HIGHLIGHT_LIMIT:
        return f'<div class="highlight"><pre>{esc(code)}</pre></div>{note}'
    if lazy:
        lang = _BROWSER_LANGUAGES.get(language)
        attr = f' data-lang="{lang}"' if lang else ""
        return f'<div class="highlight"><pre{attr}>{html.escape(code, quote=False)}</pre></div>{note}'
    lexer = _LEXERS.get(language, TextLexer)()
    return highlight(code, lexer, HtmlFormatter(cssclass="highlight")) + note


def table_html(t: Table) -> str:
    head = "".join(f"<th>{esc(c)}</th>" for c in t.columns)
    kinds = t.kinds + ("",) * (len(t.columns) - len(t.kinds))
    if any(kinds):
        rows = "".join(_row_html(r, kinds) for r in t.rows)
    else:  # plain cells (most tables): as _row_html draws them, without asking each cell's kind
        n = len(kinds)
        rows = "".join("<tr>" + "".join([f"<td>{esc(v)}</td>" for v in r[:n]]) + "</tr>" for r in t.rows)
    return f"<h3>{esc(t.title)}</h3><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def _row_html(row: tuple[str, ...], kinds: tuple[str, ...]) -> str:
    """A row; one that names a kernel carries it (``data-kernel``: what links to it find)."""
    kernel = next((v for v, k in zip(row, kinds) if k in ("kernel", "code") and v), None)
    attr = f' data-kernel="{esc(kernel)}"' if kernel else ""
    return f"<tr{attr}>" + "".join(_cell_html(v, k, kernel) for v, k in zip(row, kinds)) + "</tr>"


def _cell_html(value: str, kind: str, kernel: str | None) -> str:
    """A cell as its column's kind draws it; the links work through the graph view's script
    (extension/src/graph/links.ts), on the page and in JupyterLab alike."""
    if kind == "colour" and value:
        return (
            f'<td><span class="pt2x-swatch" style="background:{esc(value)}" title="{esc(value)}"></span></td>'
        )
    if kind == "nodes" and value:
        data = f' data-kernel="{esc(kernel)}"' if kernel else ""
        links = (
            f'<a class="pt2x-node-link" data-node="{esc(n)}"{data} title="select it in the graph">{esc(n)}</a>'
            for n in value.split(", ")
        )
        return f"<td>{', '.join(links)}</td>"
    if kind == "kernel" and value:
        return f'<td><a class="pt2x-kernel-link" data-kernel="{esc(value)}" title="its nodes in the fuse graph">{esc(value)}</a></td>'
    if kind == "lines" and value:  # "a.py:3, Cell In[2], line 8, … (5 lines)"
        data = f' data-kernel="{esc(kernel)}"' if kernel else ""
        links = (
            esc(p)
            if p.startswith("…")
            else f'<a class="pt2x-line-link" data-line="{esc(p)}"{data} title="the nodes it made, in the graph">{esc(p)}</a>'
            for p in re.split(r", (?!line \d)", value)
        )
        return f"<td>{', '.join(links)}</td>"
    if kind == "code" and value:
        return f'<td><a class="pt2x-code-link" data-kernel="{esc(value)}" title="its row and source in codegen">{esc(value)}</a></td>'
    return f"<td>{esc(value)}</td>"


def graph_html(g: GraphBlock, *, static: bool = False) -> str:
    """The graph: its payload for the browser component (explorer/graph/_view.py), with a
    plain-HTML note where no script runs. Laid out in the browser, so a static page costs
    no layout time."""
    return graph_static_html(g)


def block_html(
    b: Block, *, open_: bool = False, static: bool = False, shared: LineTable | None = None
) -> str:
    """``shared``: the page's table of shared lines, where a ``LinesBlock`` keeps its lines
    (else it is drawn as its text)."""
    if isinstance(b, Table):
        return table_html(b)
    if isinstance(b, GraphBlock):
        return graph_html(b, static=static)
    if isinstance(b, LinesBlock):
        if shared is not None and not open_:
            return shared.details_html(b, CODE_LIMIT)
        b = CodeBlock(b.title, b.language, b.code)
    assert isinstance(b, CodeBlock)
    lines = b.code.count("\n") + 1
    lazy = static and (shared.lazy_code if shared is not None else browser_highlighting())
    code = code_html(b.code, b.language, lazy=lazy)
    return (
        f"<details{' open' if open_ else ''}><summary>{esc(b.title)} "
        f'<span class="meta">({lines} lines)</span></summary>{code}</details>'
    )


def summary_html(view: ExplorerView) -> str:
    s = view.summary
    items = [f'<li class="brk">{esc(x)}</li>' for x in s.break_lines]
    items += [f'<li class="rcp">{esc(x)}</li>' for x in s.recompile_lines]
    items += [f'<li class="pipe">{esc(name)}: {esc(x)}</li>' for name, lines in s.sections for x in lines]
    err = error_html(view) + (f'<div class="note">{esc(s.damaged)}</div>' if s.damaged else "")
    glance = f'<ul class="glance">{"".join(items)}</ul>' if items else ""
    return (
        f'<h2>PT2 Explorer — {esc(s.title)}</h2><div class="meta">{esc(s.meta)}</div>'
        f'<div class="headline">{esc(s.headline)}</div>{err}{glance}'
    )


def break_html(b: BreakView) -> str:
    src = "".join(
        f'<div class="{"hl" if ln.highlight else ""}"><span class="no">{ln.number}</span>{esc(ln.text)}</div>'
        for ln in b.context
    )
    gb = f' <span class="gb">{esc(b.gb_id)}</span>' if b.gb_id else ""
    parts = [
        f'<div class="break" id="break-{esc(b.site)}"><div><b>{esc(b.site)}</b>  '
        f'<span class="type">{esc(b.type)}</span>{gb}  {esc(hits(b.count, b.compile_ids))}</div>'
    ]
    if b.your_code:
        parts.append(f"<div><b>your code:</b> {esc(b.your_code)}</div>")
    if src:
        parts.append(f'<pre class="src">{src}</pre>')
    if b.source_unread:
        parts.append(f'<div class="src-unread">source: {esc(b.source_unread)}</div>')
    if b.explanation:
        parts.append(f'<div class="why"><b>why:</b> {esc(b.explanation)}</div>')
    parts += [f"<div><b>hint:</b> {esc(h)}</div>" for h in b.hints]
    if b.user_stack:
        frames = " → ".join(_stack_frame_html(f) for f in b.user_stack)
        parts.append(f'<div class="stack">stack: {frames}</div>')
    graphs = []
    if b.graph_before:
        graphs.append(f"graph before: {_cid_link(b.graph_before)}")
    if b.graph_after:
        graphs.append(f"graph after: {_cid_link(b.graph_after)}")
    if graphs:
        parts.append(f'<div class="meta">{"; ".join(graphs)}</div>')
    parts.append(f"<details><summary>torch's full reason</summary><pre>{esc(b.reason)}</pre></details></div>")
    return "".join(parts)


def _stack_frame_html(f: StackLine) -> str:
    """The program's own innermost frame bold, library frames dimmed."""
    cls = "yours" if f.yours else "lib" if f.library else ""
    title = ' title="library code"' if f.library else ' title="your code"' if f.yours else ""
    return f'<span class="{cls}"{title}>{esc(f.text)}</span>' if cls else esc(f.text)


def error_html(view: ExplorerView) -> str:
    """How the recorded program ended, when it raised."""
    s = view.summary
    return f'<div class="error">The recorded program ended with: {esc(s.error)}</div>' if s.error else ""


def _cid_link(cid: str) -> str:
    """A compile id; on the static page a click opens that compile (inert in widgets)."""
    return f'<a class="cid" data-compile="{esc(cid)}">[{esc(cid)}]</a>'


def breaks_html(view: ExplorerView) -> str:
    if not view.breaks:
        return error_html(view) + '<div class="note">No graph breaks: each compiled frame is one graph.</div>'
    return error_html(view) + "".join(break_html(b) for b in view.breaks)


def recompiles_html(view: ExplorerView) -> str:
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


def stage_html(sv: StageView, *, static: bool = False, shared: LineTable | None = None) -> str:
    if not sv.blocks:
        return f'<div class="note">{esc(sv.stage)}: {esc(sv.note or "nothing recorded")}</div>'
    note = f'<div class="note">{esc(sv.note)}</div>' if sv.note else ""
    return note + "".join(block_html(b, static=static, shared=shared) for b in sv.blocks)


def compile_facts_html(cv: CompileView, *, static: bool = False, shared: LineTable | None = None) -> str:
    """How the compile ended, then its own facts (stage times, caches, traceback, metrics)."""
    err = f'<div class="error">{esc(cv.error)}</div>' if cv.error else ""
    return err + cv.repros + "".join(block_html(b, static=static, shared=shared) for b in cv.blocks)


def compile_html(cv: CompileView, *, static: bool = False, shared: LineTable | None = None) -> str:
    stages = "".join(
        f"<details{' open' if sv.stage == 'capture' else ''}><summary>{esc(sv.stage)}</summary>{stage_html(sv, static=static, shared=shared)}</details>"
        for sv in cv.stages
    )
    return f"<h3>{esc(cv.label)}</h3>{compile_facts_html(cv, static=static, shared=shared)}{stages}"


def stylesheet() -> str:
    """The explorer's rules, every one under ``.pt2x``, pygments' token colours included."""
    return CSS + _pygments_css()


def fragment_css() -> str:
    """The explorer's stylesheet: once per output (the widget's first child), the fragments
    themselves carry none."""
    return f"<style>{stylesheet()}</style>"


def compiles_html(view: ExplorerView, selected: str | None = None) -> str:
    """The static page's compiles tab: a compile selector (the page's script shows the one
    selected; ``selected``: the compile selected first, None: the first), then each compile."""
    options = "".join(
        f'<option value="{esc(c.compile_id)}"{" selected" if c.compile_id == selected else ""}>{esc(c.label)}</option>'
        for c in view.compiles
    )
    shared = LineTable(browser_highlighting())  # the texts compiles share, each line once
    compiles = "".join(
        f'<div class="pt2x-compile" data-id="{esc(c.compile_id)}">{compile_html(c, static=True, shared=shared)}</div>'
        for c in view.compiles
    )
    return f'<label>compile <select id="pt2x-compile">{options}</select></label>{compiles}{shared.script()}'

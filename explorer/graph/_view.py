"""The graph view lowered to the notebook (an anywidget carrying the bundled component) and
to the static page (each graph's payload as JSON beside a plain-HTML note; the component
inlined once per page by ``with_graph_script``). The component itself is TypeScript:
extension/src/graph/, bundled by ``make extension`` into explorer/static/graphview.js."""

from __future__ import annotations

import html

from ..base._types import GraphBlock
from ._data import BUNDLE, block_json, bundle_text

_esc = html.escape
_DATA_CLASS = "pt2x-graph-data"


def _note(block: GraphBlock) -> str:
    n = len(block.graph.nodes)
    return (
        f'<div class="note">The graph view ({n} nodes) needs JavaScript; the node table and '
        "the code below list the same graph.</div>"
    )


def graph_static_html(block: GraphBlock) -> str:
    """Heading, the component's mount point (a note until it runs) and the graph's payload."""
    data = block_json(block)
    return (
        f"<h3>{_esc(block.title)}</h3>"
        f'<div class="pt2x-graph"><div class="pt2x-graph-view">{_note(block)}</div>'
        f'<script type="application/json" class="{_DATA_CLASS}">{data}</script></div>'
    )


def with_graph_script(page: str) -> str:
    """``page`` with the graph component inlined once before ``</body>``, when it holds a graph."""
    script = graph_script(page)
    if not script:
        return page
    head, sep, tail = page.rpartition("</body>")
    return head + script + sep + tail if sep else page + script


def graph_script(body: str) -> str:
    """The graph component's script, where ``body`` holds a graph; else "" (so too in a
    checkout without ``make extension``: the notes stay)."""
    if f'class="{_DATA_CLASS}"' not in body:
        return ""
    bundle = bundle_text()
    return "" if bundle is None else f'<script type="module">{bundle}</script>'


def graph_widget(block: GraphBlock):
    """The heading, then the component (its controls under the heading) as an anywidget."""
    import ipywidgets as w

    heading = w.HTML(f'<h3 class="pt2x-graph-title">{_esc(block.title)}</h3>')
    if not BUNDLE.exists():
        return w.VBox([heading, w.HTML(_note(block))])
    from ._widget import GraphWidget

    return w.VBox([heading, GraphWidget(block)], layout=w.Layout(width="100%"))

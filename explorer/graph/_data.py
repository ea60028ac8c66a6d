"""The graph view's data: one FX graph as compact JSON for the browser component
(extension/src/graph/, bundled to explorer/static/graphview.js), which lays it out, collapses
it by nn.Module and expands it lazily. The same payload feeds the notebook widget
(``graph/_widget.py``) and the static page (``graph_page_html`` here).

The payload (schema 1), every string the user's or torch's text, never HTML::

    {"schema": 1, "title": str, "n": node count,
     "mods": [module path, ...],          # each path once; nodes name them by index
     "srcs": [[where, code(, ops)], ...], # each source line once ("Cell In[2], line 3" / file:line),
                                          # with the ops Dynamo's graph made there, where a
                                          # later graph decomposed them ("layer_norm")
     "nodes": [{"n": name, "o": op, "t": target, "d": "f32[4, 8]", "s": src index,
                "m": module index (the node's own path), "g": group index (the path it is
                collapsed under, when it differs: a module-less parameter joins the module
                that reads it), "i": 1 when the module was inferred, "a": [arg node indices],
                "c": "#rrggbb" kernel colour, "k": index into kernels,
                "b": 1 for a node of a joint graph's backward, "q": torch's seq_nr,
                "f": the forward node index a backward node differentiates},
               ...],
     "kernels": [kernel name, ...]}      # the fuse view's; keys left out when empty

Sources, module paths and targets repeat per layer, so they are interned: 10k nodes of a real
model take about 1.5 MB.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from compiler.types import Graph

from ..base._words import where

SCHEMA = 1
CODE_MAX = 200  # characters of a node's source line kept
BUNDLE = Path(__file__).parent.parent / "static" / "graphview.js"
_COLOR = re.compile(r"#[0-9A-Fa-f]{3,8}")


def _where(source: str | None) -> str | None:
    """A node's ``file:line`` in the project's one style (``where``)."""
    if not source:
        return None
    filename, _, line = source.rpartition(":")
    if not filename or not line.isdigit():
        return where(source, None)
    return where(filename, int(line))


def group_paths(graph: Graph) -> list[str | None]:
    """The module path each node is collapsed under: its own; a module-less placeholder or
    get_attr (the parameters AOTAutograd lifts to inputs) takes the longest path common to
    the nodes that read it, when they share one."""
    nodes = graph.nodes
    index = {n.name: i for i, n in enumerate(nodes)}
    users: dict[int, list[int]] = {}
    for i, n in enumerate(nodes):
        for a in dict.fromkeys(n.args):
            j = index.get(a)
            if j is not None:
                users.setdefault(j, []).append(i)
    out: list[str | None] = [n.module or None for n in nodes]
    for i, n in enumerate(nodes):
        if out[i] is None and n.op in ("placeholder", "get_attr") and i in users:
            paths = [nodes[u].module.split(".") for u in users[i] if nodes[u].module]
            if len(paths) == len(users[i]):
                common = os.path.commonprefix(paths)
                out[i] = ".".join(common) or None
    return out


def graph_payload(
    graph: Graph,
    title: str,
    colors: dict[str, str] | None = None,
    origins: dict[str, str] | None = None,
    kernels: dict[str, str] | None = None,
    focus: tuple[tuple[str, ...], str] = ((), ""),
) -> dict:
    """The JSON-ready payload of ``graph`` (see the module's docstring)."""
    nodes = graph.nodes
    colors = colors or {}
    origins = origins or {}
    kernels = kernels or {}
    knames: dict[str, int] = {}
    index = {n.name: i for i, n in enumerate(nodes)}
    mods: dict[str, int] = {}
    srcs: dict[tuple[str, str], int] = {}
    src_of: dict[tuple[str, str], str] = {}  # (where, code) -> the node source it came from
    wheres: dict[str | None, str | None] = {}  # a source line is many nodes'
    out = []
    for n, g in zip(nodes, group_paths(graph)):
        rec: dict = {"n": n.name, "o": n.op, "t": n.target}
        shape = (n.dtype or "") + (n.shape or "")
        if shape:
            rec["d"] = shape
        w = wheres[n.source] if n.source in wheres else wheres.setdefault(n.source, _where(n.source))
        if w:
            key = (w, (n.code or "")[:CODE_MAX])
            rec["s"] = srcs.setdefault(key, len(srcs))
            src_of.setdefault(key, n.source or "")
        if n.module:
            rec["m"] = mods.setdefault(n.module, len(mods))
            if n.module_inferred:
                rec["i"] = 1
        if g and g != n.module:
            rec["g"] = mods.setdefault(g, len(mods))
        args = [index[a] for a in dict.fromkeys(n.args) if a in index]
        if args:
            rec["a"] = args
        c = colors.get(n.name)
        if c and _COLOR.fullmatch(c):
            rec["c"] = c
        if n.name in kernels:
            rec["k"] = knames.setdefault(kernels[n.name], len(knames))
        if n.backward:
            rec["b"] = 1
        if n.seq_nr is not None:
            rec["q"] = n.seq_nr
        if n.grad_of in index:
            rec["f"] = index[n.grad_of]
        out.append(rec)
    return {
        "schema": SCHEMA,
        "title": title,
        "n": len(nodes),
        "mods": list(mods),
        "srcs": [list(k) + ([origins[src_of[k]]] if origins.get(src_of[k]) else []) for k in srcs],
        "nodes": out,
        **({"kernels": list(knames)} if knames else {}),
        # where the view opens (the compile's most expensive kernel's nodes) and why
        **({"focus": [index[n] for n in focus[0] if n in index], "focusWhy": focus[1]} if focus[0] else {}),
    }


def block_json(block) -> str:
    """A view's GraphBlock as the component's payload JSON (the page's and the widget's)."""
    return payload_json(
        graph_payload(
            block.graph,
            block.title,
            block.colors,
            block.origins,
            block.kernels,
            (block.focus, block.focus_why),
        )
    )


def payload_json(payload: dict) -> str:
    """Compact JSON that is safe inside ``<script type="application/json">``: ``<``, ``>``,
    ``&`` and the JavaScript line separators escaped, so no user text ends the element."""
    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def bundle_text() -> str | None:
    """The built component (``make extension``), or None when it was not built."""
    try:
        text = BUNDLE.read_text(encoding="utf-8")
    except OSError:
        return None
    # inlined in a <script>: it must not close the element (esbuild writes "<\/script")
    return text.replace("</script", "<\\/script")

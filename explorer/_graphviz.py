"""FX graphs drawn with Graphviz: one box per node, or one box per nn.Module when big.

``to_dot`` writes the DOT; ``render_graph`` lays it out in-process with pygraphviz (its wheels
bundle Graphviz: no ``dot`` binary) and returns inline SVG.  Over ``threshold`` nodes, a scope
is grouped by module path at the deepest depth giving at most ``_BUDGET`` boxes (the shallowest
would be one box for the whole model); an expanded group is a cluster of its members, grouped
again when over ``threshold``.  Module-less parameters join the module that reads them; other
module-less nodes are single boxes when few, else one "(top level)" group.

Escaping: DOT IDs are synthetic (``n12``, ``g3``, ``cluster_0``); user text goes in quoted DOT
strings with ``\\``, ``"`` and ``&`` escaped (Graphviz passes entities through) and Graphviz
XML-escapes it; tooltips are written into the SVG ``<title>`` elements here, escaped here.
"""

from __future__ import annotations

import contextlib
import html
import os
import re
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass

from compiler import Graph, Node

TOP = "(top level)"  # the group of nodes that have no module path
_BUDGET = 80  # boxes a collapsed scope aims at
_FEW = 12  # module-less nodes drawn one by one in a collapsed graph, at most
_LABEL_MAX = 44  # characters of a name or target on a box; tooltips hold the rest
_CTRL, _BAD = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]"), "\ufffd"  # XML has no such characters
_COLOR = re.compile(r"#[0-9A-Fa-f]{3,8}|[A-Za-z][A-Za-z0-9]*")

_GRAPH_ATTRS = (
    'graph [rankdir=TB, nodesep=0.2, ranksep=0.3, bgcolor="transparent", fontname="Helvetica", fontsize=10];'
)
_NODE_ATTRS = 'node [shape=box, style=filled, fillcolor="white", color="#444444", fontname="Helvetica", fontsize=10, height=0.3, margin="0.08,0.03"];'
_EDGE_ATTRS = 'edge [arrowsize=0.6, color="#666666"];'
_STYLE = {  # extra attributes per op; colours of call nodes come from ``colors``
    "placeholder": 'style="rounded,filled", fillcolor="#dbeafe"',
    "get_attr": 'style="rounded,filled", fillcolor="#fef3c7"',
    "output": 'style="filled,bold", fillcolor="#e5e7eb"',
}


@dataclass(frozen=True)
class RenderedGraph:
    svg: str  # inline <svg>…</svg> (no XML prolog / DOCTYPE), ready to embed in HTML
    nodes: int  # nodes in the graph
    shown: int  # boxes drawn (nodes + collapsed groups)
    collapsed: bool  # were modules collapsed
    groups: tuple[tuple[str, int], ...]  # (module path, node count) of each collapsed group


def render_graph(
    graph: Graph,
    *,
    colors: dict[str, str] | None = None,
    expand: tuple[str, ...] = (),
    threshold: int = 150,
) -> RenderedGraph:
    """Lay ``graph`` out with Graphviz ``dot``; raises ImportError without pygraphviz."""
    try:
        import pygraphviz
    except ImportError as e:
        raise ImportError(
            "drawing graphs needs the 'pygraphviz' package: pip install 'pygraphviz>=2.0' "
            "(its wheels bundle Graphviz)"
        ) from e
    dot, titles, shown, groups = _build(graph, colors or {}, tuple(expand), threshold)
    with _quiet_fontconfig():
        raw = pygraphviz.AGraph(string=dot).draw(format="svg", prog="dot")
    svg = _clean_svg(raw.decode("utf-8"), titles)
    return RenderedGraph(svg, len(graph.nodes), shown, bool(groups), groups)


_FONTCONFIG_SEEN = False


@contextlib.contextmanager
def _quiet_fontconfig():
    """The fontconfig bundled in pygraphviz's wheel warns once per process about Debian's
    config ("unknown element reset-dirs") on file descriptor 2, where a notebook shows it as
    an error. Hold fd 2 during the first layout and pass on everything else it wrote."""
    global _FONTCONFIG_SEEN
    if _FONTCONFIG_SEEN:
        yield
        return
    _FONTCONFIG_SEEN = True
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    with tempfile.TemporaryFile() as tmp:
        try:
            os.dup2(tmp.fileno(), 2)
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            rest = [
                ln for ln in tmp.read().decode(errors="replace").splitlines(True) if "Fontconfig" not in ln
            ]
            if rest:
                sys.stderr.write("".join(rest))


def to_dot(
    graph: Graph,
    *,
    colors: dict[str, str] | None = None,
    expand: tuple[str, ...] = (),
    threshold: int = 150,
) -> str:
    """The DOT text ``render_graph`` lays out."""
    return _build(graph, colors or {}, tuple(expand), threshold)[0]


def short_target(node: Node) -> str:
    """``torch.ops.aten.mm.default`` -> ``aten.mm``; other targets as torch printed them."""
    t = node.target
    if t.startswith("torch.ops."):
        parts = t[len("torch.ops.") :].split(".")
        return ".".join(parts[:2])
    return t


# ---- planning: which nodes are boxes, groups, clusters ------------------------------


@dataclass
class _Group:
    path: str
    members: list[int]
    items: list | None = None  # set when expanded: what the cluster holds


def _plan(paths, idxs, scope: str, expand, threshold) -> list:
    """Items of one scope: ints (node indices) and _Groups, in graph order."""
    if len(idxs) <= threshold:
        return list(idxs)
    depth = scope.count(".") + 1 if scope else 0
    direct = [i for i in idxs if len(paths[i]) <= depth]  # nodes of the scope itself
    deeper = [i for i in idxs if len(paths[i]) > depth]
    top = not scope and len(direct) > _FEW  # module-less nodes fold into one group
    direct_boxes = 1 if top else len(direct)
    cut = depth + 1
    for d in range(depth + 1, max((len(paths[i]) for i in deeper), default=depth) + 1):
        if len({paths[i][:d] for i in deeper}) + direct_boxes > _BUDGET:
            break  # box counts only grow with depth
        cut = d
    items: list = []
    by_path: dict[str, _Group] = {}
    for i in idxs:
        if len(paths[i]) <= depth and not top:
            items.append(i)
            continue
        key = TOP if len(paths[i]) <= depth else ".".join(paths[i][:cut])
        if key not in by_path:
            by_path[key] = _Group(key, [])
            items.append(by_path[key])
        by_path[key].members.append(i)
    for g in by_path.values():
        if len(g.members) > 1 and _expanded(g, paths, expand):  # TOP has no modules to group by
            g.items = g.members if g.path == TOP else _plan(paths, g.members, g.path, expand, threshold)
    return [i.members[0] if isinstance(i, _Group) and len(i.members) == 1 else i for i in items]


def _paths(nodes) -> list[tuple[str, ...]]:
    """Module path of each node, split; a module-less placeholder or get_attr (the
    parameters of an AOT graph) takes the longest path common to the nodes that read it."""
    paths = [tuple(n.module.split(".")) if n.module else () for n in nodes]
    index = {n.name: i for i, n in enumerate(nodes)}
    users: dict[int, list[int]] = {}
    for i, n in enumerate(nodes):
        for a in n.args:
            if a in index:
                users.setdefault(index[a], []).append(i)
    for i, n in enumerate(nodes):
        if not paths[i] and n.op in ("placeholder", "get_attr") and i in users:
            paths[i] = tuple(os.path.commonprefix([paths[u] for u in users[i]]))  # any sequences
    return paths


def _expanded(group: _Group, paths, expand) -> bool:
    """Is ``group`` named in ``expand``, or does it hold the nodes of a path named there?"""
    for e in expand:
        if e == group.path:
            return True
        if e.startswith(group.path + "."):
            want = tuple(e.split("."))
            if any(paths[i][: len(want)] == want for i in group.members):
                return True
    return False


# ---- DOT ---------------------------------------------------------------------


def _q(text: str) -> str:
    """A quoted DOT string that Graphviz shows as ``text`` (labels, ids: escString)."""
    text = _CTRL.sub(_BAD, text).replace("&", "&amp;").replace("\\", "\\\\").replace('"', '\\"')
    return '"' + text.replace("\r", "").replace("\n", "\\n") + '"'


def _id(prefix: str, text: str) -> str:
    return _q(prefix + re.sub(r"[\r\n]", " ", text))  # Graphviz would keep "\\n" verbatim


def _color(value: str) -> str:
    if not _COLOR.fullmatch(value):
        raise ValueError(f"not a colour Graphviz takes here (#rgb[a], #rrggbb[aa] or a name): {value!r}")
    return value


def _cls(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", text)


def _clip(text: str) -> str:
    if len(text) <= _LABEL_MAX:
        return text
    half = (_LABEL_MAX - 1) // 2
    return text[:half] + "…" + text[-half:]


def _node_label(n: Node) -> str:
    if n.op == "output":
        return "output"
    lines = [_clip(n.name)]
    if n.op not in ("placeholder", "get_attr"):
        lines.append(_clip(short_target(n)))
    if n.dtype or n.shape:
        lines.append(_clip((n.dtype or "") + (n.shape or "")))
    return "\n".join(lines)


def _node_tooltip(n: Node) -> str:
    lines = [n.name, f"op: {n.op}", f"target: {n.target}"]
    shape = (n.dtype or "") + (n.shape or "")
    tensor = " ".join(x for x in (shape, n.stride and f"stride {n.stride}", n.device) if x)
    if tensor:
        lines.append(tensor)
    if n.op == "output":
        lines.append("returns: " + ", ".join(n.args[:20]) + (" …" if len(n.args) > 20 else ""))
    if n.module:
        lines.append(f"module: {n.module}" + (" (inferred)" if n.module_inferred else ""))
    if n.source:
        lines.append(f"source: {n.source}")
    if n.code:
        lines.append(f"    {n.code}")
    return "\n".join(lines)


def _group_tooltip(group: _Group, nodes) -> str:
    census = Counter(short_target(nodes[i]) for i in group.members if nodes[i].op != "placeholder")
    ops = ", ".join(f"{c}× {t}" for t, c in census.most_common(8))
    more = " …" if len(census) > 8 else ""
    return f"{group.path}\n{len(group.members)} nodes, collapsed\n{ops}{more}".rstrip()


def _build(graph: Graph, colors, expand, threshold):
    """DOT text, tooltips by DOT id (for the SVG titles), boxes shown, collapsed groups."""
    nodes = graph.nodes
    paths = _paths(nodes)
    body = [i for i, n in enumerate(nodes) if n.op != "output"]
    tail = [i for i, n in enumerate(nodes) if n.op == "output"]
    if len(nodes) <= threshold:
        items: list = list(range(len(nodes)))
    else:
        items = _plan(paths, body, "", expand, threshold) + tail

    lines = ["digraph fx {", _GRAPH_ATTRS, _NODE_ATTRS, _EDGE_ATTRS]
    titles: dict[str, str | None] = {"fx": None}
    box: dict[int, str] = {}  # node index -> DOT id of the box that draws it
    groups: list[tuple[str, int]] = []
    names: dict[str, str] = {}  # DOT id -> what an edge tooltip calls it
    n_clusters = 0

    def emit(item, indent: str) -> None:
        nonlocal n_clusters
        if isinstance(item, int):
            n, key = nodes[item], f"n{item}"
            box[item], names[key], titles[key] = key, n.name, _node_tooltip(n)
            attrs = [f"id={_id('node-', n.name)}", f"class={_q(_cls(n.op))}", f"label={_q(_node_label(n))}"]
            attrs.append(f"tooltip={_q(titles[key])}")
            if n.op in _STYLE:
                attrs.append(_STYLE[n.op])
            if n.name in colors:
                attrs.append(f"fillcolor={_q(_color(colors[n.name]))}")
            lines.append(f"{indent}{key} [{', '.join(attrs)}];")
        elif item.items is None:
            key = f"g{len(groups)}"
            groups.append((item.path, len(item.members)))
            names[key], titles[key] = item.path, _group_tooltip(item, nodes)
            box.update(dict.fromkeys(item.members, key))
            label = f"{item.path} ({len(item.members)} ops)"
            attrs = [f"id={_id('group-', item.path)}", 'class="group"', f"label={_q(label)}"]
            attrs += [f"tooltip={_q(titles[key])}", 'shape=box3d, fillcolor="#f3f4f6"']
            lines.append(f"{indent}{key} [{', '.join(attrs)}];")
        else:
            key = f"cluster_{n_clusters}"
            n_clusters += 1
            titles[key] = f"{item.path}\n{len(item.members)} nodes, expanded"
            lines.append(f"{indent}subgraph {key} {{")
            lines.append(
                f'{indent}  graph [id={_id("cluster-", item.path)}, class="module", '
                f'label={_q(item.path)}, style="rounded,dashed", color="#888888", labeljust=l];'
            )
            for sub in item.items:
                emit(sub, indent + "  ")
            lines.append(f"{indent}}}")

    for item in items:
        emit(item, "")
    edges: Counter[tuple[str, str]] = Counter()
    index = {n.name: i for i, n in enumerate(nodes)}
    for i, n in enumerate(nodes):
        for a in dict.fromkeys(n.args):
            j = index.get(a)
            if j is not None and box[j] != box[i]:
                edges[box[j], box[i]] += 1
    for (a, b), count in edges.items():
        lines.append(f"{a} -> {b};")
        more = f" ({count} edges)" if count > 1 else ""
        titles[f"{a}&#45;&gt;{b}"] = f"{names[a]} → {names[b]}{more}"
    lines.append("}")
    shown = sum(1 for key in names if key[0] in "ng")
    return "\n".join(lines) + "\n", titles, shown, tuple(groups)


# ---- SVG -----------------------------------------------------------------------

_ANCHOR = re.compile(r'<g id="a_[^"]*"><a xlink:title="[^"]*">\n(.*?)</a>\n</g>\n', re.S)
_TITLE = re.compile(r"<title>([^<]*)</title>\n?")


def _clean_svg(svg: str, titles: dict[str, str | None]) -> str:
    """Inline SVG: no prolog or comments; our tooltips as <title>, not Graphviz's anchors."""
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r"<!--.*?-->\n?", "", svg, flags=re.S)
    svg = _ANCHOR.sub(r"\1", svg)

    def title(m: re.Match[str]) -> str:
        text = titles.get(m.group(1), m.group(1))
        return "" if text is None else f"<title>{html.escape(_CTRL.sub(_BAD, text), quote=False)}</title>\n"

    svg = _TITLE.sub(title, svg)
    return svg.replace("&#45;", "-")  # Graphviz writes '-' so for comments, gone now

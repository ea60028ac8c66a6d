"""The Graphviz view (explorer/_graphviz.py): exact DOT, SVG structure, collapsing by module,
escaping. No compiles: graphs are built here or read from the recorded fixtures."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import compiler
from compiler import Graph, Node
from explorer._graphviz import TOP, RenderedGraph, render_graph, short_target, to_dot

FIXTURES = Path(__file__).parent / "fixtures"
SVG = "{http://www.w3.org/2000/svg}"


def boxes(svg: str) -> dict[str, dict]:
    """id -> {class, title, texts, fill} of each node / group / cluster <g> of the SVG."""
    root = ET.fromstring(svg)  # also proves the SVG is well-formed XML
    out = {}
    for g in root.iter(SVG + "g"):
        cls = g.get("class", "")
        if cls.split()[0] in ("node", "cluster"):
            shape = next(e for e in g if e.tag in (SVG + "polygon", SVG + "path"))
            out[g.get("id")] = {
                "class": cls,
                "title": g.find(SVG + "title").text,
                "texts": [t.text for t in g.iter(SVG + "text")],
                "fill": shape.get("fill"),
            }
    return out


def edge_titles(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return [g.find(SVG + "title").text for g in root.iter(SVG + "g") if g.get("class") == "edge"]


def node(name, op="call_function", target=None, args=(), module=None, **kw) -> Node:
    return Node(name, op, target or name, tuple(args), module=module, **kw)


def block_graph() -> Graph:
    """The capture graph of examples/gpu_block.py, recorded on an H100 (11 nodes)."""
    report = compiler.load(FIXTURES / "reports" / "h100-torch211-gpu-block.json.gz")
    return report.compile("0/0").stages.capture.graph


def layered(layers=30, loose=8) -> Graph:
    """blocks.{i}.attn (16 ops), blocks.{i}.mlp (16 ops), a residual add in blocks.{i};
    input x (module-less placeholder), ``loose`` module-less ops at the end, the output."""
    nodes = [node("x", "placeholder")]
    h = "x"
    for i in range(layers):
        y = h
        for part in ("attn", "mlp"):
            for k in range(16):
                nodes.append(
                    node(
                        f"{part}_{i}_{k}",
                        target="torch.ops.aten.mul.Tensor",
                        args=(y,),
                        module=f"blocks.{i}.{part}",
                    )
                )
                y = f"{part}_{i}_{k}"
        nodes.append(node(f"add_{i}", target="torch.ops.aten.add.Tensor", args=(h, y), module=f"blocks.{i}"))
        h = f"add_{i}"
    for k in range(loose):
        nodes.append(node(f"loss_{k}", args=(h,)))
        h = f"loss_{k}"
    nodes.append(node("output", "output", args=(h,)))
    return Graph("", tuple(nodes))


def test_short_target():
    assert short_target(node("mm", target="torch.ops.aten.mm.default")) == "aten.mm"
    assert short_target(node("c", target="torch.ops.prims.convert_element_type.default")) == (
        "prims.convert_element_type"
    )
    assert short_target(node("g", target="operator.getitem")) == "operator.getitem"


def test_to_dot_of_three_nodes_exactly():
    g = Graph(
        "",
        (
            node("x", "placeholder", dtype="f32", shape="[4, 8]"),
            node(
                "relu",
                target="torch.ops.aten.relu.default",
                args=("x",),
                dtype="f32",
                shape="[4, 8]",
                source="m.py:3",
                code="return x.relu()",
                module="act",
            ),
            node("output", "output", args=("relu",)),
        ),
    )
    assert to_dot(g, colors={"relu": "#ffcc00"}) == (
        "digraph fx {\n"
        'graph [rankdir=TB, nodesep=0.2, ranksep=0.3, bgcolor="transparent", fontname="Helvetica", fontsize=10];\n'
        'node [shape=box, style=filled, fillcolor="white", color="#444444", fontname="Helvetica", fontsize=10, height=0.3, margin="0.08,0.03"];\n'
        'edge [arrowsize=0.6, color="#666666"];\n'
        'n0 [id="node-x", class="placeholder", label="x\\nf32[4, 8]", '
        'tooltip="x\\nop: placeholder\\ntarget: x\\nf32[4, 8]", style="rounded,filled", fillcolor="#dbeafe"];\n'
        'n1 [id="node-relu", class="call_function", label="relu\\naten.relu\\nf32[4, 8]", '
        'tooltip="relu\\nop: call_function\\ntarget: torch.ops.aten.relu.default\\nf32[4, 8]\\nmodule: act\\n'
        'source: m.py:3\\n    return x.relu()", fillcolor="#ffcc00"];\n'
        'n2 [id="node-output", class="output", label="output", '
        'tooltip="output\\nop: output\\ntarget: output\\nreturns: relu", style="filled,bold", fillcolor="#e5e7eb"];\n'
        "n0 -> n1;\n"
        "n1 -> n2;\n"
        "}\n"
    )


def test_small_graph_every_node_with_id_tooltip_and_colour():
    g = block_graph()
    r = render_graph(g, colors={"layer_norm": "#aec7e8", "h": "#ffbb78"})
    assert (r.nodes, r.shown, r.collapsed, r.groups) == (11, 11, False, ())
    assert r.svg.startswith("<svg ") and r.svg.rstrip().endswith("</svg>")
    assert "<?xml" not in r.svg and "<!DOCTYPE" not in r.svg and "<!--" not in r.svg
    assert "xlink:title" not in r.svg  # tooltips are <title>s, not Graphviz's anchors
    b = boxes(r.svg)
    assert sorted(b) == sorted(f"node-{n.name}" for n in g.nodes)
    for n in g.nodes:
        box = b[f"node-{n.name}"]
        assert box["class"] == f"node {n.op}"
        assert box["title"].startswith(f"{n.name}\nop: {n.op}\ntarget: {n.target}\n")
        if n.source:
            assert f"\nsource: {n.source}\n    {n.code}" in box["title"]
    assert b["node-linear"]["title"] == (
        "linear\nop: call_function\ntarget: torch._C._nn.linear\nf32[32, 1024] stride [1024, 1] cuda:0\n"
        "module: up\nsource: examples/gpu_block.py:19\n    h = nn.functional.gelu(self.up(self.norm(x)))"
    )
    assert b["node-output"]["title"] == "output\nop: output\ntarget: output\nreturns: gt, h"
    assert b["node-linear"]["texts"] == ["linear", "torch._C._nn.linear", "f32[32, 1024]"]
    assert (b["node-layer_norm"]["fill"], b["node-h"]["fill"]) == ("#aec7e8", "#ffbb78")
    assert (b["node-linear"]["fill"], b["node-L_x_"]["fill"], b["node-output"]["fill"]) == (
        "white",
        "#dbeafe",
        "#e5e7eb",
    )
    assert sorted(edge_titles(r.svg)) == sorted(
        f"{a} → {n.name}" for n in g.nodes for a in dict.fromkeys(n.args)
    )


def test_thousand_nodes_collapse_into_one_box_per_block():
    g = layered()
    assert len(g.nodes) == 1000
    r = render_graph(g)
    # depth 3 (attn / mlp / the add of each block) would be 90 boxes: over budget, so depth 2;
    # x goes with the one module that reads it; 8 module-less ops are few: drawn one by one
    expected = (("blocks.0", 34),) + tuple((f"blocks.{i}", 33) for i in range(1, 30))
    assert (r.nodes, r.shown, r.collapsed, r.groups) == (1000, 39, True, expected)
    b = boxes(r.svg)
    assert sorted(b) == sorted(
        [f"group-blocks.{i}" for i in range(30)] + [f"node-loss_{k}" for k in range(8)] + ["node-output"]
    )
    assert b["group-blocks.7"]["class"] == "node group"
    assert b["group-blocks.7"]["texts"] == ["blocks.7 (33 ops)"]
    assert b["group-blocks.7"]["title"] == "blocks.7\n33 nodes, collapsed\n32× aten.mul, 1× aten.add"
    edges = edge_titles(r.svg)
    assert edges[:2] == ["blocks.0 → blocks.1 (2 edges)", "blocks.1 → blocks.2 (2 edges)"]
    assert len(edges) == 29 + 1 + 8  # block to block, last block to loss_0, the loss chain, output
    assert "g0 -> g1;\n" in to_dot(g) and to_dot(g).count(" -> ") == len(edges)


def test_expanding_a_group_shows_its_members_in_a_cluster():
    g = layered()
    r = render_graph(g, expand=("blocks.3",))
    members = [f"{p}_3_{k}" for p in ("attn", "mlp") for k in range(16)] + ["add_3"]
    assert ("blocks.3", 33) not in r.groups and len(r.groups) == 29
    assert r.shown == 29 + 33 + 8 + 1
    b = boxes(r.svg)
    assert "group-blocks.3" not in b
    assert b["cluster-blocks.3"]["class"] == "cluster module"
    assert b["cluster-blocks.3"]["texts"] == ["blocks.3"]
    assert all(f"node-{m}" in b for m in members)
    assert "blocks.2 → attn_3_0" in edge_titles(r.svg) and "add_3 → blocks.4 (2 edges)" in edge_titles(r.svg)
    # a deeper path expands the group that holds it; unknown paths change nothing
    assert render_graph(g, expand=("blocks.3.mlp", "nope")).groups == r.groups


def test_an_expanded_group_over_threshold_is_grouped_again():
    g = layered()
    r = render_graph(g, expand=("blocks.3",), threshold=20)
    assert r.groups[3:5] == (("blocks.3.attn", 16), ("blocks.3.mlp", 16))
    assert r.shown == 29 + 2 + 1 + 8 + 1  # other blocks, attn, mlp, add_3, loose, output
    r2 = render_graph(g, expand=("blocks.3", "blocks.3.mlp"), threshold=20)
    assert ("blocks.3.mlp", 16) not in r2.groups
    assert "cluster-blocks.3.mlp" in boxes(r2.svg) and "node-mlp_3_15" in boxes(r2.svg)


def test_many_module_less_nodes_fold_into_top_level_group():
    g = layered(layers=3, loose=20)
    r = render_graph(g, threshold=50)
    assert r.groups[-1] == (TOP, 20)
    assert r.shown == 3 * 3 + 1 + 1  # attn, mlp, add per block; (top level); output
    assert "group-(top level)" in boxes(r.svg)
    r2 = render_graph(g, threshold=50, expand=(TOP,))
    assert TOP not in dict(r2.groups) and "node-loss_19" in boxes(r2.svg)


def test_every_node_is_drawn_once_in_the_gpt2_fixture():
    st = compiler.load_trace(FIXTURES / "traces" / "h100-torch211-gpt2.log.gz").compiles[0].stages
    for graph in (st.capture.graph, st.autograd.inference, st.decompose.post_grad[0].graph):
        r = render_graph(graph)
        b = boxes(r.svg)
        singles = [k for k in b if k.startswith("node-")]
        assert r.shown == len(singles) + len(r.groups)
        assert len(singles) + sum(n for _, n in r.groups) == r.nodes == len(graph.nodes)
        assert r.collapsed == (len(graph.nodes) > 150)


HOSTILE = 'a"b<script>alert(1)</script>\\N&amp;\n--> x'


def test_hostile_names_are_escaped():
    g = Graph(
        "",
        (
            node(HOSTILE, "placeholder", dtype="f32", shape="[2]"),
            node(
                "y",
                target='torch.ops.evil<script>.x\\"',
                args=(HOSTILE,),
                source="<script>.py:1",
                code="</title><script>alert(1)</script>\x1b",
                module='m"<script>',
            ),
            node("output", "output", args=("y",)),
        ),
    )
    for r in (render_graph(g, colors={"y": "#ff0000"}), render_graph(g, threshold=1)):
        assert "<script" not in r.svg.lower()
        ET.fromstring(r.svg)  # well-formed
    with pytest.raises(ValueError, match="not a colour"):
        to_dot(g, colors={"y": 'red"]; z [label="<script>'})
    b = boxes(render_graph(g).svg)
    hostile_id = "node-" + HOSTILE.replace("\n", " ")  # ids are one line
    assert sorted(b) == sorted([hostile_id, "node-y", "node-output"])
    assert b[hostile_id]["texts"] == ['a"b<script>alert(1)</script>\\N&amp;', "--> x", "f32[2]"]
    assert b[hostile_id]["title"].startswith(HOSTILE + "\nop: placeholder")
    assert b["node-y"]["title"] == (
        'y\nop: call_function\ntarget: torch.ops.evil<script>.x\\"\nmodule: m"<script>\n'
        "source: <script>.py:1\n    </title><script>alert(1)</script>\ufffd"  # no control characters in XML
    )
    assert b["node-y"]["texts"] == ["y", 'evil<script>.x\\"']
    assert edge_titles(render_graph(g).svg)[0] == f"{HOSTILE} → y"
    collapsed = boxes(render_graph(g, threshold=1).svg)
    assert collapsed['group-m"<script>']["texts"] == ['m"<script> (2 ops)']  # y and the input it reads


def test_hostile_module_path_of_a_group():
    path = 'evil"<b>&amp;\\N'
    g = Graph("", tuple(node(f"n{i}", module=path, args=(f"n{i - 1}",) if i else ()) for i in range(3)))
    r = render_graph(g, threshold=1)
    assert r.groups == ((path, 3),)
    b = boxes(r.svg)
    assert sorted(b) == [f"group-{path}"]
    assert b[f"group-{path}"]["texts"] == [f"{path} (3 ops)"]
    assert b[f"group-{path}"]["title"].startswith(f"{path}\n3 nodes, collapsed")
    expanded = boxes(render_graph(g, threshold=1, expand=(path,)).svg)
    assert expanded[f"cluster-{path}"]["texts"] == [path]


def test_missing_pygraphviz_is_a_clear_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "pygraphviz", None)
    with pytest.raises(ImportError, match="pip install 'pygraphviz>=2.0'"):
        render_graph(layered(layers=1))
    assert to_dot(layered(layers=1)).startswith("digraph fx {")  # DOT needs no Graphviz


def test_rendered_graph_is_frozen():
    r = render_graph(Graph("", (node("output", "output"),)))
    assert isinstance(r, RenderedGraph) and (r.nodes, r.shown) == (1, 1)
    with pytest.raises(AttributeError):
        r.svg = ""

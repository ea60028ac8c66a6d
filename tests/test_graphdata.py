"""The graph view's data (explorer/graph/_data.py, explorer/graph/_view.py): the exact payload
the browser component reads, the module each node is collapsed under, source lines in the
project's one style, escaping on the static page, the component inlined once per page.
No compiles: graphs are built here or read from recorded fixtures. The collapsing itself runs
in the browser (extension/src/graph/model.ts; extension/test/graph.test.ts and
tests/test_browser_graph.py)."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

import compiler
import explorer
import explorer.base._words
from compiler.types import Graph, Node
from explorer.base._types import GraphBlock
from explorer.graph._data import BUNDLE, graph_payload, group_paths, payload_json
from explorer.graph._view import graph_static_html, with_graph_script

FIXTURES = Path(__file__).parent / "fixtures"
EVIL = '</script><b x="1">&amp;\u2028'


def node(name, op="call_function", target=None, args=(), module=None, **kw) -> Node:
    return Node(name, op, target or name, tuple(args), module=module, **kw)


def three() -> Graph:
    return Graph(
        "",
        (
            node("x", "placeholder", dtype="f32", shape="[4, 8]"),
            node(
                "relu",
                target="torch.ops.aten.relu.default",
                args=("x", "x"),
                dtype="f32",
                shape="[4, 8]",
                source="/env/lib/python3.11/site-packages/transformers/models/gpt2/modeling_gpt2.py:273",
                code="return x.relu()",
                module="act",
                module_inferred=True,
            ),
            node("output", "output", args=("relu",)),
        ),
    )


def test_payload_of_three_nodes_exactly():
    assert graph_payload(three(), "Dynamo graph", {"relu": "#ffcc00", "x": "red;x"}) == {
        "schema": 1,
        "title": "Dynamo graph",
        "n": 3,
        "mods": ["act"],
        "srcs": [["transformers/models/gpt2/modeling_gpt2.py:273", "return x.relu()"]],
        "nodes": [
            {"n": "x", "o": "placeholder", "t": "x", "d": "f32[4, 8]", "g": 0},
            {
                "n": "relu",
                "o": "call_function",
                "t": "torch.ops.aten.relu.default",
                "d": "f32[4, 8]",
                "s": 0,
                "m": 0,
                "i": 1,
                "a": [0],
                "c": "#ffcc00",  # a colour that is not #rgb… is dropped (x's)
            },
            {"n": "output", "o": "output", "t": "output", "a": [1]},
        ],
    }


def test_source_of_a_notebook_cell_is_named_as_ipython_names_it(monkeypatch):
    cell = "/tmp/ipykernel_4242/1234.py"
    monkeypatch.setattr(explorer.base._words, "cell_label", lambda f: "Cell In[7]" if f == cell else None)
    g = Graph(
        "", (node("x", "placeholder"), node("sin", args=("x",), source=f"{cell}:8", code="y = x.sin()"))
    )
    assert graph_payload(g, "t")["srcs"] == [["Cell In[7], line 8", "y = x.sin()"]]


def test_group_paths_parameters_join_the_module_that_reads_them():
    g = Graph(
        "",
        (
            node("primals_1", "placeholder"),  # read by layers.0.fc1 only
            node("primals_2", "placeholder"),  # read by layers.0.fc1 and layers.0.fc2
            node("tangents_1", "placeholder"),  # read by a module-less op: stays top level
            node("unused", "placeholder"),
            node("mm", args=("primals_1", "primals_2"), module="layers.0.fc1"),
            node("mm_1", args=("mm", "primals_2"), module="layers.0.fc2"),
            node("mul", args=("mm_1", "tangents_1")),
            node("output", "output", args=("mul",)),
        ),
    )
    assert group_paths(g) == [
        "layers.0.fc1",
        "layers.0",
        None,
        None,
        "layers.0.fc1",
        "layers.0.fc2",
        None,
        None,
    ]


def test_real_joint_graph_payload_keeps_every_module_path_and_edge():
    """GPT-2's training step (CPU fixture): the joint graph's nodes carry their module paths
    (the recorder's), and every argument becomes an edge."""
    report = compiler.load_trace(FIXTURES / "traces" / "cpu-torch213-hf-gpt2-train.log.gz")
    joint = report.compile("1/0").stages.autograd.joint
    p = json.loads(payload_json(graph_payload(joint, "joint graph")))
    assert p["n"] == len(joint.nodes) == 334
    for n, rec in zip(joint.nodes, p["nodes"]):
        assert (rec["n"], rec["o"], rec["t"]) == (n.name, n.op, n.target)
        assert (p["mods"][rec["m"]] if "m" in rec else None) == n.module
        names = [p["nodes"][a]["n"] for a in rec.get("a", [])]
        assert names == [a for a in dict.fromkeys(n.args) if a in {m.name for m in joint.nodes}]
    with_module = {p["mods"][r["m"]] for r in p["nodes"] if "m" in r}
    assert {"transformer.h.0.attn", "transformer.h.1.mlp", "transformer.ln_f"} <= with_module


class _Scripts(HTMLParser):
    def __init__(self):
        super().__init__()
        self.scripts: list[tuple[dict, str]] = []
        self._attrs: dict | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "script":
            self._attrs = dict(attrs)
            self.scripts.append((self._attrs, ""))

    def handle_data(self, data):
        if self._attrs is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)

    def handle_endtag(self, tag):
        if tag == "script":
            self._attrs = None


def test_user_text_cannot_leave_the_json_script():
    g = Graph(
        "",
        (
            node(EVIL, "placeholder", module=EVIL),
            node("y", target=EVIL, args=(EVIL,), source=f"{EVIL}.py:3", code=EVIL, module=EVIL),
        ),
    )
    block = GraphBlock(EVIL, g)
    page = graph_static_html(block)
    assert "</script><b" not in page
    parser = _Scripts()
    parser.feed(page)
    [(attrs, text)] = parser.scripts
    assert attrs == {"type": "application/json", "class": "pt2x-graph-data"}
    assert "<" not in text and "\u2028" not in text  # nothing that ends the element or a JS line
    data = json.loads(text)
    assert data == graph_payload(g, EVIL)
    assert data["nodes"][0]["n"] == EVIL and data["srcs"] == [[f"{EVIL}.py:3", EVIL]]
    assert page.startswith("<h3>&lt;/script&gt;&lt;b x=&quot;1&quot;&gt;&amp;amp;")


def test_static_page_inlines_the_component_once():
    if not BUNDLE.exists():
        pytest.fail(f"{BUNDLE} is not built (make install builds it)")
    report = compiler.load_trace(FIXTURES / "traces" / "cpu-torch213-hf-gpt2-train.log.gz")
    page = explorer.html(report)
    parser = _Scripts()
    parser.feed(page)
    kinds = [a.get("class") or a.get("id") or a.get("type", "") for a, _t in parser.scripts]
    graphs = sum(
        isinstance(b, GraphBlock)
        for c in explorer.model._view.build_view(report).compiles
        for s in c.stages
        for b in s.blocks
    )
    assert (
        kinds.count("module") == 1 and kinds.count("pt2x-graph-data") == graphs == 8
    )  # [1/0] and [3/0]: capture, joint, forward, backward
    assert kinds.count("pt2x-lines") == 1  # the compiles' metrics, each line once (_pagelines.py)
    [bundle] = [t for a, t in parser.scripts if a.get("type") == "module"]
    assert bundle == BUNDLE.read_text(encoding="utf-8")
    assert with_graph_script("<html><body>no graph</body></html>") == "<html><body>no graph</body></html>"

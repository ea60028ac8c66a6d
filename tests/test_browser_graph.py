"""The graph view in a real browser (tests/_lab.py: JupyterLab + Debian's Chromium): a
2-layer ``nn.TransformerEncoder`` training step recorded with ``backend="aot_eager"``, its
explorer opened on the autograd stage, the joint graph (308 nodes) checked in the notebook
widget, then the same graph on the static page the notebook wrote, opened from file://.

The node row shown on a click is checked against torch's own text of the joint graph
(tests/_torch_trace.py's handler, kept by the notebook in joint.txt), the rest against the
recorded report (enc.json). Screenshots: test-artifacts/browser/test_graph_*.png.
Skipped without /usr/bin/chromium, unless PT2X_REQUIRE_BROWSER=1 (CI).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _lab import ARTIFACTS, notebook, run_notebook, serve

import compiler

pytestmark = pytest.mark.browser

CELLS_DONE_S = 240
TESTS = Path(__file__).resolve().parent
RECORD_CELL = f"""\
import sys
sys.path.insert(0, {str(TESTS)!r})
import torch, compiler, explorer
from _torch_trace import RawTrace

def scale(y):
    return torch.tanh(y) * 2  # USER-LINE

torch.manual_seed(0)
layer = torch.nn.TransformerEncoderLayer(32, 2, 64, dropout=0.0, batch_first=True)
model = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
step = torch.compile(model, backend="aot_eager")
with RawTrace() as raw, compiler.recording() as rec:
    step(torch.randn(2, 8, 32)).sum().backward()
    torch.compile(scale, backend="aot_eager")(torch.randn(4))  # [1/0]: a graph of this cell's lines
open("joint.txt", "w").write(next(p for m, p in raw.records if "aot_joint_graph" in m))
open("scale.txt", "w").write([p for m, p in raw.records if "dynamo_output_graph" in m][-1])
rec.report.to_json("enc.json")
explorer.save_html(rec.report, "enc.html")
app = explorer.Explorer(rec.report)
app.select("0/0", "autograd")
app"""
# the joint graph's first view, module boxes in execution order (forward, then the backward
# runs): (path, second run or a run of the scope's own ops)
FIRST_BOXES = [
    "layers.0.self_attn ops",  # the attention's own ops, beside its out_proj
    "layers.0.self_attn.out_proj",
    "layers.0 ops",  # the layer's own ops: residual add, dropout
    "layers.0.norm1",
    "layers.0 ops (run 2)",
    "layers.0.linear1",
    "layers.0.linear2",
    "layers.0.norm2",
    "layers ops",
    "layers.1.self_attn ops",
    "layers.1.self_attn.out_proj",
    "layers.1 ops",
    "layers.1.norm1",
    "layers.1 ops (run 2)",
    "layers.1.linear1",
    "layers.1 ops (run 3)",
    "layers.1.linear2",
    "layers.1.norm2",
    "layers.1.norm2 (backward)",  # the backward begins, named as torch traced it: layer 1's,
    "layers.1 ops (backward)",
    "layers.1.norm1 (backward)",  # with the gradients of its weights, which only the output reads
    "layers ops (backward)",  # then layer 0's
    "layers.0.norm2 (backward)",
    "layers.0 ops (backward)",
    "(top level) ops (backward)",  # the last of the backward, which the recording gives no module
]
USER_LINE = next(i for i, ln in enumerate(RECORD_CELL.splitlines(), 1) if "USER-LINE" in ln)
HIDDEN = "mm_14"  # a backward node of the first view's "(top level) ops (backward)" box


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    nb = notebook(RECORD_CELL)
    with serve(tmp_path_factory.mktemp("lab"), {"graph.ipynb": nb}) as lab:
        with run_notebook(lab, "graph.ipynb", "test_graph") as s:
            view = joint_view(s.page)
            view.locator(".pt2x-gv-box").first.wait_for(timeout=CELLS_DONE_S * 1000)
            yield lab, s


def joint_view(page):
    """The first graph of the autograd stage shown: the joint graph."""
    return page.locator(".pt2x-gv:visible").first


def rect(locator) -> dict:
    return locator.evaluate(
        "e => { const r = e.getBoundingClientRect(); return {x: r.x, y: r.y, w: r.width, h: r.height}; }"
    )


def inside(inner: dict, outer: dict, slack: float = 1.0) -> bool:
    return (
        inner["x"] >= outer["x"] - slack
        and inner["y"] >= outer["y"] - slack
        and inner["x"] + inner["w"] <= outer["x"] + outer["w"] + slack
        and inner["y"] + inner["h"] <= outer["y"] + outer["h"] + slack
    )


def boxes_in_order(view) -> list[tuple[str, int, float]]:
    """(path, execution position, top y on screen) of each module box, in execution order."""
    rows = view.locator(".pt2x-gv-box").evaluate_all(
        "es => es.map(e => [e.dataset.label, +e.dataset.order, e.getBoundingClientRect().y])"
    )
    return sorted(rows, key=lambda r: r[1])


def check_fit_and_zoom(page, view, shot) -> None:
    from playwright.sync_api import expect

    stage = view.locator(".pt2x-gv-stage")
    stage.scroll_into_view_if_needed()
    drawn = view.locator(".pt2x-gv-viewport")
    # it opens where the ops' labels read (the whole graph only where that is so); "fit"
    # shows all of it, its modules named by their far-view labels
    opened = float(view.get_attribute("data-scale"))
    assert opened >= 0.7
    view.get_by_role("button", name="fit", exact=True).click()
    if opened > 0.7:  # the whole graph fitted readably on first view
        expect(view).to_have_attribute("data-scale", f"{opened:.4f}")
    else:
        expect(view).not_to_have_attribute("data-scale", f"{opened:.4f}")
    assert inside(rect(drawn), rect(stage)), (rect(drawn), rect(stage))
    k = float(view.get_attribute("data-scale"))
    assert 0.05 < k < 1
    shot("fit")
    view.get_by_role("button", name="+", exact=True).click()
    expect(view).not_to_have_attribute("data-scale", f"{k:.4f}")
    assert abs(float(view.get_attribute("data-scale")) - k * 1.4) < 2e-4
    assert not inside(rect(drawn), rect(stage))  # zoomed in: larger than the box
    view.get_by_role("button", name="fit", exact=True).click()
    expect(view).to_have_attribute("data-scale", f"{k:.4f}")
    # the graph never widens what holds it: nothing scrolls sideways
    assert view.evaluate("e => e.scrollWidth <= e.clientWidth + 1")


def check_boxes(view, shot) -> None:
    rows = boxes_in_order(view)
    assert [p for p, _o, _y in rows] == FIRST_BOXES
    ys = {p: y for p, _o, y in reversed(rows)}  # the first run of each path
    # the data flows down: layer 0's modules, layer 1's, then the backward run
    order = ["layers.0.self_attn ops", "layers.0.linear1", "layers.1.self_attn ops", "layers.1.linear2"]
    assert [ys[p] for p in order] == sorted(ys[p] for p in order)
    backward = next(y for p, _o, y in rows if p == "layers ops (backward)")
    assert backward > ys["layers.1.linear2"]
    # a click on a box expands it in place; a click on its cluster's label collapses it
    before = int(view.get_attribute("data-leaves"))
    view.locator('.pt2x-gv-box[data-label="layers.1 ops (backward)"]').click()
    cluster = view.locator('.pt2x-gv-cluster[data-label="layers.1 ops (backward)"]')
    cluster.wait_for()
    assert int(view.get_attribute("data-leaves")) > before
    shot("expanded")
    # below 0.7× its header is a module label of a readable size (the header's own text hidden)
    label = view.locator(
        ".pt2x-gv-label:not([display])", has_text=re.compile(r"^layers\.1 ops \(backward\)$")
    )
    (label if float(view.get_attribute("data-scale")) < 0.7 else cluster.locator("text").first).click()
    assert cluster.count() == 0 and int(view.get_attribute("data-leaves")) == before


def check_search(view, shot) -> None:
    from playwright.sync_api import expect

    hidden = view.locator(f'.pt2x-gv-node[data-name="{HIDDEN}"]')
    assert hidden.count() == 0  # inside a collapsed box
    view.locator(".pt2x-gv-search").fill(HIDDEN)
    expect(view.locator(".pt2x-gv-hits")).to_have_text("1 of 1")
    expect(hidden).to_have_class(re.compile(r"\bpt2x-gv-selected\b"))
    node, stage = rect(hidden), rect(view.locator(".pt2x-gv-stage"))
    cx, cy = node["x"] + node["w"] / 2, node["y"] + node["h"] / 2
    assert abs(cx - (stage["x"] + stage["w"] / 2)) < 2 and abs(cy - (stage["y"] + stage["h"] / 2)) < 2
    expect(view.locator(".pt2x-gv-info")).to_contain_text(HIDDEN)
    shot("search")


def row_of(view, name: str) -> dict[str, str]:
    """Search ``name``, click its node, read the row shown beside the graph."""
    view.locator(".pt2x-gv-search").fill(name)
    view.locator(f'.pt2x-gv-node[data-name="{name}"]').click()
    cells = view.locator(".pt2x-gv-row tr").evaluate_all(
        "rs => rs.map(r => [r.cells[0].textContent, r.cells[1].textContent])"
    )
    return dict(cells)


def torch_node(text: str, name: str) -> tuple[str, str, str]:
    """(dtype, shape, target) of ``name`` as torch printed it in a graph's readable code."""
    m = re.search(rf"^\s+{name}: \"(\w+)\[([^\]]*)\]\[[^\]]*\]cpu\" = ([\w.]+)\(", text, re.M)
    assert m, f"{name} not in torch's graph"
    return m.group(1), m.group(2), m.group(3)


def check_row(view, joint_text: str, report, shot) -> None:
    """Click a node of the joint graph: its row, as torch printed the node and as the report
    recorded its module."""
    name = "addmm_2"
    row = row_of(view, name)
    dtype, shape, target = torch_node(joint_text, name)
    assert (row["name"], row["op"], row["target"], row["dtype/shape"]) == (
        name,
        "call_function",
        target,
        f"{dtype}[{shape}]",
    )
    rec = next(n for n in report.compile("0/0").stages.autograd.joint.nodes if n.name == name)
    assert row["module"] == rec.module + (" (inferred)" if rec.module_inferred else "")
    shot("row")


def check_source_row(view, scale_text: str, shot) -> None:
    """A node made by a line of the notebook's cell: its source named as IPython names the
    cell (the notebook's first cell ran as In[1])."""
    row = row_of(view, "tanh")
    assert row["target"] == torch_node(scale_text, "tanh")[2] == "torch.tanh"
    assert row["source"] == f"Cell In[1], line {USER_LINE}"
    assert row["code"] == "return torch.tanh(y) * 2  # USER-LINE"
    shot("source")


@pytest.mark.slow
def test_graph_fits_the_box_and_zooms(session):
    lab, s = session
    check_fit_and_zoom(s.page, joint_view(s.page), lambda w: s.shot(f"zoom-{w}", joint_view(s.page)))


@pytest.mark.slow
def test_graph_collapses_joint_graph_into_module_boxes_in_order(session):
    lab, s = session
    check_boxes(joint_view(s.page), lambda w: s.shot(f"boxes-{w}", joint_view(s.page)))


@pytest.mark.slow
def test_graph_search_expands_highlights_and_centres(session):
    lab, s = session
    check_search(joint_view(s.page), lambda w: s.shot(w, joint_view(s.page)))


@pytest.mark.slow
def test_graph_click_shows_the_node_row(session):
    lab, s = session
    report = compiler.load(lab.root / "enc.json")
    joint = (lab.root / "joint.txt").read_text()
    check_row(joint_view(s.page), joint, report, lambda w: s.shot(w, joint_view(s.page)))
    # compile [1/0]'s Dynamo graph: the compile menu, then the stage tab
    s.page.locator(".widget-dropdown select").first.select_option(label="[1/0] scale — ok")
    s.page.locator(".widget-tab .lm-TabBar-tab", has_text=re.compile(r"^capture$")).first.click()
    view = s.page.locator(".pt2x-gv:visible").first
    view.locator(".pt2x-gv-node").first.wait_for()
    check_source_row(view, (lab.root / "scale.txt").read_text(), lambda w: s.shot(w, view))
    assert not s.errors, f"errors on the page: {s.errors}"


@pytest.mark.slow
def test_graph_on_the_static_page(session):
    """The page the notebook wrote, from file://: the same component, the same checks."""
    lab, s = session
    page = s.page.context.browser.new_page(viewport=s.page.viewport_size)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto((lab.root / "enc.html").as_uri())
        page.click("[data-tab=tab-compiles]")
        autograd = page.locator(
            ".pt2x-compile[data-id='0/0'] > details",
            has=page.locator("summary", has_text=re.compile("^autograd$")),
        )
        autograd.evaluate("d => d.open = true")
        autograd.locator(".pt2x-graph").first.scroll_into_view_if_needed()  # mounted when seen
        view = autograd.locator(".pt2x-gv").first
        view.locator(".pt2x-gv-box").first.wait_for()

        def shot(what: str) -> None:
            view.screenshot(path=str(ARTIFACTS / f"test_graph_static-{what}.png"))

        check_fit_and_zoom(page, view, shot)
        check_boxes(view, shot)
        check_search(view, shot)
        check_row(view, (lab.root / "joint.txt").read_text(), compiler.load(lab.root / "enc.json"), shot)
        page.select_option("#pt2x-compile", "1/0")
        page.locator(".pt2x-compile[data-id='1/0'] .pt2x-graph").first.scroll_into_view_if_needed()
        scale = page.locator(".pt2x-compile[data-id='1/0'] .pt2x-gv").first
        scale.locator(".pt2x-gv-node").first.wait_for()
        check_source_row(
            scale,
            (lab.root / "scale.txt").read_text(),
            lambda w: scale.screenshot(path=str(ARTIFACTS / f"test_graph_static-{w}.png")),
        )
        assert not errors, f"errors on the page: {errors}"
    finally:
        page.close()

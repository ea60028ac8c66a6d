"""The view model and its lowerings: exact text of the breaks / recompiles views, the static
HTML (escaping, self-containment), the widget app's structure."""

from __future__ import annotations

import dataclasses
import re

import pytest
import torch
from _e2e import marker_line

import compiler
import explorer
from compiler._report import GraphBreak, Recompile, Report, StackFrame
from explorer._html import page_html
from explorer._textview import breaks_text, recompiles_text, summary_lines
from explorer._view import build_view
from explorer._widgets import Explorer

HERE = __file__


def branchy(x):
    y = x.cos()
    if y.sum() > 0:  # VIEW-BREAK
        y = y + 1
    return y * 2


@pytest.fixture(scope="module")
def recorded() -> Report:
    torch._dynamo.reset()
    with compiler.recording() as rec:
        f = torch.compile(branchy, backend="eager")
        f(torch.zeros(4))
        f(torch.zeros(6))  # new shape: recompiles both frames
    torch._dynamo.reset()
    return rec.report


def _src(line: int) -> str:
    with open(HERE) as f:
        return f.read().splitlines()[line - 1]


def test_breaks_view_text(recorded):
    line = marker_line(HERE, "VIEW-BREAK")
    b = recorded.graph_breaks[0]
    rel = explorer._summary.where(HERE, line)
    # pytest's and the interpreter's frames are left out: only this file's
    user_frames = [f for f in b.user_stack if f.filename == HERE]
    assert [f.name for f in user_frames] == ["recorded", "branchy"]
    context = "\n".join(
        f"  {'>' if n == line else ' '} {n:>{len(str(line + 3))}} | {_src(n)}"
        for n in range(line - 3, line + 4)
    )
    expected = (
        f"{rel}  Data-dependent branching  (hit 2×: 0/0, 0/1)\n"
        f"{context}\n"
        f"  why: {' '.join(b.explanation.split())}\n"
        + "".join(f"  hint: {h}\n" for h in b.hints)
        + f"  stack: {' -> '.join(f'{explorer._summary.where(f.filename, f.line)} in {f.name}' for f in user_frames)}\n"
        "  graph before: [0/0], graph after: [1/0]\n"
    )
    assert breaks_text(build_view(recorded)) == expected
    assert "Use `torch.cond` to express dynamic control flow." in b.hints


def test_recompiles_view_text(recorded):
    first = branchy.__code__.co_firstlineno
    rel = explorer._summary.where(HERE, first)
    brk = explorer._summary.where(HERE, marker_line(HERE, "VIEW-BREAK"))
    guard0 = recorded.recompiles[0].failing_guard
    guard1 = recorded.recompiles[1].failing_guard
    assert guard0.startswith("TENSOR_MATCH: check_tensor(L['x'], Tensor")
    assert guard1.startswith("TENSOR_MATCH: check_tensor(L['y'], Tensor")
    assert recompiles_text(build_view(recorded)) == (
        f"branchy  {rel}\n"
        "  [0/0] ok: first compile\n"
        "  [0/1] ok: 0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6\n"
        f"branchy (resumed after line {brk.rsplit(':', 1)[1]})  {brk}\n"
        "  [1/0] ok: first compile\n"
        "  [1/1] ok: 1/0: tensor 'y' size mismatch at index 0. expected 4, actual 6\n"
        "\n"
        "[0/1] branchy: guards of [0/0] failed\n"
        "  reason: 0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6\n"
        f"  failing guard: {guard0}\n"
        "\n"
        f"[1/1] branchy (resumed after line {brk.rsplit(':', 1)[1]}): guards of [1/0] failed\n"
        "  reason: 1/0: tensor 'y' size mismatch at index 0. expected 4, actual 6\n"
        f"  failing guard: {guard1}\n"
    )


def test_summary_names_every_break_and_recompile(recorded):
    lines = summary_lines(build_view(recorded, "t"))
    brk = explorer._summary.where(HERE, marker_line(HERE, "VIEW-BREAK"))
    assert lines[1] == recorded_headline(recorded)
    assert f"break: {brk}  Data-dependent branching  (×2)" in lines
    assert "recompile: [0/1] branchy: 0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6" in lines


def recorded_headline(r: Report) -> str:
    return (
        f"2 frames · 4 compiles · 1 graph-break site (2 hits) · 2 recompiles · 0 kernels · "
        f"compile time {explorer._summary._secs(r.compile_time_s)}"
    )


def test_failing_guard_is_highlighted_in_the_guard_list(recorded):
    view = build_view(recorded)
    r0 = view.recompiles[0]
    failing = [g.text for g in r0.guards if g.failing]
    assert len(failing) == 1 and failing[0].strip().endswith(r0.failing_guard)
    html = page_html(view)
    assert '<div class="fail">' in html and "L[&#x27;x&#x27;]" in html


def test_static_html_is_self_contained_and_shows_the_same_facts(recorded, tmp_path):
    path = recorded.save_html(tmp_path / "r.html", title="views test")
    text = open(path, encoding="utf-8").read()
    brk = explorer._summary.where(HERE, marker_line(HERE, "VIEW-BREAK"))
    assert brk in text and "Data-dependent branching" in text
    assert "0/0: tensor &#x27;x&#x27; size mismatch at index 0. expected 4, actual 6" in text
    # offline: no external resources
    assert not re.search(r'(src|href)="(https?:)?//', text)
    assert text.count("<script>") == 1  # ours, for tabs


def _hostile_report() -> Report:
    evil = "<script>alert('x')</script>"
    return Report(
        torch_version="2.13.0",
        device="cpu",
        graph_breaks=(
            GraphBreak(
                compile_id="0/0",
                type=evil,
                reason=evil,
                filename=f"/tmp/{evil}.py",
                line=3,
                explanation=evil,
                hints=(evil,),
                user_stack=(StackFrame(f"/tmp/{evil}.py", 3, evil, evil),),
                compile_ids=("0/0",),
            ),
        ),
        recompiles=(Recompile("0/1", (evil,), "0/0", evil, f"| +- {evil}"),),
        error=evil,
    )


def test_user_strings_are_escaped_everywhere():
    text = page_html(build_view(_hostile_report(), title="<b>title</b>"))
    assert "<script>alert" not in text
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in text
    assert "<b>title</b>" not in text
    app = Explorer(_hostile_report())
    for html in [
        app.header.value,
        *(c.value for c in _leaves(app.recompiles) if hasattr(c, "value")),
        *(c.value for c in _leaves(app.breaks) if hasattr(c, "value")),
    ]:
        assert "<script>alert" not in str(html)


def test_widget_app_structure(recorded):
    app = Explorer(recorded, title="w")
    assert [app.tabs.get_title(i) for i in range(3)] == ["Graph breaks (1)", "Recompiles (2)", "Compiles (4)"]
    assert [label for label, _ in app.selector.options] == [
        "[0/0] branchy — ok",
        f"[1/0] branchy (resumed after line {marker_line(HERE, 'VIEW-BREAK')}) — ok",
        "[0/1] branchy — ok",
        f"[1/1] branchy (resumed after line {marker_line(HERE, 'VIEW-BREAK')}) — ok",
    ]
    buttons = [c for c in _leaves(app.breaks) if type(c).__name__ == "Button"]
    assert [b.description for b in buttons] == ["graph before the break [0/0]", "code after it [1/0]"]
    buttons[1].click()
    assert (app.tabs.selected_index, app.selector.value, app.stage_tabs.selected_index) == (2, 1, 0)
    app.select("0/1", "capture")
    shown = app.stage_tabs.children[0]
    html = "".join(c.value for c in _leaves(shown))
    assert "Dynamo graph" in html and "l_x_" in html.lower()
    app.select("0/1", "codegen")  # eager backend: no codegen stage, a note says why
    note = "".join(c.value for c in _leaves(app.stage_tabs.children[4]))
    assert "not run by this backend" in note


def _leaves(widget):
    kids = getattr(widget, "children", None)
    if kids is None:
        yield widget
        return
    for k in kids:
        yield from _leaves(k)


def test_reports_display_themselves_after_load_ext():
    ip = pytest.importorskip("IPython.testing.globalipapp").get_ipython()
    ip.run_line_magic("load_ext", "explorer")
    fmt = ip.display_formatter.ipython_display_formatter
    assert fmt.lookup(dataclasses.replace(_hostile_report())) is not None


def test_gpu_report_views_show_triton_kernels_and_fusion_colours():
    from pathlib import Path

    r = compiler.load(Path(__file__).parent / "fixtures/reports/h100-torch211-gpu-block.json.gz")
    view = build_view(r)
    c0 = view.compiles[0]
    fuse = dict((sv.stage, sv) for sv in c0.stages)["fuse"]
    (table,) = [
        b for b in fuse.blocks if getattr(b, "columns", None) == ("role", "kernel", "nodes", "colour")
    ]
    assert table.rows[0][:3] == ("forward", "triton_per_fused_native_layer_norm_0", "layer_norm")
    fw, bw = [b for b in fuse.blocks if getattr(b, "colors", None)]
    assert (fw.title, bw.title) == ("forward graph coloured by kernel", "backward graph coloured by kernel")
    assert fw.colors["layer_norm"] == table.rows[0][3]
    # torch's comments name Dynamo-graph nodes for forward kernels, backward post-grad nodes
    # for backward kernels: each role colours its own graph
    assert fw.graph is r.compiles[0].stages.capture.graph
    assert bw.graph is r.compiles[0].stages.decompose.post_grad[1].graph
    app = Explorer(r)
    app.select("0/0", "codegen")
    html = "".join(c.value for c in _leaves(app.stage_tabs.children[4]))
    assert "forward kernel triton_per_fused_native_layer_norm_0 (triton)" in html
    assert "triton_heuristics" in html and "only_config" in html


def test_static_page_of_a_collapsed_graph_carries_its_modules_expanded():
    from pathlib import Path

    r = compiler.load_trace(Path(__file__).parent / "fixtures/traces/h100-torch211-gpt2.log.gz")
    text = explorer.html(r)
    # GPT-2's AOT / post-grad graphs are above the threshold: collapsed by nn.Module, and the
    # static page carries pre-drawn expansions (the widget lays them out on demand)
    assert "collapsed by nn.Module into" in text
    assert re.search(r"<summary>expand transformer\.h\.[01](\.attn)? \(\d+ nodes\)</summary>", text)
    assert len(text) < 5_000_000

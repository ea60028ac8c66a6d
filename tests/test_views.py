"""The view model and its lowerings: exact text of the breaks / recompiles views, the static
HTML (escaping, self-containment), the widget app's structure."""

from __future__ import annotations

import collections
import dataclasses
import io
import json
import math
import re

import pytest
import torch
from _e2e import marker_line

import compiler
import explorer
from compiler.model._report import Compile, GraphBreak, Recompile, Report, StackFrame
from compiler.types import CacheLookup
from explorer.model._guards import KINDS, guard_tables
from explorer.model._view import build_view
from explorer.pages._page import page_html
from explorer.pages._widgets import Explorer
from explorer.views._breaks import breaks_html, breaks_text
from explorer.views._recompiles import recompiles_text

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
    rel = explorer.model._summary.where(HERE, line)
    # pytest's and the interpreter's frames are left out: only this file's
    user_frames = [f for f in b.user_stack if f.filename == HERE]
    assert [f.name for f in user_frames] == ["recorded", "branchy"]
    context = "\n".join(
        f"  {'>' if n == line else ' '} {n:>{len(str(line + 3))}} | {_src(n)}"
        for n in range(line - 3, line + 4)
    )
    expected = (
        f"{rel}  Data-dependent branching  GB0170  (hit 2×; logged in [0/0], [0/1])\n"
        f"{context}\n"
        f"  why: {' '.join(b.explanation.split())}\n"
        + "".join(f"  hint: {h}\n" for h in b.hints)
        + f"  stack: {' -> '.join(f'{explorer.model._summary.where(f.filename, f.line)} in {f.name}' for f in user_frames)}\n"
        "  graph before: [0/0], graph after: [1/0]\n"
    )
    assert breaks_text(build_view(recorded)) == expected
    assert "Use `torch.cond` to express dynamic control flow." in b.hints


def test_recompiles_view_text(recorded):
    first = branchy.__code__.co_firstlineno
    rel = explorer.model._summary.where(HERE, first)
    brk = explorer.model._summary.where(HERE, marker_line(HERE, "VIEW-BREAK"))
    r0, r1 = recorded.recompiles
    guard0, guard1 = r0.failing_guard, r1.failing_guard
    assert guard0.startswith("TENSOR_MATCH: check_tensor(L['x'], Tensor")
    assert guard1.startswith("TENSOR_MATCH: check_tensor(L['y'], Tensor")
    # where each guard came from: the user line that read the input (y = x.cos(); y = y + 1)
    from0, from1 = (r.failures[0].user_stack[-1] for r in (r0, r1))
    assert (from0.line, from0.name) == (first + 1, "branchy")
    assert (from1.line, from1.name) == (first + 3, f"torch_dynamo_resume_in_branchy_at_{first + 2}")
    # the second shape made the size dynamic: one symbol per recompile
    ((s0,), (s1,)) = r0.dynamic, r1.dynamic
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
        f"  guard from: {explorer.model._summary.where(from0.filename, from0.line)} in branchy\n"
        f"  compiled with dynamic x.size()[0] ({s0}); later calls reuse it\n"
        "\n"
        f"[1/1] branchy (resumed after line {brk.rsplit(':', 1)[1]}): guards of [1/0] failed\n"
        "  reason: 1/0: tensor 'y' size mismatch at index 0. expected 4, actual 6\n"
        f"  failing guard: {guard1}\n"
        f"  guard from: {explorer.model._summary.where(from1.filename, from1.line)} in {from1.name}\n"
        f"  compiled with dynamic y.size()[0] ({s1}); later calls reuse it\n"
        "\n"
        "Dynamic dimensions:\n"
        f"  [0/1] {s0} = x.size()[0] in [2, int_oo] (seen 6)\n"
        f"  [1/1] {s1} = y.size()[0] in [2, int_oo] (seen 6)\n"
    )


def test_summary_text_is_one_wording_in_every_lowering(recorded):
    """The summary's exact text, and the same break / recompile lines in the widget header and
    the static page (one view model, three lowerings)."""
    brk = explorer.model._summary.where(HERE, marker_line(HERE, "VIEW-BREAK"))
    first = explorer.model._summary.where(HERE, branchy.__code__.co_firstlineno)
    b = recorded.graph_breaks[0]
    head = explorer.text(recorded, "summary", title="t").split("\nFrames\n")[0]
    # the compile time's heads, their seconds the run's own: said apart
    heads = re.search(r"\nCompile time by head\n(?:  .*\n)+", head)
    assert heads is not None and " over 4 compiles: Dynamo tracing " in heads.group(0), head
    head = head.replace(heads.group(0), "\n" if head.endswith(heads.group(0)) else "")
    hint = f"      hint: {b.hints[0]}"  # one line, whole: the text form does not wrap
    assert head == (
        f"PT2 Explorer — t  (torch {torch.__version__} · cpu)\n"
        f"{recorded_headline(recorded)}\n"
        "\n"
        "Graph breaks\n"
        f"  {brk}  Data-dependent branching  (hit 2×; logged in [0/0], [0/1])\n"
        "      if y.sum() > 0:  # VIEW-BREAK\n"
        f"{hint}\n"
        "\n"
        "Recompiles\n"
        "  [0/1] branchy: 0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6\n"
        f"  [1/1] branchy (resumed after line {brk.rsplit(':', 1)[1]}): 1/0: tensor 'y' size mismatch at index 0. expected 4, actual 6\n"
    )
    assert f"  0: branchy  {first}  2 compiles" in explorer.text(recorded, title="t")
    line = f"{brk}  Data-dependent branching  (hit 2×; logged in [0/0], [0/1])"
    view = build_view(recorded, "t")
    assert view.summary.break_lines == (line,)
    assert f'<li class="brk">{line}</li>' in Explorer(recorded).header.value
    assert f'<li class="brk">{line}</li>' in page_html(view)


def test_summary_table_is_laid_out_as_rich_lays_it_out():
    """The summary's table of compiles, laid out without rich where it fits as it is
    (``_plaintable.py``: rich took seconds for a thousand compiles), is rich's own layout to
    the character, wide characters included; a row only rich can lay out (an emoji's
    ``:name:``, a markup tag) or a table too wide for the width goes to rich."""
    from rich.console import Console

    from explorer.base._types import CompileRow, Summary
    from explorer.lower._plaintable import plain_cells, plain_table
    from explorer.lower._terminal import UNWRAPPED
    from explorer.views._summary import _COLUMNS, _min_width, _plain, renderable

    rows = (
        CompileRow(
            "1:2/0", "forward (resumed after line 13)", "ok", "CADFG", "2 triton", "4.20 s", "-/-/-/-/-"
        ),
        CompileRow("0/1", "前向 [x] ✓", "FAILED in fuse", "CA···", "", "0.01 s", "0.01/-/-/-/-"),
    )
    emoji = CompileRow("0/2", "f :thumbs_up: g", "ok", "C····", "", "0.01 s", "-/-/-/-/-")
    tag = CompileRow("0/3", "f", "ok", "[bold]C[/bold]····", "", "0.01 s", "-/-/-/-/-")
    assert [plain_cells(c) is None for c in (*rows, emoji, tag)] == [False, False, True, True]
    fits = plain_table(_COLUMNS, [plain_cells(c) for c in rows], [_min_width(c) for c in _COLUMNS], UNWRAPPED)
    assert (
        fits is not None and fits[2].startswith("[0/1]    前向 [x] ✓") and fits[2].endswith("  0.01/-/-/-/-")
    )
    for compiles in (rows, (*rows, emoji), (*rows, tag)):
        s = Summary("t", "m", "h", compiles=compiles)
        for width in (UNWRAPPED, 60, 30):
            console = Console(
                file=io.StringIO(), width=width, soft_wrap=width == UNWRAPPED, color_system=None
            )
            with console.capture() as cap:
                console.print(renderable(s))
            assert _plain(console, s) == "".join(ln.rstrip() + "\n" for ln in cap.get().splitlines())


def recorded_headline(r: Report) -> str:
    return (
        f"2 frames · 4 compiles · 1 graph-break site (2 hits) · 2 recompiles · 0 kernels · "
        f"compile time {explorer.model._summary.secs(r.compile_time_s)}"
    )


def test_failing_guard_is_highlighted_in_the_guard_list(recorded):
    view = build_view(recorded)
    r0 = view.recompiles[0]
    failing = [g.text for g in r0.guards if g.failing]
    assert len(failing) == 1 and failing[0].strip().endswith(r0.failing_guard)
    html = page_html(view)
    assert '<div class="fail">' in html and "L[&#x27;x&#x27;]" in html


def test_static_html_is_self_contained_and_shows_the_same_facts(recorded, tmp_path):
    path = explorer.save_html(recorded, tmp_path / "r.html", title="views test")
    text = open(path, encoding="utf-8").read()
    brk = explorer.model._summary.where(HERE, marker_line(HERE, "VIEW-BREAK"))
    assert brk in text and "Data-dependent branching" in text
    assert "0/0: tensor &#x27;x&#x27; size mismatch at index 0. expected 4, actual 6" in text
    # offline: no external resources
    assert not re.search(r'(src|href)="(https?:)?//', text)
    # ours, for tabs; highlight.js, which highlights each code block when first shown (the
    # page ships code as text, marked with its language)
    lazy = explorer.lower._html.browser_highlighting()
    assert text.count("<script>") == 1 + lazy
    assert ('<pre data-lang="python">' in text) == lazy and ("<pre><span></span>" in text) != lazy


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


def test_shared_lines_of_cache_keys_and_metrics_are_held_once_and_inert():
    """The page holds each distinct line of the compiles' cache keys and metrics once, in a
    JSON table no line can end early, and each block the runs of its lines in that table
    (the page's script puts the text together: tests/test_browser_report.py)."""
    evil = ("</script><img src=x onerror=alert(1)>", "<!--", "a\u2028b & c")
    keys = (
        CacheLookup("fx_graph", "miss", "k1", component_lines=("[h1] a: 1", *evil, "[h2] b: 2")),
        CacheLookup("aotautograd", "hit", "k2", component_lines=("[h1] a: 1", "[h3] c: 3", evil[0])),
        CacheLookup("autotune", "miss", "k3", component_lines=("",)),  # a text of nothing: no block
    )
    c = Compile("0/0", 0, "f", "/tmp/f.py", 1, "ok", caches=keys, metrics={"n": 3, "bad": evil[0]})
    text = page_html(build_view(Report(torch_version="2.13.0", device="cpu", compiles=(c,))))
    assert "<img" not in text and "</script><img" not in text and "<!--" not in text
    [table] = re.findall(r'<script type="application/json" id="pt2x-lines">(.*?)</script>', text)
    assert "<" not in table and "\u2028" not in table and "&" not in table
    assert json.loads(table) == [
        "[h1] a: 1",
        *evil,
        "[h2] b: 2",
        "[h3] c: 3",
        'bad: "</script><img src=x onerror=alert(1)>"',
        "n: 3",
    ]
    assert re.findall(
        r'<details data-lines="([^"]*)"><summary>([^<]*) <span class="meta">\((\d+) lines', text
    ) == [
        ("0-4", "fx_graph cache key components", "5"),
        ("0,5,1", "aotautograd cache key components", "3"),
        ("6-7", "compilation metrics", "2"),
    ]
    # every other lowering: the texts themselves
    assert (
        explorer.text(Report(torch_version="2.13.0", device="cpu", compiles=(c,)), "compiles").count(
            "    [h1] a: 1\n"
        )
        == 2
    )


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
    assert [b.description for b in buttons] == ["graph before [0/0]", "graph after [1/0]"]
    buttons[1].click()
    assert (app.tabs.selected_index, app.selector.value, app.stage_tabs.selected_index) == (2, 1, 0)
    app.select("0/1", "capture")
    shown = app.stage_tabs.children[0]
    # HTML widgets' markup, and the graph view's data (explorer/graph/_widget.py)
    html = "".join(c.data if type(c).__name__ == "GraphWidget" else c.value for c in _leaves(shown))
    assert "GraphWidget" in [type(c).__name__ for c in _leaves(shown)]
    assert "Dynamo graph" in html and "l_x_" in html.lower()
    app.select("0/1", "codegen")  # eager backend: no codegen stage, a note says why
    note = "".join(c.value for c in _leaves(app.stage_tabs.children[4]))
    assert "not run by this backend" in note


def test_explorer_opens_on_the_most_informative_tab(recorded):
    assert Explorer(recorded).tabs.selected_index == 0  # a graph break: the breaks tab
    calm = dataclasses.replace(recorded, graph_breaks=())
    assert Explorer(calm).tabs.selected_index == 1  # none, but recompiles
    # neither: the compiles tab, on the compile with the most kernels (here 1/0: 2, 0/0: 1)
    from pathlib import Path

    r = compiler.load_trace(Path(__file__).parent / "fixtures/traces/cpu-torch213-breaks.log.gz")
    kernels = tuple(k for k in r.kernels if k.compile_id == "1/0") + r.kernels_of("0/0")[:1]
    r = dataclasses.replace(r, graph_breaks=(), recompiles=(), kernels=kernels)
    app = Explorer(r)
    assert (app.tabs.selected_index, app.view.compiles[app.selector.value].compile_id) == (2, "1/0")
    assert len(r.kernels_of("1/0")) == 2 and len(r.kernels_of("0/0")) == 1
    page = page_html(build_view(r))
    assert '<section class="pt2x-tab" id="tab-compiles">' in page  # the static page too
    assert '<option value="1/0" selected>' in page


def test_one_stylesheet_per_explorer_every_rule_scoped(recorded):
    app = Explorer(recorded)
    app.select("0/1", "capture")
    html = [str(c.value) for c in _leaves(app) if hasattr(c, "value") and isinstance(c.value, str)]
    assert sum(h.count("<style>") for h in html) == 1
    css = re.sub(r"/\*.*?\*/", "", re.search(r"<style>(.*)</style>", app.header.value, re.S).group(1))
    selectors = [
        sel.strip() for rule in css.split("}") if "{" in rule for sel in rule.split("{")[0].split(",")
    ]
    assert len(selectors) > 50 and all(sel.startswith(".pt2x") for sel in selectors), [
        sel for sel in selectors if not sel.startswith(".pt2x")
    ]
    page = page_html(build_view(recorded))
    assert page.count("<style>") == 1 and "\npre {" not in page and "pre { line-height" not in page


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
    # the kernel's body, then its metadata as a table (triton_kernel_info's only_config)
    assert "triton_per_fused_native_layer_norm_0: metadata" in html
    assert "XBLOCK=1, num_warps=2, num_stages=1 (the only config)" in html


def test_static_page_of_a_big_graph_carries_its_nodes_for_the_browser():
    from pathlib import Path

    r = compiler.load_trace(Path(__file__).parent / "fixtures/traces/h100-torch211-gpt2.log.gz")
    text = explorer.html(r)
    # GPT-2's graphs are laid out, collapsed and expanded in the browser: the page carries each
    # graph's nodes with their module paths (explorer/graph/_data.py), and the component once
    post = r.compiles[0].stages.decompose.post_grad[0].graph
    assert text.count('<script type="application/json" class="pt2x-graph-data">') == 4
    assert text.count('<script type="module">') == 1
    assert f'"n":{len(post.nodes)},' in text and '"transformer.h.1.attn"' in text
    assert len(text) < 5_000_000


# ---- recompiles: where the guard came from, every entry torch tried, what became dynamic -----


def scaled(x, k):
    return x * k  # VIEW-SCALED


def test_recompile_names_every_failed_entry_and_when_its_dynamic_compile_failed():
    with compiler.recording() as rec:
        f = torch.compile(scaled, backend="eager")
        f(torch.zeros(4), 1)
        f(torch.zeros(6), 1)  # [0/1]: the size becomes dynamic
        f(torch.zeros(6), 2)  # [0/2]: k == 1 of [0/1] fails, then the size guard of [0/0]
        f(torch.zeros(7), 3)  # [0/2] compiled k dynamic too: reused
    r = rec.report
    r1, r2 = r.recompiles
    line = marker_line(HERE, "VIEW-SCALED")
    # the guard comes from the line that read the input (torch shortens the path in its comment)
    assert [(f.user_stack[-1].line, f.user_stack[-1].name) for f in r2.failures] == [
        (line, "scaled"),
        (line, "scaled"),
    ]
    ((sx,), (sx2, sk)) = r1.dynamic, r2.dynamic
    frame = explorer.model._summary.where

    def origin(failure) -> str:
        return frame(failure.user_stack[-1].filename, line)

    text = recompiles_text(build_view(r))
    blocks = text.split("\n\n")
    assert blocks[1].splitlines()[2:] == [
        f"  failing guard: {r1.failing_guard}",
        f"  guard from: {origin(r1.failures[0])} in scaled",
        f"  compiled with dynamic x.size()[0] ({sx}); its guards failed later in [0/2]",
    ]
    assert r2.failing_guard.startswith("EQUALS_MATCH: L['k'] == 1 ")
    assert r2.failures[1].guard.startswith("TENSOR_MATCH: check_tensor(L['x'], Tensor, ")
    assert blocks[2].splitlines()[-5:] == [
        f"  failing guard: {r2.failing_guard}",
        f"  guard from: {origin(r2.failures[0])} in scaled",
        "  also failed: [0/0] tensor 'x' size mismatch at index 0. expected 4, actual 6",
        f"    guard: {r2.failures[1].guard}",
        f"  compiled with dynamic x.size()[0] ({sx2}), k ({sk}); later calls reuse it",
    ]
    assert blocks[3] == (
        "Dynamic dimensions:\n"
        f"  [0/1] {sx} = x.size()[0] in [2, int_oo] (seen 6)\n"
        f"  [0/2] {sx2} = x.size()[0] in [2, int_oo] (seen 6)\n"
        f"  [0/2] {sk} = k in [-int_oo, int_oo] (seen 2)\n"
    )
    # the page and the widget say the same: the dynamic line bold, the section a table
    page = page_html(build_view(r))
    later = f'<div class="dynamic">compiled with dynamic x.size()[0] ({sx}); its guards failed later in [0/2]</div>'
    assert later in page
    assert "<div><b>also failed:</b> [0/0] tensor &#x27;x&#x27; size mismatch at index 0." in page
    assert "<h3>Dynamic dimensions</h3>" in page
    assert (
        f'<tr><td>[0/2]</td><td>{sk}</td><td>k</td><td>[-int_oo, int_oo]</td><td class="num">2</td><td></td></tr>'
        in page
    )
    widget = "".join(c.value for c in _leaves(Explorer(r).recompiles) if hasattr(c, "value"))
    assert later in widget and "<h3>Dynamic dimensions</h3>" in widget


def sized(x):
    y = x * 2
    if x.shape[0] == 8:  # VIEW-SPECIALIZED
        y = y + 1
    return y.sum()


def marked(x):
    return x.cos() + 1


def test_dynamic_dimensions_without_recompiles():
    with compiler.recording() as rec:
        torch.compile(sized, backend="eager", dynamic=True)(torch.randn(8, 3))
        x = torch.randn(5, 3)
        torch._dynamo.mark_dynamic(x, 0)
        torch.compile(marked, backend="eager")(x)
    r = rec.report
    (s0, s1), (s2,) = (tuple(s.symbol for s in c.stages.capture.symbols) for c in r.compiles)
    where = explorer.model._summary.where
    text = recompiles_text(build_view(r))
    assert text.endswith(
        "No recompiles.\n"
        "\n"
        "Dynamic dimensions:\n"
        f"  [0/0] {s0} = x.size()[0] in [2, int_oo] (seen 8)\n"
        f"  [0/0] {s1} = x.size()[1] in [2, int_oo] (seen 3)\n"
        f"  [0/0] specialized x.size()[0] = 8: range_refined_to_singleton at {where(HERE, marker_line(HERE, 'VIEW-SPECIALIZED'))}\n"
        f"  [1/0] {s2} = x.size()[0] in [2, int_oo] (seen 5)\n"
    ), text
    page = page_html(build_view(r))
    assert "<td>= 8: range_refined_to_singleton at " in page


# ---- breaks: library frames, the user's own line, the program's exception ------------------

_FAKE_LIB = """import logging

log = logging.getLogger("pt2x_fakelib")


def helper(x):
    log.warning("pt2x_fakelib: a library logs")
    return x + 1
"""


def calls_a_library(x, lib):
    y = x.sin()
    y = lib.helper(y)  # VIEW-LIB-CALL
    return y.cos()


@pytest.fixture
def fake_lib(tmp_path, monkeypatch):
    """A module installed the way libraries are (under a site-packages folder)."""
    import importlib

    site = tmp_path / "site-packages"
    site.mkdir()
    (site / "pt2x_fakelib.py").write_text(_FAKE_LIB)
    monkeypatch.syspath_prepend(str(site))
    return importlib.import_module("pt2x_fakelib")


def test_break_in_a_library_names_your_line_and_marks_library_frames(fake_lib):
    with pytest.raises(RuntimeError, match="stopped after the break"):
        with compiler.recording() as rec:
            torch.compile(calls_a_library, backend="eager")(torch.zeros(3), fake_lib)
            raise RuntimeError("stopped after the break")  # VIEW-RAISE
    r = rec.report
    (b,) = r.graph_breaks
    assert b.user_frame.line == marker_line(HERE, "VIEW-LIB-CALL")
    where = explorer.model._summary.where
    me = where(HERE, marker_line(HERE, "VIEW-RAISE") - 1)
    call = where(HERE, marker_line(HERE, "VIEW-LIB-CALL"))
    lib_lines = _FAKE_LIB.splitlines()
    assert breaks_text(build_view(r)) == (
        "The recorded program ended with: RuntimeError: stopped after the break\n"
        "\n"
        "pt2x_fakelib.py:7  logging.Logger method not supported for non-export cases  GB0291  (hit 1×; logged in [0/0], [1/0])\n"
        f"  your code: {call} in calls_a_library\n"
        + "".join(f"  {'>' if n == 7 else ' '} {n} | {lib_lines[n - 1]}\n" for n in range(4, 9))
        + f"  why: {b.explanation}\n"
        + "".join(f"  hint: {h}\n" for h in b.hints)
        + f"  stack: {me} in test_break_in_a_library_names_your_line_and_marks_library_frames"
        f" -> {call} in calls_a_library -> pt2x_fakelib.py:7 in helper [lib]\n"
        # helper captured nothing before its logger call: the graph that ends there is the caller's
        "  graph before: [0/0], graph after: [2/0]\n"
    )
    page = page_html(build_view(r))
    assert (
        '<section class="pt2x-tab" id="tab-breaks"><div class="error">The recorded program ended with: RuntimeError: stopped after the break</div>'
        in page
    )
    assert f'<span class="yours" title="your code">{call} in calls_a_library</span>' in page
    assert '<span class="lib" title="library code">pt2x_fakelib.py:7 in helper</span>' in page
    assert (
        '<span class="gb">GB0291</span>' in page
        and f"<div><b>your code:</b> {call} in calls_a_library</div>" in page
    )
    rows = [c.value for c in Explorer(r).breaks.children if hasattr(c, "value")]
    assert "The recorded program ended with: RuntimeError: stopped after the break" in rows[0]


def test_breaks_view_says_how_the_program_ended_without_breaks():
    view = build_view(Report(torch_version="2.13.0", device="cpu", error="KeyboardInterrupt"))
    assert breaks_text(view) == (
        "The recorded program ended with: KeyboardInterrupt\n\nNo graph breaks: each compiled frame is one graph."
    )
    assert breaks_html(view).startswith(
        '<div class="error">The recorded program ended with: KeyboardInterrupt</div>'
    )


# ---- compile stages: nothing captured is not "not run by this backend" -----------------------


def returns_after_a_break(x):
    y = x.sin()
    torch._dynamo.graph_break()
    return y  # the resume function only returns: Dynamo captures no operation


def test_a_frame_that_captured_nothing_says_so_for_every_later_stage():
    with compiler.recording() as rec:
        torch.compile(returns_after_a_break, backend="aot_eager")(torch.zeros(3))
        torch.compile(marked, backend="eager")(torch.zeros(3))
    notes = {c.compile_id: [sv.note for sv in c.stages[1:]] for c in build_view(rec.report).compiles}
    nothing = "Dynamo captured no operations in this frame: nothing to compile"
    aot = "not run by this backend (AOTAutograd ran; Inductor runs decompose→codegen)"
    eager = "not run by this backend (Inductor runs autograd→codegen)"
    inference = (  # beside its inference graph, why the autograd stage has no backward
        "no backward: AOTAutograd traced an inference graph (no input needed a gradient, or the"
        " call ran under torch.no_grad / inference_mode)"
    )
    assert notes == {"0/0": [inference, aot, aot, aot], "1/0": [nothing] * 4, "2/0": [eager] * 4}


# ---- docs/walkthrough.md's Hugging Face walkthrough runs and prints what the page shows ----


def _docs_walkthrough() -> tuple[str, str]:
    """docs/walkthrough.md's ``# docs: hf-walkthrough`` code block and the output printed under it."""
    from pathlib import Path

    text = (Path(HERE).parent.parent / "docs" / "walkthrough.md").read_text(encoding="utf-8")
    m = re.search(r"```python\n(# docs: hf-walkthrough\n.*?)```.*?```text\n(.*?)```", text, re.S)
    assert m, "docs/walkthrough.md has no '# docs: hf-walkthrough' block followed by its output"
    return m.group(1), m.group(2)


def _comparable(out: str) -> list[str]:
    """Output lines without the library's source lines and with line numbers and symbol
    names normalised: what stays the same across transformers releases."""
    lines = [ln for ln in out.rstrip("\n").splitlines() if not re.match(r"^  [> ] +\d+ \|", ln)]
    return [re.sub(r"\bs\d+\b", "sN", re.sub(r"(\.py):\d+", r"\1:N", ln)) for ln in lines]


@pytest.mark.corpus
@pytest.mark.slow
def test_docs_hf_walkthrough_runs_and_prints_what_the_page_shows(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    pytest.importorskip("transformers")
    code, shown = _docs_walkthrough()
    script = tmp_path / "hf_walkthrough.py"
    script.write_text(code, encoding="utf-8")
    root = str(Path(HERE).parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    run = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, run.stderr
    out = run.stdout.splitlines()
    call = 1 + code.splitlines().index("    loss = model(input_ids=ids, labels=ids).loss")
    # the break: transformers' logger.warning_once, reached from the program's own line
    assert re.fullmatch(
        r"transformers/modeling_utils\.py:\d+  logging\.Logger method not supported for non-export cases"
        r"  GB0291  \(hit \d+×; logged in [\[\]\d/, ]+\)",
        out[0],
    ), out[0]
    assert out[1] == f"  your code: hf_walkthrough.py:{call} in <module>"
    stack = next(ln for ln in out if ln.startswith("  stack: "))
    assert stack.startswith(f"  stack: hf_walkthrough.py:{call} in <module> -> transformers/")
    assert re.search(r" -> transformers/modeling_utils\.py:\d+ in loss_function \[lib\]$", stack), stack
    # the recompile: the length of input_ids, then compiled dynamic and reused
    guard = next(ln for ln in out if ln.startswith("  failing guard: "))
    assert guard.startswith("  failing guard: TENSOR_MATCH: check_tensor(L['kwargs']['input_ids'], Tensor, ")
    assert "size=[2, 16]" in guard
    dynamic = [ln for ln in out if ln.startswith("  compiled with dynamic ")]
    assert len(dynamic) == 1 and re.fullmatch(
        r"  compiled with dynamic kwargs\['input_ids'\]\.size\(\)\[1\] \(s\d+\); later calls reuse it",
        dynamic[0],
    ), dynamic
    assert "[0/2]" not in run.stdout  # the third length reused [0/1]
    # and the page shows this output
    assert _comparable(shown) == _comparable(run.stdout)


def _stage_model(x):
    y = torch.relu(x)  # STAGE-RELU
    return y * 2  # STAGE-MUL


def _indented(title: str, code: str) -> str:
    lines = code.rstrip("\n").splitlines()
    return f"{title} ({len(lines)} lines)\n" + "".join(f"    {ln}".rstrip() + "\n" for ln in lines)


def test_stage_views_as_text_against_torchs_trace():
    """``explorer.text(report, STAGE, compile=ID)``: each stage's exact text, the graphs'
    code and guards as torch logged them, node sources as the breaks name them."""
    from _torch_trace import RawTrace

    torch._dynamo.reset()
    with RawTrace() as raw, compiler.recording() as rec:
        torch.compile(_stage_model, backend="aot_eager")(torch.randn(4))
    torch._dynamo.reset()
    logged = {next(iter(m)): p for m, p in raw.records if m.get("frame_id") == 0}
    graph, guards, inference = (
        logged["dynamo_output_graph"],
        logged["dynamo_cpp_guards_str"],
        logged["aot_inference_graph"],
    )
    relu, mul = (
        explorer.model._summary.where(HERE, marker_line(HERE, m)) for m in ("STAGE-RELU", "STAGE-MUL")
    )
    # torch's graph names its nodes and where each came from
    assert f"# File: {HERE}:{marker_line(HERE, 'STAGE-RELU')} in _stage_model" in graph
    assert 'y: "f32[4][1]cpu" = torch.relu(l_x_)' in graph and 'mul: "f32[4][1]cpu" = y * 2' in graph
    w = max(len(relu), len(mul))
    n_guards = rec.report.compiles[0].stages.capture.guard_count
    text = explorer.text(rec.report, "capture", compile="0/0")
    head, grouped = text.split("\nguards by kind ", 1)
    # the guards grouped by kind, counted here from torch's own guard tree
    kinds = collections.Counter(re.findall(r"^[| ]*\+- ([A-Z_]+):", guards, re.MULTILINE))
    assert grouped.startswith(
        f"({n_guards} guards torch counted, checked by {sum(kinds.values())} nodes of the guard tree)\n"
    )
    for kind, n in kinds.items():
        assert re.search(rf"^{kind} +{n} +{re.escape(KINDS[kind])}$", grouped, re.MULTILINE), kind
    assert re.search(r"^x +\d+ +.*TENSOR_MATCH 1", grouped, re.MULTILINE)  # the input's guards, by source
    assert grouped.endswith("\n" + _indented("guards as torch prints them", guards))
    assert (
        head
        == (
            "[0/0] _stage_model — ok · capture\n\n"
            "Dynamo graph: 3 nodes, 3 edges\n\n"
            + _indented("Dynamo graph (code)", graph)
            + "\nnodes\n"
            + f"node  op             target        dtype/shape   {'source'.ljust(w)}  module\n"
            "L_x_  placeholder    L_x_          f32[4][1]cpu\n"  # as torch's graph code annotates it
            f"y     call_function  torch.relu    f32[4][1]cpu  {relu}\n"
            f"mul   call_function  operator.mul  f32[4][1]cpu  {mul}\n"
        )
    )
    (fw_metadata,) = [
        p for m, p in raw.records if m.get("artifact", {}).get("name") == "aot_forward_graph_fw_metadata"
    ]
    assert explorer.text(rec.report, "autograd") == (  # default: the compile with the most kernels
        "[0/0] _stage_model — ok · autograd\n\n"
        "no backward: AOTAutograd traced an inference graph (no input needed a gradient, or the"
        " call ran under torch.no_grad / inference_mode)\n\n"
        "inference graph: 3 nodes, 3 edges\n\n"
        + _indented("inference graph (code)", inference)
        + "\n"
        + _indented("forward metadata (AOTAutograd's ViewAndMutationMeta)", fw_metadata)
    )
    assert explorer.text(rec.report, "codegen", compile="0/0") == (
        "[0/0] _stage_model — ok · codegen\n\n"
        "codegen: not run by this backend (AOTAutograd ran; Inductor runs decompose→codegen)\n"
    )
    with pytest.raises(ValueError, match=r"no compile '3/0' in this report \(compiles: 0/0\)"):
        explorer.text(rec.report, "fuse", compile="3/0")


@pytest.mark.parametrize("name", ["h100-why-launch", "h100-bench-mlp"])
def test_bandwidth_chart_names_each_kernel_in_its_legend_on_a_log_axis(name):
    """The H100 recordings (notebooks/data): the launch-bound stack's six kernels at 3–16 GB/s
    under a 3350 GB/s peak (drawn at 0 on a linear axis, their labels on top of each other), and
    the MLP's three at 2933–3172 GB/s. Each kernel is a trace named in the legend (no text on
    the points), its GB/s Inductor's bytes a launch over its profiled time a launch; the axis is
    logarithmic from half the slowest to 1.5× the peak, ticked 1-2-3-5 or by decades; where every
    kernel is under 10% of the peak the title says why."""
    pytest.importorskip("plotly")
    from pathlib import Path

    from explorer.lower import _charts

    r = compiler.load(Path(__file__).parent.parent / f"notebooks/data/{name}.json.gz")
    (b,) = r.benchmarks
    fig = _charts.roofline_figure(b)
    rows = [k for k in b.kernels if k.gb is not None]
    assert [t.customdata[0] for t in fig.data] == [k.name for k in rows]  # one trace each, by time
    names = [t.name for t in fig.data]
    assert len(set(names)) == len(names) and all(len(n) <= 48 for n in names)
    assert all(t.mode == "markers" and t.text is None for t in fig.data)
    for t, k in zip(fig.data, rows, strict=True):
        launch_ms = k.total_ms / b.profiled_calls / (k.calls / b.profiled_calls)
        assert t.x[0] == pytest.approx(launch_ms) and t.y[0] == pytest.approx(k.gb / (launch_ms / 1e3))
    ys = [k.gb_per_s for k in rows]
    assert fig.layout.yaxis.type == "log" and b.peak_gb_per_s == 3350.0
    assert tuple(fig.layout.yaxis.range) == pytest.approx((math.log10(min(ys) / 2), math.log10(1.5 * 3350)))
    (line,) = fig.layout.shapes
    (peak,) = fig.layout.annotations
    assert line.y0 == 3350.0 and peak.text == "peak 3350 GB/s" and peak.y == pytest.approx(math.log10(3350))
    if name == "h100-why-launch":
        assert [round(y, 1) for y in ys] == [15.9, 5.1, 8.2, 8.0, 3.5, 7.8]
        assert names[1:4] == [
            "triton_per_fused_add_addmm_nati…ayer_norm_view_2",
            "triton_per_fused_add_addmm_nati…ayer_norm_view_4",
            "triton_per_fused_add_addmm_nati…ayer_norm_view_3",
        ]
        assert fig.layout.yaxis.tickvals == (10, 100, 1000)
        assert fig.layout.title.text.endswith(
            "<br><sup>every kernel under 10% of the peak (the fastest 15.9 GB/s): each moves at most"
            " 17.4 KB a launch, too little to fill the memory system; its time is the launch's fixed cost</sup>"
        )
        assert max(k.gb for k in rows) == 1.7408e-05
    else:
        assert [round(y) for y in ys] == [3053, 3172, 2933]
        assert fig.layout.yaxis.tickvals == (2000, 3000, 5000)
        assert fig.layout.title.text == "MLPBlock: achieved bandwidth (NVIDIA H100 80GB HBM3)"


@pytest.mark.child
def test_benchmark_profiling_leaves_stderr_to_the_program(tmp_path):
    """The profiler's own ``USDT: … profiler_start`` lines (kineto, on stderr) are gone; what
    the benchmarked function writes to stderr during the benchmark's calls is kept out of the
    program's output (counted: ``Benchmark.printed_lines``), its own call's stays; the
    environment is left as it was."""
    import subprocess
    import sys

    script = tmp_path / "b.py"
    script.write_text(
        "import os, sys, torch, compiler\n"
        "def f(x):\n"
        "    print('mine', file=sys.stderr)\n"
        "    return x.sin() + 1\n"
        "_, r = compiler.record(f, torch.randn(8))\n"
        "b = compiler.benchmark(r, reps=2, warmup=0, progress=False)\n"
        "assert b.kernels, 'profiled'\n"
        "print('KINETO_LOG_LEVEL' in os.environ, b.printed_lines >= 4)\n"
    )
    env = {k: v for k, v in __import__("os").environ.items() if k != "KINETO_LOG_LEVEL"}
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, check=True)
    # the state check, accuracy, timed and profiled calls' lines counted, not written
    assert run.stdout == "False True\n"
    assert "USDT" not in run.stderr and "profiler_start" not in run.stderr
    assert run.stderr == "mine\n"  # the recorded call's own


def test_benchmark_button_selects_its_tab_and_says_done_once_shown():
    torch._dynamo.reset()
    _, r = compiler.record(_stage_model, torch.randn(16), compile_kwargs={"backend": "eager"})
    app = Explorer(r)
    assert app._bench_tab is None and app.tabs.selected_index == 2  # no breaks, no recompiles
    seen = []
    show = app._show_benchmarks

    def showing(select=False):  # the status as the result tab is built
        seen.append(app.bench_status.value)
        show(select)

    app._show_benchmarks = showing
    app.run_benchmark(reps=2, warmup=0, profile=False)
    torch._dynamo.reset()
    assert seen == ["<i>benchmark _stage_model: showing the result</i>"]
    assert app.tabs.selected_index == app._bench_tab == 3
    assert app.tabs.get_title(3) == "Benchmark (1)"
    assert app.bench_status.value == "<i>benchmark done: the result is in the Benchmark tab (open)</i>"


def test_inductor_stage_views_as_text_gpu_recording():
    """decompose / fuse / codegen of a recorded H100 compile (tests/fixtures/reports): the
    block headings in order, each code block the recorded text, indented, in full."""
    from pathlib import Path

    r = compiler.load(Path(__file__).parent / "fixtures/reports/h100-torch211-gpu-block.json.gz")

    def headings(text: str) -> list[str]:
        return [ln for ln in text.splitlines() if ln and not ln.startswith("    ")]

    fuse = explorer.text(r, "fuse", compile="0/0")
    assert (
        headings(fuse)
        == [
            "[0/0] forward — ok · fuse",
            "kernels and the graph nodes fused into them",
            headings(fuse)[2],  # the table's header and six rows, checked below
            *[ln for ln in headings(fuse)[3:9]],
            "forward graph coloured by kernel: 10 nodes, 11 edges",
            "backward graph coloured by kernel: 30 nodes, 35 edges",
            "IR before fusion #1 (280 lines)",
            "IR before fusion #2 (179 lines)",
            "IR after fusion #1 (324 lines)",
            "IR after fusion #2 (214 lines)",
            "torch's kernel comments",  # what Inductor's comments name per kernel, and its logs
            *headings(fuse)[16:23],  # the table's header and six rows, checked below
            "fusion log (91 lines)",
            "provenance (4 lines)",
        ]
    )
    assert headings(fuse)[2].split() == ["role", "kernel", "nodes", "colour"]
    assert headings(fuse)[16].split() == ["kernel", "nodes", "ATen", "ops"]
    kernel_nodes = r.compile("0/0").stages.fuse.kernel_nodes
    assert [ln.split()[0] for ln in headings(fuse)[17:23]] == [k.kernel for k in kernel_nodes]
    assert headings(fuse)[17].split() == [
        "triton_per_fused_native_layer_norm_0",
        "layer_norm",
        "aten.native_layer_norm",
    ]
    assert [ln.split()[:2] for ln in headings(fuse)[3:9]] == [[k.role, k.name] for k in r.kernels_of("0/0")]
    assert headings(fuse)[3].split() == [
        "forward", "triton_per_fused_native_layer_norm_0", "layer_norm", "#4e79a7",
    ]  # fmt: skip
    codegen = explorer.text(r, "codegen", compile="0/0")
    kernels = r.kernels_of("0/0")
    # first the kernels in one table, the largest first (no benchmark: by lines of source)
    table = headings(codegen)[:9]
    assert table[:2] == ["[0/0] forward — ok · codegen", "kernels (6, the largest size first)"]
    assert table[2].split() == ["role", "kernel", "language", "lines", "nodes", "fused", "from"]
    sizes = {k.name: len(k.source.splitlines()) for k in kernels}
    assert [ln.split()[1] for ln in table[3:9]] == sorted(sizes, key=lambda n: (-sizes[n], n))
    assert [int(ln.split()[3]) for ln in table[3:9]] == sorted(sizes.values(), reverse=True)
    forward, backward = r.compile("0/0").stages.codegen.output_code
    assert headings(codegen)[9:] == [
        "extern calls (library kernels the wrapper calls, not generated)",
        *headings(codegen)[10:-9],
        "output code",  # where torch wrote them, the kernels they define; the graph as a script
        f"forward wrapper module   {forward.path}",
        f"backward wrapper module  {backward.path}",
        f"kernels it defines       {', '.join(k.name for k in kernels)}",
        "each kernel's code: --kernel NAME (a name of the kernel table)",
        "more code (--kernel TITLE prints it):",
        "  355 lines  forward wrapper module",
        "  276 lines  backward wrapper module",
        "  123 lines  fx_graph_runnable: the graph Inductor got, as a script",
    ]
    # one kernel's code (--kernel NAME): its @triton.jit body in full, then its metadata table
    # (not Inductor's one-line dicts)
    one = explorer.text(r, "codegen", compile="0/0", kernel=kernels[0].name)
    assert headings(one)[:2] == [
        f"[0/0] forward — ok · codegen · {kernels[0].name}",
        headings(one)[1],
    ]
    assert headings(one)[1].startswith(
        "forward kernel triton_per_fused_native_layer_norm_0 (triton) from aten.native_layer_norm, lines "
    )
    t = compiler.analysis.read_triton_source(kernels[0].source)
    body = t.body.splitlines()  # numbered as the kernel's source counts its lines, from its decorator
    src = kernels[0].source.splitlines()
    assert src[t.body_line - 2 : t.body_line - 2 + len(body)] == body
    assert "".join(f"    {n:>4} │ {ln}".rstrip() + "\n" for n, ln in enumerate(body, t.body_line - 1)) in one
    assert f"{kernels[0].name}: metadata" in headings(one) and "triton_meta=" not in one
    assert not any(k.name in one for k in kernels[1:])
    wrapper = explorer.text(r, "codegen", compile="0/0", kernel="forward wrapper")
    assert headings(wrapper)[1] == "forward wrapper module (355 lines)"
    decompose = headings(explorer.text(r, "decompose", compile="0/0"))
    assert [ln.split("  ")[0] for ln in decompose[:3]] == [
        "[0/0] forward — ok · decompose",
        "op census: each torch-level op of Dynamo's graph → the core ATen ops it became",
        "role",
    ]
    # each torch-level op paired with what it became, the forward by Inductor's provenance
    # (LayerNorm's decomposition), the backward by the source line torch stamps on its nodes
    assert [ln.split("  ")[0] for ln in decompose[3:8]] == ["forward"] * 5
    assert [c.strip() for c in decompose[3].split("  ") if c.strip()] == [
        "forward",
        "layer_norm 1",
        "add 2, getitem 2, mul 2, rsqrt 1, sub 1, var_mean 1",
        "provenance",
    ]
    assert [c.strip() for c in decompose[8].split("  ") if c.strip()][::3] == ["backward", "source line"]
    assert decompose[9] == "op totals: Dynamo graph (torch level) vs post-grad graphs (core ATen)"
    assert decompose[-8:] == [
        "post-grad graph (forward): 23 nodes, 33 edges",
        "post-grad (forward, code) (24 lines)",
        "post-grad graph (backward): 30 nodes, 35 edges",
        "post-grad (backward, code) (27 lines)",
        "pre-grad graph (20 lines)",
        "pre-grad graph after the pre-grad passes (20 lines)",
        "post-grad (forward) before the post-grad passes (24 lines)",
        "post-grad (backward) before the post-grad passes (27 lines)",
    ]


def _visible_text(fragment: str) -> str:
    import html

    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def test_page_and_widget_tabs_come_from_one_registry():
    """The static page's tabs and the notebook explorer's: the registry's views whose facts the
    report holds, with the same labels in the same order; "Compile time" (timed phases) and
    "Unmapped events" in both, each tab the same HTML in both."""
    from pathlib import Path

    from explorer.lower._html import frag
    from explorer.views._registry import names

    r = compiler.load_trace(Path(__file__).parent / "fixtures/traces/cpu-torch213-breaks.log.gz")
    tab_names = ["breaks", "recompiles", "compiles", "time", "heads", "bytecode", "raw"]
    labels = [
        "Graph breaks (1)",
        "Recompiles (2)",
        "Compiles (4)",
        "Compile time",
        "Compile time by head",
        "Bytecode",
        "Unmapped events (1)",
    ]
    page = page_html(build_view(r))
    assert re.findall(r'<button data-tab="tab-(\w+)"[^>]*>([^<]*)</button>', page) == list(
        zip(tab_names, labels)
    )
    app = Explorer(r)
    assert [app.tabs.get_title(i) for i in range(len(app.tabs.children))] == labels
    for i in (3, 4, 5, 6):  # the tabs without a widget of their own: the page's HTML
        section = re.search(
            rf'<section class="pt2x-tab" id="tab-{tab_names[i]}" hidden>(.*?)</section>', page, re.S
        )
        widget, shown = app.tabs.children[i].value, frag(section.group(1))
        if tab_names[i] != "bytecode":
            assert widget == shown
            continue
        # the page's code is highlighted in the browser, the widget's by pygments: the same text
        assert _visible_text(widget) == _visible_text(shown) and "RESUME" in _visible_text(shown)
        lazy = explorer.lower._html.browser_highlighting()
        assert "<pre><span></span>" in widget and ("<pre><span></span>" in shown) != lazy
    assert app.tabs.children[6].value.count("<h3>artifact:torch_version</h3>") == 1
    assert explorer.text(r, "raw") == (
        "artifact:torch_version\n"
        '  metadata: {"artifact": {"name": "torch_version", "encoding": "json"}, '
        '"has_payload": "98696a967131e5fafe595f7ec2e727bc"}\n'
        "    {\n"
        '    "pytorch_version": "2.13.0+cpu",\n'
        '    "commit": "cf30153c4c131c8164ee7798e5022d810682e2cb",\n'
        '    "oss": true\n'
        "    }\n"
    )
    assert set(tab_names) < set(names())
    with pytest.raises(ValueError, match=r"^unknown view 'nope'; choose one of: summary, ranks, breaks, "):
        explorer.text(r, "nope")


def test_a_failed_compile_shows_torchs_traceback():
    """``Compile.traceback``: in the compile's view, as text (``--view compiles``) and on the
    page, collapsed."""
    from pathlib import Path

    r = compiler.load_trace(Path(__file__).parent / "fixtures/traces/cpu-torch213-breaks.log.gz")
    tb = 'Traceback (most recent call last):\n  File "x.py", line 3, in f\nRuntimeError: <boom>'
    failed = dataclasses.replace(
        r.compiles[1], status="failed", failed_stage="fuse", error="RuntimeError: <boom>", traceback=tb
    )
    r = dataclasses.replace(r, compiles=(r.compiles[0], failed, *r.compiles[2:]))
    text = explorer.text(r, "compiles", compile="1/0")
    assert text.startswith(
        "[1/0] f (resumed after line 15) — failed in fuse\n\nRuntimeError: <boom>\n\ncompile\n"
    )
    assert (
        "torch's traceback (3 lines)\n"
        "    Traceback (most recent call last):\n"
        '      File "x.py", line 3, in f\n'
        "    RuntimeError: <boom>\n"
    ) in text
    page = page_html(build_view(r))
    # collapsed: <details> without "open"; text, not highlighted (by pygments where the page
    # cannot highlight in the browser)
    pre = "<pre>" if explorer.lower._html.browser_highlighting() else "<pre><span></span>"
    end = "</pre></div>" if explorer.lower._html.browser_highlighting() else "\n</pre></div>\n"
    assert (
        '<details><summary>torch&#x27;s traceback <span class="meta">(3 lines)</span></summary>'
        f'<div class="highlight">{pre}Traceback (most recent call last):\n'
        f'  File "x.py", line 3, in f\nRuntimeError: &lt;boom&gt;{end}</details>'
    ) in page
    assert "<boom>" not in page


def test_guards_grouped_by_kind_and_source_the_failing_one_first(recorded):
    """[0/1] recompiled because [0/0]'s size guard on x failed: [0/0]'s guards open on that
    guard's kind and source, each kind said in one line."""
    (r,) = [r for r in recorded.recompiles if r.compile_id == "0/1"]
    assert r.failed_entry == "0/0" and r.failing_guard.startswith("TENSOR_MATCH: check_tensor(L['x']")
    by_kind, by_source = guard_tables(recorded, recorded.compile("0/0"))
    assert by_kind.rows[0] == ("TENSOR_MATCH (failed)", "1", KINDS["TENSOR_MATCH"])
    assert by_source.rows[0][:2] == ("x (failed)", "6")
    assert "TENSOR_MATCH 1" in by_source.rows[0][2]
    text = explorer.text(recorded, "capture", compile="0/0")
    assert re.search(r"^TENSOR_MATCH \(failed\) +1 +a tensor's dtype", text, re.MULTILINE)


def test_why_says_a_small_share_of_the_peak_as_it_is():
    """The launch-bound stack (notebooks/data/h100-why-launch.json.gz): its generated kernels run
    at 16, 5 and 8 GB/s of a 3350 GB/s peak; the Why view said "0% of the device's peak" for
    each. Their shares, from Inductor's bytes over the profiled time, are 0.5%, 0.2% and 0.2%,
    said alike in the evidence and in the kernels' table."""
    from pathlib import Path

    r = compiler.load(Path(__file__).parent.parent / "notebooks/data/h100-why-launch.json.gz")
    (b,) = r.benchmarks
    text = explorer.text(r, "why")
    gen = [k for k in b.kernels if k.gb is not None][:3]
    shares = [k.gb / (k.total_ms / k.calls / 1e3) / b.peak_gb_per_s for k in gen]
    assert [f"{x:.1%}" for x in shares] == ["0.5%", "0.2%", "0.2%"]
    for k, x in zip(gen, shares, strict=True):
        assert (
            f"{k.name}: {k.per_call_ms:.4g} ms at {k.gb_per_s:.0f} GB/s, {x:.1%} of the device's peak bandwidth"
            in text
        )
        (row,) = [ln for ln in text.splitlines() if ln.startswith(k.name + " ") and "memory," in ln]
        assert row.rstrip().endswith(f"memory, {x:.1%}")
    assert "0% of the device's peak" not in text.replace("0.", "")


def test_a_compiles_guards_are_its_records_own():
    """``Capture.guard_list``: the guards of the tree torch printed for the compile
    (``dynamo_cpp_guards_str``, read here from torch's own structured trace), each with its kind
    and the source the user's code names; the guards view reads them from the record."""
    import torch
    from _torch_trace import RawTrace

    import compiler
    from compiler.types import Guard

    def scaled(x, n):
        return x.sin() * n

    torch._dynamo.reset()
    with RawTrace() as raw, compiler.recording() as rec:
        torch.compile(scaled, backend="eager")(torch.randn(3), 2)
    torch._dynamo.reset()
    (tree,) = [p for m, p in raw.records if "dynamo_cpp_guards_str" in m]
    cap = rec.report.compiles[0].stages.capture
    assert cap.guards == tree
    guards = cap.guard_list
    assert isinstance(guards, tuple) and all(isinstance(g, Guard) for g in guards)
    leaves = [
        ln.split("+- ", 1)[1] for ln in tree.splitlines() if "+- " in ln and "Manager" not in ln.split(":")[0]
    ]
    assert [g.line for g in guards] == [ln.rstrip() for ln in leaves]
    assert [(g.kind, g.source) for g in guards if g.source in ("x", "n")][:2] == [
        ("EQUALS_MATCH", "n"),
        ("TENSOR_MATCH", "x"),
    ]
    assert cap.guard_list is guards  # read once

"""The explorer in a real browser: JupyterLab served from a temporary folder, Debian's Chromium
driven by Playwright (no ``playwright install``; tests/_lab.py). One server for the module, one
notebook per test:

- breaks.ipynb loads the extension and runs a ``%%compile --backend eager`` cell with a graph
  break at a known line; the test waits for the explorer widget, opens its "Graph breaks" tab
  and checks the break site and type on the rendered page;
- recompiles.ipynb records, with ``%%compile --record``, a function compiled with
  ``backend="aot_eager", dynamic=False`` and called on sizes 4 then 6 (recompile 0/1); the
  explorer opens on the "Recompiles" tab (no breaks); the test clicks ``diff [0/0] → [0/1]``
  and checks the diff rendered right under the button, in view, by the JupyterLab extension
  (extension/): its merge view, the two compile labels, the changed guard and the failing
  guard marked;
- kernels.ipynb shows a recorded CPU report (tests/fixtures) without breaks or recompiles in
  which compile 0/1 has the most kernels: the explorer opens on "Compiles" with [0/1]
  selected; "compare stages" puts its diff in view under the button;
- bench.ipynb records a cell with ``%%compile``; the test clicks "Benchmark": when the status
  line says done, the Benchmark tab is there, selected, its tables shown.

Screenshots go to test-artifacts/browser/, on success and on failure. Skipped without
/usr/bin/chromium, unless PT2X_REQUIRE_BROWSER=1 (CI), which makes it fail.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from _lab import notebook, require_extension, run_notebook, serve

pytestmark = pytest.mark.browser

CELLS_DONE_S = 240  # kernel start, import torch, the compiles, widget render

BREAK_CELL = """\
%%compile --backend eager
x = torch.ones(3)
if x.sum() > 0:  # the graph break: line 2 of the cell
    x = x + 1
y = x * 2"""
BREAK_LINE = 2  # the line of the `if` in the cell body (the %%compile line is not part of it)

FUNCTION_CELL = """\
def f(x):
    return torch.relu(x) * 2"""
RECOMPILE_CELL = """\
%%compile --record
g = torch.compile(f, backend="aot_eager", dynamic=False)
g(torch.randn(4))
y = g(torch.randn(6))  # size 6: the size guard of [0/0] fails, recompile [0/1]"""
# the TENSOR_MATCH guard of each compile as torch 2.13 prints it (the failing one: size=[4])
GUARD_A = "size=[4], stride=[1]"
GUARD_B = "size=[6], stride=[1]"


FIXTURE = Path(__file__).parent / "fixtures" / "traces" / "cpu-torch213-breaks.log.gz"
# the recorded CPU run without its break and recompiles, 0/1 keeping both its kernels and the
# others one each: the compile with the most kernels is not the first
KERNELS_CELL = f"""\
import dataclasses, compiler, explorer
r = compiler.load_trace({str(FIXTURE)!r})
keep = r.kernels_of("0/1") + tuple(r.kernels_of(c)[0] for c in ("0/0", "1/0", "1/1"))
r = dataclasses.replace(r, graph_breaks=(), recompiles=(), kernels=keep)
explorer.show(r)"""
BENCH_CELL = """\
%%compile --backend aot_eager
y = (torch.randn(64, 64).sin() + 1).relu()"""
# the shipped H100 run of notebook 16's model (two .item() breaks): its page opens on Why
WHY_REPORT = Path(__file__).resolve().parent.parent / "notebooks" / "data" / "h100-cause-item.json.gz"
WHY_CELL = f"""\
import os, compiler, explorer
os.chdir({str(WHY_REPORT.parents[2])!r})  # the project the report's paths are relative to
explorer.show(compiler.load({str(WHY_REPORT)!r}))"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    notebooks = {
        "breaks.ipynb": notebook("%load_ext explorer\nimport torch", BREAK_CELL),
        "recompiles.ipynb": notebook("%load_ext explorer\nimport torch", FUNCTION_CELL, RECOMPILE_CELL),
        "kernels.ipynb": notebook(KERNELS_CELL),
        "bench.ipynb": notebook("%load_ext explorer\nimport torch", BENCH_CELL),
        "why.ipynb": notebook(WHY_CELL),
    }
    with serve(tmp_path_factory.mktemp("lab"), notebooks) as lab:
        yield lab


def _explorer(page):
    """The output holding the explorer widget (its tabs)."""
    return page.locator(
        ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output", has=page.locator(".widget-tab")
    ).first


def _current_tab(widget):
    """The explorer's selected top-level tab (Lumino marks it lm-mod-current)."""
    return widget.locator(".widget-tab").first.locator(".lm-TabBar-tab.lm-mod-current").first


def _in_view(page, locator) -> dict:
    """``locator``'s box, asserted inside the viewport: what the user sees without scrolling."""
    box = locator.bounding_box()
    view = page.viewport_size
    assert box and 0 <= box["y"] and box["y"] + min(box["height"], 40) <= view["height"], (box, view)
    return box


@pytest.mark.slow
def test_graph_break_tab_in_jupyterlab(lab, request):
    from playwright.sync_api import expect

    with run_notebook(lab, "breaks.ipynb", request.node.name) as s:
        page = s.page
        tab = page.locator(".widget-tab .lm-TabBar-tab", has_text="Graph breaks (1)").first
        tab.wait_for(timeout=CELLS_DONE_S * 1000)
        expect(_current_tab(_explorer(page))).to_have_text("Graph breaks (1)")  # opens on the break
        tab.click()
        brk = page.locator(".pt2x .break").first
        expect(brk).to_be_visible()
        brk.scroll_into_view_if_needed()
        # the site, named as IPython's tracebacks name a cell ("Cell In[2], line 2")
        expect(brk.locator("b").first).to_have_text(re.compile(rf"^Cell In\[\d+\], line {BREAK_LINE}$"))
        expect(brk.locator(".type")).to_have_text("Data-dependent branching")
        hl = brk.locator(".src .hl")
        expect(hl).to_be_visible()
        expect(hl).to_contain_text("if x.sum() > 0:")
        s.shot()
        s.shot("widget", _explorer(page))


@pytest.mark.slow
def test_recompile_diff_in_explorer(lab, request):
    """Recompiles tab → ``diff [0/0] → [0/1]``: the extension's merge view below the tabs."""
    from playwright.sync_api import expect

    require_extension()
    with run_notebook(lab, "recompiles.ipynb", request.node.name) as s:
        page = s.page
        tab = page.locator(".widget-tab .lm-TabBar-tab", has_text="Recompiles (1)").first
        tab.wait_for(timeout=CELLS_DONE_S * 1000)
        expect(page.locator(".widget-tab .lm-TabBar-tab", has_text="Compiles (2)")).to_have_count(1)
        widget = _explorer(page)
        expect(_current_tab(widget)).to_have_text("Recompiles (1)")  # no breaks: the recompiles
        tab.click()
        recompile = widget.locator(".pt2x .break", has_text="[0/1]")
        expect(recompile).to_be_visible()
        expect(recompile).to_contain_text("the guards of [0/0] failed")
        expect(recompile.locator(".guards .fail")).to_contain_text(GUARD_A)
        expect(widget.locator(".pt2x-diff")).to_have_count(0)  # nothing before the click
        button = widget.get_by_role("button", name="diff [0/0] → [0/1]")
        button.scroll_into_view_if_needed()
        s.shot("recompiles")

        button.click()
        diff = widget.locator(".pt2x-diff")
        expect(diff).to_have_count(1)
        # right under the button, in view without scrolling, headed by what was asked
        expect(widget.get_by_text("diff [0/0] → [0/1] (here, under the buttons)")).to_be_visible()
        title_box = _in_view(page, diff.locator(".pt2x-diff-title"))
        assert title_box["y"] > button.bounding_box()["y"]
        s.shot("diff-in-view")
        expect(diff.locator(".pt2x-diff-title")).to_have_text("compile 0/0 vs 0/1")
        expect(diff.locator(".pt2x-diff-summary li").first).to_contain_text(
            "failing guard (0/0 line 8): TENSOR_MATCH"
        )
        guards = diff.locator('[data-section-id="guards"]')
        expect(guards.locator(".pt2x-diff-badge")).to_have_text("changed")
        expect(guards.locator(".pt2x-diff-chunks")).to_have_text("1 line changed")  # Python's count
        expect(guards.locator(".pt2x-diff-side-a")).to_have_text("0/0")
        expect(guards.locator(".pt2x-diff-side-b")).to_have_text("0/1")
        left, right = guards.locator(".cm-merge-a"), guards.locator(".cm-merge-b")
        expect(left.locator(".cm-changedLine")).to_have_count(1)
        expect(left.locator(".cm-changedLine")).to_contain_text(GUARD_A)
        expect(right.locator(".cm-changedLine")).to_have_count(1)
        expect(right.locator(".cm-changedLine")).to_contain_text(GUARD_B)
        expect(left.locator(".cm-line.pt2x-diff-mark")).to_contain_text(GUARD_A)  # the failing guard
        for section in ("capture", "autograd:inference"):  # the graphs: 4 → 6 in the shapes
            graph = diff.locator(f'[data-section-id="{section}"]')
            expect(graph.locator(".cm-merge-a .cm-changedLine").first).to_contain_text('"f32[4][1]cpu"')
            expect(graph.locator(".cm-merge-b .cm-changedLine").first).to_contain_text('"f32[6][1]cpu"')

        diff.locator(".pt2x-diff-title").evaluate("e => e.scrollIntoView({block: 'start'})")
        s.shot()
        s.shot("guards", guards)
        assert not s.errors, f"errors on the page: {s.errors}"


@pytest.mark.slow
def test_opens_on_the_compile_with_most_kernels_and_compares_in_view(lab, request):
    from playwright.sync_api import expect

    require_extension()
    with run_notebook(lab, "kernels.ipynb", request.node.name) as s:
        page = s.page
        widget = _explorer(page)
        tab = page.locator(".widget-tab .lm-TabBar-tab", has_text="Compiles (4)").first
        tab.wait_for(timeout=CELLS_DONE_S * 1000)
        expect(_current_tab(widget)).to_have_text("Compiles (4)")
        selector = widget.locator(".widget-dropdown select").first
        expect(selector.locator("option:checked")).to_have_text("[0/1] f — ok")
        s.shot("opened")
        button = widget.get_by_role("button", name="compare stages")
        button.click()
        diff = widget.locator(".pt2x-diff")
        expect(diff).to_have_count(1)
        expect(diff.locator(".pt2x-diff-title")).to_have_text("compile 0/1: capture vs decompose")
        _in_view(page, diff.locator(".pt2x-diff-title"))
        s.shot()
        assert not s.errors, f"errors on the page: {s.errors}"


@pytest.mark.slow
def test_benchmark_result_tab_selected_when_done(lab, request):
    from playwright.sync_api import expect

    with run_notebook(lab, "bench.ipynb", request.node.name) as s:
        page = s.page
        widget = _explorer(page)
        button = page.get_by_role("button", name="Benchmark").first
        button.wait_for(timeout=CELLS_DONE_S * 1000)
        expect(button).to_be_enabled()
        button.click()
        # the timing's end: "…: showing the result", or already the final line when the tab
        # was built before the next poll
        status = widget.get_by_text(re.compile(r"benchmark .*(: showing the result|: done|done: the result)"))
        status.wait_for(timeout=CELLS_DONE_S * 1000)
        t0 = time.monotonic()
        done = widget.get_by_text("benchmark done: the result is in the Benchmark tab (open)")
        done.wait_for(timeout=CELLS_DONE_S * 1000)
        shown_after = time.monotonic() - t0
        # at "done" the tab is there, selected, the result on screen
        expect(_current_tab(widget)).to_have_text("Benchmark (1)")
        # the benchmark's result on screen (the "Why not faster" tab, hidden, also says "eager")
        result = widget.locator(".pt2x", has_text="eager").filter(visible=True).last
        expect(result).to_be_visible()
        print(f"result shown {shown_after:.1f} s after the timing finished")
        s.shot()
        assert not s.errors, f"errors on the page: {s.errors}"


@pytest.mark.slow
def test_why_tab_links_lead_in_the_notebook(lab, request):
    """In the notebook explorer, as on the static page (tests/test_browser_why.py): a line of the
    model opens the source around it; a fix's copy button puts it on the clipboard; a kernel in
    the Why tab opens the Compiles tab on its compile's codegen stage and brings its row into
    view; a break site opens the Graph breaks tab on that break."""
    from playwright.sync_api import expect

    import compiler

    report = compiler.load(WHY_REPORT)
    with run_notebook(lab, "why.ipynb", request.node.name) as s:
        page = s.page
        why = page.locator(".widget-tab .lm-TabBar-tab", has_text="Why not faster").first
        why.wait_for(timeout=CELLS_DONE_S * 1000)
        widget = _explorer(page)
        expect(_current_tab(widget)).to_have_text("Why not faster")  # a GPU page opens on Why
        page.context.grant_permissions(["clipboard-read", "clipboard-write"])
        # a line of the model: the source around it, as the file reads
        line = widget.locator("details", has=page.locator("summary", has_text="make_why_causes.py:72")).first
        line.locator("summary").first.click()
        source = (WHY_REPORT.parent / "make_why_causes.py").read_text().splitlines()[71]
        expect(line.locator("pre.src .hl").first).to_contain_text(source.strip())
        # a fix: its code copied
        fix = "torch._dynamo.config.capture_scalar_outputs = True"
        block = widget.locator(".pt2x-fix", has=page.locator("code", has_text=fix)).first
        block.locator("button.pt2x-copy").click()
        expect(block.locator("button.pt2x-copy")).to_have_text("copied")
        assert page.evaluate("navigator.clipboard.readText()") == fix
        link = widget.locator("a.pt2x-why-link[data-kernel]").filter(visible=True).first
        cid, kernel = link.get_attribute("data-compile"), link.get_attribute("data-kernel")
        assert kernel in {k.name for k in report.kernels_of(cid)}, (cid, kernel)
        link.click()
        expect(_current_tab(widget)).to_have_text(f"Compiles ({len(report.compiles)})")
        stages = widget.locator(".widget-tab .widget-tab .lm-TabBar-tab.lm-mod-current").first
        expect(stages).to_have_text("codegen")
        chosen = widget.locator("select").first
        label = next(c.label for c in explorer_compiles(report) if c.compile_id == cid)
        expect(chosen).to_have_value(label)
        row = widget.locator(f'tr[data-kernel="{kernel}"]').filter(visible=True).first
        expect(row).to_be_in_viewport()
        s.shot("kernel")
        why.click()
        breaks = widget.locator("a.pt2x-why-link[data-break]").filter(visible=True)
        expect(breaks).to_have_count(2)
        site = breaks.nth(1).get_attribute("data-break")
        breaks.nth(1).click()
        expect(_current_tab(widget)).to_have_text("Graph breaks (2)")
        target = widget.locator(f'[id="break-{site}"]').filter(visible=True).first
        expect(target).to_be_in_viewport()
        expect(target.locator("b").first).to_have_text(site)
        s.shot("break")
        assert not s.errors, f"errors on the page: {s.errors}"


def explorer_compiles(report):
    """The compiles as the explorer's selector lists them (their labels)."""
    from explorer.base._types import ExplorerView  # noqa: F401
    from explorer.model._view import build_view

    return build_view(report).compiles

"""The explorer in a real browser: JupyterLab served from a temporary folder, Debian's Chromium
driven by Playwright (no ``playwright install``; tests/_lab.py). One server for the module, one
notebook per test:

- breaks.ipynb loads the extension and runs a ``%%compile --backend eager`` cell with a graph
  break at a known line; the test waits for the explorer widget, opens its "Graph breaks" tab
  and checks the break site and type on the rendered page;
- recompiles.ipynb records, with ``%%compile --record``, a function compiled with
  ``backend="aot_eager", dynamic=False`` and called on sizes 4 then 6 (recompile 0/1); the test
  opens the "Recompiles" tab, clicks ``diff [0/0] → [0/1]`` and checks the diff rendered below
  the tabs by the JupyterLab extension (extension/): its merge view, the two compile labels,
  the changed guard and the failing guard marked.

Screenshots go to test-artifacts/browser/, on success and on failure. Skipped without
/usr/bin/chromium, unless PT2X_REQUIRE_BROWSER=1 (CI), which makes it fail.
"""

from __future__ import annotations

import re

import pytest
from _lab import notebook, require_extension, run_notebook, serve

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


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    notebooks = {
        "breaks.ipynb": notebook("%load_ext explorer\nimport torch", BREAK_CELL),
        "recompiles.ipynb": notebook("%load_ext explorer\nimport torch", FUNCTION_CELL, RECOMPILE_CELL),
    }
    with serve(tmp_path_factory.mktemp("lab"), notebooks) as lab:
        yield lab


def _explorer(page):
    """The output holding the explorer widget (its tabs)."""
    return page.locator(".jp-OutputArea-output", has=page.locator(".widget-tab")).first


@pytest.mark.slow
def test_graph_break_tab_in_jupyterlab(lab, request):
    from playwright.sync_api import expect

    with run_notebook(lab, "breaks.ipynb", request.node.name) as s:
        page = s.page
        tab = page.locator(".widget-tab .lm-TabBar-tab", has_text="Graph breaks (1)").first
        tab.wait_for(timeout=CELLS_DONE_S * 1000)
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
        tab.click()
        widget = _explorer(page)
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
        expect(diff.locator(".pt2x-diff-title")).to_have_text("compile 0/0 vs 0/1")
        expect(diff.locator(".pt2x-diff-summary li").first).to_contain_text(
            "failing guard (0/0 line 8): TENSOR_MATCH"
        )
        guards = diff.locator('[data-section-id="guards"]')
        expect(guards.locator(".pt2x-diff-badge")).to_have_text("changed")
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

        # below the tabs, in the widget (its Output), not in a new cell output
        tabs_box = widget.locator(".widget-tab").first.bounding_box()
        diff_box = diff.bounding_box()
        assert tabs_box and diff_box and diff_box["y"] >= tabs_box["y"] + tabs_box["height"] - 1
        diff.locator(".pt2x-diff-title").evaluate("e => e.scrollIntoView({block: 'start'})")
        s.shot()
        s.shot("guards", guards)
        assert not s.errors, f"errors on the page: {s.errors}"

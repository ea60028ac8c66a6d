"""The diff renderer of the JupyterLab extension (extension/) in a real browser: JupyterLab
with this venv's installed extension, Debian's Chromium driven by Playwright (tests/_lab.py).
A notebook records two compiles of a small function (``backend="aot_eager", dynamic=False``,
sizes 4 then 6: recompile 0/1) and displays ``explorer.diff_compiles(report, "0/0", "0/1")``,
then a hand-made payload (MIME application/vnd.pt2-explorer.diff+json) that fails validation,
and a huge one; the test runs all cells and checks, on the rendered page, both sides of the
merge view, the changed lines (CodeMirror's ``cm-changedLine``), the failing guard marked,
syntax highlighting, collapsed unchanged lines, next / previous change, the "Open in main
area" panel, the error box, the cap notes and a collapsed unchanged section. Screenshots go to
test-artifacts/browser/.

Skipped without /usr/bin/chromium, unless PT2X_REQUIRE_BROWSER=1 (CI), which makes it fail.
"""

from __future__ import annotations

import re
import time

import pytest
from _lab import notebook, require_extension, run_notebook, serve

pytestmark = pytest.mark.browser

MIME = "application/vnd.pt2-explorer.diff+json"
CELLS_DONE_S = 240  # kernel start, import torch, two aot_eager compiles, three displays

GOOD_CELL = """\
import torch
import compiler
import explorer

def f(x):
    return torch.relu(x) * 2

with compiler.recording() as rec:
    g = torch.compile(f, backend="aot_eager", dynamic=False)
    g(torch.randn(4))
    g(torch.randn(6))  # the size guard of 0/0 fails: recompile 0/1
report = rec.report
explorer.diff_compiles(report, "0/0", "0/1")"""
# line 8 of the guards as torch 2.13 prints them, the failing one on the left (size 4)
GUARD_A = "size=[4], stride=[1]"
GUARD_B = "size=[6], stride=[1]"
GUARD_SHARED = "accessed_by=FrameLocalsGuardAccessor(key='x', framelocals_idx=0)"  # line 7 of both

# hand-made: explorer.diff never emits a bad payload
BAD = {
    "schema": 1,
    "title": "bad",
    "a_label": "0/0",
    "b_label": "0/1",
    "summary": [],
    "sections": [
        {
            "id": "guards",
            "title": "Guards",
            "language": "python",
            "a": 42,
            "b": "L['x'] == 1\n",
            "a_marks": [],
            "b_marks": [],
            "changed": True,
            "note": None,
        }
    ],
}

KERNEL = """\
extern "C" void kernel(const float* in_ptr0, float* out_ptr0)
{
    for (long x0 = 0L; x0 < 16L; x0 += 1L)
    {
        out_ptr0[x0] = std::max(in_ptr0[x0], 0.0f);
    }
}
"""
HUGE_LINES = 30_000
# built in the kernel (a 2 MB literal would be a 2 MB line in the notebook's editor); a second,
# unchanged section starts collapsed
HUGE = f"""{{
    "schema": 1,
    "title": "huge",
    "a_label": "0/0",
    "b_label": "0/1",
    "summary": [],
    "sections": [
        {{
            "id": "output",
            "title": "Output code",
            "language": "python",
            "a": "".join(f"buf{{i}} = empty_strided(({{i}},), (1,))\\n" for i in range({HUGE_LINES})),
            "b": "".join(f"buf{{i}} = empty_strided(({{i + (i % 97 == 0)}},), (1,))\\n" for i in range({HUGE_LINES})),
            "a_marks": [],
            "b_marks": [],
            "changed": True,
            "note": None,
        }},
        {{
            "id": "kernel",
            "title": "Kernel cpp_fused_relu_0",
            "language": "cpp",
            "a": {KERNEL!r},
            "b": {KERNEL!r},
            "a_marks": [],
            "b_marks": [],
            "changed": False,
            "note": "cut to the first 5000 lines of 21000",
        }},
    ],
}}"""


def _display(payload: str, name: str) -> str:
    """A cell that displays a hand-made payload (a Python expression) as explorer.diff does,
    with an HTML fallback."""
    return (
        "from IPython.display import display\n"
        f"payload = {payload}\n"
        f'display({{"{MIME}": payload, "text/html": "<b>HTML fallback {name}</b>", "text/plain": "{name}"}}, raw=True)'
    )


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    require_extension()
    nb = notebook(GOOD_CELL, _display(repr(BAD), "bad"), _display(HUGE, "huge"))
    with serve(tmp_path_factory.mktemp("lab"), {"diff.ipynb": nb}) as lab:
        yield lab


CURSOR_LINE = "() => document.getSelection().anchorNode?.parentElement?.closest('.cm-line')?.textContent"


def _cursor_on(page, text: str) -> None:
    page.wait_for_function(f"({CURSOR_LINE})() === {text!r}")


def _check_good(page, out) -> None:
    """explorer.diff_compiles(report, "0/0", "0/1"): header, sections, both sides, changed and
    marked lines, highlighting, folds, next / previous."""
    from playwright.sync_api import expect

    expect(out.locator(".pt2x-diff-title")).to_have_text("compile 0/0 vs 0/1")
    expect(out.locator(".pt2x-diff-summary li")).to_have_text(
        [
            re.compile(r"^failing guard \(0/0 line 8\): TENSOR_MATCH: check_tensor\(L\['x'\].*size=\[4\]"),
            "0/1 recompiled because 0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6",
            "guards: 1 changed",
            "Dynamo graph: 3 lines changed",
            "AOT inference graph: 3 lines changed",
        ]
    )
    expect(out.get_by_text("compile 0/0 vs 0/1", exact=True)).to_have_count(1)  # not the HTML fallback too
    expect(out.locator(".pt2x-diff-section")).to_have_count(3)
    guards = out.locator('[data-section-id="guards"]')
    expect(guards.locator(".pt2x-diff-badge")).to_have_text("changed")
    expect(guards.locator(".pt2x-diff-note")).to_contain_text(
        "marked in 0/0: the guard whose failure recompiled 0/1"
    )
    expect(guards.locator(".pt2x-diff-side-a")).to_have_text("0/0")
    expect(guards.locator(".pt2x-diff-side-b")).to_have_text("0/1")
    left, right = guards.locator(".cm-merge-a"), guards.locator(".cm-merge-b")
    # a line both sides share, and the changed line on each side, marked by CodeMirror
    expect(left.locator(".cm-line", has_text=GUARD_SHARED)).to_have_count(1)
    expect(right.locator(".cm-line", has_text=GUARD_SHARED)).to_have_count(1)
    expect(left.locator(".cm-changedLine")).to_have_count(1)
    expect(left.locator(".cm-changedLine")).to_contain_text(GUARD_A)
    expect(right.locator(".cm-changedLine")).to_have_count(1)
    expect(right.locator(".cm-changedLine")).to_contain_text(GUARD_B)
    expect(left.locator(".cm-changedText")).to_have_text("4")  # the character that differs
    expect(right.locator(".cm-changedText")).to_have_text("6")
    # the failing guard (a_marks) on the left, nothing marked on the right
    expect(left.locator(".cm-line.pt2x-diff-mark")).to_have_count(1)
    expect(left.locator(".cm-line.pt2x-diff-mark")).to_contain_text("TENSOR_MATCH: check_tensor(L['x']")
    expect(left.locator(".cm-line.pt2x-diff-mark")).to_contain_text(GUARD_A)
    expect(right.locator(".pt2x-diff-mark")).to_have_count(0)
    # 20 lines, one changed: the lines far from it folded on both sides
    # the count is Python's (the payload's `changes`), the one the summary gives
    expect(guards.locator(".pt2x-diff-chunks")).to_have_text("1 line changed")
    expect(left.locator(".cm-collapsedLines").first).to_be_visible()
    expect(right.locator(".cm-collapsedLines").first).to_be_visible()

    # Dynamo's graph: Python highlighting from JupyterLab's language registry (the comment
    # naming the source line is coloured); two chunks, next / previous move between them
    graph = out.locator('[data-section-id="capture"]')
    expect(graph.locator(".pt2x-diff-chunks")).to_have_text("3 lines changed")  # as the summary says
    line_color = graph.locator(".cm-merge-a .cm-line").first.evaluate("e => getComputedStyle(e).color")
    comment = graph.locator(".cm-merge-a .cm-line span", has_text=re.compile(r"^# File: ")).first
    assert comment.evaluate("e => getComputedStyle(e).color") != line_color
    forward = '    def forward(self, L_x_: "f32[6][1]cpu"):'
    relu = '        relu: "f32[6][1]cpu" = torch.relu(l_x_);  l_x_ = None'
    expect(graph.locator(".cm-merge-b .cm-changedLine")).to_have_text(
        [forward, relu, '        mul: "f32[6][1]cpu" = relu * 2;  relu = None']
    )
    graph.locator(".pt2x-diff-next").click()
    _cursor_on(page, forward)
    graph.locator(".pt2x-diff-next").click()
    _cursor_on(page, relu)
    graph.locator(".pt2x-diff-prev").click()
    _cursor_on(page, forward)
    aot = out.locator('[data-section-id="autograd:inference"]')
    expect(aot.locator(".cm-merge-a .cm-changedLine").first).to_contain_text('arg0_1: "f32[4][1]cpu"')
    expect(aot.locator(".cm-merge-b .cm-changedLine").first).to_contain_text('arg0_1: "f32[6][1]cpu"')


@pytest.mark.slow
def test_diff_renderer_in_jupyterlab(lab, request):
    from playwright.sync_api import expect

    with run_notebook(lab, "diff.ipynb", request.node.name) as s:
        page = s.page
        outputs = page.locator(".jp-OutputArea-output")
        huge = outputs.filter(has=page.locator(".pt2x-diff-title", has_text="huge"))
        huge.wait_for(timeout=CELLS_DONE_S * 1000)
        good = outputs.filter(has=page.locator(".pt2x-diff-title", has_text="compile 0/0 vs 0/1"))
        good.scroll_into_view_if_needed()
        _check_good(page, good)
        good.locator('[data-section-id="guards"]').scroll_into_view_if_needed()
        s.shot("output", good.locator('[data-section-id="guards"]'))

        # bad input: a clear error in the output area, not a blank
        bad = outputs.filter(has=page.locator(".pt2x-diff-error"))
        expect(bad).to_have_count(1)
        expect(bad.locator(".pt2x-diff-error-title")).to_contain_text("PT2 Explorer could not show this diff")
        expect(bad.locator(".pt2x-diff-error-list li")).to_have_text(
            ["sections[0].a: expected a string, got a number"]
        )
        s.shot("error", bad)

        # huge: cut in the browser, said so, and the page still answers at once
        out = huge.locator('[data-section-id="output"]')
        huge.scroll_into_view_if_needed()
        expect(out.locator(".pt2x-diff-note")).to_have_text(
            [
                f"left side (0/0) cut to the first 5000 lines of {HUGE_LINES} in the browser",
                f"right side (0/1) cut to the first 5000 lines of {HUGE_LINES} in the browser",
            ]
        )
        # a payload without `changes`: the merge view's own count
        expect(out.locator(".pt2x-diff-chunks")).to_have_text("52 changes")  # i % 97 == 0 below 5000
        start = time.monotonic()
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => r(1)))")
        out.locator(".pt2x-diff-next").click()
        out.locator(".pt2x-diff-toggle").click()
        expect(out.locator(".pt2x-diff-body")).to_be_hidden()
        print(f"huge diff: a frame and two clicks in {time.monotonic() - start:.2f} s")

        # an unchanged section starts collapsed, says so, and opens on a click
        kernel = huge.locator('[data-section-id="kernel"]')
        expect(kernel.locator(".pt2x-diff-badge")).to_have_text("no change")
        expect(kernel.locator(".pt2x-diff-note")).to_have_text("cut to the first 5000 lines of 21000")
        expect(kernel.locator(".pt2x-diff-body")).to_be_hidden()
        expect(kernel.locator(".cm-mergeView")).to_have_count(0)  # built on first open only
        kernel.locator(".pt2x-diff-toggle").click()
        expect(kernel.locator(".pt2x-diff-body")).to_be_visible()
        expect(kernel.locator(".pt2x-diff-chunks")).to_have_text("no differing lines")
        expect(kernel.locator(".cm-changedLine")).to_have_count(0)
        expect(kernel.locator(".pt2x-diff-next")).to_be_disabled()
        s.shot("huge", huge)

        # the same diff as a panel of the main area
        good.locator(".pt2x-diff-open").click()
        panel = page.locator(".jp-MainAreaWidget.pt2x-diff-main")
        expect(panel).to_be_visible()
        expect(page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current")).to_contain_text(
            "compile 0/0 vs 0/1"
        )
        expect(panel.locator(".pt2x-diff.pt2x-mod-panel")).to_be_visible()
        expect(panel.locator(".pt2x-diff-open")).to_have_count(0)
        expect(panel.locator(".pt2x-diff-section")).to_have_count(3)
        guards = panel.locator('[data-section-id="guards"]')
        expect(guards.locator(".cm-merge-a .cm-changedLine")).to_contain_text(GUARD_A)
        expect(guards.locator(".cm-merge-b .cm-changedLine")).to_contain_text(GUARD_B)
        expect(guards.locator(".cm-merge-a .cm-line.pt2x-diff-mark")).to_contain_text(GUARD_A)
        s.shot("panel")
        assert not s.errors, f"errors on the page: {s.errors}"

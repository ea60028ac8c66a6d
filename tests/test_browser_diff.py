"""The diff renderer of the JupyterLab extension (extension/) in a real browser: JupyterLab
with this venv's installed extension, Debian's Chromium driven by Playwright. A notebook
displays a diff payload (MIME application/vnd.pt2-explorer.diff+json), a payload that fails
validation, and a huge one; the test runs all cells and checks, on the rendered page, both
sides of the merge view, the changed lines (CodeMirror's ``cm-changedLine``), the marked
line, syntax highlighting, collapsed unchanged sections, next / previous change, the error
box, the cap note, and the "Open in main area" panel. Screenshots go to
test-artifacts/browser/.

Skipped without /usr/bin/chromium, unless PT2X_REQUIRE_BROWSER=1 (CI), which makes it fail.
"""

from __future__ import annotations

import re
import secrets
import subprocess
import sys
import time

import nbformat
import pytest
from test_browser import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    _free_port,
    _lab_env,
    _require_browser,
    _stop_server,
    _wait_for_kernel,
    _wait_for_server,
)

MIME = "application/vnd.pt2-explorer.diff+json"
CELLS_DONE_S = 120  # kernel start and three displays: no torch import

GUARDS_A = """\
___check_type_id(L['x'], 8793152)
check_tensor(L['x'], Tensor, DispatchKeySet(CPU), torch.float32, device=None, requires_grad=False, size=[4, 4], stride=[4, 1])
L['scale'] == 1.0
"""
GUARDS_B = GUARDS_A.replace("size=[4, 4]", "size=[6, 4]")
FAILING_GUARD = 2  # the line of GUARDS_A marked (a_marks)


def _graph(changed: bool) -> str:
    """A 40-line graph; b differs at lines 3 and 32 (two chunks, 28 unchanged lines between)."""
    lines = ["def forward(self, x):"]
    lines += [f"    v{i} = torch.ops.aten.add.Tensor(x, {i})" for i in range(1, 39)]
    lines.append("    return (v38,)")
    if changed:
        lines[2] = "    v2 = torch.ops.aten.mul.Tensor(x, 2)"
        lines[31] = "    v31 = torch.ops.aten.sub.Tensor(x, 31)"
    return "\n".join(lines) + "\n"


KERNEL = """\
extern "C" void kernel(const float* in_ptr0, float* out_ptr0)
{
    for (long x0 = 0L; x0 < 16L; x0 += 1L)
    {
        out_ptr0[x0] = std::max(in_ptr0[x0], 0.0f);
    }
}
"""

PAYLOAD = {
    "schema": 1,
    "title": "compile 0/0 vs 0/1",
    "a_label": "0/0",
    "b_label": "0/1",
    "summary": ["guards: 1 changed", "graph: 2 lines changed"],
    "sections": [
        {
            "id": "guards",
            "title": "Guards",
            "language": "python",
            "a": GUARDS_A,
            "b": GUARDS_B,
            "a_marks": [FAILING_GUARD],
            "b_marks": [],
            "changed": True,
            "note": None,
        },
        {
            "id": "graph",
            "title": "Dynamo graph",
            "language": "python",
            "a": _graph(False),
            "b": _graph(True),
            "a_marks": [],
            "b_marks": [],
            "changed": True,
            "note": None,
        },
        {
            "id": "kernel",
            "title": "Kernel cpp_fused_relu_0",
            "language": "cpp",
            "a": KERNEL,
            "b": KERNEL,
            "a_marks": [],
            "b_marks": [],
            "changed": False,
            "note": "cut to the first 5000 lines of 21000",
        },
    ],
}

BAD = {**PAYLOAD, "sections": [{**PAYLOAD["sections"][0], "a": 42}]}

HUGE_LINES = 30_000
# built in the kernel (a 2 MB literal would be a 2 MB line in the notebook's editor)
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
        }}
    ],
}}"""


def _display(payload: str, name: str) -> str:
    """A cell that displays the payload (a Python expression) as the Python side does, with an
    HTML fallback. When explorer.diff(...) makes the payload, the display line becomes
    ``display(explorer.diff(a, b, labels=("0/0", "0/1")))``."""
    return (
        "from IPython.display import display\n"
        f"payload = {payload}\n"
        f'display({{"{MIME}": payload, "text/html": "<b>HTML fallback {name}</b>", "text/plain": "{name}"}}, raw=True)'
    )


def _write_notebook(folder) -> str:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [
        nbformat.v4.new_code_cell(_display(repr(PAYLOAD), "good")),
        nbformat.v4.new_code_cell(_display(repr(BAD), "bad")),
        nbformat.v4.new_code_cell(_display(HUGE, "huge")),
    ]
    nbformat.write(nb, folder / "diff.ipynb")
    return "diff.ipynb"


def _extension_installed() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "jupyterlab.labextensions", "list"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if not re.search(r"pt2-explorer v\S+ \S*enabled\S* \S*OK", out.stdout + out.stderr):
        pytest.fail(
            f"the pt2-explorer lab extension is not installed in this venv (make install):\n{out.stderr}"
        )


@pytest.fixture
def lab(tmp_path):
    """JupyterLab on a free port with a random token, serving the diff notebook."""
    _require_browser()
    _extension_installed()
    root = tmp_path / "root"
    root.mkdir()
    notebook = _write_notebook(root)
    token = secrets.token_hex(16)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "jupyterlab.log"
    cmd = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
        f"--IdentityProvider.token={token}", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0", f"--ServerApp.root_dir={root}",
        "--LabApp.news_url=None", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]  # fmt: skip
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            cmd,
            cwd=root,
            env=_lab_env(tmp_path),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        _wait_for_server(proc, base, token, log)
        yield {"base": base, "token": token, "notebook": notebook, "log": log}
    finally:
        _stop_server(proc, base, token)


def _run_all(page, lab) -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    _wait_for_kernel(lab["base"], lab["token"])
    for _attempt in range(3):
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
        try:
            page.locator(".jp-InputPrompt", has_text=re.compile(r"\[(\*|\d+)\]")).first.wait_for(
                timeout=15_000
            )
            return
        except PlaywrightTimeout:
            continue
    pytest.fail("Run > Run All Cells did not start the cells")


def _check_good(page, out) -> None:
    """The valid payload: header, sections, both sides, changed and marked lines."""
    from playwright.sync_api import expect

    expect(out.locator(".pt2x-diff-title")).to_have_text("compile 0/0 vs 0/1")
    expect(out.locator(".pt2x-diff-summary li")).to_have_text(["guards: 1 changed", "graph: 2 lines changed"])
    expect(out.get_by_text("HTML fallback good")).to_have_count(0)  # ours, not the text/html
    guards = out.locator('[data-section-id="guards"]')
    expect(guards.locator(".pt2x-diff-badge")).to_have_text("changed")
    expect(guards.locator(".pt2x-diff-side-a")).to_have_text("0/0")
    expect(guards.locator(".pt2x-diff-side-b")).to_have_text("0/1")
    left, right = guards.locator(".cm-merge-a"), guards.locator(".cm-merge-b")
    # the line both sides share, and the changed line on each side, marked by CodeMirror
    expect(left.locator(".cm-line", has_text="L['scale'] == 1.0")).to_have_count(1)
    expect(right.locator(".cm-line", has_text="L['scale'] == 1.0")).to_have_count(1)
    expect(left.locator(".cm-changedLine")).to_have_count(1)
    expect(left.locator(".cm-changedLine")).to_contain_text("size=[4, 4]")
    expect(right.locator(".cm-changedLine")).to_have_count(1)
    expect(right.locator(".cm-changedLine")).to_contain_text("size=[6, 4]")
    expect(left.locator(".cm-changedText")).to_have_text("4")  # the character that differs
    # the failing guard (a_marks) on the left
    expect(left.locator(".cm-line.pt2x-diff-mark")).to_contain_text("check_tensor(L['x']")
    expect(guards.locator(".pt2x-diff-chunks")).to_have_text("1 change")
    # Python highlighting from JupyterLab's language registry: the string is coloured
    line_color = left.locator(".cm-line").first.evaluate("e => getComputedStyle(e).color")
    string = left.locator(".cm-line span", has_text=re.compile(r"^'x'$")).first
    assert string.evaluate("e => getComputedStyle(e).color") != line_color

    # two chunks in the graph, unchanged lines between them collapsed; next / previous move
    graph = out.locator('[data-section-id="graph"]')
    expect(graph.locator(".pt2x-diff-chunks")).to_have_text("2 changes")
    expect(graph.locator(".cm-merge-b .cm-changedLine")).to_have_text(
        ["    v2 = torch.ops.aten.mul.Tensor(x, 2)", "    v31 = torch.ops.aten.sub.Tensor(x, 31)"]
    )
    expect(graph.locator(".cm-merge-b .cm-collapsedLines").first).to_be_visible()
    cursor_line = "() => document.getSelection().anchorNode?.parentElement?.closest('.cm-line')?.textContent"
    graph.locator(".pt2x-diff-next").click()
    page.wait_for_function(f"({cursor_line})() === '    v2 = torch.ops.aten.mul.Tensor(x, 2)'")
    graph.locator(".pt2x-diff-next").click()
    page.wait_for_function(f"({cursor_line})() === '    v31 = torch.ops.aten.sub.Tensor(x, 31)'")
    graph.locator(".pt2x-diff-prev").click()
    page.wait_for_function(f"({cursor_line})() === '    v2 = torch.ops.aten.mul.Tensor(x, 2)'")

    # an unchanged section starts collapsed, says so, and opens on a click
    kernel = out.locator('[data-section-id="kernel"]')
    expect(kernel.locator(".pt2x-diff-badge")).to_have_text("no change")
    expect(kernel.locator(".pt2x-diff-note")).to_have_text("cut to the first 5000 lines of 21000")
    expect(kernel.locator(".pt2x-diff-body")).to_be_hidden()
    expect(kernel.locator(".cm-mergeView")).to_have_count(0)  # built on first open only
    kernel.locator(".pt2x-diff-toggle").click()
    expect(kernel.locator(".pt2x-diff-body")).to_be_visible()
    expect(kernel.locator(".pt2x-diff-chunks")).to_have_text("no differing lines")
    expect(kernel.locator(".cm-changedLine")).to_have_count(0)
    expect(kernel.locator(".pt2x-diff-next")).to_be_disabled()


@pytest.mark.slow
def test_diff_renderer_in_jupyterlab(lab, request):
    from playwright.sync_api import expect, sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    name = request.node.name
    for old in ARTIFACTS.glob(f"{name}*.png"):
        old.unlink()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        page = None
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.set_default_timeout(60_000)
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{lab['base']}/lab/tree/{lab['notebook']}?token={lab['token']}")
            page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for()
            _run_all(page, lab)
            outputs = page.locator(".jp-OutputArea-output")
            huge = outputs.filter(has=page.locator(".pt2x-diff-title", has_text="huge"))
            huge.wait_for(timeout=CELLS_DONE_S * 1000)
            good = outputs.filter(has=page.locator(".pt2x-diff-title", has_text="compile 0/0 vs 0/1"))
            good.scroll_into_view_if_needed()
            _check_good(page, good)
            good.screenshot(path=str(ARTIFACTS / f"{name}-output.png"))

            # bad input: a clear error in the output area, not a blank
            bad = outputs.filter(has=page.locator(".pt2x-diff-error"))
            expect(bad).to_have_count(1)
            expect(bad.locator(".pt2x-diff-error-title")).to_contain_text(
                "PT2 Explorer could not show this diff"
            )
            expect(bad.locator(".pt2x-diff-error-list li")).to_have_text(
                ["sections[0].a: expected a string, got a number"]
            )
            bad.screenshot(path=str(ARTIFACTS / f"{name}-error.png"))

            # huge: cut in the browser, said so, and the page still answers at once
            huge.scroll_into_view_if_needed()
            expect(huge.locator(".pt2x-diff-note")).to_have_text(
                [
                    f"left side (0/0) cut to the first 5000 lines of {HUGE_LINES} in the browser",
                    f"right side (0/1) cut to the first 5000 lines of {HUGE_LINES} in the browser",
                ]
            )
            expect(huge.locator(".pt2x-diff-chunks")).to_have_text("52 changes")  # i % 97 == 0 below 5000
            start = time.monotonic()
            page.evaluate("() => new Promise(r => requestAnimationFrame(() => r(1)))")
            huge.locator(".pt2x-diff-next").click()
            huge.locator(".pt2x-diff-toggle").click()
            expect(huge.locator(".pt2x-diff-body")).to_be_hidden()
            print(f"huge diff: a frame and two clicks in {time.monotonic() - start:.2f} s")
            huge.screenshot(path=str(ARTIFACTS / f"{name}-huge.png"))

            # the same diff as a panel of the main area
            good.locator(".pt2x-diff-open").click()
            panel = page.locator(".jp-MainAreaWidget.pt2x-diff-main")
            expect(panel).to_be_visible()
            expect(page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current")).to_contain_text(
                "compile 0/0 vs 0/1"
            )
            expect(panel.locator(".pt2x-diff.pt2x-mod-panel")).to_be_visible()
            expect(panel.locator(".pt2x-diff-open")).to_have_count(0)
            guards = panel.locator('[data-section-id="guards"]')
            expect(guards.locator(".cm-merge-a .cm-changedLine")).to_contain_text("size=[4, 4]")
            expect(guards.locator(".cm-merge-b .cm-changedLine")).to_contain_text("size=[6, 4]")
            page.screenshot(path=str(ARTIFACTS / f"{name}-panel.png"))
            assert not errors, f"errors on the page: {errors}"
        except BaseException:
            if page is not None:
                try:
                    page.screenshot(path=str(ARTIFACTS / f"{name}-FAILED.png"))
                except Exception as e:  # the page may be gone; keep the original error
                    print(f"no failure screenshot: {e}", file=sys.stderr)
            print(f"--- jupyterlab log ---\n{lab['log'].read_text()[-4000:]}", file=sys.stderr)
            raise
        finally:
            browser.close()

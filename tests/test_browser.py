"""The explorer in a real browser: JupyterLab served from a temporary folder, Debian's Chromium
driven by Playwright (no ``playwright install``). A notebook loads the extension and runs a
``%%compile --backend eager`` cell with a graph break at a known line; the test runs all cells,
waits for the explorer widget, opens its "Graph breaks" tab and checks the break site and type
on the rendered page. Screenshots go to test-artifacts/browser/, on success and on failure.

Skipped without /usr/bin/chromium, unless PT2X_REQUIRE_BROWSER=1 (CI), which makes it fail.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts" / "browser"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",  # root in a container
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
REQUIRED = os.environ.get("PT2X_REQUIRE_BROWSER") == "1"
SERVER_START_S = 120
CELLS_DONE_S = 240  # kernel start, import torch, one eager compile, widget render

BREAK_CELL = """\
%%compile --backend eager
x = torch.ones(3)
if x.sum() > 0:  # the graph break: line 2 of the cell
    x = x + 1
y = x * 2"""
BREAK_LINE = 2  # the line of the `if` in the cell body (the %%compile line is not part of it)


def _unavailable(why: str) -> None:
    if REQUIRED:
        pytest.fail(f"{why}, and PT2X_REQUIRE_BROWSER=1")
    pytest.skip(why)


def _require_browser() -> None:
    if not os.path.exists(CHROMIUM):
        _unavailable(f"{CHROMIUM} not found (apt-get install -y chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _unavailable("the playwright package is not installed")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_notebook(folder: Path) -> str:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext explorer\nimport torch"),
        nbformat.v4.new_code_cell(BREAK_CELL),
    ]
    nbformat.write(nb, folder / "breaks.ipynb")
    return "breaks.ipynb"


def _lab_env(tmp: Path) -> dict[str, str]:
    """Everything JupyterLab and the kernel write goes under ``tmp``; this checkout is imported."""
    env = dict(os.environ)
    for var, sub in (
        ("JUPYTER_CONFIG_DIR", "config"),
        ("JUPYTER_DATA_DIR", "data"),
        ("JUPYTER_RUNTIME_DIR", "runtime"),
        ("JUPYTERLAB_SETTINGS_DIR", "settings"),
        ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"),
        ("IPYTHONDIR", "ipython"),
    ):
        (tmp / sub).mkdir(parents=True, exist_ok=True)
        env[var] = str(tmp / sub)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    # No "Would you like to get notified about official Jupyter news?" toast: JupyterLab 4 asks
    # while the setting fetchNews is "none", whatever the server's news_url.
    notification = (
        tmp / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    )
    notification.parent.mkdir(parents=True, exist_ok=True)
    notification.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    return env


def _request(url: str, token: str, method: str = "GET") -> int:
    req = urllib.request.Request(url, method=method, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(req, timeout=5) as r:
        return r.status


def _wait_for_server(proc: subprocess.Popen, base: str, token: str, log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"jupyter lab exited with {proc.returncode}:\n{log.read_text()[-4000:]}")
        try:
            if _request(f"{base}/api/status", token) == 200:
                return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    pytest.fail(f"jupyter lab did not answer in {SERVER_START_S} s:\n{log.read_text()[-4000:]}")


def _wait_for_kernel(base: str, token: str) -> None:
    """Until a kernel is idle with a browser connected to it (GET /api/kernels)."""
    deadline = time.monotonic() + SERVER_START_S
    kernels: list[dict] = []
    while time.monotonic() < deadline:
        req = urllib.request.Request(f"{base}/api/kernels", headers={"Authorization": f"token {token}"})
        with urllib.request.urlopen(req, timeout=5) as r:
            kernels = json.load(r)
        if any(k.get("connections", 0) >= 1 and k.get("execution_state") == "idle" for k in kernels):
            return
        time.sleep(0.5)
    pytest.fail(f"no idle kernel with a connection after {SERVER_START_S} s: {kernels}")


def _stop_server(proc: subprocess.Popen, base: str, token: str) -> None:
    """Shut down through the API (kernels first), then terminate, then kill our process."""
    if proc.poll() is None:
        try:
            _request(f"{base}/api/shutdown", token, method="POST")
            proc.wait(timeout=30)
        except (urllib.error.URLError, OSError, subprocess.TimeoutExpired):
            pass
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


@pytest.fixture
def lab(tmp_path):
    """A JupyterLab server on a free port with a random token, serving a notebook in tmp_path."""
    _require_browser()
    root = tmp_path / "root"
    root.mkdir()
    notebook = _write_notebook(root)
    token = secrets.token_hex(16)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "jupyterlab.log"
    cmd = [
        sys.executable, "-m", "jupyterlab",
        "--no-browser",
        "--allow-root",  # CI runs as root
        f"--IdentityProvider.token={token}",  # ServerApp.token is deprecated in jupyter_server 2
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={root}",
        # offline and quiet: no news feed, no update check (both would fetch from the internet)
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
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


@pytest.mark.slow
def test_graph_break_tab_in_jupyterlab(lab, request):
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect, sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    name = request.node.name
    for old in ARTIFACTS.glob(f"{name}*.png"):  # only this run's pictures
        old.unlink()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        page = None
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.set_default_timeout(60_000)
            page.goto(f"{lab['base']}/lab/tree/{lab['notebook']}?token={lab['token']}")
            page.locator(".jp-NotebookPanel .jp-Cell").first.wait_for()
            # JupyterLab starts the kernel from the notebook's kernelspec. "Run All Cells" before
            # the page is connected to it does nothing (or asks to select a kernel), so wait
            # for the kernel's websocket, then check that the cells were queued.
            _wait_for_kernel(lab["base"], lab["token"])
            for _attempt in range(3):
                page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
                page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
                started = page.locator(".jp-InputPrompt", has_text=re.compile(r"\[(\*|\d+)\]"))
                try:
                    started.first.wait_for(timeout=15_000)
                    break
                except PlaywrightTimeout:
                    continue
            else:
                pytest.fail("Run > Run All Cells did not start the cells")
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
            page.screenshot(path=str(ARTIFACTS / f"{name}.png"))
            page.locator(".jp-OutputArea-output", has=page.locator(".widget-tab")).screenshot(
                path=str(ARTIFACTS / f"{name}-widget.png")
            )
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

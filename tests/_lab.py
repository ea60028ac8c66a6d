"""JupyterLab and Chromium for the browser tests (tests/test_browser*.py): a JupyterLab server
on a free port with a random token, serving notebooks from a temporary folder (everything it
and its kernels write goes there too; this checkout is imported), and Debian's Chromium driven
by Playwright (no ``playwright install``) on one of those notebooks, its cells run. Screenshots
go to test-artifacts/browser/, on success and on failure.

Without /usr/bin/chromium or the playwright package the tests are skipped, unless
PT2X_REQUIRE_BROWSER=1 (CI), which makes them fail.
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
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
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
SERVER_START_S = 120  # the server answering; also a notebook's kernel idle with the page connected
VIEWPORT = {"width": 1400, "height": 1100}
DEFAULT_TIMEOUT_MS = 60_000


def unavailable(why: str) -> None:
    if REQUIRED:
        pytest.fail(f"{why}, and PT2X_REQUIRE_BROWSER=1")
    pytest.skip(why)


def require_browser() -> None:
    if not os.path.exists(CHROMIUM):
        unavailable(f"{CHROMIUM} not found (apt-get install -y chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        unavailable("the playwright package is not installed")


def require_extension() -> None:
    """The pt2-explorer lab extension (the diff renderer) installed in this venv: a failure,
    not a skip (``make install`` builds and installs it)."""
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


def notebook(*cells: str) -> nbformat.NotebookNode:
    """A Python 3 notebook of code cells."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    return nb


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def lab_env(tmp: Path) -> dict[str, str]:
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


def _get_json(url: str, token: str):
    req = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(req, timeout=5) as r:
        return json.load(r)


@dataclass
class Lab:
    base: str  # http://127.0.0.1:<port>
    token: str
    root: Path  # the folder it serves
    log: Path  # its stdout and stderr

    def url(self, notebook: str) -> str:
        return f"{self.base}/lab/tree/{urllib.parse.quote(notebook)}?token={self.token}"

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

    def wait_for_kernel(self, notebook: str) -> None:
        """Until the notebook's kernel is idle with a browser connected to it (GET
        /api/sessions). A kernel still starting can make the server answer 500 (jupyter_server
        reads its ``last_activity`` before it is set): asked again."""
        deadline = time.monotonic() + SERVER_START_S
        sessions: list[dict] = []
        while time.monotonic() < deadline:
            try:
                sessions = _get_json(f"{self.base}/api/sessions", self.token)
            except (urllib.error.URLError, OSError, ValueError):
                sessions = []
            for s in sessions:
                k = s.get("kernel") or {}
                if s.get("path") == notebook and k.get("connections", 0) >= 1:
                    if k.get("execution_state") == "idle":
                        return
            time.sleep(0.5)
        pytest.fail(f"no idle kernel with a connection for {notebook} after {SERVER_START_S} s: {sessions}")


def _wait_for_server(proc: subprocess.Popen, lab: Lab) -> None:
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"jupyter lab exited with {proc.returncode}:\n{lab.log_tail()}")
        try:
            if _request(f"{lab.base}/api/status", lab.token) == 200:
                return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    pytest.fail(f"jupyter lab did not answer in {SERVER_START_S} s:\n{lab.log_tail()}")


def _stop_server(proc: subprocess.Popen, lab: Lab) -> None:
    """Shut down through the API (kernels first), then terminate, then kill our process."""
    if proc.poll() is None:
        try:
            _request(f"{lab.base}/api/shutdown", lab.token, method="POST")
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


@contextmanager
def serve(tmp: Path, notebooks: dict[str, nbformat.NotebookNode]) -> Iterator[Lab]:
    """JupyterLab serving ``notebooks`` (name: notebook) from ``tmp``/root, stopped on exit.
    For a fixture: ``with serve(tmp_path_factory.mktemp("lab"), {...}) as lab: yield lab``."""
    require_browser()
    root = tmp / "root"
    root.mkdir()
    for name, nb in notebooks.items():
        nbformat.write(nb, root / name)
    token = secrets.token_hex(16)
    port = free_port()
    lab = Lab(base=f"http://127.0.0.1:{port}", token=token, root=root, log=tmp / "jupyterlab.log")
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
    with open(lab.log, "wb") as out:
        proc = subprocess.Popen(
            cmd,
            cwd=root,
            env=lab_env(tmp),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        _wait_for_server(proc, lab)
        yield lab
    finally:
        _stop_server(proc, lab)


@dataclass
class Session:
    """A Chromium page showing one notebook of ``lab``, its cells started."""

    page: object  # playwright.sync_api.Page
    name: str  # the test's name: screenshots are <name>-<what>.png
    errors: list[str] = field(default_factory=list)  # uncaught errors on the page

    def shot(self, what: str | None = None, locator=None) -> Path:
        """A screenshot of the page, or of ``locator``, as test-artifacts/browser/<name>-<what>.png
        (<name>.png without ``what``)."""
        path = ARTIFACTS / (f"{self.name}-{what}.png" if what else f"{self.name}.png")
        (locator or self.page).screenshot(path=str(path))
        return path


def _run_all(page, lab: Lab, notebook: str) -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    # JupyterLab starts the kernel from the notebook's kernelspec. "Run All Cells" before the
    # page is connected to it does nothing (or asks to select a kernel), so wait for the
    # kernel's websocket, then check that the cells were queued.
    lab.wait_for_kernel(notebook)
    for _attempt in range(3):
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
        started = page.locator(".jp-InputPrompt", has_text=re.compile(r"\[(\*|\d+)\]"))
        try:
            started.first.wait_for(timeout=15_000)
            return
        except PlaywrightTimeout:
            continue
    pytest.fail("Run > Run All Cells did not start the cells")


@contextmanager
def run_notebook(lab: Lab, notebook: str, name: str) -> Iterator[Session]:
    """Chromium on ``notebook``, Run > Run All Cells clicked and the cells started; yields
    before they finish. Removes this test's old screenshots first; on any failure takes
    <name>-FAILED.png and prints the tail of JupyterLab's log."""
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for old in ARTIFACTS.glob(f"{name}*.png"):  # only this run's pictures
        old.unlink()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        page = None
        try:
            page = browser.new_page(viewport=VIEWPORT)
            page.set_default_timeout(DEFAULT_TIMEOUT_MS)
            session = Session(page, name)
            page.on("pageerror", lambda e: session.errors.append(str(e)))
            page.goto(lab.url(notebook))
            # the notebook's own panel: JupyterLab's workspace also restores the notebooks
            # earlier tests opened, as hidden tabs (Lumino's lm-mod-hidden)
            page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").first.wait_for()
            _run_all(page, lab, notebook)
            yield session
        except BaseException:
            if page is not None:
                try:
                    page.screenshot(path=str(ARTIFACTS / f"{name}-FAILED.png"))
                except Exception as e:  # the page may be gone; keep the original error
                    print(f"no failure screenshot: {e}", file=sys.stderr)
            print(f"--- jupyterlab log ---\n{lab.log_tail()}", file=sys.stderr)
            raise
        finally:
            browser.close()

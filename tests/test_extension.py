"""The JupyterLab extension (extension/) as a package: one version for the Python and npm
packages, its JavaScript unit tests (vitest, run through ``npm test``), and the wheel: built
from this tree, installed into a fresh venv, JupyterLab lists the prebuilt extension as
enabled and OK.

The renderer in a browser: tests/test_browser_diff.py.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parent.parent
EXT = ROOT / "extension"
NAME = "pt2-explorer"  # the npm package, the labextension's folder and the Python distribution


def _npm_version() -> str:
    return json.loads((EXT / "package.json").read_text())["version"]


def test_one_version_for_python_and_npm():
    """extension/package.json is the only place the version is written (hatch-nodejs-version);
    the installed distribution and the built extension carry the same one."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["hatch"]["version"] == {"source": "nodejs", "path": "extension/package.json"}
    version = _npm_version()
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)
    assert importlib.metadata.version(NAME) == version, "the venv's install is stale: make install"
    built = EXT / "labextension" / "package.json"
    if built.exists():
        assert json.loads(built.read_text())["version"] == version


def test_js_unit_tests():
    """The renderer's pure logic (payload validation, caps, plan, line diff) under vitest."""
    npm = shutil.which("npm")
    if npm is None or not (EXT / "node_modules" / ".bin" / "vitest").exists():
        pytest.fail("npm and extension/node_modules are needed: make extension (or make install)")
    run = subprocess.run(
        [npm, "test", "--silent", "--", "--reporter=default", "--no-color"],
        cwd=EXT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_COLOR": "1", "CI": "1"},
    )
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-6000:]
    tests = re.search(r"Tests\s+(\d+) passed \((\d+)\)", out)
    assert tests, out[-3000:]
    assert tests.group(1) == tests.group(2)
    print(f"vitest: {tests.group(1)} passed")


@pytest.mark.install
def test_wheel_ships_the_prebuilt_extension(tmp_path):
    """Build the wheel (pip, in an isolated build env; the extension built by `make extension`
    is taken as it is), install it into a fresh venv and ask JupyterLab there.

    The fresh venv gets the wheel alone (no dependencies); JupyterLab is imported from this
    venv through a .pth line, so the listing is the fresh venv's share/jupyter, where only
    the wheel put anything, without installing JupyterLab again (~100 s here)."""
    if not (EXT / "labextension" / "package.json").exists():
        pytest.fail("extension/labextension is not built: make extension")
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(dist)],
        check=True,
        timeout=600,
    )
    (wheel,) = dist.glob("pt2_explorer-*.whl")
    assert wheel.name.startswith(f"pt2_explorer-{_npm_version()}-")
    prefix = f"pt2_explorer-{_npm_version()}.data/data/share/jupyter/labextensions/{NAME}/"
    names = zipfile.ZipFile(wheel).namelist()
    shipped = sorted(n[len(prefix) :] for n in names if n.startswith(prefix))
    assert {"package.json", "install.json", "static/style.js"} <= set(shipped)
    assert any(re.fullmatch(r"static/remoteEntry\.[0-9a-f]+\.js", n) for n in shipped), shipped
    assert not [n for n in names if "node_modules" in n or n.startswith("extension/")]  # no sources
    assert "explorer/static/graphview.js" in names  # the graph view's component (git-ignored)
    assert "explorer/static/highlight.js" in names  # the static page's code highlighting

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", str(wheel)],
        check=True,
        timeout=300,
    )
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (site / "zz_jupyterlab_from_the_test_venv.pth").write_text(sysconfig.get_path("purelib") + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
    for var in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR"):
        env[var] = str(tmp_path / var.lower())
    listing = subprocess.run(
        [str(python), "-m", "jupyterlab.labextensions", "list"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    out = re.sub(r"\x1b\[[0-9;]*m", "", listing.stdout + listing.stderr)  # colours
    assert listing.returncode == 0, out
    section = out.split(f"{venv}/share/jupyter/labextensions", 1)
    assert len(section) == 2, f"nothing listed from the fresh venv:\n{out}"
    line = re.search(rf"^\s+{NAME} v(\S+) (\w+) (\w+) \(python, {NAME}\)$", section[1], re.M)
    assert line, out
    assert line.groups() == (_npm_version(), "enabled", "OK"), out

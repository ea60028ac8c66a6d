"""binder/ is what mybinder.org (repo2docker) builds: its base environment (JupyterLab 4,
ipywidgets 8, Node.js), then `pip install -r binder/requirements.txt`, apt.txt's packages, and
binder/postBuild run from the repository root. This test builds that environment the same way,
as far as this machine allows — a fresh venv instead of repo2docker's conda environment, the
system's apt packages instead of apt.txt's — in a copy of the repository, and runs the tour in it
under nbclient with that venv's own kernel: the package must come from what binder installed,
not from this checkout. It takes a few minutes (torch and JupyterLab are installed afresh) and
leaves nothing behind (tmp_path)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BINDER = ROOT / "binder"
# What repo2docker's base environment provides (repo2docker/buildpacks/conda/environment.yml:
# jupyterlab==4.*, ipywidgets==8.*, nodejs, notebook==7.*); ipykernel and nbclient run the tour.
BASE = ["jupyterlab>=4,<5", "ipywidgets>=8,<9", "ipykernel", "nbclient", "nbformat"]

RUN_TOUR = textwrap.dedent(
    """
    import json, runpy, sys
    import nbformat

    execute = runpy.run_path(sys.argv[1])["execute"]  # tests/_nbclient.py, by path
    nb = nbformat.read("00_tour.ipynb", as_version=4)
    execute(nb, timeout=300, cwd=".")
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    widgets = [o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    print(json.dumps({"errors": sum(o.output_type == "error" for o in outputs), "widgets": len(widgets)}))
    """
)


def _run(args, **kw):
    proc = subprocess.run(args, capture_output=True, text=True, **kw)
    assert proc.returncode == 0, (
        f"{args} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    )
    return proc.stdout


def _copy_repository(dest: Path) -> None:
    """The files repo2docker would see: tracked and untracked, minus what git ignores."""
    files = _run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT).split("\0")
    for name in filter(None, files):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


def test_binder_files_are_what_repo2docker_reads():
    assert sorted(p.name for p in BINDER.iterdir()) == ["apt.txt", "postBuild", "requirements.txt"]
    assert os.access(BINDER / "postBuild", os.X_OK), "postBuild must be executable"
    reqs = [ln.strip() for ln in (BINDER / "requirements.txt").read_text().splitlines()]
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in reqs  # the CPU wheel
    assert "torch==2.13.0" in reqs
    apt = [ln.partition("#")[0].strip() for ln in (BINDER / "apt.txt").read_text().splitlines()]
    assert "g++" in apt  # Inductor's C++ kernels on the CPU


@pytest.mark.install
@pytest.mark.slow
def test_binder_environment_runs_the_tour(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is needed to list the repository's files")
    repo = tmp_path / "repo"
    _copy_repository(repo)
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    bin_dir = venv / "bin"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        VIRTUAL_ENV=str(venv),
        PIP_RETRIES="0",  # an unreachable index (no network to download.pytorch.org) fails fast
        IPYTHONDIR=str(tmp_path / ".ipython"),
        JUPYTER_CONFIG_DIR=str(tmp_path / ".jupyter"),
        JUPYTER_DATA_DIR=str(tmp_path / ".jupyter-data"),
    )
    pip = [str(bin_dir / "python"), "-m", "pip", "install", "-q"]
    _run([*pip, *BASE], env=env)  # repo2docker's base environment
    _run([*pip, "-r", "binder/requirements.txt"], cwd=repo, env=env)
    _run(["bash", "binder/postBuild"], cwd=repo, env=env)

    # installed from the copy, not importable from this checkout
    where = _run(
        [str(bin_dir / "python"), "-c", "import compiler, explorer; print(compiler.__file__)"],
        cwd=tmp_path,
        env=env,
    )
    assert where.strip().startswith(str(venv)), where
    if (repo / "extension" / "package.json").exists():  # the JupyterLab extension the wheel ships
        name = json.loads((repo / "extension" / "package.json").read_text())["name"]
        listing = subprocess.run(
            [str(bin_dir / "jupyter"), "labextension", "list"], capture_output=True, text=True, env=env
        )
        assert name in listing.stdout + listing.stderr, listing.stdout + listing.stderr

    nbclient_helper = str(Path(__file__).with_name("_nbclient.py"))
    result = _run([str(bin_dir / "python"), "-c", RUN_TOUR, nbclient_helper], cwd=repo / "notebooks", env=env)
    summary = json.loads(result.strip().splitlines()[-1])
    assert summary["errors"] == 0 and summary["widgets"] >= 2, result  # the two %%compile explorers

"""A report's paths without the recording machine: ``compiler.relative_paths`` and
``pt2-explorer report R --relative-paths ROOT``, on a real H100 TORCH_TRACE whose files torch
interned itself (tests/fixtures/traces, recorded under /work/steering with torch installed in
/opt/torch/.venv), and on the recordings shipped in notebooks/data."""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _torch_trace import read_log

import compiler
import explorer
from compiler.model._paths import frame_kind

HERE = Path(__file__).parent
TRACE = HERE / "fixtures" / "traces" / "h100-torch211-breaks.log.gz"
DATA = HERE.parent / "notebooks" / "data"
ROOT = "/work/steering"  # where the trace's script ran
VENV = "/opt/torch/.venv/lib/python3.12/site-packages/"  # where its torch was installed


def test_relative_text():
    from compiler.model._relpaths import relative_text

    text = (
        'File "/work/steering/probes/a.py", line 3, in f\n'
        "  /opt/v/lib/python3.12/site-packages/torch/nn/modules/module.py:1775\n"
        "# File: /work/steering/b.py:9 in forward, code: x = y\n"
        "/x/work/steering/c.py /work/steeringx/d.py site-packages/e.py (/usr/lib/python3.12/f.py)"
    )
    assert relative_text(text, "/work/steering/") == (
        'File "probes/a.py", line 3, in f\n'
        "  site-packages/torch/nn/modules/module.py:1775\n"
        "# File: b.py:9 in forward, code: x = y\n"
        "/x/work/steering/c.py /work/steeringx/d.py site-packages/e.py (/usr/lib/python3.12/f.py)"
    )
    assert relative_text("/a/dist-packages/numpy/x.py", "/") == "site-packages/numpy/x.py"


def test_trace_paths_relative_to_their_project():
    """Every file torch interned in the trace (its ``str`` events), as the report names it
    after the rewrite: the script's relative to the project, torch's as site-packages/torch/…,
    still torch's own (frame kinds and the user's innermost frame unchanged)."""
    interned = {m["str"][0] for m, _ in read_log(str(TRACE)) if "str" in m}
    assert f"{ROOT}/probes/gpu_traces.py" in interned and any(f.startswith(VENV + "torch/") for f in interned)
    report = compiler.load_trace(TRACE)
    rel = compiler.relative_paths(report, ROOT)
    assert [(f.name, f.filename, f.line) for f in rel.frames] == [
        ("forward", "probes/gpu_traces.py", 11),
        ("torch_dynamo_resume_in_forward_at_13", "probes/gpu_traces.py", 13),
    ]
    (b,) = rel.graph_breaks
    (b0,) = report.graph_breaks
    assert (b.filename, b.line, b.type) == ("probes/gpu_traces.py", 13, b0.type)
    expected = [
        (s.filename.replace(ROOT + "/", "").replace(VENV, "site-packages/"), s.line, s.kind)
        for s in b0.user_stack
    ]
    assert [(s.filename, s.line, s.kind) for s in b.user_stack] == expected
    assert {s.kind for s in b.user_stack} == {"user", "torch"}
    assert all(frame_kind(s.filename) == s.kind for s in b.user_stack)
    text = rel.to_json()
    assert ROOT not in text and "/site-packages/" not in text and "/opt/torch" not in text
    got = {f for f in interned if f in report.to_json()}
    assert got and all(f.replace(ROOT + "/", "").replace(VENV, "site-packages/") in text for f in got)


@pytest.mark.child
def test_report_rewrites_its_file(tmp_path):
    """``report R --relative-paths ROOT`` writes R back, and says so in one line."""
    r = tmp_path / "r.json.gz"
    compiler.load_trace(TRACE).to_json(r)
    run = subprocess.run(
        [sys.executable, "-m", "explorer", "report", str(r), "--relative-paths", ROOT],
        capture_output=True,
        text=True,
        cwd=HERE.parent,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == f"report: {r} (paths relative to {ROOT})"
    assert compiler.load(r).frames[0].filename == "probes/gpu_traces.py"


@pytest.mark.parametrize("path", sorted(DATA.glob("h*.json.gz")), ids=lambda p: p.name)
def test_shipped_recordings_name_no_machine_path(path):
    """The recordings in notebooks/data name their project's files relative to it and installed
    packages as site-packages/… (Inductor's cache under /tmp, the system's standard library and
    compiler, and the environment a runnable repro sets stay as they were)."""
    text = gzip.decompress(path.read_bytes()).decode()
    assert "/work/" not in text and "/site-packages/" not in text
    if "modes" not in path.name:
        report = compiler.load(path)
        files = {f.filename for f in report.frames}
        assert files and all(
            not f.startswith("/") or f.startswith(("/tmp/", "/usr/lib/python")) for f in files
        )


def test_shipped_copy_still_unchanged_by_a_second_rewrite(tmp_path):
    """The rewrite is idempotent: a shipped recording rewritten again, and again, is the same
    report. (The shipped recordings predate the cut of Inductor's cache directory, named after
    the user, to ``torchinductor/…``: the first rewrite here makes that cut.)"""
    src = DATA / "h100-why-launch.json.gz"
    copy = tmp_path / src.name
    shutil.copy(src, copy)
    once = compiler.relative_paths(compiler.load(copy), "/work/main")
    assert "/torchinductor_root/" not in once.to_json()
    again = compiler.relative_paths(once, "/work/main")
    assert again.to_json() == once.to_json()


def test_a_shared_reports_installed_files_shown_from_their_package():
    """A path cut to site-packages/… is shown as an absolute one is: from its package
    (``transformers/modeling_utils.py:4635``, as torch's guard comments name it); the
    project's own files as the report names them. The GPT-2 training step (notebooks/data):
    its break inside transformers' loss, reached from examples/train_step.py:30."""
    from explorer.base._words import where

    assert where("site-packages/transformers/x.py", 3) == "transformers/x.py:3"
    assert where("/opt/v/lib/python3.12/site-packages/torch/y.py", 4) == "torch/y.py:4"
    report = compiler.load(DATA / "h100-gpt2-train-bench.json.gz")
    b = next(b for b in report.graph_breaks if b.type.startswith("logging.Logger"))
    assert (b.filename, b.line) == ("site-packages/transformers/modeling_utils.py", 4635)
    text = explorer.text(report, "breaks")
    assert text.startswith("transformers/modeling_utils.py:4635  logging.Logger method not supported")
    assert "  your code: examples/train_step.py:30 in train_step\n" in text and "site-packages" not in text


def test_a_relative_file_read_from_the_project_above_the_working_directory(monkeypatch, tmp_path):
    """The shipped break (notebooks/data/h100-why-break.json.gz) names
    notebooks/data/make_why_data.py: its lines show from the repository's root and from
    notebooks/ (where the notebooks run), found from the nearest directory above that holds
    it; from elsewhere, no lines, as for any file not on this machine."""
    report = compiler.load(DATA / "h100-why-break.json.gz")
    (b,) = report.graph_breaks
    assert b.filename == "notebooks/data/make_why_data.py"
    source = (DATA / "make_why_data.py").read_text().splitlines()
    shown = f"  > {b.line} | {source[b.line - 1]}"
    for cwd in (DATA.parent.parent, DATA.parent):
        monkeypatch.chdir(cwd)
        assert shown in explorer.text(report, "breaks").splitlines(), cwd
    monkeypatch.chdir(tmp_path)
    assert not any(ln.startswith(f"  > {b.line} |") for ln in explorer.text(report, "breaks").splitlines())

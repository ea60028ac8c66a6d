"""``pt2-explorer diff`` of a cold run and a warm one: each a fresh process sharing one cache
dir and one job id (``TORCH_COMPILE_JOB_ID``: torch then keeps its profile of dynamic
dimensions beside the caches). The cold run recompiles for a second batch size; the warm run
compiles that dimension dynamic at once and has no recompile. The diff says the warm run had
no such compile, never that it lost ops, and pairs each cache lookup with its own (forward with
forward, backward with backward), as torch's own logs of the two runs say them."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import pytest

import compiler
import explorer
from tests._caches import with_user_caches
from tests._torch_trace import read_log

pytestmark = [pytest.mark.child]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = """\
import torch

def f(x, w):
    return torch.nn.functional.gelu(x @ w)

g = torch.compile(f)
w = torch.randn(16, 16, requires_grad=True)
for n in (8, 12):
    g(torch.randn(n, 16), w).sum().backward()
"""


def _record(tmp_path, name: str) -> tuple[str, list]:
    env = {
        k: v for k, v in with_user_caches(dict(os.environ)).items() if k not in ("TORCH_TRACE", "TORCH_LOGS")
    }
    env.update(
        TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "cache"),
        TORCH_COMPILE_JOB_ID="diff-warm",
        TORCH_TRACE=str(tmp_path / f"trace-{name}"),
        PYTHONPATH=ROOT,
    )
    out = tmp_path / f"{name}.json"
    cmd = [sys.executable, "-m", "explorer", "record", "-q", "--json", str(out), "step.py"]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (log,) = glob.glob(str(tmp_path / f"trace-{name}" / "*.log"))
    return str(out), read_log(log)


def _compiles(records) -> list[str]:
    return [f"{m['frame_id']}/{m['frame_compile_id']}" for m, _ in records if "compilation_metrics" in m]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("diffwarm")
    (tmp / "step.py").write_text(SCRIPT)
    return tmp, _record(tmp, "cold"), _record(tmp, "warm")


def test_the_warm_run_had_no_compile_of_the_recompile(runs):
    tmp, (cold, cold_log), (warm, warm_log) = runs
    assert _compiles(cold_log) == ["0/0", "0/1"] and _compiles(warm_log) == ["0/0"]  # torch's own count
    a, b = compiler.load(cold), compiler.load(warm)
    d = explorer.diff(a, b, labels=("cold", "warm"))
    ops = a.compile("0/1").stages.decompose.ops_before
    assert ops == {"operator.matmul": 1, "torch._C._nn.gelu": 1}
    assert (
        d.summary[0] == "warm had no compile of 0/1 f (cold's 2 Dynamo ops there are not counted as changes)"
    )
    assert not any(ln.startswith(("Dynamo ops:", "ATen ops:", "compiles:")) for ln in d.summary), d.summary
    shown = subprocess.run(
        [sys.executable, "-m", "explorer", "diff", "cold.json", "warm.json"],
        cwd=tmp,
        env={**os.environ, "PYTHONPATH": ROOT},
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout
    assert (
        "  warm.json had no compile of 0/1 f (cold.json's 2 Dynamo ops there are not counted as changes)\n"
        in shown
    )
    assert "Dynamo ops:" not in shown and "−1" not in shown


def test_each_cache_lookup_is_paired_with_its_own(runs):
    """torch looks up the FX graph cache for the forward, then the backward: the diff pairs the
    cold run's forward lookup with the warm run's forward one (the key's ``is_backward`` is never
    a difference) and says the two answers once, counted."""
    _, (cold, cold_log), (warm, warm_log) = runs
    answers = {}
    for name, log in (("cold", cold_log), ("warm", warm_log)):
        answers[name] = [
            (m["artifact"]["name"], json.loads(p).get("components", []))
            for m, p in log
            if (m.get("artifact") or {}).get("name", "").startswith("fx_graph_cache_")
            and m["frame_compile_id"] == 0
        ]
    backward = [[any("is_backward]: True" in c for c in comps) for _, comps in answers[n]] for n in answers]
    assert backward == [[False, True], [False, True]]  # torch's order: forward, then backward
    assert [n for n, _ in answers["cold"]] == ["fx_graph_cache_miss"] * 2
    assert [n for n, _ in answers["warm"]] == ["fx_graph_cache_hit"] * 2
    d = explorer.diff(compiler.load(cold), compiler.load(warm), labels=("cold", "warm"))
    assert "0/0 fx_graph cache miss → hit ×2" in d.summary and "0/0 aotautograd cache miss → hit" in d.summary
    assert not any("is_backward" in ln for ln in d.summary), d.summary

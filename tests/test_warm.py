"""A warm start, as a user's second run: ``pt2-explorer record`` keeps Inductor's FX-graph and
AOTAutograd caches (the default), the report says per compile what came from the cache as
torch's own structured trace says it (read directly from the TORCH_TRACE log of the warm run),
and the fill-in started after the program gives the kernels the nodes and lines a ``--fresh``
recording (caches off, every stage run) gives them. Real model: the GPT-2 training step of
tests/hf_corpus.py from a small config, each run a fresh process sharing one cache dir."""

from __future__ import annotations

import glob
import os
import re
import subprocess
import sys
import time

import pytest

import compiler
import compiler._viewer
from explorer.model._stages import _kernel_lines
from tests._caches import with_user_caches
from tests._torch_trace import read_log

pytestmark = [pytest.mark.child, pytest.mark.corpus]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEP = "import hf_corpus\nprint(float(hf_corpus.gpt2_train('inductor')))\n"
_CACHE_ARTIFACT = re.compile(r"^(fx_graph|aotautograd)_cache_(hit|miss|bypass)$")


def _run(cmd, tmp_path, **env):
    # the caches as a user has them: conftest.py turns them off for the other tests' processes
    full = {
        k: v for k, v in with_user_caches(dict(os.environ)).items() if k not in ("TORCH_TRACE", "TORCH_LOGS")
    }
    full.update(
        TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=os.pathsep.join([ROOT, f"{ROOT}/tests"])
    )
    full.update(env)
    proc = subprocess.run(cmd, cwd=tmp_path, env=full, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def _torch_cache_answers(log_dir) -> dict[str, list[tuple[str, str]]]:
    """compile id -> [(cache, state)] in torch's order, from torch's own artifacts."""
    out: dict[str, list[tuple[str, str]]] = {}
    for path in sorted(glob.glob(f"{log_dir}/*.log")):
        for meta, _payload in read_log(path):
            name = meta.get("artifact", {}).get("name", "")
            m = _CACHE_ARTIFACT.match(name)
            if m:
                out.setdefault(f"{meta['frame_id']}/{meta['frame_compile_id']}", []).append(m.groups())
    return out


def _wait(pid: int, timeout: float = 900) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(1)
    raise AssertionError(f"the fill-in (pid {pid}) did not end")


def test_warm_record_says_what_came_from_the_cache_and_the_fill_in_matches_fresh(tmp_path):
    (tmp_path / "step.py").write_text(STEP)
    py = sys.executable
    _run([py, "step.py"], tmp_path)  # the user's first run: fills the caches
    _run([py, "-m", "explorer", "record", "--fresh", "-q", "--json", "fresh.json", "step.py"], tmp_path)
    warm = _run(
        [py, "-m", "explorer", "record", "--json", "warm.json", "step.py"],
        tmp_path,
        TORCH_TRACE=str(tmp_path / "trace"),
    )
    torch_says = _torch_cache_answers(tmp_path / "trace")
    hits = {cid for cid, answers in torch_says.items() if ("fx_graph", "hit") in answers}
    assert hits  # the second run is warm, as torch itself logged

    m = re.search(r"in the background \(pid (\d+),", warm.stderr)
    assert m, warm.stderr[-2000:]
    before = compiler.load(tmp_path / "warm.json")  # written first, before the fill-in ends
    fresh = compiler.load(tmp_path / "fresh.json")
    for c in before.compiles:
        ours = [(lk.kind, lk.state) for lk in c.caches]
        assert ours == torch_says.get(c.id, []), c.id
        if c.id in hits:
            assert compiler._viewer.fill_reason(c) is not None
    # the run's caches in one line of the summary, as torch answered; no instruction to fill in
    # (the fill-in runs, as the line on stderr says), and no placeholder path
    cached = sum(1 for answers in torch_says.values() if any(s == "hit" for _k, s in answers))
    looked = sum(1 for answers in torch_says.values() if answers)
    assert f"  caches: {cached} of {looked} compiles from the cache" in warm.stdout
    assert "--fill" not in warm.stdout + warm.stderr and "REPORT.json" not in warm.stdout
    _wait(int(m.group(1)))
    after = compiler.load(tmp_path / "warm.json")
    for c in after.compiles:
        if c.id not in hits:
            continue
        assert c.regenerated is not None and c.regenerated.state == "filled", c.regenerated
        assert c.regenerated.same_code is True
        f = next(x for x in fresh.compiles if x.id == c.id)
        ours = {k.name: set(k.nodes) for k in after.kernels_of(c.id)}
        theirs = {k.name: set(k.nodes) for k in fresh.kernels_of(f.id)}
        assert ours.keys() == theirs.keys()
        assert {k.role for k in after.kernels_of(c.id)} == {"forward", "backward"}
        assert all(ours.values())  # every kernel, forward and backward, has its nodes
        # every kernel the fresh recording maps has the same nodes; the fill-in also maps the
        # backward kernels, which the fresh recording's provenance leaves without nodes
        assert {n: ours[n] for n, v in theirs.items() if v} == {n: v for n, v in theirs.items() if v}
        # and the same source lines (a set: the order of a kernel's nodes is not a fact)
        fresh_lines = _lines(fresh, f)
        assert {n: line for n, line in _lines(after, c).items() if n in fresh_lines} == fresh_lines


def _lines(report, c) -> dict[str, set[str]]:
    return {n: set(text.split(", ")) for n, text in _kernel_lines(report, c, most=10**6).items()}

"""Mode, caches and CUDA graphs per compile, checked against torch's own structured trace read
directly (the runnable repro's config lines, the cache artifacts' JSON), on CPU. The CUDA-graph
runs and skips on a GPU are in tests/test_gpu_speed.py."""

from __future__ import annotations

import dataclasses
import gzip
import json
import logging
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import compiler
import compiler._viewer
import explorer
from explorer.model._speed import cache_detail_lines
from tests._caches import with_user_caches
from tests._torch_trace import RawTrace, read_log

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures" / "traces"

# torch.compile's modes as the options they set (torch/_inductor/__init__.py, list_mode_options)
_MODE = {(False, False): "default", (True, False): "reduce-overhead"}
_MODE |= {(True, True): "max-autotune", (False, True): "max-autotune-no-cudagraphs"}


def _torch_config_lines(records) -> dict[str, str]:
    """compile id -> the runnable repro's text, as torch logged it."""
    out = {}
    for meta, payload in records:
        if meta.get("artifact", {}).get("name") == "fx_graph_runnable":
            out[f"{meta['frame_id']}/{meta['frame_compile_id']}"] = payload
    return out


def _expected_mode(runnable: str) -> str:
    def on(name):
        m = re.search(rf"^torch\._inductor\.config\.{re.escape(name)} = (\w+)$", runnable, re.M)
        return bool(m) and m.group(1) == "True"

    return _MODE[(on("triton.cudagraphs"), on("max_autotune"))]


def _f(x):
    return (x.cos() + 2).relu() * 3


@pytest.mark.parametrize(
    ("kwargs", "mode", "dynamic"),
    [
        ({}, "default", None),
        ({"mode": "reduce-overhead"}, "reduce-overhead", None),
        ({"mode": "max-autotune-no-cudagraphs", "dynamic": False}, "max-autotune-no-cudagraphs", False),
        ({"dynamic": True}, "default", True),
    ],
)
def test_mode_and_dynamic_of_each_compile_as_torch_logged_them(kwargs, mode, dynamic):
    torch._dynamo.reset()
    with RawTrace() as raw, compiler.recording(caches=False) as rec:
        torch.compile(_f, **kwargs)(torch.randn(8, 8))
    (c,) = rec.report.compiles
    runnable = _torch_config_lines(raw.records)[c.id]
    assert _expected_mode(runnable) == mode  # torch's own lines say the mode we asked for
    assert (c.config.mode, c.config.dynamic, c.config.backend) == (mode, dynamic, "inductor")
    assert c.config.source == "runnable repro"
    # what the recording set is told apart from the user's options
    assert c.config.set_by_recording == {"fx_graph_cache": "False", "trace.provenance_tracking_level": "2"}
    if mode == "reduce-overhead":
        assert c.config.options["triton.cudagraphs"] == "True"
        # on the CPU there is nothing for CUDA graphs to replay: said, in the summary too
        assert c.cudagraphs.state == "skipped" and c.cudagraphs.when == "compile"
        assert "[0/0] _f: mode reduce-overhead · CUDA graphs: skipped — the graph has no CUDA work" in (
            explorer.text(rec.report, "summary")
        )
    else:
        assert c.cudagraphs is None


@pytest.mark.parametrize(
    ("fixture", "modes"),
    [
        ("cpu-torch260-breaks.log.gz", {"default"}),
        ("cpu-torch271-breaks.log.gz", {"default"}),
        ("cpu-torch213-breaks.log.gz", {"default"}),
        ("h100-torch211-cudagraphs.log.gz", {"reduce-overhead"}),
    ],
)
def test_mode_read_from_logs_of_each_torch_version(fixture, modes):
    path = FIXTURES / fixture
    records = read_log(str(path))
    runnables = _torch_config_lines(records)
    report = compiler.load_trace(str(path))
    with_runnable = [c for c in report.compiles if c.id in runnables]
    assert with_runnable, "the fixture has runnable repros"
    for c in with_runnable:
        assert c.config.mode == _expected_mode(runnables[c.id])
    assert {c.config.mode for c in with_runnable} == modes
    if "reduce-overhead" in modes:  # a TORCH_TRACE log: torch's run-time metrics time the wrapping
        (c,) = with_runnable
        wrap = sum(
            m["compilation_metrics_runtime"].get("runtime_cudagraphify_time_us") or 0
            for m, _ in records
            if "compilation_metrics_runtime" in m
        )
        assert (c.cudagraphs.state, c.cudagraphs.cudagraphify_s) == ("used", wrap / 1e6)


def test_the_cudagraphs_loggers_warnings_still_reach_the_users_handlers():
    """The recording listens to Inductor's cudagraphs loggers at DEBUG; what they showed the
    user before (warnings) still reaches the user's handlers, their debug lines do not."""
    log = torch._logging.getArtifactLogger("torch._inductor.cudagraph_trees", "cudagraphs")
    seen: list[str] = []

    class Mine(logging.Handler):
        def emit(self, record):
            seen.append(record.getMessage())

    before = (log.level, log.propagate, list(log.handlers))
    mine = Mine(level=logging.DEBUG)
    logging.getLogger("torch._inductor").addHandler(mine)
    try:
        log.warning("skipping cudagraphs due to a test (1)")
        without_us = list(seen)
        seen.clear()
        with compiler.recording() as rec:
            log.warning("skipping cudagraphs due to a test (1)")
            log.debug("[0/0] Recording function=f, mode=FORWARD, cuda_graph_id=0, inputs: []")
    finally:
        logging.getLogger("torch._inductor").removeHandler(mine)
    assert seen == without_us  # the same warnings as without a recording, no debug line
    assert (log.level, log.propagate, list(log.handlers)) == before  # restored on exit
    assert sum(1 for e in rec.events if e.name == "log:cudagraphs") == 2


_WARM = textwrap.dedent(
    """
    import sys, torch, torch._dynamo, compiler
    def f(x):
        return (x.sin() + 1).relu() * 2
    x = torch.randn(16, 16)
    torch.compile(f)(x)  # a plain compile: the cache is written, TORCH_TRACE logs its key
    torch._dynamo.reset()
    with compiler.recording(caches=True) as rec:  # the same program, recorded: a warm start
        torch.compile(f)(x)
    rec.report.to_json(sys.argv[1])
    torch._dynamo.reset()
    with torch._inductor.config.patch(max_fusion_size=32):  # a changed config: a miss
        with compiler.recording(caches=True) as rec:
            torch.compile(f)(x)
    rec.report.to_json(sys.argv[2])
    """
)


@pytest.mark.child
def test_a_warm_start_hits_with_torchs_own_key_and_a_changed_config_is_named(tmp_path):
    script = tmp_path / "warm.py"
    script.write_text(_WARM)
    env = dict(  # the caches as a user has them (conftest.py turns them off)
        with_user_caches(dict(os.environ)),
        TORCH_TRACE=str(tmp_path / "trace"),
        TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "cache"),
    )
    env["PYTHONPATH"] = str(ROOT)
    warm, changed = tmp_path / "warm.json", tmp_path / "changed.json"
    subprocess.run([sys.executable, str(script), str(warm), str(changed)], env=env, check=True, timeout=600)
    (log,) = (tmp_path / "trace").iterdir()
    fx = [
        json.loads(p)
        for m, p in read_log(str(log))
        if m.get("artifact", {}).get("name", "").startswith("fx_graph_cache_")
    ]
    # torch's own: the plain compile missed, the recorded one hit with the same key, the changed one missed
    assert [e["cache_state"] for e in fx] == ["miss", "hit", "miss"]
    assert fx[0]["key"] == fx[1]["key"] != fx[2]["key"]
    a, b = compiler.load(str(warm)), compiler.load(str(changed))
    (lk,) = [x for x in a.compiles[0].caches if x.kind == "fx_graph"]
    assert (lk.state, lk.key, lk.time_saved_s) == ("hit", fx[0]["key"], fx[1]["time_saved_ns"] / 1e9)
    (lk2,) = [x for x in b.compiles[0].caches if x.kind == "fx_graph"]
    assert (lk2.state, lk2.key) == ("miss", fx[2]["key"])
    # why the warm start missed: the one component that differs, in explorer.diff and the CLI
    d = explorer.diff(a, b, labels=("warm", "changed"))
    assert (
        "0/0 key components that differ: fx_graph key: inductor_config[max_fusion_size]: 64 → 32" in d.summary
    )
    assert "0/0 fx_graph cache hit → miss" in d.summary
    out = subprocess.run(
        [sys.executable, "-m", "explorer.cli", "diff", str(warm), str(changed)],
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "inductor_config[max_fusion_size]: 64 → 32" in out
    # the compile's line (folded under the summary's): the hit as torch answered it, then
    # torch's saved figure for the compile
    assert cache_detail_lines(a)[0].startswith(
        "[0/0] f: caches: FX graph hit, AOTAutograd hit · torch: saved "
    )
    assert "  caches: 1 of 1 compile from the cache (torch: saved " in explorer.text(a, "summary")


def test_the_share_of_gpu_time_under_cuda_graphs_and_the_verdict_that_names_a_skip():
    """The share of a benchmark's profiled GPU time that ran in compiles whose CUDA graphs were
    used, from the H100 launch-bound recording (its compile's kernels by graph) with the
    compile's CUDA-graph facts set as torch would report them."""
    r = compiler.load(str(ROOT / "notebooks" / "data" / "h100-why-launch.json.gz"))
    b = r.benchmarks[-1]
    assert compiler.analysis.cudagraph_share(r, b) is None  # mode default: no CUDA-graph facts
    (c,) = r.compiles
    used = compiler.types.CudaGraphs(state="used", runs=(compiler.types.CudaGraphRun("record"),))
    reason = 'skipping cudagraphs due to mutated inputs (1 instances). Found from : \n  File "m.py", line 5'
    short = "mutated inputs (1 instances)"  # the build reads the first line once (CudaGraphs.short_reason)
    skipped = compiler.types.CudaGraphs(
        state="skipped", reason=reason, when="compile", where="m.py:5", short_reason=short
    )
    ro = dataclasses.replace(b, config=dataclasses.replace(b.config, mode="reduce-overhead"))
    with_used = dataclasses.replace(r, compiles=(dataclasses.replace(c, cudagraphs=used),))
    with_skip = dataclasses.replace(r, compiles=(dataclasses.replace(c, cudagraphs=skipped),))
    assert compiler.analysis.cudagraph_share(with_used, ro) == 1.0
    assert compiler.analysis.cudagraph_share(with_skip, ro) == 0.0
    v = compiler.analysis.verdict(with_skip, ro)
    # compiled for CUDA graphs, and torch skipped them: that is named before the host's time
    assert v.main == "cudagraphs"
    skip = next(x for x in v.causes if x.key == "cudagraphs")
    assert skip.title == "CUDA graphs skipped: mutated inputs (1 instances)"
    assert skip.evidence == (
        "mode=reduce-overhead (as compiled)",
        "[1/0] skipped: mutated inputs (1 instances)",
    )
    assert v.headline.startswith("compiled is 1.24× faster than eager: CUDA graphs skipped: mutated inputs")
    # asked for already: the host's part suggests no mode
    assert next(x for x in v.causes if x.key == "launch").fix is None


def test_report_names_its_own_path_to_fill_in(tmp_path):
    """``pt2-explorer report R``: the summary's one line for the caches, then the command that
    fills in what the hits left out, with R itself (never a placeholder): for a report made on
    another machine (the shipped one), the code to read first and ``--fill --trust``."""
    path = tmp_path / "caches.json"
    path.write_bytes(gzip.decompress((ROOT / "notebooks" / "data" / "h100-caches.json.gz").read_bytes()))
    report = compiler.load(path)
    ids = [c.id for c in report.compiles if compiler._viewer.fill_reason(c) is not None]
    out = subprocess.run(
        [sys.executable, "-m", "explorer", "report", str(path)],
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = out.splitlines()
    assert [ln for ln in lines if ln.startswith("  caches: ")] == [
        f"  caches: 1 of {len(report.compiles)} compiles from the cache (torch: saved 0.32 s); not filled in "
        f"yet: {len(ids)} compiles (the kernels' nodes, the IR around fusion) · per compile: --view compiles"
    ]
    # a report made on another machine: its code is read before a fill runs it (--trust)
    assert lines[-1] == (
        f"to fill in {len(ids)} compiles ({', '.join(ids)}): the fill would run this report's runnable code, "
        "and it carries no mark of a recording (a report made elsewhere, crafted, or loaded from a log): "
        f"read it (pt2-explorer repro {path} --compile {ids[0]}) before pt2-explorer report {path} --fill --trust"
    )
    assert "REPORT.json" not in out

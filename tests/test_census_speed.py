"""The census at scale: a recording that cannot start says why (in the row and the case's
log), the memory limit leaves address space alone (CUDA reserves it), a census started
through an interpreter wrapper is the census started directly, ``--jobs`` defaults to what
the machine allows, ``--bench`` rows (eval calls and training steps, fp32 and AMP) with their
spread and cause, and ``census diff`` of two runs of one census reports no change."""

from __future__ import annotations

import dataclasses
import gzip
import json
import math
import os
import resource
import stat
import subprocess
import sys

import pytest

import compiler
from explorer.census import Settings, diff_census, diff_text, load_census
from explorer.census._run import default_jobs
from explorer.census._speedview import SEEDS, geomean, slower_groups, speed_groups, speed_text
from explorer.census._table import BreakSite, Census, CensusRow

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples", "census_models.py")
LIMITS = os.path.join(ROOT, "tests", "census_limits.py")
SHIPPED = os.path.join(ROOT, "notebooks", "data", "census-h100-speed.json")
census = pytest.mark.census
slow = pytest.mark.slow


def _cli(*args, env=None, python=sys.executable):
    cmd = [python, "-m", "explorer", "census", *args]
    return subprocess.run(
        cmd, env={**os.environ, "PYTHONPATH": ROOT, **(env or {})}, capture_output=True, text=True, cwd=ROOT
    )


@slow
@census
def test_a_recording_that_cannot_start_says_why(tmp_path):
    out = tmp_path / "c"
    done = _cli("--models", LIMITS, "--only", "nojournal", "--backend", "eager", "--out", str(out), "-q")
    assert done.returncode == 0, done.stderr
    (row,) = load_census(out).rows
    journal = out / "logs" / "nojournal.eval.journal"
    assert (row.status, row.error) == (
        "error",
        f"the recording did not start: IsADirectoryError: [Errno 21] Is a directory: '{journal}'",
    )
    log = (out / "logs" / "nojournal.eval.log").read_text()
    assert "census: record failed: the recording did not start: IsADirectoryError" in log
    assert "Traceback (most recent call last)" in log and "AttributeError" not in log


@slow
@census
def test_the_memory_limit_is_data_not_address_space(tmp_path):
    """--memory limits what a case may write (RLIMIT_DATA); the address space stays
    unlimited, which CUDA reserves in bulk when torch first touches it (an address-space
    limit made every case of a GPU machine fail with "CUDA error: out of memory")."""
    out = tmp_path / "c"
    done = _cli(
        "--models", LIMITS, "--only", "limits", "--backend", "eager", "--memory", "3", "--out", str(out), "-q"
    )
    assert done.returncode == 0, done.stderr
    assert load_census(out).rows[0].status == "one graph"
    assert json.loads((out / "limits.json").read_text()) == {
        "data": 3 * 2**30,
        "as": resource.getrlimit(resource.RLIMIT_AS)[0],  # as this process has it: not ours to set
    }


@slow
@census
def test_a_census_started_through_a_wrapper_is_the_same(tmp_path):
    """python started through a shell script that execs it (as pyenv's shims do), first in PATH."""
    shim = tmp_path / "bin" / "python"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    path = f"{shim.parent}{os.pathsep}{os.environ['PATH']}"
    common = ["--models", EXAMPLES, "--only", "mlp,branchy", "--backend", "aot_eager", "--jobs", "2", "-q"]
    wrapped = _cli(*common, "--out", str(tmp_path / "w"), env={"PATH": path}, python="python")
    assert wrapped.returncode == 0, wrapped.stderr
    rows = load_census(tmp_path / "w").rows
    assert [(r.key, r.status, r.error, r.graphs) for r in rows] == [
        ("mlp:eval", "one graph", None, 1),
        ("branchy:eval", "graph break", None, 2),
    ]


def test_jobs_default_to_what_cores_and_memory_allow(monkeypatch):
    from explorer.census import _run

    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: set(range(16)))
    monkeypatch.setattr(_run, "available_gb", lambda: 120.0)
    assert default_jobs(Settings()) == 8  # a case per two cores
    monkeypatch.setattr(_run, "available_gb", lambda: 10.0)
    assert default_jobs(Settings()) == 2  # 4 GB a case
    assert default_jobs(Settings(memory_gb=2.0)) == 5  # a case limited to 2 GB takes no more
    assert default_jobs(Settings(bench=True)) == 1  # timed cases side by side would time each other
    assert default_jobs(Settings(device="cuda"), gpus=["0"]) == 1
    monkeypatch.setattr(_run, "available_gb", lambda: 120.0)
    assert default_jobs(Settings(device="cuda"), gpus=["0", "1", "2", "3"]) == 4  # a case per GPU
    assert (
        default_jobs(Settings(device="cuda", bench=True), gpus=["0", "1", "2", "3"]) == 8
    )  # one timed, one compiling
    assert default_jobs(Settings(device="cuda", bench=True), gpus=["2"]) == 2
    assert default_jobs(Settings(device="cuda:1", bench=True), gpus=["0", "1"]) == 1  # the device named
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0})
    assert default_jobs(Settings()) == 1
    assert default_jobs(Settings(device="cuda", bench=True), gpus=["0", "1"]) == 1  # one core


def test_gpu_slots_spread_the_cases_over_the_gpus():
    from explorer.census._run import GpuSlots

    slots = GpuSlots(["2", "5"], jobs=3)
    assert slots.share == 2  # 3 jobs on 2 GPUs: at most 2 on one
    with slots.take() as a, slots.take() as b, slots.take() as c:
        assert (a, b, c) == ("2", "5", "2")  # the one with the fewest cases running
        assert slots.running == {"2": 2, "5": 1}
    assert slots.running == {"2": 0, "5": 0}
    with slots.take() as a:
        assert a == "2"


@slow
@census
def test_a_case_runs_on_the_gpu_it_was_given(tmp_path, monkeypatch):
    """Each case's process sees only its GPU (CUDA_VISIBLE_DEVICES) and how many cases share it,
    and times under that GPU's own lock."""
    from explorer.census._cases import GPU_SHARE_ENV, cases
    from explorer.census._process import run_one
    from explorer.census._speed import device_turn

    out = tmp_path / "c"
    monkeypatch.chdir(ROOT)
    (case,) = cases([LIMITS], ("eval",), ["gpuenv"], ("fp32",))
    row = run_one(case, Settings(backend="eager"), str(out), gpu="3", gpu_share=2)
    assert row.status == "one graph", row.error
    assert json.loads((out / "gpuenv.json").read_text()) == {"CUDA_VISIBLE_DEVICES": "3", GPU_SHARE_ENV: "2"}
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with device_turn("cuda"):
        pass
    assert sorted(p.name for p in tmp_path.glob("*.lock")) == ["pt2-explorer-census-cuda_gpu3.lock"]


def _row(key: str, **kw) -> CensusRow:
    model, mode, *prec = key.split(":")
    return CensusRow(
        model, mode, kw.pop("status", "one graph"), source="z", precision=(prec or ["fp32"])[0], **kw
    )


def test_diff_counts_a_time_beyond_its_spread_only():
    def timed(key, speedup, iqr=0.02, compile_s=10.0):
        return _row(key, speedup=speedup, eager_ms=speedup, compiled_ms=1.0, eager_iqr_ms=iqr,
                    compiled_iqr_ms=iqr, compile_time_s=compile_s, graphs=1)  # fmt: skip

    a = Census(tuple(timed(f"m{i}:eval", 1.5) for i in range(10)), path="a")
    same = Census(tuple(timed(f"m{i}:eval", 1.5 * (1.01 if i % 2 else 0.99)) for i in range(10)), path="b")
    d = diff_census(a, same)
    assert (d.regressions, d.fixes, d.unchanged) == ((), (), 10)
    # m0 slower beyond both spreads, m1 faster, m2 moved within its own wide spread
    rows = list(same.rows)
    rows[0] = timed("m0:eval", 1.2)
    rows[1] = timed("m1:eval", 1.9)
    rows[2] = timed("m2:eval", 1.3, iqr=0.8)
    d = diff_census(a, Census(tuple(rows), path="b"))
    assert [(c.key, c.worse) for c in d.regressions] == [
        ("m0:eval", ("speedup ×1.50 → ×1.20 (spreads ×1.48–1.53, ×1.18–1.22)",))
    ]
    assert [(c.key, c.better) for c in d.fixes] == [("m1:eval", ("speedup ×1.50 → ×1.90",))]
    # every compile 30% slower (a busier machine): said once, pinned on no row
    slower = Census(
        tuple(timed(f"m{i}:eval", 1.5, compile_s=13.0 + 0.1 * (i % 3)) for i in range(10)), path="b"
    )
    d = diff_census(a, slower)
    assert (d.regressions, d.fixes) == ((), ())
    assert d.noise[0].line == (
        "compile times: ×1.31 overall (median of 10 rows), row-to-row noise ×0.97–×1.03 around it"
    )
    assert "noise: compile times: ×1.31 overall" in diff_text(d)


def test_diff_leaves_a_speedup_timed_waiting_for_a_core_uncompared():
    """A row whose calls waited for a core (a bf16 call's parallel region on a machine whose
    other core is busy: 12 ms a call, both arms alike) has the machine's load for its speedup:
    not compared, named; a real regression of a few ms a call, timed with no wait, still shows;
    a row written before the wait was measured is compared as before."""

    def timed(key, e, c, wait=None, iqr=0.01):
        return _row(key, speedup=e / c, eager_ms=e, compiled_ms=c, eager_iqr_ms=iqr, compiled_iqr_ms=iqr,
                    eager_waited_ms=wait, compiled_waited_ms=wait, graphs=1)  # fmt: skip

    a = Census(
        (
            timed("mlp:eval:amp", 0.05, 0.16, wait=0.0),
            timed("big:eval", 4.0, 2.0, wait=0.01),
            timed("old:eval", 4.0, 2.0),
        ),
        path="a",
    )
    b = Census(
        (
            timed("mlp:eval:amp", 11.9, 12.0, wait=16.0),  # ×0.31 → ×0.99, every call waited
            timed("big:eval", 4.0, 4.0, wait=0.01),  # compiled twice as slow
            timed("old:eval", 4.0, 4.0),
        ),
        path="b",
    )
    d = diff_census(a, b)
    assert [(c.key, c.worse) for c in d.regressions] == [
        ("big:eval", ("speedup ×2.00 → ×1.00 (spreads ×1.99–2.01, ×1.00–1.00)",)),
        ("old:eval", ("speedup ×2.00 → ×1.00 (spreads ×1.99–2.01, ×1.00–1.00)",)),
    ]
    assert (d.fixes, d.unchanged, d.waited) == ((), 1, ("mlp:eval:amp",))
    assert (
        "speedup not compared, timed while its calls waited for a core (the machine's load): mlp:eval:amp\n"
        in diff_text(d)
    )
    from explorer.census import diff_page

    assert (
        '<p class="noise">speedup not compared, timed while its calls waited for a core (the machine&#x27;s '
        "load): mlp:eval:amp</p>"
    ) in diff_page(d)
    # the other way round (a loaded run before an idle one), and a wait under a tenth of the call
    d = diff_census(b, a)
    assert ([c.key for c in d.fixes], d.waited) == (["big:eval", "old:eval"], ("mlp:eval:amp",))
    calm = Census((timed("mlp:eval:amp", 11.9, 12.0, wait=1.0),), path="c")
    assert diff_census(Census((timed("mlp:eval:amp", 0.05, 0.16, wait=0.0),), path="a"), calm).waited == ()


def test_headline_and_slower_rows_by_cause():
    item = BreakSite("Unsupported Tensor.item() call", "GB0124")
    branch = BreakSite("Data-dependent branching", "GB0170")
    rows = [
        _row("a:eval", speedup=1.2),
        _row("a:eval:amp", speedup=2.0),
        _row("b:eval", speedup=0.8, cause_key="launch", cause="host-bound: the GPU waits for the host",
             cause_group="launch-bound"),
        _row("b:eval:amp", speedup=1.02, cause_key="library", cause="library kernels compile does not touch",
             cause_group="fp32 GEMMs without TF32"),
        _row("c:eval", status="error", error="RuntimeError: boom"),
        # two rows out of memory by other amounts: one cause; a sentence of no "Kind: " its own
        _row("g:eval", status="error", error="OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB."),
        _row("h:eval", status="error", error="OutOfMemoryError: CUDA out of memory. Tried to allocate 384.00 MiB."),
        _row("i:eval", status="error", error="no result. It stopped"),
        _row("c:eval:amp", speedup=1.01, cause_key="library", cause="library kernels compile does not touch",
             cause_group="fp32 GEMMs without TF32"),
        # two sites of one id in a row count once for it; each row's title says its own count
        _row("d:eval", speedup=0.5, cause_key="breaks", cause="graph breaks: 3 sites",
             cause_group="graph breaks", breaks=(item, item, branch)),
        _row("e:eval", speedup=0.6, cause_key="breaks", cause="graph breaks: 1 site",
             cause_group="graph breaks", breaks=(item,)),
        _row("f:eval", speedup=0.9, cause_key="backend", cause_group="backend aot_eager",
             cause="backend aot_eager: no fused kernels, eager kernels run the graph"),
    ]  # fmt: skip
    g = {(x.precision, x.mode): x for x in speed_groups(rows)}
    assert (g["fp32", "eval"].rows, g["fp32", "eval"].passed, g["fp32", "eval"].timed) == (9, 5, 5)
    assert math.isclose(g["fp32", "eval"].geomean, geomean([1.2, 0.8, 0.5, 0.6, 0.9]))
    assert math.isclose(g["amp", "eval"].geomean, geomean([2.0, 1.02, 1.01]))
    assert [(k, w, [r.key for r in rs]) for k, w, rs in slower_groups(rows)] == [
        ("breaks", "graph breaks (GB0124 ×2, GB0170 ×1)", ["d:eval", "e:eval"]),
        ("library", "fp32 GEMMs without TF32", ["b:eval:amp", "c:eval:amp"]),
        ("backend", "backend aot_eager", ["f:eval"]),
        ("launch", "launch-bound", ["b:eval"]),
    ]
    from explorer.census import census_text

    text = census_text(Census(tuple(rows), path="x"))
    assert (
        "compiled slower or barely faster (under ×1.05) on 6: 2 graph breaks (GB0124 ×2, GB0170 ×1),\n"
        "  2 fp32 GEMMs without TF32, 1 backend aot_eager, 1 launch-bound\n"
        "  graph breaks (GB0124 ×2, GB0170 ×1) (2): d:eval ×0.50, e:eval ×0.60\n"
    ) in text
    assert f"  beside: {SEEDS}" in text
    assert (
        "errors (4), by their first cause:\n  OutOfMemoryError: CUDA out of memory.\n    g:eval, h:eval\n"
        "  RuntimeError: boom\n    c:eval\n  no result. It stopped\n    i:eval"
    ) in text
    # a census written before the groups: a key's words, else the cause's title
    old = [
        _row("p:eval", speedup=0.9, cause_key="library", cause="library kernels compile does not touch"),
        _row("q:eval", speedup=0.9, cause_key="fallback", cause="eager fallback: no compiled code ran for forward"),
        _row("r:eval", speedup=0.9, cause_key="fallback", cause="eager fallback: no compiled code ran for step"),
    ]  # fmt: skip
    assert [(w, len(rs)) for _k, w, rs in slower_groups(old)] == [
        ("eager fallback", 2),
        ("library kernels", 1),
    ]


def test_a_group_shows_every_row_within_the_width():
    rows = [
        _row(f"model_with_a_long_name_{i}:eval", speedup=0.9, cause_key="launch", cause_group="host overhead")
        for i in range(9)
    ]
    lines = speed_text(rows, width=100)
    at = next(i for i, x in enumerate(lines) if x.startswith("  host overhead (9): "))
    shown = " ".join(lines[at:]).split("(9): ", 1)[1]
    assert all(len(x) <= 100 for x in lines)
    assert [x.strip(" ,") for x in shown.split("×0.90") if x.strip(" ,")] == [r.key for r in rows]


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """The same small census, --bench, eval and a training step in fp32 and AMP, run twice."""
    base = tmp_path_factory.mktemp("speed")
    args = ["--models", EXAMPLES, "--only", "mlp,branchy", "--modes", "eval,train", "--precision", "fp32,amp",
            "--backend", "aot_eager", "--bench", "--keep-trace", "-q"]  # fmt: skip
    for name in ("a", "b"):
        done = _cli(*args, "--out", str(base / name), "--title", name.upper())
        assert done.returncode == 0, done.stderr
    return base, load_census(base / "a"), load_census(base / "b")


@slow
@census
def test_bench_rows_time_eval_and_training_steps(two_runs):
    from tests._torch_trace import read_log

    base, a, _b = two_runs
    assert [r.key for r in a.rows] == [
        "mlp:eval", "mlp:eval:amp", "mlp:train", "mlp:train:amp",
        "branchy:eval", "branchy:eval:amp", "branchy:train", "branchy:train:amp",
    ]  # fmt: skip
    for r in a.rows:
        assert r.status in ("one graph", "graph break") and r.error is None, r
        assert r.speedup and r.eager_ms and r.compiled_ms and r.eager_iqr_ms is not None, r
        assert r.batch is None and r.report == f"reports/{r.key.replace(':', '.')}.json.gz"
        assert (r.cause_key is not None) == (r.speedup < 1.05), r
        with gzip.open(base / "a" / r.report, "rt") as f:
            (bench,) = json.load(f)["benchmarks"]
        # a training step changes the weights: snapshotted, restored after each call
        assert (bench.get("state", "unchanged"), bench["name"]) == (
            ("restored", f"train step {r.precision}")
            if r.mode == "train"
            else ("unchanged", f"eval {r.precision}")
        )
        # aot_eager ran every frame compiled (torch's own trace of the case: no compile failed,
        # AOTAutograd's graphs, no Inductor stage): the backend is the cause, never a fallback
        records = [x for log in (base / "a" / r.trace).iterdir() for x in read_log(str(log))]
        assert not [m for m, _p in records if (m.get("compilation_metrics") or {}).get("fail_type")]
        assert any("aot_joint_graph" in m or "aot_inference_graph" in m for m, _p in records)
        assert not [m for m, _p in records if "inductor_output_code" in m or "inductor_post_grad_graph" in m]
        rep = compiler.load(base / "a" / r.report)
        v = compiler.analysis.verdict(rep, rep.benchmarks[0])
        assert v.main == "backend" and "fallback" not in [c.key for c in v.causes], v
        # the backend is the report's own fact, named also where the timings name no cause (the
        # same figures in both arms: within the spread)
        b0 = rep.benchmarks[0]
        u = compiler.analysis.verdict(rep, dataclasses.replace(b0, compiled=b0.eager, speedup=1.0))
        assert u.main == "backend", u.headline
        assert "(no clear winner: the medians differ by 0 ms, within the wider IQR" in u.headline, u.headline
        assert [c.key for c in v.causes if c.key == "breaks"] == (["breaks"] if r.model == "branchy" else [])
        if r.slower:
            assert (r.cause_key, r.cause, r.cause_group) == (
                "backend", "backend aot_eager: no fused kernels, eager kernels run the graph", "backend aot_eager"
            )  # fmt: skip


@slow
@census
def test_diff_of_two_runs_of_one_census_reports_no_change(two_runs):
    _base, a, b = two_runs
    d = diff_census(a, b)
    assert (d.regressions, d.fixes, d.unchanged) == ((), (), 8), diff_text(d)


def test_shipped_census_reads_without_torch():
    """The shipped H100 census: read, shown at 100 columns and summed up with torch unimportable."""
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from explorer.census import load_census, census_text\n"
        f"c = load_census({SHIPPED!r}); text = census_text(c)\n"
        "print(len(c.rows), max(len(x) for x in text.splitlines()))\n"
        "print([x for x in text.splitlines() if x.startswith('  beside:')][0])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ROOT}
    )
    assert done.returncode == 0, done.stderr
    n, width = map(int, done.stdout.splitlines()[0].split())
    assert n == len(json.load(open(SHIPPED))["rows"]) and width <= 100
    assert done.stdout.splitlines()[1] == f"  beside: {SEEDS}"


def test_page_links_each_slower_row_to_its_line():
    import re

    from explorer.census import census_page

    c = load_census(SHIPPED)
    slower = [r.key for r in c.rows if r.slower]
    page = census_page(c, {r.key: f"reports/{r.model}.html" for r in c.rows if r.report})
    ids = re.findall(r'<tr id="([^"]+)">', page)
    assert len(ids) == len(c.rows) == len(set(ids))
    start = page.index("compiled slower or barely faster")
    section = page[start : page.index("<h3>", start)]
    targets = re.findall(r'<a href="#(row-[^"]+)">([^<]+)</a>', section)
    # each slower row once, in its cause's group (the groups largest first)
    assert sorted(key for _id, key in targets) == sorted(slower) and all(i in ids for i, _k in targets)
    assert "<th>zoo</th><th>precision</th><th>mode</th><th>models</th><th>pass</th><th>speedup</th>" in page


def test_merge_names_two_sources_models_apart(tmp_path):
    """timm's resnet18 and torchvision's are two models: the merge keeps both rows, each named
    with its source, with its report copied under that name; one source's model in two shards
    is one row twice, refused."""
    shards = []
    for zoo in ("timm-base", "torchvision"):
        d = tmp_path / zoo
        (d / "reports").mkdir(parents=True)
        (d / "reports" / "resnet18.eval.json.gz").write_bytes(zoo.encode())
        rows = (
            CensusRow("resnet18", "eval", "one graph", source=zoo, report="reports/resnet18.eval.json.gz"),
            CensusRow(f"only_{zoo[:4]}", "eval", "one graph", source=zoo),
        )
        Census(rows, settings={"backend": "inductor"}).save(str(d / "census.json"))
        shards.append(str(d))
    done = _cli("merge", *shards, "--out", str(tmp_path / "all"))
    assert done.returncode == 0, done.stderr
    merged = load_census(tmp_path / "all")
    assert [(r.key, r.report) for r in merged.rows] == [
        ("resnet18 (timm-base):eval", "reports/resnet18__timm-base_.eval.json.gz"),
        ("only_timm:eval", None),
        ("resnet18 (torchvision):eval", "reports/resnet18__torchvision_.eval.json.gz"),
        ("only_torc:eval", None),
    ]
    for zoo in ("timm-base", "torchvision"):
        assert (tmp_path / "all" / "reports" / f"resnet18__{zoo}_.eval.json.gz").read_bytes() == zoo.encode()
    # merged again with a shard that has only torchvision's resnet18 (a training census): the
    # same model as the merged census's "resnet18 (torchvision)", named so
    (tmp_path / "tr").mkdir()
    train = CensusRow("resnet18", "train", "one graph", source="torchvision")
    Census((train,), settings={"backend": "inductor"}).save(str(tmp_path / "tr" / "census.json"))
    done = _cli("merge", str(tmp_path / "all"), str(tmp_path / "tr"), "--out", str(tmp_path / "again"))
    assert done.returncode == 0, done.stderr
    assert [r.key for r in load_census(tmp_path / "again").rows] == [
        "resnet18 (timm-base):eval", "only_timm:eval", "resnet18 (torchvision):eval", "only_torc:eval",
        "resnet18 (torchvision):train",
    ]  # fmt: skip
    again = _cli("merge", shards[0], shards[0], "--out", str(tmp_path / "twice"))
    assert again.returncode == 2 and again.stderr.strip().endswith(
        f"resnet18:eval is in more than one of the censuses ({shards[0]}/census.json): cannot merge them"
    ), again.stderr


def test_merge_joins_an_eval_census_and_a_training_one(tmp_path):
    """Shards that chose other modes and precisions join, their choices united, and so do
    shards run under other limits; any other setting that differs is refused, naming it."""
    base = {"backend": "inductor", "device": "cuda", "timeout_s": 300.0, "bench": True}
    shards = {
        "ev": ({**base, "modes": ["eval"], "precisions": ["fp32", "amp"]},
               (("bert", "eval", "fp32"), ("bert", "eval", "amp"))),
        "tr": ({**base, "modes": ["train"], "precisions": ["amp"]}, (("bert", "train", "amp"),)),
        "slow": ({**base, "timeout_s": 600.0, "device": "cpu", "modes": ["train"], "precisions": ["amp"]},
                 (("gpt2", "train", "amp"),)),
        "long": ({**base, "timeout_s": 600.0, "modes": ["train"], "precisions": ["amp"]},
                 (("gpt2", "train", "amp"),)),
    }  # fmt: skip
    for name, (settings, rows) in shards.items():
        rows = tuple(CensusRow(m, mode, "one graph", precision=p, source="hf-base") for m, mode, p in rows)
        (tmp_path / name).mkdir()
        Census(rows, settings=settings).save(str(tmp_path / name / "census.json"))
    done = _cli("merge", str(tmp_path / "ev"), str(tmp_path / "tr"), "--out", str(tmp_path / "all"))
    assert done.returncode == 0, done.stderr
    merged = load_census(tmp_path / "all")
    assert [r.key for r in merged.rows] == ["bert:eval", "bert:eval:amp", "bert:train:amp"]
    assert merged.settings == {**base, "modes": ["eval", "train"], "precisions": ["fp32", "amp"]}
    refused = _cli("merge", str(tmp_path / "ev"), str(tmp_path / "slow"), "--out", str(tmp_path / "no"))
    assert refused.returncode == 2 and refused.stderr.strip().endswith(
        f"{tmp_path / 'slow'}/census.json was run with other settings (device) than "
        f"{tmp_path / 'ev'}/census.json: cannot merge them"
    ), refused.stderr
    # a limit may differ (a shard retried with a longer --timeout): the loosest is kept
    done = _cli("merge", str(tmp_path / "ev"), str(tmp_path / "long"), "--out", str(tmp_path / "lim"))
    assert done.returncode == 0, done.stderr
    assert load_census(tmp_path / "lim").settings == {
        **base,
        "timeout_s": 600.0,
        "modes": ["eval", "train"],
        "precisions": ["fp32", "amp"],
    }


def test_one_census_of_two_sources_with_one_name_is_refused(tmp_path):
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text("CENSUS_MODELS = {'mlp': lambda: None}\n")
    from explorer.census._cases import cases

    with pytest.raises(ValueError) as e:
        cases([str(tmp_path / "a.py"), str(tmp_path / "b.py")], ("eval",))
    assert str(e.value) == (
        f"'mlp' is a model of both {tmp_path / 'a.py'} and {tmp_path / 'b.py'}: run each as its own census "
        "(--out) and join them with `census merge`, which names them apart"
    )

"""``pt2-explorer census``: every row agrees with torch's own structured trace of that case,
read directly (tests/_torch_trace.py: the TORCH_TRACE log the case's process wrote beside its
recording, --keep-trace); shards merge into the census a single run makes; a hang, a crash
and a memory hog are rows, not the end of the census; the same census runs as Ray tasks.

The CI slice: the four example models (examples/census_models.py: one of each status) and two
Hugging Face models of the zoo (GPT-2, BERT), eval, aot_eager, run as two shards side by side.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import _torch_trace as tt
import pytest

from explorer.census import diff_census, diff_text, load_census, select
from explorer.census._view import census_page, census_text

pytestmark = [pytest.mark.slow, pytest.mark.census]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples", "census_models.py")
FAULTS = os.path.join(ROOT, "tests", "census_faults.py")
SLICE = [
    "--models",
    EXAMPLES,
    "--zoo",
    "hf-small",
    "--only",
    "mlp,branchy,step_counter,wrong_shape,gpt2,bert",
]


def _cli(*args, wait=True, **kw):
    cmd = [sys.executable, "-m", "explorer.cli", "census", *args]
    env = {**os.environ, "PYTHONPATH": ROOT}
    if not wait:
        return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return subprocess.run(cmd, env=env, capture_output=True, text=True, **kw)


@pytest.fixture(scope="module")
def merged(tmp_path_factory):
    """The slice, run as shards 0/2 and 1/2 at once, then merged."""
    base = tmp_path_factory.mktemp("census")
    common = [*SLICE, "--backend", "aot_eager", "--keep-trace", "-q"]
    procs = [_cli(*common, "--shard", f"{i}/2", "--out", str(base / f"s{i}"), wait=False) for i in (0, 1)]
    for p in procs:
        out, _ = p.communicate(timeout=600)
        assert p.returncode == 0, out
    done = _cli("merge", str(base / "s0"), str(base / "s1"), "--out", str(base / "all"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"census: {base / 'all' / 'census.json'} (6 rows from 2 shards)"
    return base, load_census(base / "all")


def _truth(census, row):
    """torch's own facts of the row's case, from its TORCH_TRACE log."""
    base = os.path.dirname(census.path)
    (log,) = glob.glob(os.path.join(base, row.trace, "*.log"))
    records = tt.read_log(log)
    return tt.facts(records), sum(1 for meta, _ in records if "dynamo_output_graph" in meta)


def test_every_row_agrees_with_torch_trace(merged):
    _base, census = merged
    # the zoo's, then the file's; shard 0 (every other case from the first), then shard 1
    assert [r.key for r in census.rows] == [
        "gpt2:eval",
        "mlp:eval",
        "step_counter:eval",
        "bert:eval",
        "branchy:eval",
        "wrong_shape:eval",
    ]
    for row in census.rows:
        truth, graphs = _truth(census, row)
        sites = {(b.file, b.line): b for b in row.breaks}
        assert set(sites) == set(truth.break_sites), row.key
        for site, b in sites.items():
            assert set(b.compiles) == truth.break_sites[site]
            assert {b.gb_id} == truth.break_gb[site]
            assert b.type in truth.break_types[site]
            assert (
                b.link == f"https://meta-pytorch.github.io/compile-graph-break-site/gb/{b.gb_id.lower()}.html"
            )
        assert {x.compile_id: x.reason for x in row.recompiles} == {
            cid: reasons[0].splitlines()[0] for cid, reasons in truth.recompiles.items()
        }
        assert row.graphs == graphs, row.key
        if row.error is None:
            expected = (
                "graph break" if truth.break_sites else "recompiles" if truth.recompiles else "one graph"
            )
            assert row.status == expected, row.key


def test_each_status_with_its_facts(merged):
    _base, census = merged
    status = {r.key: r.status for r in census.rows}
    assert status == {
        "mlp:eval": "one graph",
        "branchy:eval": "graph break",
        "step_counter:eval": "recompiles",
        "wrong_shape:eval": "error",
        "gpt2:eval": "graph break",
        "bert:eval": "one graph",
    }
    (b,) = census.row("branchy:eval").breaks
    assert (os.path.basename(b.file), b.line, b.gb_id, b.type) == (
        "census_models.py",
        25,
        "GB0170",
        "Data-dependent branching",
    )
    (g,) = census.row("gpt2:eval").breaks
    assert (os.path.basename(g.file), g.gb_id) == ("modeling_utils.py", "GB0291")
    (r,) = census.row("step_counter:eval").recompiles
    assert r.compile_id == "0/1" and r.guard.startswith("EQUALS_MATCH: L['self'].steps == 0")
    assert census.row("wrong_shape:eval").error.startswith(
        "TorchRuntimeError: RuntimeError when making fake tensor call"
    )
    # each row's full report is beside the census, and is that case's
    import compiler

    report = compiler.load(census.report_path(census.row("gpt2:eval")))
    assert [x.gb_id for x in report.graph_breaks] == ["GB0291"]


def test_views_group_filter_and_escape(merged):
    base, census = merged
    text = census_text(census)
    assert "6 rows: one graph 2 (33%), graph break 2 (33%), recompiles 1 (17%), error 1 (17%)" in text
    assert "  GB0170 Data-dependent branching: 1 — branchy:eval" in text
    assert [r.key for r in select(census, break_type="gb0291")] == ["gpt2:eval"]
    assert [r.key for r in select(census, break_type="data-dependent")] == ["branchy:eval"]
    assert [r.key for r in select(census, status="one graph", sort="model")] == ["bert:eval", "mlp:eval"]
    page = census_page(census, {"gpt2:eval": "r/<gpt2>.html"})
    assert '<a href="r/&lt;gpt2&gt;.html">gpt2</a>' in page
    assert (
        '<a href="https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0170.html">GB0170</a>' in page
    )
    # the CLI's show: a filter, and the page with each row's report page beside it (--pages)
    shown = _cli(
        "show", str(base / "all"), "--status", "graph break", "--html", str(base / "c.html"), "--pages"
    )
    assert shown.returncode == 0, shown.stderr
    lines = [ln.split()[:2] for ln in shown.stdout.splitlines()[2:4]]
    assert lines == [["gpt2", "eval"], ["branchy", "eval"]]
    assert sorted(os.listdir(base / "c.reports")) == sorted(
        f"{k}.eval.html" for k in ("mlp", "branchy", "step_counter", "wrong_shape", "gpt2", "bert")
    )


def test_resume_skips_finished_rows(merged):
    base, _census = merged
    logs = sorted(os.listdir(base / "s0" / "logs"))
    before = {n: os.path.getmtime(base / "s0" / "logs" / n) for n in logs}
    again = _cli(
        *SLICE, "--backend", "aot_eager", "--keep-trace", "--shard", "0/2", "--out", str(base / "s0"), "-q"
    )
    assert (again.returncode, again.stdout) == (0, f"census: {base / 's0' / 'census.json'}\n")
    assert {n: os.path.getmtime(base / "s0" / "logs" / n) for n in logs} == before  # nothing ran
    assert [r.key for r in load_census(base / "s0").rows] == ["gpt2:eval", "mlp:eval", "step_counter:eval"]
    # other settings would mix rows of two censuses in one directory: refused in one line
    other = _cli(
        *SLICE, "--backend", "eager", "--keep-trace", "--shard", "0/2", "--out", str(base / "s0"), "-q"
    )
    assert (other.returncode, other.stderr) == (
        2,
        f"pt2-explorer census: error: {base / 's0'} holds a census run with other settings "
        "(backend 'aot_eager' there, 'eager' now): use another --out, or --rerun\n",
    )


def test_diff_regressions_first(merged, tmp_path):
    """Two censuses: B is A where one model now breaks and another lost its recompile."""
    base, census = merged
    data = json.loads((base / "all" / "census.json").read_text())
    rows = {r["model"]: r for r in data["rows"]}
    rows["mlp"].update(status="graph break", graphs=2, breaks=rows["branchy"]["breaks"])
    rows["step_counter"].update(status="one graph", graphs=1, recompiles=[])
    (tmp_path / "b.json").write_text(json.dumps({**data, "title": "B"}))
    d = diff_census(census, load_census(tmp_path / "b.json"))
    assert [c.key for c in d.regressions] == ["mlp:eval"]
    assert d.regressions[0].worse == (
        "status one graph → graph break",
        "new break: GB0170 Data-dependent branching at census_models.py:25",
        "graphs 1 → 2",
    )
    assert [(c.key, c.better) for c in d.fixes] == [
        ("step_counter:eval", ("status recompiles → one graph", "recompiles 1 → 0", "graphs 2 → 1"))
    ]
    assert d.unchanged == 4
    text = diff_text(d)
    assert text.index("regressions (1):") < text.index("fixes (1):")


def test_hang_crash_and_memory_are_rows(tmp_path):
    out = tmp_path / "faults"
    done = _cli("--models", FAULTS, "--backend", "eager", "--timeout", "45", "--memory", "8", "--jobs", "3",
                "--out", str(out), "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = {r.model: r for r in load_census(out).rows}
    assert {k: r.status for k, r in rows.items()} == {"hang": "error", "abort": "error", "hog": "error"}
    assert rows["hang"].error == "timeout: no result after 45 s"
    assert rows["abort"].error == "crashed: killed by SIGABRT"
    assert rows["hog"].error.startswith("RuntimeError: ")
    assert "12884901888 bytes" in rows["hog"].error  # 12 GiB refused at the data limit (RLIMIT_DATA)


def test_retry_runs_the_failed_rows_again_under_other_limits(tmp_path):
    """The limits (time, address space) only bound a case: a census resumes under others, and
    --retry runs its failed rows again; the census records the loosest limit it ran under."""
    out = tmp_path / "c"
    common = ["--models", FAULTS, "--only", "hog,abort", "--backend", "eager", "--out", str(out), "-q"]
    first = _cli(*common, "--timeout", "45", "--memory", "8")
    assert first.returncode == 0, first.stderr
    assert {r.model: r.status for r in load_census(out).rows} == {"abort": "error", "hog": "error"}
    logs = {n: os.path.getmtime(out / "logs" / n) for n in ("abort.eval.log", "hog.eval.log")}
    # another limit alone resumes (nothing to run); --retry runs both failed rows again
    again = _cli(*common, "--timeout", "90", "--memory", "0")
    assert again.returncode == 0, again.stderr
    assert {n: os.path.getmtime(out / "logs" / n) for n in logs} == logs
    retried = _cli(*common, "--timeout", "90", "--memory", "0", "--retry")
    assert retried.returncode == 0, retried.stderr
    assert all(os.path.getmtime(out / "logs" / n) > logs[n] for n in logs)
    census = load_census(out)
    rows = {r.model: r for r in census.rows}
    assert (rows["hog"].status, rows["hog"].error) == ("one graph", None)  # no limit: the pages untouched
    assert rows["abort"].error == "crashed: killed by SIGABRT"
    assert (census.settings["timeout_s"], census.settings["memory_gb"]) == (90.0, None)
    assert json.loads((out / "settings.json").read_text())["timeout_s"] == 90.0
    # a finished row is not run again by --retry; a tighter limit keeps the loosest recorded
    logs = {n: os.path.getmtime(out / "logs" / n) for n in logs}
    tight = _cli(*common, "--only", "hog", "--timeout", "30", "--retry")
    assert tight.returncode == 0, tight.stderr
    assert os.path.getmtime(out / "logs" / "hog.eval.log") == logs["hog.eval.log"]
    assert load_census(out).settings["timeout_s"] == 90.0


def test_bad_input_is_one_line(tmp_path):
    bad = tmp_path / "m.py"
    bad.write_text("CENSUS_MODELS = []\n")
    done = _cli("--models", str(bad), "--out", str(tmp_path / "x"))
    assert (done.returncode, done.stderr) == (
        2,
        f"pt2-explorer census: error: {bad}: CENSUS_MODELS must be a non-empty dict of name -> factory (docs/census.md)\n",
    )
    (tmp_path / "c.json").write_text(
        '{"format": "pt2-explorer-census", "version": 1, "rows": [{"model": 3}]}'
    )
    done = _cli("show", str(tmp_path / "c.json"))
    assert (
        done.stderr
        == f"pt2-explorer census: error: {tmp_path / 'c.json'}: $.rows[0].model: expected str, got int\n"
    )
    done = _cli("--zoo", "hf-small", "--shard", "2/2")
    assert done.stderr == "pt2-explorer census: error: --shard '2/2': i must be in 0..n-1\n"


def test_ray_tasks(tmp_path):
    """The census as Ray tasks on a local Ray instance: the rows a local run makes."""
    pytest.importorskip("ray")
    out = tmp_path / "ray"
    done = _cli("--models", EXAMPLES, "--only", "mlp,branchy", "--backend", "aot_eager", "--memory", "4",
                "--ray", "local", "--out", str(out), "-q")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    census = load_census(out)
    assert {r.key: r.status for r in census.rows} == {"mlp:eval": "one graph", "branchy:eval": "graph break"}
    assert [b.gb_id for b in census.row("branchy:eval").breaks] == ["GB0170"]
    assert os.path.exists(census.report_path(census.row("mlp:eval")))


def test_widget_filters_and_opens_a_report(merged):
    pytest.importorskip("ipywidgets")
    from explorer.census import census_widget

    _base, census = merged
    w = census_widget(census)
    _title, filters, grid, opened = w.children
    status, _family, btype = filters.children
    assert btype.options == (("all", None), ("GB0170", "GB0170"), ("GB0291", "GB0291"))
    status.value = "graph break"
    head, table = grid.children
    assert "2 rows: graph break 2 (100%)" in head.value
    buttons = [c for c in table.children if hasattr(c, "on_click")]
    assert [b.description for b in buttons] == ["gpt2", "branchy"]
    buttons[1].click()  # opens the row's report in the explorer
    (explorer_widget,) = opened.children
    assert type(explorer_widget).__name__ == "Explorer"


def test_reading_a_census_imports_no_torch(merged):
    base, _census = merged
    code = (
        "import sys; from explorer.census import load_census, census_text, diff_census, diff_text\n"
        f"c = load_census({str(base / 'all')!r}); census_text(c); diff_text(diff_census(c, c))\n"
        "print(sorted(m for m in ('torch', 'transformers', 'ray', 'ipywidgets') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ROOT}
    )
    assert (done.returncode, done.stdout) == (0, "[]\n"), done.stderr

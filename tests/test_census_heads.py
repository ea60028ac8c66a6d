"""Each census row keeps its compile time under the heads (``CensusRow.compile_heads``), and
``census diff`` names the head that moved from them (issue 53, item 4): from the row first,
from the row's report where the row has none (a census written before rows kept them), and
says that no head is named only where neither is there.

A tiny census, run as ``pt2-explorer census`` runs one (each case in a process of its own),
of one real model (examples/census_models.py's ``mlp``): with ``aot_eager``, then with
Inductor and fresh caches (lowering, codegen and the C++ build of its kernel added); each
row's heads checked against torch's own compilation_metrics in the case's TORCH_TRACE log.
Then the two CPU censuses shipped in notebooks/data (torch 2.13 against 2.14.1): every row
whose compile time moved beyond the noise names its head."""

from __future__ import annotations

import dataclasses
import glob
import json
import os
import subprocess
import sys

import _torch_trace as tt
import pytest

from compiler._viewer import HEADS
from explorer.census import diff_census, load_census, select
from explorer.census._headdiff import NO_REPORT

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples", "census_models.py")
DATA = os.path.join(ROOT, "notebooks", "data")
INDUCTOR_HEADS = {"lowering", "fusion", "codegen", "kernels"}


def _census(out, backend: str):
    cmd = [sys.executable, "-m", "explorer.cli", "census", "--models", EXAMPLES, "--only", "mlp"]
    cmd += ["--backend", backend, "--fresh", "--keep-trace", "--jobs", "1", "--out", str(out), "-q"]
    run = subprocess.run(cmd, env={**os.environ, "PYTHONPATH": ROOT}, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return load_census(out)


def _torch_metrics(census, row) -> list[dict]:
    """torch's compilation_metrics of each compile of the row, from its TORCH_TRACE log."""
    (log,) = glob.glob(os.path.join(os.path.dirname(census.path), row.trace, "*.log"))
    return [meta["compilation_metrics"] for meta, _ in tt.read_log(log) if "compilation_metrics" in meta]


def _moved(ha: dict, hb: dict) -> str:
    k = max(HEADS, key=lambda k: abs(hb.get(k, 0.0) - ha.get(k, 0.0)))
    return f" — most moved: {HEADS[k]} {ha.get(k, 0.0):.2f} s → {hb.get(k, 0.0):.2f} s"


def _compile_line(change) -> str:
    (said,) = [x for x in change.worse + change.better if x.startswith("compile ")]
    return said


@pytest.mark.slow
@pytest.mark.census
def test_rows_keep_their_heads_and_the_diff_reads_them(tmp_path):
    a = _census(tmp_path / "aot", "aot_eager")
    b = _census(tmp_path / "inductor", "inductor")
    (ra,), (rb,) = a.rows, b.rows
    for census, row in ((a, ra), (b, rb)):
        metrics = _torch_metrics(census, row)
        # the heads add up to torch's own compile time of the frame (eval: no backward)
        total = sum(m["entire_frame_compile_time_s"] for m in metrics)
        assert sum(row.compile_heads.values()) == pytest.approx(total, abs=0.01), row.compile_heads
        assert set(row.compile_heads) <= set(HEADS) and all(v > 0 for v in row.compile_heads.values())
        # Inductor's heads where torch says Inductor compiled, none where it did not (aot_eager)
        inductor = sum(m.get("inductor_compile_time_s") or 0 for m in metrics)
        assert bool(INDUCTOR_HEADS & set(row.compile_heads)) == (inductor > 0), (row.compile_heads, inductor)
        # the file holds them: what the census wrote reads back the same
        data = json.loads(open(census.path, encoding="utf-8").read())
        assert data["rows"][0]["compile_heads"] == row.compile_heads
    assert INDUCTOR_HEADS & set(rb.compile_heads) and not INDUCTOR_HEADS & set(ra.compile_heads)

    (change,) = diff_census(a, b, slower=1.01, slower_s=0.0).regressions
    line = _compile_line(change)
    assert line.endswith(_moved(ra.compile_heads, rb.compile_heads)), line

    # the reports gone (the census as one file): the rows' own heads name the same head
    for census in (a, b):
        for path in glob.glob(os.path.join(os.path.dirname(census.path), "reports", "*")):
            os.remove(path)
    (change,) = diff_census(load_census(a.path), load_census(b.path), slower=1.01, slower_s=0.0).regressions
    assert _compile_line(change) == line

    # a census written before rows kept their heads: it loads, and its reports name the head
    a2 = _census(tmp_path / "aot2", "aot_eager")
    data = json.loads(open(a2.path, encoding="utf-8").read())
    for r in data["rows"]:
        del r["compile_heads"]
    old = tmp_path / "aot2" / "census.json"
    old.write_text(json.dumps(data))
    (r2,) = load_census(old).rows
    assert r2.compile_heads is None and r2.report is not None
    (change,) = diff_census(load_census(old), load_census(b.path), slower=1.01, slower_s=0.0).regressions
    assert _compile_line(change).endswith(_moved(a2.rows[0].compile_heads, rb.compile_heads))
    # neither heads nor a report: no head is named, and said so
    bare = dataclasses.replace(load_census(old), rows=(dataclasses.replace(r2, report=None),))
    (change,) = diff_census(bare, load_census(b.path), slower=1.01, slower_s=0.0).regressions
    assert _compile_line(change).endswith(" — " + NO_REPORT)


def test_shipped_cpu_censuses_name_a_head_for_every_moved_compile():
    """The two CPU censuses shipped in notebooks/data, torch 2.13 against 2.14.1 (aot_eager, the
    hf-small zoo in eval): every row keeps its heads, adding up to its compile time. Run on a
    shared 2-core machine, the rows' compile times spread ×0.33–×3.06 around the census's shift
    (×1.14): no compile moved beyond that, so the whole diff names none. The encoder-decoder
    rows alone are too few for a noise band: the fixed thresholds (25% and 2 s) pick two, and
    each names its head, with the figures its rows keep."""
    a = load_census(os.path.join(DATA, "census-cpu-torch213.json"))
    b = load_census(os.path.join(DATA, "census-cpu-torch2141.json"))
    for c in (a, b):
        assert len(c.rows) == 47
        for r in c.rows:  # each head rounded to the ms: the sum within one ms a head of the total
            assert sum(r.compile_heads.values()) == pytest.approx(r.compile_time_s, abs=1e-3 * len(HEADS))
            assert set(r.compile_heads) == {"dynamo", "aot", "unplaced"}, r.key  # aot_eager: no Inductor
    d = diff_census(a, b)
    assert [x for c in d.regressions + d.fixes for x in c.worse + c.better if x.startswith("compile ")] == []
    assert d.noise[0].line == (
        "compile times: ×1.14 overall (median of 47 rows), row-to-row noise ×0.33–×3.06 around it"
    )
    assert [c.key for c in d.regressions] == ["switch_transformers:eval"] and d.unchanged == 46

    def pick(c):
        return dataclasses.replace(c, rows=tuple(select(c, family="encoder-decoder")))

    d = diff_census(pick(a), pick(b))
    assert (
        d.noise[0].line == "compile times: 4 rows in both, too few for a noise band (fixed thresholds only)"
    )
    assert [(c.key, c.worse) for c in d.regressions] == [
        ("m2m_100:eval", ("compile 3.0 s → 6.3 s (+108%) — most moved: Dynamo tracing 2.34 s → 5.30 s",)),
        ("t5:eval", ("compile 3.6 s → 6.6 s (+83%) — most moved: Dynamo tracing 3.02 s → 5.39 s",)),
    ]
    assert d.unchanged == 2 and d.fixes == ()
    # the heads that moved, from the rows themselves (the files keep no reports)
    t5a, t5b = a.row("t5:eval").compile_heads, b.row("t5:eval").compile_heads
    assert (t5a, t5b) == (
        {"dynamo": 3.022, "aot": 0.573, "unplaced": 0.016},
        {"dynamo": 5.389, "aot": 1.177, "unplaced": 0.033},
    )


def test_heads_that_do_not_fit_are_one_line(tmp_path):
    """A census file's heads are seconds by name: anything else is refused with the file and
    the JSON path, as every other field of a row."""
    from explorer.census import CensusFormatError

    data = json.loads(open(os.path.join(DATA, "census-cpu-torch213.json"), encoding="utf-8").read())
    for bad, said in (
        ({"dynamo": -1.0}, "expected numbers >= 0 by name"),
        ({"dynamo": True}, "expected numbers >= 0 by name"),
        ([1.0], "expected dict[str, float], got list"),
    ):
        data["rows"][2]["compile_heads"] = bad
        path = tmp_path / "c.json"
        path.write_text(json.dumps(data))
        with pytest.raises(CensusFormatError) as e:
            load_census(path)
        assert str(e.value) == f"{path}: $.rows[2].compile_heads: {said}"

"""What the names of torch's timed phases say (an attempt of Dynamo's analysis, a bytecode hook,
an Inductor pass) is read once, when the report is built (``Compile.phase_names``), and for a
report written before, when it loads; the views read the field. Checked against the chromium
events of torch's own TORCH_TRACE, read directly."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

import compiler
import explorer
from tests import _torch_trace as oracle

FIXTURES = Path(__file__).resolve().parent / "fixtures"
GPT2 = FIXTURES / "traces" / "cpu-torch213-hf-gpt2-train.log.gz"  # Dynamo restarts its analysis
BREAKS = FIXTURES / "traces" / "cpu-torch213-breaks.log.gz"  # Inductor's passes
OLD = FIXTURES / "reports" / "h100-torch211-gpu-block.json.gz"  # written before phase_names


def _torchs_phase_names(path: Path) -> set[str]:
    names = set()
    for meta, payload in oracle.read_log(str(path)):
        if "chromium_event" in meta and payload:
            names.add(json.loads(payload)["name"])
    return names


def _said(report) -> set[tuple]:
    return {
        (p.name, p.attempt, p.hook, p.pass_group, p.pass_name) for c in report.compiles for p in c.phase_names
    }


def _expected(names: set[str]) -> set[tuple]:
    out = set()
    for n in names:
        if n.startswith("compile_attempt_"):
            out.add((n, int(n.removeprefix("compile_attempt_")), None, None, None))
        elif n.startswith("bytecode_hooks_"):
            out.add((n, None, int(n.removeprefix("bytecode_hooks_")), None, None))
        elif n.startswith("pass.") and n.count(".") == 2:
            group, name = n.split(".")[1:]
            out.add((n, None, None, group.removesuffix("_passes"), name))
    return out


@pytest.mark.parametrize("trace", [GPT2, BREAKS], ids=["gpt2-train", "breaks"])
def test_the_build_reads_each_phase_name_once(trace):
    report = compiler.load_trace(trace)
    said = _said(report)
    assert said == _expected(_torchs_phase_names(trace))
    for c in report.compiles:  # each compile holds what its own phases' names say, no other's
        own = {p.name for p in c.phases} | set(c.phase_times_s)
        assert {p.name for p in c.phase_names} == {n for n, *_ in _expected(own)}


def test_what_the_names_say():
    assert ("compile_attempt_1", 1, None, None, None) in _said(compiler.load_trace(GPT2))  # Dynamo restarted
    pass_ = (
        "pass.post_grad_passes.reinplace_inplaceable_ops",
        None,
        None,
        "post_grad",
        "reinplace_inplaceable_ops",
    )
    assert pass_ in _said(compiler.load_trace(BREAKS))


def test_a_report_written_before_gets_them_when_it_loads(tmp_path):
    data = json.loads(gzip.decompress(OLD.read_bytes()))
    assert all("phase_names" not in c for c in data.get("compiles", []))  # as it was written
    report = compiler.load(OLD)
    names = {p.name for c in report.compiles for p in c.phases} | {
        n for c in report.compiles for n in c.phase_times_s
    }
    assert _said(report) == _expected(names) != set()
    # written again, it keeps them; and without them, the load reads the same ones again
    again = compiler.load(report.to_json(tmp_path / "r.json") and tmp_path / "r.json")
    assert _said(again) == _said(report)
    plain = report.to_dict()
    for c in plain["compiles"]:
        c.pop("phase_names", None)
    assert compiler.Report.from_dict(plain).compiles == report.compiles


def test_the_views_say_what_the_field_says():
    report = compiler.load_trace(GPT2)
    text = explorer.text(report, "time")
    assert "attempt 2 (Dynamo restarted the analysis) (compile_attempt_1)" in text
    assert "first attempt (compile_attempt_0)" in text

"""The reader side without torch: compiler.load / load_trace, explorer.text / html / save_html
and `pt2-explorer report` / `load` in a process where torch (and numpy, the widget, chart and
graph libraries, IPython) cannot be imported. The answers are checked against torch's own
structured trace read in this (torch-having) process (tests/_torch_trace.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import compiler
from tests import _torch_trace as oracle

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "tests" / "fixtures" / "traces"
BREAKS = TRACES / "cpu-torch213-breaks.log.gz"
GPU_REPORT = ROOT / "tests" / "fixtures" / "reports" / "h100-torch211-gpu-block.json.gz"
_WITH_BREAKS = [
    f"{m}-{s}"
    for m in ("cpu-torch213-hf", "cpu-torch2141-hf", "h100-torch211-hf")
    for s in ("gpt2-train", "mixtral-moe")
] + ["h100-torch211-breaks"]
HEAVY = ("torch", "numpy", "ipywidgets", "plotly", "pygraphviz", "IPython", "sympy", "triton")

# Run first in the child: every import of a heavy package raises ImportError, as where it is
# not installed.
_BLOCK = f"""
import sys
class _NoHeavy:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {HEAVY!r}:
            raise ImportError(f"No module named {{name.split('.')[0]!r}} (blocked by the test)")
        return None
sys.meta_path.insert(0, _NoHeavy())
HEAVY = {HEAVY!r}
"""

_READ = """
import json, sys, warnings
import compiler, explorer
warnings.simplefilter("ignore")
def _types(f):
    return [[b.gb_id, b.type, b.line] for b in compiler.load_trace(f).graph_breaks]
trace = compiler.load_trace(sys.argv[1])
saved = compiler.load(sys.argv[2])
page = explorer.html(trace)
explorer.save_html(saved, sys.argv[3])
print(json.dumps({
    "breaks": [[b.type, b.filename, b.line, list(b.compile_ids)] for b in trace.graph_breaks],
    "compiles": [c.id for c in trace.compiles],
    "recompiles": {r.compile_id: list(r.reasons) for r in trace.recompiles},
    "saved_compiles": [c.id for c in saved.compiles],
    "saved_kernels": sorted({k.language for k in saved.kernels}),
    "summary": explorer.text(trace),
    "breaks_text": explorer.text(trace, "breaks"),
    "page": len(page),
    "heavy": sorted(m for m in sys.modules if m.split(".")[0] in HEAVY),
    "types": {f: _types(f) for f in sys.argv[4:]},
}))
"""


def _run(code_or_args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", *code_or_args], capture_output=True, text=True, cwd=cwd, env=env, timeout=120
    )


def test_reader_without_torch(tmp_path):
    with_breaks = [str(TRACES / f"{name}.log.gz") for name in _WITH_BREAKS]
    proc = _run([_BLOCK + _READ, str(BREAKS), str(GPU_REPORT), str(tmp_path / "s.html"), *with_breaks], ROOT)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["heavy"] == []
    facts = oracle.facts(oracle.read_log(str(BREAKS)))
    # one break site, typed as torch's registry types its GB id, at the line torch names
    ((site, cids),) = facts.break_sites.items()
    assert [[t, os.path.basename(f), ln, c] for t, f, ln, c in got["breaks"]] == [
        ["Data-dependent branching", "make_cpu_trace.py", 15, sorted(cids)]
    ]
    assert "Data-dependent branching" in facts.break_types[site]
    assert (os.path.basename(site[0]), site[1]) == ("make_cpu_trace.py", 15)
    assert got["recompiles"] == facts.recompiles
    assert got["compiles"] == ["0/0", "1/0", "0/1", "1/1"]
    assert "Data-dependent branching" in got["breaks_text"]
    assert "[0/1]" in got["summary"] and "CADFG" in got["summary"]
    assert got["page"] > 10_000
    # the saved GPU report: four compiles of Triton kernels
    assert got["saved_compiles"] == ["0/0", "1/0", "0/1", "1/1"]
    assert got["saved_kernels"] == ["triton"]
    assert (tmp_path / "s.html").read_text(encoding="utf-8").startswith("<!doctype html>")
    # without torch a break's type is the one torch printed in the log; with torch, the one its
    # graph-break registry gives the GB id: the same on every fixture of torch 2.11, 2.13, 2.14.1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with_torch = {
            f: [[b.gb_id, b.type, b.line] for b in compiler.load_trace(f).graph_breaks] for f in with_breaks
        }
    assert got["types"] == with_torch
    assert {t for types in with_torch.values() for _, t, _ in types} == {
        "Data-dependent branching",
        "Dynamic shape operator",
        "logging.Logger method not supported for non-export cases",
        "Missing tp_iternext",
        "C-implemented special method without VariableTracker model",
    }


def test_cli_without_torch(tmp_path):
    cli = _BLOCK + "import sys; from explorer.cli import main; sys.exit(main(sys.argv[1:]))"
    out = tmp_path / "r.json.gz"
    load = _run([cli, "load", str(BREAKS), "--json", str(out), "--html", str(tmp_path / "l.html")], ROOT)
    assert load.returncode == 0, load.stderr
    assert "Data-dependent branching" in load.stdout and f"report: {out}" in load.stdout
    report = _run([cli, "report", str(out), "--view", "breaks"], ROOT)
    assert report.returncode == 0, report.stderr
    assert "Data-dependent branching" in report.stdout and "make_cpu_trace.py:15" in report.stdout
    # recording needs torch: one line, no traceback
    rec = _run([cli, "record", str(ROOT / "examples" / "tiny_model.py")], ROOT)
    assert rec.returncode == 2
    assert rec.stderr.strip() == "pt2-explorer: No module named 'torch' (blocked by the test)"


def test_every_kind_of_file_we_write_reads_without_torch(tmp_path):
    # what the project writes: a report (plain, gzipped), a multi-rank report, per-rank
    # reports of a torchrun job, a report with benchmarks, a modes comparison, a recording's
    # journal; and what torch writes: a TORCH_TRACE directory of ranks. Written here (torch),
    # read in a child where torch cannot be imported, through the API and the CLI.
    job = TRACES / "cpu-torch271-ddp-4rank"
    ranks = compiler.load_trace(job)
    ranks.to_json(tmp_path / "ranks.json")
    one = compiler.load_trace(BREAKS)
    one.to_json(tmp_path / "one.json")
    one.to_json(tmp_path / "one.json.gz")
    journal = tmp_path / "run.journal"
    journal.write_bytes(__import__("gzip").decompress(BREAKS.read_bytes()))  # a journal is a log
    bench = ROOT / "notebooks" / "data" / "h100-bench-mlp.json.gz"
    modes = ROOT / "notebooks" / "data" / "h100-modes-mlp.json.gz"
    per_rank = ROOT / "tests" / "fixtures" / "reports" / "h200x2-torch211-ddp"
    api = _BLOCK + (
        "import json, sys, warnings\n"
        "import compiler, explorer\n"
        "from compiler.read._journal import report_from_journal\n"
        "warnings.simplefilter('ignore')\n"
        "d = sys.argv[1]\n"
        "out = {\n"
        " 'ranks': [r.rank for r in compiler.load(d + '/ranks.json').ranks],\n"
        " 'job': [len(r.compiles) for r in compiler.load_trace(sys.argv[2]).ranks],\n"
        " 'per_rank': [r.rank for r in compiler.load_ranks(sys.argv[3]).ranks],\n"
        " 'one': [c.id for c in compiler.load(d + '/one.json').compiles],\n"
        " 'gz': [c.id for c in compiler.load(d + '/one.json.gz').compiles],\n"
        " 'bench': len(compiler.load(sys.argv[4]).benchmarks),\n"
        " 'modes': [r.label for r in compiler.load_modes(sys.argv[5]).rows],\n"
        " 'journal': [c.id for c in report_from_journal(d + '/run.journal').compiles],\n"
        " 'heavy': sorted(m for m in sys.modules if m.split('.')[0] in HEAVY),\n"
        "}\n"
        "print(json.dumps(out))\n"
    )
    got = _run([api, str(tmp_path), str(job), str(per_rank), str(bench), str(modes)], ROOT)
    assert got.returncode == 0, got.stderr
    out = json.loads(got.stdout)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert out == {
            "ranks": [0, 1, 2, 3],
            "job": [len(r.compiles) for r in ranks.ranks],
            "per_rank": [0, 1],
            "one": [c.id for c in one.compiles],
            "gz": [c.id for c in one.compiles],
            "bench": len(compiler.load(bench).benchmarks),
            "modes": [r.label for r in compiler.load_modes(modes).rows],
            "journal": [c.id for c in one.compiles],
            "heavy": [],
        }
    assert out["bench"] >= 1 and len(out["modes"]) >= 2
    cli = _BLOCK + "import sys; from explorer.cli import main; sys.exit(main(sys.argv[1:]))"
    for argv, expect in [
        (["report", str(tmp_path / "ranks.json"), "--view", "ranks"], "4 ranks (world size 4)"),
        (["report", str(per_rank), "--view", "ranks"], "2 ranks (world size 2)"),
        (["load", str(job), "--json", str(tmp_path / "job.json")], f"report: {tmp_path / 'job.json'}"),
        (["report", str(bench), "--view", "bench"], "eager"),
        (["report", str(modes)], "default"),
    ]:
        run = _run([cli, *argv], ROOT)
        assert run.returncode == 0 and expect in run.stdout, (argv, run.stdout[-500:], run.stderr[-2000:])

"""Logs written by every torch we meet load, and say what torch says in them: TORCH_TRACE logs
made by torch 2.6.0, 2.7.1, 2.11, 2.13 and 2.14.1 (tests/fixtures/traces, README there), each
checked against the log itself read line by line (tests/_torch_trace.read_log), never against
our own output. Older torch writes other shapes: no compiled_autograd_id on Compiled Autograd's
events (2.6), "Reason: ..." graph-break texts without a registry id (2.6), the pre-grad graph
as a top-level ``inductor_pre_grad_graph`` event (before 2.8), no torch version."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

import compiler
from tests._torch_trace import read_log

TRACES = Path(__file__).parent / "fixtures" / "traces"
# the break in make_cpu_trace.py (`if y.sum() > 0:`), as every torch version names it
SCRIPT = "tests/fixtures/traces/make_cpu_trace.py"
BREAKS = {
    "cpu-torch260-breaks.log.gz": "Data-dependent jump",  # torch 2.6's own words (no registry yet)
    "cpu-torch271-breaks.log.gz": "Data-dependent branching",
    "cpu-torch213-breaks.log.gz": "Data-dependent branching",
}
AUTOGRAD = ["cpu-torch260-compiled-autograd.log.gz", "cpu-torch271-compiled-autograd.log.gz"]
AUTOGRAD += ["cpu-torch213-compiled-autograd.log.gz"]
_SITE = re.compile(r"^Graph break in user code at (.+):(\d+)$")


def _load(path: Path) -> compiler.Report:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # whole logs, as torch wrote them: nothing to warn of
        return compiler.load_trace(path)


def _cid(meta: dict) -> str | None:
    if "frame_id" not in meta:
        return None
    cid = f"{meta['frame_id']}/{meta['frame_compile_id']}"
    ca = meta.get("compiled_autograd_id")
    return cid if ca is None else f"!{ca}/{cid}"


def _artifact(meta: dict) -> str | None:
    art = meta.get("artifact")
    return art.get("name") if isinstance(art, dict) else None


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_breaks_and_recompiles_as_each_torch_logged_them(name, tmp_path):
    records = read_log(str(TRACES / name))
    r = _load(TRACES / name)
    # compiles: every compile id torch finished (compilation_metrics), in its order
    logged = [_cid(m) for m, _ in records if "compilation_metrics" in m]
    assert [c.id for c in r.compiles] == logged == ["0/0", "1/0", "0/1", "1/1"]
    assert all(c.status == "ok" for c in r.compiles)
    # the break: the site torch names in the payload's first line, once per compile it hit
    sites = [
        (_SITE.match(p.splitlines()[0]).groups(), _cid(m))
        for m, p in records
        if _artifact(m) == "dynamo_graph_break_reason"
    ]
    assert {s for s, _ in sites} == {(f"/work/main/{SCRIPT}", "15")}
    (b,) = r.graph_breaks
    assert (b.filename, b.line, b.type, b.count) == (f"/work/main/{SCRIPT}", 15, BREAKS[name], len(sites))
    assert b.compile_id == sites[0][1] == "0/0"
    # recompiles: the compiles torch logged reasons for
    reasons = {_cid(m): p for m, p in records if _artifact(m) == "recompile_reasons"}
    assert [x.compile_id for x in r.recompiles] == sorted(reasons) == ["0/1", "1/1"]
    for x in r.recompiles:
        assert all(reason in reasons[x.compile_id] for reason in x.reasons)
    # the pre-grad graph Inductor got (a top-level event before torch 2.8, an artifact after)
    # (torch 2.6 logs none)
    pre = [p for m, p in records if "inductor_pre_grad_graph" in m or _artifact(m) == "before_pre_grad_graph"]
    got = [g.code for c in r.compiles if (g := c.stages.decompose.pre_grad_before)]
    assert got == pre and len(pre) == (0 if "torch260" in name else 4)
    assert r.damaged == () and r.error is None
    out = tmp_path / "r.json"
    r.to_json(out)
    assert compiler.load(out) == r


@pytest.mark.parametrize("name", AUTOGRAD)
def test_compiled_autograd_captures_of_each_torch(name):
    records = read_log(str(TRACES / name))
    r = _load(TRACES / name)
    graphs = [p for m, p in records if "compiled_autograd_graph" in m]
    ids = [m.get("compiled_autograd_id") for m, _ in records if "compiled_autograd_graph" in m]
    # torch 2.6 numbers no capture; later torch numbers them from 0
    assert ids == ([None, None] if "torch260" in name else [0, 1])
    ca = [c for c in r.compiles if c.compiled_autograd is not None]
    assert [c.compiled_autograd.id for c in ca] == ["!0", "!1"]
    assert [c.compiled_autograd.graph.code for c in ca] == graphs
    assert [c.compiled_autograd.recaptured_from for c in ca] == [None, "!0"]
    # each capture is compiled by Dynamo as the graph module Compiled Autograd made
    metrics = {_cid(m): m["compilation_metrics"] for m, _ in records if "compilation_metrics" in m}
    assert [metrics[c.id]["co_filename"].startswith("<eval_with_key>") for c in ca] == [True, True]
    assert [c.id for c in r.compiles if c.compiled_autograd is None] == ["0/0"]
    assert not [e for e in r.unknown_events if "compiled_autograd" in e.name]


def test_a_four_rank_job_of_torch_271():
    # torchrun --nproc-per-node 4 examples/ddp_train.py --diverge-rank 3 (torch 2.7.1, gloo);
    # one log per rank, a suffix that starts with "_" on rank 1 (torch's random suffix)
    job = TRACES / "cpu-torch271-ddp-4rank"
    logs = sorted(job.iterdir())
    assert [p.name.split("_")[5] for p in logs] == ["0", "1", "2", "3"]
    assert logs[1].name.startswith("dedicated_log_torch_trace_rank_1__")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = compiler.load_trace(job)
    assert (r.rank, r.world_size, [x.rank for x in r.ranks]) == (0, 4, [0, 1, 2, 3])
    for log, rank in zip(logs, r.ranks, strict=True):
        records = read_log(str(log))
        assert {m["rank"] for m, _ in records if "rank" in m} == {rank.rank}
        assert [c.id for c in rank.compiles] == [_cid(m) for m, _ in records if "compilation_metrics" in m]
        reasons = sorted(_cid(m) for m, _ in records if _artifact(m) == "recompile_reasons")
        assert [x.compile_id for x in rank.recompiles] == reasons == (["4/1"] if rank.rank == 3 else [])
        splits = [_cid(m) for m, _ in records if "optimize_ddp_split_graph" in m]
        assert [e.compile_id for e in rank.distributed if e.name == "optimize_ddp_split_graph"] == splits
        assert splits[:1] == ["4/0"]

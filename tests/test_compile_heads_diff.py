"""What grew between two runs (issue 53, item 4): ``pt2-explorer diff a.json b.json`` puts each
pair of compiles' compile-time heads side by side and names the heads that grew. Two
recordings of one program under two configs: the FX graph and AOTAutograd caches on and warm
(torch's cache hit skips lowering, codegen and the C++ build), then off in a fresh cache
directory (every stage runs again)."""

from __future__ import annotations

import dataclasses
import os
import time

import pytest
import torch
import torch._functorch.config
from _torch_trace import RawTrace
from torch._inductor.utils import fresh_cache

import compiler
from compiler._viewer import HEADS
from compiler.analysis import compile_time, program_time
from explorer import cli
from explorer.diffs._diff import diff
from explorer.diffs._timediff import GREW, GREW_S

SCALE = os.getpid() + time.time() % 1  # a key no earlier run's cache holds


def block(x):
    return (x.sin() * SCALE).softmax(-1) @ x.T + x.cos().sum(0)


def _artifacts(records) -> set[str]:
    return {m["artifact"]["name"] for m, _ in records if isinstance(m.get("artifact"), dict)}


@pytest.fixture(scope="module")
def warm_cold(tmp_path_factory):
    x = torch.randn(16, 16)
    torch._dynamo.reset()
    with (
        torch._inductor.config.patch(fx_graph_cache=True),  # conftest.py turns the caches off
        torch._functorch.config.patch(enable_autograd_cache=True),
        fresh_cache(dir=str(tmp_path_factory.mktemp("cache"))),
    ):
        torch.compile(block)(x)
        torch._dynamo.reset()
        with RawTrace() as raw_a, compiler.recording() as a:
            torch.compile(block)(x)
    torch._dynamo.reset()
    with (
        fresh_cache(dir=str(tmp_path_factory.mktemp("cold"))),
        RawTrace() as raw_b,
        compiler.recording() as b,
    ):
        torch.compile(block)(x)
    paths = []
    for name, rec in (("warm", a), ("cold", b)):
        paths.append(tmp_path_factory.mktemp(name) / f"{name}.json")
        rec.report.to_json(str(paths[-1]))
    return a.report, b.report, raw_a.records, raw_b.records, paths


def test_diff_names_the_heads_that_grew(warm_cold, capsys):
    a, b, raw_a, raw_b, paths = warm_cold
    # torch's own answer: the first run's graph came from the cache, the second's did not
    assert "fx_graph_cache_hit" in _artifacts(raw_a) and "fx_graph_cache_hit" not in _artifacts(raw_b)
    (x,), (y,) = a.compiles, b.compiles
    ta, tb = compile_time(x), compile_time(y)
    grew = [k for k in HEADS if tb.heads[k] - ta.heads[k] >= GREW_S and tb.heads[k] > ta.heads[k] * GREW]
    # a cache hit skips Inductor's codegen and the kernels' build: the cold run pays them
    assert {"codegen", "kernels", "workers"} & set(grew), (ta.heads, tb.heads)
    assert cli.main(["diff", str(paths[0]), str(paths[1])]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if "compile time" in ln and "grew:" in ln)
    said = line.split("grew: ", 1)[1].split("; shrank", 1)[0]
    for k in HEADS:
        assert (f"{HEADS[k]} {ta.heads[k]:.3f} s → {tb.heads[k]:.3f} s" in said) == (k in grew), k
    most = max(HEADS, key=lambda k: abs(tb.heads[k] - ta.heads[k]))
    assert (
        f"the head that changed most is {HEADS[most]}, {ta.heads[most]:.3f} s → {tb.heads[most]:.3f} s" in out
    )
    # the side-by-side section: every head of both compiles
    d = diff(a, b)
    section = next(s for s in d.sections if s.id == "compile-time")
    for k, v in tb.heads.items():
        assert f"  {HEADS[k]}: {v:.3f} s" in section.b


def test_census_diff_names_the_head_that_moved(warm_cold, tmp_path):
    """Two censuses of one case, each row linked to its report: the row whose compile time
    moved names the head that moved most; a census without reports says it names none."""
    from explorer.census._cases import Case
    from explorer.census._diff import diff_census
    from explorer.census._headdiff import NO_REPORT
    from explorer.census._table import Census, load_census, row_from_report

    a, b, _, _, _ = warm_cold
    case = Case("probe", "block", "eval")
    paths = []
    for name, rep in (("A", a), ("B", b)):
        (tmp_path / name / "reports").mkdir(parents=True)
        rep.to_json(str(tmp_path / name / "reports" / "block.json"))
        row = row_from_report(case, rep, {}, report="reports/block.json")
        paths.append(Census((row,), title=name).save(str(tmp_path / name / "census.json")))
    ca, cb = load_census(paths[0]), load_census(paths[1])
    d = diff_census(ca, cb, slower=1.01, slower_s=0.0)
    (change,) = d.regressions
    # the rows keep their heads (to the ms, those with time), which the diff reads first
    ha, hb = ({k: r.rows[0].compile_heads.get(k, 0.0) for k in HEADS} for r in (ca, cb))
    for rep, kept in ((a, ha), (b, hb)):
        assert kept == {k: round(v, 3) for k, v in program_time(rep).heads.items()}
    most = max(HEADS, key=lambda k: abs(hb[k] - ha[k]))
    (said,) = [x for x in change.worse if x.startswith("compile ")]
    assert said.endswith(f" — most moved: {HEADS[most]} {ha[most]:.2f} s → {hb[most]:.2f} s"), said
    # rows without their heads (written before rows kept them) and without their reports (a
    # census written as one file): no head is named
    bare = [
        Census(tuple(dataclasses.replace(r, report=None, compile_heads=None) for r in c.rows), title=c.title)
        for c in (ca, cb)
    ]
    (change,) = diff_census(*bare, slower=1.01, slower_s=0.0).regressions
    assert any(x.startswith("compile ") and x.endswith(NO_REPORT) for x in change.worse)

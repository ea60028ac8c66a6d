"""Distributed jobs: record every rank under torchrun, load every rank of a TORCH_TRACE
directory, the ranks view (docs/distributed.md). The torchrun tests run 2 CPU ranks with gloo
(examples/ddp_train.py); the fixtures were recorded the same way (tests/fixtures/*/README.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import compiler
import compiler._viewer
from compiler import load_ranks
from compiler.read._ranks import combine
from explorer import cli
from explorer.views._ranks import build_ranks_view, diff_ranks, ranks_page, ranks_text

ROOT = Path(__file__).resolve().parent.parent
TRACE = ROOT / "tests/fixtures/traces/cpu-torch213-ddp-2rank"
GPU_DDP = ROOT / "tests/fixtures/reports/h200x2-torch211-ddp"
GPU_FSDP = ROOT / "tests/fixtures/reports/h200x2-torch211-fsdp2"
RECOMPILED = "rank 1 recompiled [4/1] — 4/0: tensor 'x' size mismatch at index 0. expected 8, actual 6 — rank 0 did not"


def test_rank_path_puts_the_rank_in_the_file_name():
    assert compiler._viewer.rank_path("out/run.json", 1) == "out/run.rank1.json"
    assert compiler._viewer.rank_path("run.json.gz", 0) == "run.rank0.json.gz"
    assert compiler._viewer.rank_path("report.html", 3) == "report.rank3.html"


def test_load_ranks_reads_every_rank_of_a_trace_directory():
    report = load_ranks(TRACE)
    assert [r.rank for r in report.ranks] == [0, 1]
    assert all(r.world_size == 2 for r in report.ranks)
    assert report.rank == 0 and report.compiles == report.ranks[0].compiles  # the lowest rank's, on top
    r0, r1 = report.ranks
    assert [rc.compile_id for rc in r0.recompiles] == []
    assert [rc.compile_id for rc in r1.recompiles] == ["0/1", "4/1"]
    # DDP's optimizer split the model's forward [4/0] at the bucket border, on both ranks
    for r in (r0, r1):
        names = [(e.name, e.compile_id) for e in r.distributed]
        assert names[:3] == [
            ("optimize_ddp_split_graph", "4/0"),
            ("optimize_ddp_split_child", "4/0"),
            ("optimize_ddp_split_child", "4/0"),
        ]
        assert "submod_0" in r.distributed[0].payload and "submod_1" in r.distributed[0].payload
    assert not any(e.name.startswith("optimize_ddp") for e in r0.unknown_events)


def test_one_rank_still_picked_with_rank():
    one = compiler.load_trace(TRACE, rank=1)
    assert one.rank == 1 and len(one.recompiles) == 2 and one.ranks == ()


def test_ranks_view_names_the_divergence_first():
    text = ranks_text(build_ranks_view(load_ranks(TRACE), "ddp"))
    lines = text.splitlines()
    assert lines[0] == "ddp: 2 ranks (world size 2)"
    assert lines[2] == "Where the ranks diverge:"
    assert f"  - {RECOMPILED}" in lines
    assert "  - rank 0 compiled 5 graphs, rank 1 compiled 7 graphs" in lines
    assert "  - DDP's optimizer split 1 compile on rank 0, 1 compile on rank 1" not in lines
    assert (
        "  [4/0] split into 2 graphs at DDP's bucket borders (submod_0, submod_1) on ranks 0 and 1" in lines
    )
    assert "  [4/1] split into 2 graphs at DDP's bucket borders (submod_0, submod_1) on rank 1" in lines
    assert lines.index("Where the ranks diverge:") < lines.index("Ranks")


def test_ranks_view_of_agreeing_ranks_says_so():
    text = ranks_text(build_ranks_view(load_ranks(GPU_FSDP), "fsdp"))
    assert "The ranks agree: the same compiles, graphs, breaks and recompiles on all 2." in text
    assert "DDP splits" in text and "cuda" in text


def test_gpu_ddp_recording_shows_the_same_divergence():
    """The NCCL job on 2 H200s: the graphs of rank 0 and 1 name cuda:0 and cuda:1, and still
    hash alike (the device index is left out)."""
    report = load_ranks(GPU_DDP)
    assert {r.device for r in report.ranks} == {"cuda"}
    view = build_ranks_view(report, "gpu")
    assert RECOMPILED in view.divergence
    assert not any("captured a different graph" in d for d in view.divergence)


def test_ranks_html_and_diff_between_two_ranks():
    report = load_ranks(TRACE)
    page = ranks_page(report, "ddp")
    assert "Where the ranks diverge" in page and "size mismatch at index 0" in page
    d = diff_ranks(report, 0, 1)
    assert "rank 0" in d.title and "rank 1" in d.title
    same = diff_ranks(report, 0, 1, "4/0")
    assert (same.a_label, same.b_label) == ("rank 0 [4/0]", "rank 1 [4/0]")
    assert same.summary[0].startswith("no differences")  # the same graph on both ranks
    with pytest.raises(KeyError, match="ranks present"):
        diff_ranks(report, 0, 5)


def test_explorer_of_a_multi_rank_report_opens_on_its_ranks_tab():
    """The notebook explorer, as the static page: the ranks first (and open), with the diff of
    the first and the last rank under their dropdowns."""
    from explorer.pages._widgets import Explorer

    report = load_ranks(GPU_DDP)
    app = Explorer(report, title="ddp")
    titles = [app.tabs.get_title(i) for i in range(len(app.tabs.children))]
    assert titles == ["Ranks (2)", "Graph breaks (2)", "Recompiles (0)", "Compiles (5)"]
    assert app.tabs.selected_index == 0
    view, row, diff = app.tabs.children[0].children
    a, b = row.children
    assert "<h2>ddp: 2 ranks (world size 2)</h2>" in view.value and (a.value, b.value) == (0, 1)
    assert diff.value == diff_ranks(report, 0, 1).html()


def test_combine_of_one_report_is_that_report():
    r = compiler.load_trace(TRACE, rank=0)
    assert combine([r]).ranks == ()


def test_multi_rank_report_round_trips_through_json(tmp_path):
    report = load_ranks(TRACE)
    report.to_json(tmp_path / "all.json")
    back = compiler.load(tmp_path / "all.json")
    assert [r.rank for r in back.ranks] == [0, 1] and back.ranks[1].distributed == report.ranks[1].distributed
    assert back == report
    # the lowest rank is the top-level report and one of the ranks: written once
    data = json.loads((tmp_path / "all.json").read_text())
    assert (data["rank"], data["ranks_top_at"], [r["rank"] for r in data["ranks"]]) == (0, 0, [1])


def test_cli_report_view_ranks_over_a_directory(tmp_path, capsys):
    assert cli.main(["report", str(GPU_DDP), "--view", "ranks", "--html", str(tmp_path / "r.html")]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{GPU_DDP}: 2 ranks (world size 2)\n")
    assert RECOMPILED in out
    assert (tmp_path / "r.html").read_text().count("<table>") == 2
    assert cli.main(["report", str(tmp_path / "missing"), "--view", "ranks"]) == 2


# ---- under torchrun: 2 CPU ranks with gloo -----------------------------------------------------


def _torchrun(tmp_path: Path, *args: str, timeout: int = 240) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"]
    cmd += ["-m", "explorer", "record", "-q", "--json", str(tmp_path / "out/run.json")]
    cmd += [str(ROOT / "examples/ddp_train.py"), *args]
    return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.distributed
@pytest.mark.slow
def test_torchrun_record_writes_one_report_per_rank_and_finds_the_divergence(tmp_path):
    p = _torchrun(tmp_path, "--diverge-rank", "1")
    assert p.returncode == 0, p.stderr[-3000:]
    assert sorted(os.listdir(tmp_path / "out")) == ["run.rank0.json", "run.rank1.json"]
    r1 = compiler.load(tmp_path / "out/run.rank1.json")
    assert (r1.rank, r1.world_size) == (1, 2)
    view = build_ranks_view(load_ranks(tmp_path / "out"))
    assert any(
        d.startswith("rank 1 recompiled [4/1]") and d.endswith("rank 0 did not") for d in view.divergence
    )
    assert [s.compile_id for s in view.ddp_splits if s.rank == 0] == ["4/0"]


@pytest.mark.distributed
@pytest.mark.slow
def test_a_failing_rank_and_the_rank_torchrun_stops_both_write_their_reports(tmp_path):
    p = _torchrun(tmp_path, "--fail-rank", "1")
    assert p.returncode != 0
    assert sorted(os.listdir(tmp_path / "out")) == ["run.rank0.json", "run.rank1.json"]
    r0, r1 = (compiler.load(tmp_path / f"out/run.rank{r}.json") for r in (0, 1))
    assert "rank 1 failed on purpose" in p.stderr
    assert r1.compiles and r0.compiles  # what each compiled before the failure

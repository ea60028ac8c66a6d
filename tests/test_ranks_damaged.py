"""One bad rank does not lose the job: a multi-rank directory loads every rank that loads and
lists each one that does not (``Report.damaged_ranks``, a warning each), alike through
``compiler.load_ranks``, `pt2-explorer load DIR` and `pt2-explorer report DIR --view ranks`.

The job is the 4-rank DDP recording (tests/fixtures/traces/cpu-torch271-ddp-4rank): ranks 0
and 1 as torch wrote them, rank 2 replaced by random bytes, rank 3 by an empty file.
"""

from __future__ import annotations

import gzip
import random
import shutil
import warnings
from pathlib import Path

import pytest

import compiler
from explorer import cli
from explorer.views._ranks import build_ranks_view, ranks_page, ranks_text

ROOT = Path(__file__).resolve().parents[1]
DDP4 = ROOT / "tests/fixtures/traces/cpu-torch271-ddp-4rank"
RANK = "dedicated_log_torch_trace_rank_{}_{}.log"


@pytest.fixture
def job(tmp_path) -> Path:
    d = tmp_path / "trace"
    d.mkdir()
    for f in sorted(DDP4.iterdir()):
        if "_rank_0_" in f.name or "_rank_1_" in f.name:
            shutil.copy(f, d / f.name)
    (d / RANK.format(2, "junk")).write_bytes(random.Random(0).randbytes(4096))
    (d / RANK.format(3, "empty")).write_bytes(b"")
    return d


def _damaged(d: Path) -> tuple[str, ...]:
    return (
        f"rank 2: {d / RANK.format(2, 'junk')}:1: byte 0xcd at column 1 is not UTF-8 text: the log was "
        "damaged, or is not a TORCH_TRACE log",
        f"rank 3: {d / RANK.format(3, 'empty')}: empty file, no TORCH_TRACE events",
    )


def _warnings(d: Path) -> list[str]:
    return [line.replace(": ", " not loaded: ", 1) for line in _damaged(d)]


def test_load_ranks_loads_the_good_ranks_and_lists_the_bad(job):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = compiler.load_ranks(job)
    assert [str(w.message) for w in caught] == _warnings(job)
    assert [(r.rank, r.world_size, len(r.compiles)) for r in report.ranks] == [(0, 4, 5), (1, 4, 5)]
    assert report.damaged_ranks == _damaged(job)
    assert all(r.damaged_ranks == _damaged(job) for r in report.ranks)
    with warnings.catch_warnings(record=True) as caught:  # load_trace of the directory: the same
        warnings.simplefilter("always")
        assert compiler.load_trace(job).damaged_ranks == _damaged(job)
    assert [str(w.message) for w in caught] == _warnings(job)
    # one rank alone still loads; a bad one alone is its own error
    assert compiler.load_trace(job, rank=1).damaged_ranks == ()
    with pytest.raises(compiler.TraceFormatError) as e:
        compiler.load_trace(job, rank=3)
    assert str(e.value) == f"{job / RANK.format(3, 'empty')}: empty file, no TORCH_TRACE events"
    with pytest.raises(compiler.TraceFormatError) as e:  # strict: every rank or none
        compiler.load_ranks(job, strict=True)
    assert str(e.value) == _damaged(job)[0].removeprefix("rank 2: ")


def test_ranks_view_lists_the_damaged_ranks(job):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = compiler.load_ranks(job)
    lines = ranks_text(build_ranks_view(report, "ddp")).splitlines()
    assert lines[:7] == [
        "ddp: 2 ranks (world size 4)",
        "",
        "Damaged, not loaded (2):",
        *(f"  - {d}" for d in _damaged(job)),
        "",
        "The ranks that loaded agree: the same compiles, graphs, breaks and recompiles on all 2.",
    ]
    page = ranks_page(report, "ddp")
    assert '<div class="damaged"><h3>Damaged, not loaded (2)</h3><ul><li>rank 2: ' in page


def test_cli_load_and_report_agree(job, tmp_path, capsys):
    out = tmp_path / "job.json"
    warned = "".join(f"pt2-explorer: warning: {w}\n" for w in _warnings(job))
    assert cli.main(["load", str(job), "--json", str(out), "-q"]) == 0
    assert capsys.readouterr() == (f"report: {out}\n", warned)
    assert compiler.load(out).damaged_ranks == _damaged(job)  # kept in the saved report
    assert cli.main(["report", str(job), "--view", "ranks"]) == 0
    text, err = capsys.readouterr()
    assert err == warned
    assert text.splitlines()[:5] == [
        f"{job}: 2 ranks (world size 4)",
        "",
        "Damaged, not loaded (2):",
        *(f"  - {d}" for d in _damaged(job)),
    ]
    assert cli.main(["report", str(out), "--view", "ranks"]) == 0  # the saved report: the same list
    text, err = capsys.readouterr()
    assert (err, text.splitlines()[2:5]) == (
        "",
        ["Damaged, not loaded (2):", *(f"  - {d}" for d in _damaged(job))],
    )
    assert cli.main(["load", str(job), "--rank", "2", "-q"]) == 2
    assert capsys.readouterr().err == f"pt2-explorer: error: {_damaged(job)[0].removeprefix('rank 2: ')}\n"


def test_only_one_good_rank_still_says_the_others(job, capsys):
    (job / next(n.name for n in job.iterdir() if "_rank_1_" in n.name)).write_bytes(b"")
    assert cli.main(["report", str(job), "--view", "ranks"]) == 0
    text, err = capsys.readouterr()
    assert len(err.splitlines()) == 3
    assert text.splitlines()[:3] == [f"{job}: 1 rank (world size 4)", "", "Damaged, not loaded (3):"]
    assert "One rank loaded: no other to compare it with." in text


def test_no_rank_loads_is_the_lowest_ones_error(job, capsys):
    for f in job.iterdir():
        f.write_bytes(b"")
    assert cli.main(["report", str(job), "--view", "ranks"]) == 2
    (first,) = [f for f in job.iterdir() if "_rank_0_" in f.name]
    assert capsys.readouterr().err == f"pt2-explorer: error: {first}: empty file, no TORCH_TRACE events\n"


def test_a_directory_of_rank_reports_lists_the_bad_one(job, tmp_path, capsys):
    reports = tmp_path / "reports"
    reports.mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in (0, 2):
            compiler.load_trace(job, rank=min(r, 1)).to_json(reports / f"run.rank{r}.json")
    (reports / "run.rank1.json").write_bytes(gzip.compress(b"[1]"))
    assert cli.main(["report", str(reports), "--view", "ranks"]) == 0
    text, err = capsys.readouterr()
    with pytest.raises(compiler.ReportFormatError) as e:  # its own error, named by rank
        compiler.load(reports / "run.rank1.json")
    assert err == f"pt2-explorer: warning: rank 1 not loaded: {e.value}\n"
    assert text.splitlines()[:4] == [
        f"{reports}: 2 ranks (world size 3)",
        "",
        "Damaged, not loaded (1):",
        f"  - rank 1: {e.value}",
    ]


def test_a_cut_rank_is_one_warning_line_under_report(tmp_path, capsys):
    """A rank whose log was cut off loads with a warning: said as the CLI's other warnings,
    not as Python's `UserWarning` with a source line."""
    d = tmp_path / "trace"
    d.mkdir()
    logs = sorted(DDP4.iterdir())
    shutil.copy(logs[0], d / logs[0].name)
    lines = gzip.decompress(logs[1].read_bytes()).splitlines(keepends=True)
    cut = d / logs[1].name.removesuffix(".gz")
    cut.write_bytes(b"".join(lines[:100]) + lines[100][:20])
    assert cli.main(["report", str(d), "--view", "ranks"]) == 0
    err = capsys.readouterr().err
    assert err == (
        f"pt2-explorer: warning: {cut}:31: the log is truncated at lines 31-101: event "
        "'artifact:dynamo_graph_break_reason' is incomplete (a killed process or a cut copy?); "
        "the events before line 31 are complete\n"
    )

"""A fill runs a report's runnable code (torch's ``fx_graph_runnable``) in a fresh python: only
the runnables this user's own recording marked run unasked (compiler/model/_trust.py). A
crafted report (no mark), a copied one (another user's key) and one edited after it was
recorded refuse with one line and run nothing; ``--trust`` prints the code and where it came
from, then runs it. No page, summary or button offers a plain fill of such a report. The
background fill after ``record`` gets the report from ``record`` itself and writes back only
over the files ``record`` wrote (compiler/bench/_fill.py, explorer/cli/_fill.py)."""

from __future__ import annotations

import dataclasses
import os
import stat
import subprocess
import sys

import pytest
import torch

import compiler
import compiler._viewer
from compiler._viewer import fill_untrusted
from compiler.model._trust import UntrustedReport, key_path
from explorer.cli import main
from explorer.cli._fill import fill_in_background, new_log
from tests._caches import user_caches_in

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def f(x):
    return torch.relu(torch.sin(x)) * 2


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    """A compile recorded with the caches on: no kernel-to-node map, so a fill has work."""
    with user_caches_in(str(tmp_path_factory.mktemp("cache"))), compiler.recording() as rec:
        torch.compile(f)(torch.randn(8))
    report = rec.report
    assert compiler._viewer.fill_reason(report.compiles[0]) is not None
    return report


def _with_marker(report, marker: str):
    """``report`` with its runnable replaced by code that writes ``marker``: what a crafted
    report would run."""
    (c,) = report.compiles
    code = f"open({marker!r}, 'w').write('ran')\n"
    cg = dataclasses.replace(c.stages.codegen, fx_graph_runnable=code, fx_graph_runnable_backward=None)
    c = dataclasses.replace(c, stages=dataclasses.replace(c.stages, codegen=cg))
    return dataclasses.replace(report, compiles=(c,))


def test_the_recording_marks_its_runnables_with_a_key_only_this_user_reads(warm):
    assert warm.fill_mark.startswith("v1:")
    assert fill_untrusted(warm) is None
    st = os.stat(key_path())
    assert stat.S_IMODE(st.st_mode) == 0o600 and st.st_size == 32 and st.st_uid == os.getuid()


def test_crafted_copied_and_edited_reports_are_refused_and_run_nothing(warm, tmp_path, monkeypatch):
    marker = str(tmp_path / "ran")
    crafted = dataclasses.replace(_with_marker(warm, marker), fill_mark=None)
    edited = _with_marker(warm, marker)  # the recording's mark, another code
    with monkeypatch.context() as m:  # another user's recording: their key, not this one's
        m.setenv("PT2X_CONFIG_DIR", str(tmp_path / "other-user"))
        with user_caches_in(str(tmp_path)), compiler.recording() as rec:
            torch.compile(f)(torch.randn(8))
        copied = rec.report
        assert fill_untrusted(copied) is None  # theirs, to them
    assert fill_untrusted(crafted) == (
        "it carries no mark of a recording (a report made elsewhere, crafted, or loaded from a log)"
    )
    assert fill_untrusted(edited) == (
        "its runnable code was changed after it was recorded (its mark no longer matches)"
    )
    assert fill_untrusted(copied) == (
        "it was recorded by another user or on another machine (its mark is another key's)"
    )
    for report in (crafted, edited, copied):
        with pytest.raises(UntrustedReport, match=r"^not filled, nothing run: the fill runs the report's"):
            compiler.fill(report, progress=False)
    assert not os.path.exists(marker)


def test_report_fill_refuses_an_untrusted_report_in_one_line(warm, tmp_path, capsys):
    marker = str(tmp_path / "ran")
    path = str(tmp_path / "R.json")
    dataclasses.replace(_with_marker(warm, marker), fill_mark=None).to_json(path)
    before = open(path, "rb").read()
    assert main(["report", path, "--fill"]) == 1
    err = capsys.readouterr().err
    assert err == (
        f"pt2-explorer: error: {path}: not filled, nothing run: --fill runs the report's runnable code and "
        "it carries no mark of a recording (a report made elsewhere, crafted, or loaded from a log); read it "
        f"(pt2-explorer repro {path} --compile 0/0), then add --trust to run it\n"
    )
    assert not os.path.exists(marker) and open(path, "rb").read() == before


def test_no_plain_fill_is_offered_for_an_untrusted_report(warm, tmp_path):
    from explorer.model._speed import fill_command
    from explorer.pages._faces import save_html
    from explorer.pages._widgets import Explorer

    crafted = dataclasses.replace(warm, fill_mark=None)
    # `pt2-explorer report R`'s last line, with R's own path
    assert fill_command(warm, "R.json") == "to fill in 1 compile (0/0): pt2-explorer report R.json --fill"
    line = fill_command(crafted, "R.json")
    assert line.endswith("before pt2-explorer report R.json --fill --trust")
    assert "the fill would run this report's runnable code, and it carries no mark of a recording" in line
    assert "(pt2-explorer repro R.json --compile 0/0)" in line
    for report, plain in ((warm, True), (crafted, False)):
        page = str(tmp_path / f"{plain}.html")
        save_html(report, page, title="t")
        text = open(page, encoding="utf-8").read()
        # the page runs nothing and offers no command: it says what is left, and why a fill waits
        assert "--fill" not in text and "to fill in: " in text
        assert ("the fill would run this report&#x27;s runnable code" in text) is not plain
        app = Explorer(report)
        app.select("0/0", "fuse")
        assert app.compiles.fill_button.disabled is not plain
        assert app.compiles.fill_button.tooltip.startswith("not offered: ") is not plain


@pytest.mark.child
def test_trust_prints_the_code_and_where_it_came_from_then_runs_it(warm, tmp_path):
    marker = str(tmp_path / "ran")
    path = str(tmp_path / "R.json")
    dataclasses.replace(_with_marker(warm, marker), fill_mark=None).to_json(path)
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run(
        [sys.executable, "-m", "explorer", "report", path, "--fill", "--trust"],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(tmp_path),
    )
    lines = proc.stderr.splitlines()
    assert lines[:4] == [
        f"pt2-explorer: fill-in --trust: running 1 runnable(s) from {path} (in-process, torch "
        f"{torch.__version__}), although it carries no mark of a recording (a report made elsewhere, "
        "crafted, or loaded from a log):",
        lines[1],
        f"open({marker!r}, 'w').write('ran')",
        "---- end of the code to run ----",
    ]
    assert lines[1].startswith("---- compile [0/0] forward runnable (1 lines, sha256 ")
    assert open(marker).read() == "ran"  # asked for: it ran


@pytest.mark.child
def test_background_fill_reads_nothing_back_and_writes_only_over_what_record_wrote(warm, tmp_path):
    marker = str(tmp_path / "ran")
    json_path, html_path = str(tmp_path / "R.json"), str(tmp_path / "R.html")
    warm.to_json(json_path)
    open(html_path, "w").write("record's page")
    proc = fill_in_background(warm, json_path, html_path, "t")
    # in the window before the fill ends: R.json replaced by a crafted report (never read, never
    # run, never overwritten), R.html removed (not made again)
    dataclasses.replace(_with_marker(warm, marker), fill_mark=None).to_json(json_path)
    replaced = open(json_path, "rb").read()
    os.unlink(html_path)
    assert proc.wait(timeout=600) == 1
    log = open(json_path + ".fill.log", encoding="utf-8").read().splitlines()
    assert log[-2:] == [
        f"pt2-explorer: fill-in: {json_path} is no longer the file record wrote (written again, replaced or "
        "removed since): not written back",
        f"pt2-explorer: fill-in: {html_path} is no longer the file record wrote (written again, replaced or "
        "removed since): not written back",
    ]
    assert "compile [0/0] filled" in log[-3]  # the report record had, filled
    assert not os.path.exists(marker) and open(json_path, "rb").read() == replaced
    assert not os.path.exists(html_path)


@pytest.mark.child
def test_background_fill_writes_back_the_files_record_wrote(warm, tmp_path):
    json_path = str(tmp_path / "R.json")
    warm.to_json(json_path)
    assert fill_in_background(warm, json_path, None, "t").wait(timeout=600) == 0
    (c,) = compiler.load(json_path).compiles
    assert c.regenerated.state == "filled"


def test_the_fill_log_replaces_a_link_or_a_shared_file_never_writes_through_it(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("the user's")
    log = tmp_path / "R.json.fill.log"
    log.symlink_to(victim)
    with new_log(str(log)) as out:
        out.write("progress\n")
    assert victim.read_text() == "the user's" and not log.is_symlink() and log.read_text() == "progress\n"
    os.unlink(log)
    os.link(victim, log)  # another name of someone's file: kept whole, not truncated
    with new_log(str(log)) as out:
        out.write("again\n")
    assert victim.read_text() == "the user's" and log.read_text() == "again\n"
    os.unlink(log)
    log.mkdir()
    with pytest.raises(OSError, match="in the way"):
        new_log(str(log))


def test_relative_paths_marks_again_only_a_report_that_was_this_users(warm, tmp_path):
    root = os.path.dirname(os.path.abspath(__file__))
    assert fill_untrusted(compiler.relative_paths(warm, root)) is None
    crafted = dataclasses.replace(warm, fill_mark=None)
    assert compiler.relative_paths(crafted, root).fill_mark is None
    edited = _with_marker(warm, str(tmp_path / "ran"))
    assert compiler.relative_paths(edited, root).fill_mark is None

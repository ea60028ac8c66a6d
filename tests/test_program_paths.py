"""Paths fixed before the program runs (explorer/cli/_record.py, explorer/cli/_advise.py):
every output path is made absolute at start, so a program that changes directory moves
nothing of the tool's; each is still named as the user gave it. ``advise --out`` that cannot
be a directory of runs is one line, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from explorer.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MOVES = """\
import os, torch
os.makedirs("elsewhere", exist_ok=True)
os.chdir("elsewhere")


@torch.compile
def f(x):
    return x.sin() + 1


f(torch.randn(4))
"""


def _run(args: list[str], cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "explorer", *args],
        cwd=cwd,
        env=dict(os.environ, PYTHONPATH=ROOT),
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.child
def test_record_writes_where_it_was_asked_although_the_program_changed_directory(tmp_path):
    (tmp_path / "prog.py").write_text(MOVES)
    (tmp_path / "rel").mkdir()
    proc = _run(["record", "-q", "--json", "rel/R.json", "--html", "rel/R.html", "prog.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[-1] == "pt2-explorer: wrote rel/R.json, rel/R.html"
    assert (tmp_path / "rel" / "R.json").is_file() and (tmp_path / "rel" / "R.html").is_file()
    assert not (tmp_path / "elsewhere" / "rel").exists()


@pytest.mark.child
def test_advise_keeps_its_runs_where_it_made_them_although_the_program_changed_directory(tmp_path):
    (tmp_path / "prog.py").write_text(MOVES)
    proc = _run(["advise", "prog.py"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout.splitlines()[-1] == "advice: advise-prog/advice.txt"
    assert (tmp_path / "advise-prog" / "baseline" / "report.json").is_file()


def test_advise_out_that_cannot_be_a_directory_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "prog.py").write_text("pass\n")
    (tmp_path / "file").write_text("")
    os.symlink(tmp_path / "nowhere", tmp_path / "dangling")
    for out, line in (
        ("", "pt2-explorer: error: --out: an empty path; give a directory"),
        (
            "dangling",
            "pt2-explorer: error: --out dangling: exists and is not an empty directory; give a new one",
        ),
        (
            "file/sub",
            "pt2-explorer: error: --out file/sub: cannot make it a directory of the runs: Not a directory",
        ),
    ):
        assert main(["advise", "--out", out, "prog.py"]) == 2
        assert capsys.readouterr().err == line + "\n"
    assert not (tmp_path / "nowhere").exists()

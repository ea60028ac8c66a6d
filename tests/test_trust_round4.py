"""The smaller findings of the fourth hostile-input round, each one line and no harm: ``census
show --html`` onto a file of the census itself, ``--relative-paths ''``, ``check`` of a
program that compiled nothing or that never started (``-m nosuchmod``)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from explorer.census import Census
from explorer.check._rules import Rules, check_report
from explorer.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.parametrize("inside", ["reports/x.json.gz", "rows/x.json"])
def test_census_show_html_refuses_a_file_of_the_census_itself(tmp_path, capsys, inside):
    census = tmp_path / "C"
    (census / "reports").mkdir(parents=True)
    (census / "rows").mkdir()
    Census((), {}, title="t").save(str(census / "census.json"))
    target = census / inside
    target.write_bytes(b"the census's own")
    out = os.path.join(str(census), inside)
    assert main(["census", "show", str(census), "--html", out]) == 2
    assert capsys.readouterr().err == (
        f"pt2-explorer census: error: --html {out} is a file of the census in {census}: refusing to overwrite it\n"
    )
    assert target.read_bytes() == b"the census's own"


def test_relative_paths_refuses_an_empty_root(tmp_path, capsys):
    from compiler import Report

    path = str(tmp_path / "r.json")
    Report(torch_version="2.13.0", device="cpu").to_json(path)
    before = open(path, "rb").read()
    assert main(["report", path, "--relative-paths", ""]) == 2
    assert capsys.readouterr().err == (
        "pt2-explorer: error: --relative-paths: an empty ROOT; give your project's directory\n"
    )
    assert open(path, "rb").read() == before


def test_a_check_of_no_compile_says_so():
    from compiler import Report

    result = check_report(Report(torch_version="2.13.0", device="cpu"), Rules((), 0, None, None))
    assert result.summary == "check: passed (0 compiles: nothing was compiled, 0 breaks, 0 recompiles)"


@pytest.mark.child
def test_check_of_a_module_that_does_not_exist_fails_as_python_does(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT)
    python = subprocess.run([sys.executable, "-m", "nosuchmod"], capture_output=True, text=True, cwd=tmp_path)
    check = subprocess.run(
        [sys.executable, "-m", "explorer", "check", "-q", "--max-breaks", "0", "-m", "nosuchmod"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert python.returncode == check.returncode == 1
    assert check.stderr.splitlines() == [
        python.stderr.strip(),
        f"check: not passed: the program ended with SystemExit: {python.stderr.strip()} (0 compiles: nothing "
        "was compiled, 0 breaks, 0 recompiles)",
    ]


def test_a_break_in_a_file_edited_since_shows_the_line_recorded_not_the_files(tmp_path):
    from compiler import Report
    from compiler.types import GraphBreak, StackFrame
    from explorer import text

    src = tmp_path / "prog.py"
    src.write_text("import torch\nx = 1\nif x.sum() > 0:  # the break\n    pass\n")
    frame = StackFrame(str(src), 3, "<module>", "if x.sum() > 0:  # the break")
    b = GraphBreak("0/0", "Data-dependent branching", "r", str(src), 3, user_stack=(frame,))
    report = Report(torch_version="2.13.0", device="cpu", graph_breaks=(b,))
    shown = text(report, "breaks")
    assert "if x.sum() > 0:  # the break" in shown and "x = 1" in shown  # the file's lines around it
    src.write_text("import torch\nx = 1\nprint('an edit')\nif x.sum() > 0:  # the break\n")
    shown = text(report, "breaks")
    assert "print('an edit')" not in shown and "x = 1" not in shown
    assert "if x.sum() > 0:  # the break" in shown
    assert f"{src} has changed since it was recorded: line 3 as the report holds it" in shown


def test_relative_paths_leaves_no_user_name_random_directory_or_checkout_path(tmp_path):
    from compiler.model._relpaths import relative_text

    own = os.path.join(ROOT, "explorer", "run", "_program.py")
    text = (
        'File "/tmp/torchinductor_alice/ab/cabc.py", line 3\n'
        "/tmp/pt2x-fill-k2j4x9/runnable_forward.py:4\n"
        f'File "{own}", line 40, in run\n'
        f"{tmp_path}/train.py:7\n"
    )
    assert relative_text(text, str(tmp_path)) == (
        'File "torchinductor/ab/cabc.py", line 3\n'
        "pt2x-fill/runnable_forward.py:4\n"
        'File "explorer/run/_program.py", line 40, in run\n'
        "train.py:7\n"
    )

"""The pt2-explorer CLI: record / load / report, exit codes, errors, partial reports."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
import torch

import compiler
from compiler import _version
from explorer import cli, summary_text

BREAKING_SCRIPT = """
import sys
import torch

def f(x):
    x = x * 2
    print("seen", sys.argv[1:])  # BREAK
    return x + 1

out = torch.compile(f, backend="eager")(torch.ones(3))
assert out.tolist() == [3.0, 3.0, 3.0]
"""


@pytest.fixture(autouse=True)
def _reset():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _script(tmp_path, body: str, name: str = "prog.py"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(body))
    return p


def _break_line(body: str) -> int:
    return next(i for i, ln in enumerate(textwrap.dedent(body).splitlines(), 1) if "# BREAK" in ln)


def test_record_runs_script_as_main_with_args_and_writes_report(tmp_path, capsys):
    script = _script(tmp_path, BREAKING_SCRIPT)
    out = tmp_path / "r.json"
    rc = cli.main(["record", str(script), "a", "--flag", "--json", str(out)])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "seen ['a', '--flag']" in printed  # the script's own args, ours removed
    report = compiler.load(out)
    (b,) = report.graph_breaks
    assert (b.filename, b.line, b.type) == (
        str(script),
        _break_line(BREAKING_SCRIPT),
        "Failed to trace builtin operator",
    )
    assert f"prog.py:{b.line}" in printed and "Failed to trace builtin operator" in printed
    assert f"report: {out}" in printed


def test_options_before_script_and_quiet(tmp_path, capsys):
    script = _script(tmp_path, BREAKING_SCRIPT)
    out = tmp_path / "r.json"
    assert cli.main(["record", "--json", str(out), "-q", str(script)]) == 0
    printed = capsys.readouterr().out
    assert "Graph breaks" not in printed
    assert out.exists()


def test_script_not_found(tmp_path, capsys):
    rc = cli.main(["record", str(tmp_path / "nope.py"), "--json", str(tmp_path / "r.json")])
    assert rc == 2
    assert f"script not found: {tmp_path / 'nope.py'}" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_script_exception_passes_through_and_partial_report_is_written(tmp_path, capsys):
    script = _script(
        tmp_path,
        """
        import torch
        def f(x):
            return x.sin()
        torch.compile(f, backend="eager")(torch.ones(2))
        raise ValueError("boom from the script")
        """,
    )
    out = tmp_path / "r.json"
    rc = cli.main(["record", str(script), "--json", str(out)])
    assert rc == 1
    err = capsys.readouterr().err
    assert "ValueError: boom from the script" in err
    assert f'File "{script}", line 6' in err
    report = compiler.load(out)
    assert report.error == "ValueError: boom from the script"
    assert [c.status for c in report.compiles] == ["ok"]


def test_script_exit_code_passes_through(tmp_path):
    script = _script(tmp_path, "import sys\nsys.exit(3)\n")
    assert cli.main(["record", str(script), "--json", str(tmp_path / "r.json")]) == 3
    assert compiler.load(tmp_path / "r.json").compiles == ()


def test_keyboard_interrupt_writes_partial_report(tmp_path, capsys):
    script = _script(
        tmp_path,
        """
        import torch
        def f(x):
            return x.cos()
        torch.compile(f, backend="eager")(torch.ones(2))
        raise KeyboardInterrupt
        """,
    )
    out = tmp_path / "r.json"
    assert cli.main(["record", str(script), "--json", str(out)]) == 130
    assert "interrupted" in capsys.readouterr().err
    report = compiler.load(out)
    assert report.error == "KeyboardInterrupt"
    assert len(report.compiles) == 1


def test_report_and_load_commands(tmp_path, capsys):
    script = _script(tmp_path, BREAKING_SCRIPT)
    out = tmp_path / "r.json"
    cli.main(["record", "-q", str(script), "--json", str(out)])
    capsys.readouterr()
    assert cli.main(["report", str(out)]) == 0
    text = capsys.readouterr().out
    assert "1 graph-break site (1 hit)" in text
    assert text.strip() == summary_text(compiler.load(out), title=str(out)).strip()


def test_bad_inputs_give_clear_errors(tmp_path, capsys):
    garbage = tmp_path / "garbage.log"
    garbage.write_text("hello\nworld\n")
    assert cli.main(["load", str(garbage), "--json", str(tmp_path / "x.json")]) == 2
    assert f"{garbage}:1: not a TORCH_TRACE line" in capsys.readouterr().err
    notjson = tmp_path / "r.json"
    notjson.write_text(json.dumps({"hello": 1}))
    assert cli.main(["report", str(notjson)]) == 2
    assert "not a PT2 Explorer report" in capsys.readouterr().err
    assert cli.main(["report", str(tmp_path / "missing.json")]) == 2


def test_python_dash_m_explorer(tmp_path):
    script = _script(tmp_path, BREAKING_SCRIPT)
    out = tmp_path / "r.json"
    proc = subprocess.run(
        [sys.executable, "-m", "explorer", "record", str(script), "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Failed to trace builtin operator" in proc.stdout
    assert len(compiler.load(out).graph_breaks) == 1


def test_unsupported_torch_version_is_named():
    with pytest.raises(
        _version.UnsupportedTorchVersion,
        match=r"needs torch >= 2\.8 \(tested: 2\.11, 2\.13\); this is torch 2\.5\.1",
    ):
        _version.check("2.5.1")
    assert _version.check("2.11.0+cu130") == (2, 11)

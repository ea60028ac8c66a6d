"""The pt2-explorer CLI: record / load / report, exit codes, errors, partial reports."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest
import torch

import compiler
from compiler.listen import _version
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
    rc = cli.main(["record", "--json", str(out), str(script), "a", "--flag"])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "seen ['a', '--flag']" in printed  # the script's own args
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
    html = tmp_path / "r.html"
    assert cli.main(["record", "--json", str(out), "--html", str(html), "-q", str(script)]) == 0
    printed = capsys.readouterr()
    assert printed.out == "seen []\n"  # the program's own output; no summary
    assert printed.err == f"pt2-explorer: wrote {out}, {html}\n"  # -q: one line, what it wrote
    assert compiler.load(out).graph_breaks and html.read_text().startswith("<!doctype html>")


def test_script_not_found(tmp_path, capsys):
    rc = cli.main(["record", "--json", str(tmp_path / "r.json"), str(tmp_path / "nope.py")])
    assert rc == 2
    assert f"can't open file '{tmp_path / 'nope.py'}'" in capsys.readouterr().err
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
    rc = cli.main(["record", "--json", str(out), str(script)])
    assert rc == 1
    err = capsys.readouterr().err
    assert "ValueError: boom from the script" in err
    assert f'File "{script}", line 6' in err
    report = compiler.load(out)
    assert report.error == "ValueError: boom from the script"
    assert [c.status for c in report.compiles] == ["ok"]


def test_script_exit_code_passes_through(tmp_path):
    script = _script(tmp_path, "import sys\nsys.exit(3)\n")
    assert cli.main(["record", "--json", str(tmp_path / "r.json"), str(script)]) == 3
    assert compiler.load(tmp_path / "r.json").compiles == ()


def _run(*argv, cwd=None):
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=cwd)


def _traceback_of(stderr: str) -> list[str]:
    """The traceback lines python printed (our own lines after it left out)."""
    lines = stderr.splitlines()
    start = lines.index("Traceback (most recent call last):")
    return [ln for ln in lines[start:] if not ln.startswith(("pt2-explorer", "report:"))]


def test_keyboard_interrupt_dies_by_sigint_like_python_and_writes_partial_report(tmp_path):
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
    plain = _run(sys.executable, str(script))
    ours = _run(sys.executable, "-m", "explorer", "record", "-q", "--json", str(out), str(script))
    assert plain.returncode == ours.returncode == -signal.SIGINT
    assert _traceback_of(ours.stderr) == _traceback_of(plain.stderr)
    report = compiler.load(out)
    assert report.error == "KeyboardInterrupt"
    assert len(report.compiles) == 1


def test_the_scripts_arguments_are_its_own(tmp_path):
    """--json, --html, -q, --keep-caches and -- after SCRIPT belong to the script: the user's
    config.json is read by the script, not overwritten by our report."""
    script = _script(
        tmp_path,
        """
        import argparse, json, sys
        p = argparse.ArgumentParser()
        p.add_argument("--json")
        p.add_argument("--html")
        p.add_argument("-q", action="store_true")
        p.add_argument("--keep-caches", action="store_true")
        p.add_argument("rest", nargs="*")
        ns = p.parse_args()
        print("argv", sys.argv[1:])
        print("config", json.load(open(ns.json)))
        """,
    )
    config = tmp_path / "config.json"
    config.write_text('{"lr": 0.1}')
    args = ["--json", str(config), "--html", "x.html", "-q", "--keep-caches", "--", "a"]
    out = tmp_path / "report.json"
    plain = _run(sys.executable, str(script), *args, cwd=tmp_path)
    ours = _run(
        sys.executable, "-m", "explorer", "record", "-q", "--json", str(out), str(script), *args, cwd=tmp_path
    )
    assert ours.returncode == plain.returncode == 0, ours.stderr
    assert ours.stdout == plain.stdout
    assert f"argv {args!r}" in ours.stdout
    assert json.loads(config.read_text()) == {"lr": 0.1}  # not overwritten
    assert not (tmp_path / "x.html").exists()
    assert compiler.load(out).compiles == ()


def test_triton_ir_compiles_kernels_in_process_while_recording(tmp_path):
    """--triton-ir: Inductor compiles in the recording process (Triton's listener hears only
    there) while the script runs, whatever the user set."""
    script = _script(
        tmp_path,
        """
        import torch._inductor.config as c
        print("compile_threads", c.compile_threads)
        """,
    )
    env = {**os.environ, "TORCHINDUCTOR_COMPILE_THREADS": "4"}  # the user's setting
    cmd = [sys.executable, "-m", "explorer", "record", "-q", "--triton-ir", str(script)]
    ours = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert (ours.returncode, ours.stdout) == (0, "compile_threads 1\n"), ours.stderr


def test_file_argv_path_and_traceback_as_python_gives_them(tmp_path):
    (tmp_path / "sub").mkdir()
    script = _script(
        tmp_path,
        """
        import sys
        print(__file__, sys.argv, sys.path[0])
        def fail():
            raise ValueError("boom")
        fail()
        """,
        name="sub/prog.py",
    )
    plain = _run(sys.executable, "sub/prog.py", "x", cwd=tmp_path)
    ours = _run(sys.executable, "-m", "explorer", "record", "-q", "sub/prog.py", "x", cwd=tmp_path)
    assert plain.returncode == ours.returncode == 1
    assert ours.stdout == plain.stdout == f"{script} ['sub/prog.py', 'x'] {script.parent}\n"
    assert _traceback_of(ours.stderr) == _traceback_of(plain.stderr)
    assert len(_traceback_of(ours.stderr)) == 6  # the script's two frames, no frame of ours


@pytest.mark.child
def test_dash_m_module(tmp_path):
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    _script(
        pkg,
        """
        import sys, torch
        print(__name__, sys.argv[1:])
        torch.compile(lambda x: x + 1, backend="eager")(torch.ones(2))
        """,
        name="run.py",
    )
    out = tmp_path / "r.json"
    plain = _run(sys.executable, "-m", "mypkg.run", "--json", "a", cwd=tmp_path)
    ours = _run(sys.executable, "-m", "explorer", "record", "-q", "--json", str(out), "-m", "mypkg.run", "--json", "a", cwd=tmp_path)  # fmt: skip
    assert ours.returncode == plain.returncode == 0, ours.stderr
    assert ours.stdout == plain.stdout == "__main__ ['--json', 'a']\n"
    assert len(compiler.load(out).compiles) == 1


def test_record_needs_a_script(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["record", "--json", "x.json"])
    assert e.value.code == 2
    assert "give the script to run" in capsys.readouterr().err


def test_report_and_load_commands(tmp_path, capsys):
    script = _script(tmp_path, BREAKING_SCRIPT)
    out = tmp_path / "r.json"
    cli.main(["record", "-q", "--json", str(out), str(script)])
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
        [sys.executable, "-m", "explorer", "record", "--json", str(out), str(script)],
        capture_output=True,
        text=True,
        timeout=300,
    )  # piped: whole lines (whatever COLUMNS the test process's readline exported)
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


def test_a_users_compiler_module_is_named(tmp_path):
    """A compiler.py of the user's shadows PT2 Explorer's `compiler`: importing explorer says
    so in one line, and `record` warns about a program that has one beside it."""
    (tmp_path / "compiler.py").write_text("VALUE = 1\n")
    proc = _run(sys.executable, "-c", "import explorer", cwd=tmp_path)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(
        f"ImportError: `import compiler` found {tmp_path / 'compiler.py'}, not PT2 Explorer's"
    )
    script = _script(tmp_path, "print('ran')\n")
    ours = _run(sys.executable, "-m", "explorer", "record", "-q", str(script))
    assert ours.returncode == 0 and ours.stdout == "ran\n"
    assert (
        f"pt2-explorer: warning: {tmp_path / 'compiler.py'} has the name of PT2 Explorer's `compiler`"
        in ours.stderr
    )


BREAKS_TRACE = f"{__file__.rsplit('/', 1)[0]}/fixtures/traces/cpu-torch213-breaks.log.gz"


@pytest.fixture(scope="module")
def breaks_json(tmp_path_factory):
    out = tmp_path_factory.mktemp("r") / "breaks.json"
    assert cli.main(["load", "-q", BREAKS_TRACE, "--json", str(out)]) == 0
    return out


def test_report_view_stage_and_compile(breaks_json, capsys):
    import explorer
    from explorer.views._registry import NAMES

    with pytest.raises(SystemExit):
        cli.main(["report", "-h"])
    assert "--view {" + ",".join(NAMES) + "}" in capsys.readouterr().out  # the views of one registry
    assert set(compiler.types.STAGES) <= set(NAMES)
    assert cli.main(["report", str(breaks_json), "--view", "capture", "--compile", "1/0"]) == 0
    out = capsys.readouterr().out
    r = compiler.load(breaks_json)
    assert out == explorer.text(r, "capture", compile="1/0")
    assert out.startswith(
        "[1/0] f (resumed after line 15) — ok · capture\n\nDynamo graph: 5 nodes, 5 edges\n"
    )
    assert cli.main(["report", str(breaks_json), "--view", "fuse", "--compile", "9/9"]) == 2
    assert capsys.readouterr().err == (
        "pt2-explorer: error: no compile '9/9' in this report (compiles: 0/0, 1/0, 0/1, 1/1)\n"
    )


def _run_report(args, **kw):
    cmd = [sys.executable, "-m", "explorer", "report", *args]
    return subprocess.run(cmd, capture_output=True, text=True, check=True, **kw).stdout


def test_terminal_views_take_the_terminals_width_and_pipes_get_whole_lines(breaks_json):
    import os

    import explorer

    r = compiler.load(breaks_json)
    text = explorer.text(r, "breaks", title=str(breaks_json))
    assert max(len(ln) for ln in text.splitlines()) > 300  # torch's explanation, one line
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    # piped: no wrapping at all, the summary's hint line whole too
    assert _run_report([str(breaks_json), "--view", "breaks"], env=env) == text
    summary = _run_report([str(breaks_json)], env=env)
    assert f"      hint: {r.graph_breaks[0].hints[0]}\n" in summary
    # piped, COLUMNS (which readline exports to children) changes nothing
    assert _run_report([str(breaks_json), "--view", "breaks"], env={**env, "COLUMNS": "300"}) == text
    # a terminal of 70 columns (a pty): wrapped at 70, nothing lost; COLUMNS=300: at 300, not 120
    shown = _in_pty([str(breaks_json), "--view", "breaks"], 70, env)
    assert max(len(ln) for ln in shown.splitlines()) <= 70
    assert " ".join(shown.split()) == " ".join(text.split())
    wide = _in_pty([str(breaks_json), "--view", "breaks"], 70, {**env, "COLUMNS": "300"})
    assert 120 < max(len(ln) for ln in wide.splitlines()) <= 300
    assert " ".join(wide.split()) == " ".join(text.split())


def _in_pty(args, columns: int, env) -> str:
    """``pt2-explorer report ARGS`` with its stdout on a pseudo-terminal ``columns`` wide."""
    import re

    from tests._pty import run_in_pty

    _, shown = run_in_pty([sys.executable, "-m", "explorer", "report", *args], columns, 30, env)
    return re.sub(r"\x1b\[[0-9;]*m", "", shown.decode()).replace("\r\n", "\n")

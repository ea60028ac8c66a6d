"""What the CLI prints and records as a user reads it: a crafted report cannot drive the
terminal (control characters are shown escaped), a break's stack under `record` starts at
the program as under plain python, a bad encoding declaration fails as python fails."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import compiler
import explorer
from explorer import cli
from tests._pty import run_in_pty

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "tests" / "fixtures" / "traces" / "cpu-torch213-breaks.log.gz"
TITLE = "\x1b]0;pwned\x07"  # sets the terminal's title
CLIPBOARD = "\x1b]52;c;ZXZpbA==\x07"  # writes the clipboard (OSC 52)
CLEAR = "\x1b[2J"  # clears the screen
C1 = "\x9b2J"  # the same as one C1 character (CSI)


def _escaped(s: str) -> str:
    return s.encode("unicode_escape").decode("ascii")


@pytest.fixture(scope="module")
def crafted(tmp_path_factory):
    """A real report (the CPU fixture) with a break type, a hint, an explanation, a frame
    name, a compile's name and a kernel's name that hold terminal escape sequences."""
    r = compiler.load_trace(TRACE)
    b = r.graph_breaks[0]
    k = next(k for k in r.kernels if k.compile_id == "1/0")
    r = dataclasses.replace(
        r,
        graph_breaks=(
            dataclasses.replace(
                b, type="Bad" + TITLE, explanation="why" + CLEAR, hints=("hint" + CLIPBOARD + C1,)
            ),
            *r.graph_breaks[1:],
        ),
        frames=(dataclasses.replace(r.frames[0], name="frame" + CLEAR), *r.frames[1:]),
        compiles=(dataclasses.replace(r.compiles[0], name="comp" + TITLE), *r.compiles[1:]),
        kernels=tuple(dataclasses.replace(x, name="kern" + CLEAR) if x is k else x for x in r.kernels),
    )
    path = tmp_path_factory.mktemp("crafted") / "crafted.json"
    r.to_json(path)
    return path


# (the view's arguments, what it must show escaped)
VIEWS = [
    ([], ["Bad" + TITLE, "hint" + CLIPBOARD + C1, "frame" + CLEAR, "comp" + TITLE]),
    (["--view", "breaks"], ["Bad" + TITLE, "why" + CLEAR, "hint" + CLIPBOARD + C1]),
    (["--view", "capture", "--compile", "0/0"], ["comp" + TITLE]),
    (["--view", "codegen", "--compile", "1/0"], ["kern" + CLEAR]),
]


@pytest.mark.parametrize(("args", "shown"), VIEWS)
def test_report_strings_reach_a_pipe_with_control_characters_escaped(crafted, args, shown):
    proc = subprocess.run(
        [sys.executable, "-m", "explorer", "report", str(crafted), *args], capture_output=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert not re.search(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", out)  # no ESC, BEL, CSI
    text = out.decode()
    for s in shown:
        assert _escaped(s) in text
    if args:  # a text view: explorer.text()'s own text, but for the escapes
        view = explorer.text(compiler.load(crafted), args[1], title=str(crafted), compile=args[-1])
        assert any(s in view for s in shown)  # text() itself returns the report's strings
        assert text == cli_printable(view)


def cli_printable(text: str) -> str:
    return re.sub(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", lambda m: f"\\x{ord(m.group()):02x}", text)


def test_report_strings_reach_a_terminal_with_control_characters_escaped(crafted):
    """On a terminal rich draws the summary with its own colours: those are its only ESC
    sequences."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR")}
    cmd = [sys.executable, "-m", "explorer", "report", str(crafted)]
    status, shown = run_in_pty(cmd, 200, 40, {**env, "TERM": "xterm"})
    assert status == 0
    assert re.search(rb"\x1b\[[0-9;]*m", shown)  # rich's colours: a terminal indeed
    rest = re.sub(rb"\x1b\[[0-9;]*m", b"", shown)
    assert not re.search(rb"[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f]|\xc2[\x80-\x9f]", rest)  # (\r: the pty's)
    text = rest.decode().replace("\r\n", "\n")
    for s in VIEWS[0][1]:
        assert _escaped(s) in text


def test_an_error_line_quoting_a_name_escapes_it(tmp_path, capsys):
    missing = tmp_path / f"r{TITLE}.json"
    assert cli.main(["report", str(missing)]) == 2
    assert capsys.readouterr().err == (
        f"pt2-explorer: error: {_escaped(str(missing))}: No such file or directory\n"
    )


STACK_SCRIPT = """
import contextlib
import os

import torch


def f(x):
    x = x * 2
    print("seen")  # BREAK
    return x + 1


def run():
    return torch.compile(f, backend="eager")(torch.ones(3))


direct = os.environ.get("DIRECT_REPORT")  # a recording inside the program itself
if direct:
    import compiler

    rec = compiler.recording()
else:
    rec = contextlib.nullcontext()
with rec:
    run()
if direct:
    rec.report.to_json(direct)
"""


@pytest.mark.child
def test_a_breaks_stack_under_record_starts_at_the_program(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(STACK_SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("DIRECT_REPORT", None)

    def run(*cmd, **extra):
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=300, env={**env, **extra}, cwd=tmp_path
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith("seen\n")

    run(sys.executable, str(script), DIRECT_REPORT=str(tmp_path / "direct.json"))
    launchers = {"python -m explorer": [sys.executable, "-m", "explorer"]}
    console = shutil.which("pt2-explorer", path=os.path.dirname(sys.executable))
    if console:  # the console script's own frame (…/bin/pt2-explorer:6 in <module>)
        launchers["pt2-explorer"] = [console]
    (expected,) = compiler.load(tmp_path / "direct.json").graph_breaks
    assert expected.user_stack[0].filename == str(script)
    assert [(f.name, f.line) for f in expected.user_stack] == [("<module>", 26), ("run", 15), ("f", 10)]
    for name, launcher in launchers.items():
        out = tmp_path / f"{name.split()[-1]}.json"
        run(*launcher, "record", "-q", "--json", str(out), str(script))
        (b,) = compiler.load(out).graph_breaks
        assert b.user_stack == expected.user_stack, name


@pytest.mark.parametrize(
    "source",
    [
        b"# -*- coding: a -*-\nprint(1)\n",  # python: "encoding problem: a"
        b"\xef\xbb\xbf# coding: latin-1\nprint(1)\n",  # a BOM and another encoding
        b"print(1)\nx = (\n",  # a plain syntax error: no traceback of ours
    ],
)
def test_a_script_python_cannot_compile_fails_as_python_fails(source, tmp_path):
    script = tmp_path / "prog.py"
    script.write_bytes(source)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env)
    ours = subprocess.run(
        [sys.executable, "-m", "explorer", "record", "-q", str(script)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert plain.returncode == ours.returncode == 1
    assert ours.stderr == plain.stderr
    assert ours.stdout == plain.stdout == ""
    assert "SyntaxError: " in plain.stderr


def test_a_syntax_errors_text_is_pythons(tmp_path):
    """The first case above, spelled out: what python prints for it, here."""
    script = tmp_path / "prog.py"
    script.write_bytes(b"# -*- coding: a -*-\nprint(1)\n")
    proc = subprocess.run(
        [sys.executable, "-m", "explorer", "record", "-q", str(script)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert (proc.returncode, proc.stderr) == (1, "SyntaxError: encoding problem: a\n")

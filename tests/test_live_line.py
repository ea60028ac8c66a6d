"""``pt2-explorer record``'s live line (issue 53, item 1): on a terminal, one line redrawn in
place with the compile and the stage torch's events say it reached; through a pipe nothing
but whole lines; under ``-q`` nothing."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys

import pytest
import torch

import compiler
from compiler.types import STAGES
from explorer.cli._live import CLEAR, LiveLine


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _f(x):
    return (x.sin() + 1).relu()


def test_the_line_follows_torchs_stages_on_a_terminal(monkeypatch):
    monkeypatch.setattr("explorer.cli._live.EVERY_S", 0.0)  # every event redraws the line
    out = _Terminal()
    live = LiveLine(out)
    torch._dynamo.reset()
    with compiler.recording(on_stage=live.on_stage) as rec:
        torch.compile(_f, backend="aot_eager")(torch.ones(4))
    live.clear()
    drawn = out.getvalue().split(CLEAR)
    assert drawn[0] == "" and drawn[-1] == ""  # each line drawn over the last, erased at the end
    lines = drawn[1:-1]
    assert lines and all(ln.startswith("pt2-explorer: compiling [0/0], ") and "\n" not in ln for ln in lines)
    seen = [ln.split(", ", 1)[1].split(" · ")[0] for ln in lines]
    assert seen[0] == "capture" and seen == sorted(seen, key=STAGES.index)  # forward only
    (c,) = rec.report.compiles
    assert set(seen) <= {s for s in STAGES if getattr(c.stages, s) is not None}


def test_no_line_off_a_terminal_or_under_quiet():
    assert LiveLine(io.StringIO()).on_stage is None
    assert LiveLine(_Terminal(), quiet=True).on_stage is None


SCRIPT = "import torch\nprint(torch.compile(lambda x: x.cos() * 2, backend='aot_eager')(torch.ones(3)).sum().item())\n"


@pytest.mark.child
@pytest.mark.parametrize("quiet", [False, True])
def test_record_draws_on_a_terminal_and_pipes_whole_lines(tmp_path, quiet):
    script = tmp_path / "prog.py"
    script.write_text(SCRIPT)
    main, child = pty.openpty()
    cmd = [sys.executable, "-m", "explorer", "record", *(["-q"] if quiet else []), str(script)]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=child, cwd=tmp_path)
    os.close(child)
    tty = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        tty += chunk
    stdout = p.communicate(timeout=300)[0].decode()
    os.close(main)
    assert p.returncode == 0
    assert "\r" not in stdout and "\x1b" not in stdout  # the pipe: whole lines only
    assert stdout.splitlines()[0] == str((torch.ones(3).cos() * 2).sum().item())  # the program's own output
    drawn = "compiling [0/0], capture" in tty.decode(errors="replace")
    assert drawn == (not quiet)

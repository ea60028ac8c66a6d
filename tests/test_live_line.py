"""``pt2-explorer record``'s live line (issue 53, item 1): on a terminal, one line redrawn in
place with the compile and the stage torch's events say it reached; through a pipe nothing
but whole lines; under ``-q`` nothing."""

from __future__ import annotations

import io
import os
import pty
import re
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


LINE = re.compile(
    r"^pt2-explorer: compiling \[(?P<cid>[^\]]+)\] (?P<stage>\w+) (?P<s>\d+\.\d) s(?P<rest>.*)$"
)


def test_the_line_follows_torchs_stages_on_a_terminal(monkeypatch):
    monkeypatch.setattr("explorer.cli._live.EVERY_S", 0.0)  # every event redraws the line
    monkeypatch.setenv("COLUMNS", "300")  # no line cut at the terminal's width
    out = _Terminal()
    live = LiveLine(out)
    torch._dynamo.reset()
    aot_eager, given = torch._dynamo.lookup_backend("aot_eager"), []

    def backend(gm, example_inputs):  # aot_eager, the graph Dynamo hands it kept
        given.append(gm)
        return aot_eager(gm, example_inputs)

    with compiler.recording(on_progress=live.on_progress) as rec:
        torch.compile(_f, backend=backend)(torch.ones(4))
    live.clear()
    drawn = out.getvalue().split(CLEAR)
    assert drawn[0] == "" and drawn[-1] == ""  # each line drawn over the last, erased at the end
    lines = drawn[1:-1]
    assert lines and all(LINE.match(ln) and LINE.match(ln)["cid"] == "0/0" and "\n" not in ln for ln in lines)
    seen = [LINE.match(ln)["stage"] for ln in lines]
    assert seen[0] == "capture" and seen == sorted(seen, key=STAGES.index)  # forward only
    (c,) = rec.report.compiles
    assert set(seen) <= {s for s in STAGES if getattr(c.stages, s) is not None}
    # the frame and its file:line as the report has them, and Dynamo's graph's FX nodes
    where = f" · _f ({os.path.basename(c.filename)}:{c.line})"
    assert c.name == "_f" and any(where in ln for ln in lines)
    (gm,) = given
    nodes = len(gm.graph.nodes)
    assert lines[-1].endswith(f"{where} · {nodes} nodes"), lines[-1]


def test_no_line_off_a_terminal_or_under_quiet():
    assert LiveLine(io.StringIO()).on_progress is None
    assert LiveLine(_Terminal(), quiet=True).on_progress is None


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
    drawn = "compiling [0/0] capture" in tty.decode(errors="replace")
    assert drawn == (not quiet)


# ---- the line's words from synthetic events (what torch sends, in its order) --------------------

OUTPUT_CODE = """\
cpp_fused_add_0 = async_compile.cpp_pybinding(['float*'], r'''
extern "C" void kernel(float* a) {}
''')

cpp_fused_mul_1 = async_compile.cpp_pybinding(['float*'], r'''
extern "C" void kernel(float* a) {}
''')
"""


def _ev(name, payload=None, **body):
    from compiler.assemble._events import Event

    return Event(name, {name: body, "frame_id": 0, "frame_compile_id": 0, "attempt": 0}, payload)


def _phase(name, ph, cid="0/0"):
    import json

    from compiler.assemble._events import Event

    meta = {"chromium_event": {}, "frame_id": 0, "frame_compile_id": 0} if cid else {"chromium_event": {}}
    return Event(
        "chromium_event", meta, json.dumps({"name": name, "ph": ph, "ts": 1.0, "args": {"compile_id": cid}})
    )


def test_the_line_from_synthetic_events():
    from compiler.assemble._events import Event
    from compiler.listen._progress import ProgressTracker
    from explorer.model._progress import progress_text

    said, stages = [], []
    t = ProgressTracker(said.append, lambda cid, stage: stages.append((cid, stage)))
    t.event(Event("str", {"str": ["/home/u/model.py", 7]}))
    t.event(
        _ev(
            "dynamo_start",
            stack=[
                {"line": 3, "name": "main", "filename": 7},
                {"line": 12, "name": "forward", "filename": 7},
            ],
        )
    )
    t.event(_phase("bytecode_tracing", "B"))
    t.graph("0/0", 1234)
    t.event(_phase("bytecode_tracing", "E"))
    t.event(_phase("GraphLowering.run", "B"))
    t.event(_phase("mm_template_autotuning", "B"))
    t.event(_phase("mm_template_autotuning", "E"))
    t.event(_phase("GraphLowering.run", "E"))
    t.event(_ev("inductor_output_code", OUTPUT_CODE, filename="x.py"))
    t.event(_phase("PyCodeCache.load_by_key_path", "B"))
    t.kernel("0/0")
    t.kernel("0/0")
    t.event(_phase("async_compile.wait", "B"))
    t.foreign(_phase("compile_file", "E", cid=None))  # one of Inductor's compile threads
    t.event(_phase("async_compile.wait", "E"))
    t.kernel("1/0")  # no compile of the tracker's: nothing said
    last_run = {"0/0": ("forward", {"capture": 1.0, "codegen": 2.25})}
    texts = [progress_text(p, last_run, now=p.stage_since + 3.14) for p in said]
    assert stages == [("0/0", "capture"), ("0/0", "fuse"), ("0/0", "codegen")]
    assert texts == [
        "compiling [0/0] capture 3.1 s (last run: 1.0 s) · forward (model.py:12)",
        "compiling [0/0] capture 3.1 s (last run: 1.0 s) · bytecode_tracing · forward (model.py:12)",
        "compiling [0/0] capture 3.1 s (last run: 1.0 s) · bytecode_tracing · forward (model.py:12) · 1,234 nodes",
        "compiling [0/0] capture 3.1 s (last run: 1.0 s) · forward (model.py:12) · 1,234 nodes",
        "compiling [0/0] fuse 3.1 s · GraphLowering.run · forward (model.py:12) · 1,234 nodes",
        "compiling [0/0] fuse 3.1 s · autotuning mm · forward (model.py:12) · 1,234 nodes",
        "compiling [0/0] fuse 3.1 s · GraphLowering.run · forward (model.py:12) · 1,234 nodes",
        "compiling [0/0] fuse 3.1 s · forward (model.py:12) · 1,234 nodes",
        "compiling [0/0] codegen 3.1 s (last run: 2.2 s) · forward (model.py:12) · 1,234 nodes",
        "compiling [0/0] codegen 3.1 s (last run: 2.2 s) · PyCodeCache.load_by_key_path · forward (model.py:12) · 1,234 nodes",
        "compiling [0/0] codegen 3.1 s (last run: 2.2 s) · kernel 1 of 2 cpp_fused_add_0 · forward (model.py:12) · 1,234 nodes",
        "compiling [0/0] codegen 3.1 s (last run: 2.2 s) · kernel 2 of 2 cpp_fused_mul_1 · forward (model.py:12) · 1,234 nodes",
        "compiling [0/0] codegen 3.1 s (last run: 2.2 s) · waiting on compile workers: 0 of 2 kernels compiled · forward (model.py:12) · 1,234 nodes",
        "compiling [0/0] codegen 3.1 s (last run: 2.2 s) · waiting on compile workers: 1 of 2 kernels compiled · forward (model.py:12) · 1,234 nodes",
        "compiling [0/0] codegen 3.1 s (last run: 2.2 s) · 2 of 2 kernels compiled · forward (model.py:12) · 1,234 nodes",
    ]
    # another frame's compile under the same id in the last run gives no last-run time
    assert "last run" not in progress_text(said[-1], {"0/0": ("other", {"codegen": 1.0})})

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
    assert out.getvalue().endswith(CLEAR) and not live.shown  # the compile's end erased it
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


def _on_a_terminal(cmd, cwd) -> tuple[str, str, int]:
    """``cmd`` with stderr on a pseudo-terminal (400 columns) and stdout on a pipe: what each got."""
    main, child = pty.openpty()
    env = {**os.environ, "COLUMNS": "400"}
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=child, cwd=cwd, env=env)
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
    stdout = p.communicate(timeout=900)[0].decode()
    os.close(main)
    return tty.decode(errors="replace"), stdout, p.returncode


@pytest.mark.child
@pytest.mark.parametrize("quiet", [False, True])
def test_record_draws_on_a_terminal_and_pipes_whole_lines(tmp_path, quiet):
    script = tmp_path / "prog.py"
    script.write_text(SCRIPT)
    cmd = [sys.executable, "-m", "explorer", "record", *(["-q"] if quiet else []), str(script)]
    tty, stdout, rc = _on_a_terminal(cmd, tmp_path)
    assert rc == 0
    assert "\r" not in stdout and "\x1b" not in stdout  # the pipe: whole lines only
    assert stdout.splitlines()[0] == str((torch.ones(3).cos() * 2).sum().item())  # the program's own output
    drawn = "compiling [0/0] capture" in tty
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


def _phase(name, ph, cid="0/0", in_compile=True, **args):
    """A timed phase's begin or end; ``in_compile``: inside the compile (torch's trace context
    gives its frame ids), else after it (runtime autotuning: only the phase's args name it)."""
    import json

    from compiler.assemble._events import Event

    meta = {"chromium_event": {}}
    if cid and in_compile:
        frame, compile_ = cid.split("/")
        meta.update(frame_id=int(frame), frame_compile_id=int(compile_))
    payload = {"name": name, "ph": ph, "ts": 1.0, "args": {"compile_id": str(cid), **args}}
    return Event("chromium_event", meta, json.dumps(payload))


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
    t.event(_phase("PyCodeCache.load_by_key_path", "E"))
    t.event(_ev("compilation_metrics"))  # the compile is over
    t.event(
        _phase("CachingAutotuner.benchmark_all_configs", "B", in_compile=False, kernel_name="triton_poi_0")
    )
    t.event(
        _phase("CachingAutotuner.benchmark_all_configs", "E", in_compile=False, kernel_name="triton_poi_0")
    )
    t.kernel("1/0")  # no compile the tracker has heard of: nothing said
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
        "compiling [0/0] codegen 3.1 s (last run: 2.2 s) · 2 of 2 kernels compiled · forward (model.py:12) · 1,234 nodes",
        "compiling [0/0] codegen 3.1 s (last run: 2.2 s) · 2 of 2 kernels compiled · forward (model.py:12) · 1,234 nodes",
        "compiling [0/0] codegen 3.1 s (last run: 2.2 s) · autotuning triton_poi_0 · forward (model.py:12) · 1,234 nodes",
        "compiling [0/0] codegen 3.1 s (last run: 2.2 s) · 2 of 2 kernels compiled · forward (model.py:12) · 1,234 nodes",
    ]
    # the phase closed, the compile over (a display erases its line), Triton tuning a kernel, over again
    assert [(p.phase, p.ended) for p in said[-4:]] == [
        (None, False),
        (None, True),
        ("CachingAutotuner.benchmark_all_configs", False),
        (None, True),
    ]
    # a module loaded from the cache compiles its kernels before torch logs its code: counted, unnamed
    start = {
        "dynamo_start": {"stack": [{"line": 5, "name": "g", "filename": 7}]},
        "frame_id": 1,
        "frame_compile_id": 0,
    }
    t.event(Event("dynamo_start", start))
    t.kernel("1/0")
    assert said[-1].kernels is None and progress_text(said[-1], now=said[-1].stage_since) == (
        "compiling [1/0] capture 0.0 s · kernel 1 · g (model.py:5)"
    )
    # a library's frame: the program's innermost line before it (torch's and this package's skipped)
    lib = "/venv/lib/python3.11/site-packages/transformers/utils/generic.py"
    stack = [
        {"line": 9, "name": "<module>", "filename": "/home/u/run.py"},
        {
            "line": 40,
            "name": "call",
            "filename": compiler.__file__.replace("__init__.py", "listen/_calls.py"),
        },
        {
            "line": 1700,
            "name": "_call_impl",
            "filename": os.path.dirname(torch.__file__) + "/nn/modules/module.py",
        },
        {"line": 937, "name": "wrapper", "filename": lib},
    ]
    t.event(Event("dynamo_start", {"dynamo_start": {"stack": stack}, "frame_id": 2, "frame_compile_id": 0}))
    assert said[-1].called_from == "/home/u/run.py:9"
    assert progress_text(said[-1], now=said[-1].stage_since) == (
        "compiling [2/0] capture 0.0 s · wrapper (generic.py:937, called from run.py:9)"
    )
    # another frame's compile under the same id in the last run gives no last-run time
    assert "last run" not in progress_text(said[-1], {"0/0": ("other", {"codegen": 1.0})})


def test_a_bad_baseline_is_one_line_before_anything_runs(tmp_path, capsys):
    from explorer.cli import main

    script = tmp_path / "prog.py"
    script.write_text("open('ran', 'w').close()\n")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    for given, why in ((bad, str(bad)), (tmp_path / "none.json", "No such file or directory")):
        assert main(["record", "--baseline", str(given), str(script)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"pt2-explorer: error: --baseline {given}") and why in err, err
        assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "ran").exists()  # the program never ran


DECODER = """\
import torch
from transformers import GPT2Config, GPT2LMHeadModel

cfg = GPT2Config(n_layer=12, n_head=2, n_embd=64, vocab_size=256, n_positions=64)
torch.manual_seed(0)
model = GPT2LMHeadModel(cfg).eval()
ids = torch.randint(0, 256, (1, 16), generator=torch.Generator().manual_seed(1))
with torch.no_grad():
    print(tuple(torch.compile(model)(input_ids=ids).logits.shape))
"""


@pytest.mark.child
@pytest.mark.corpus
def test_a_12_layer_decoder_shows_the_stage_and_kernel_n_of_n_on_a_terminal_and_nothing_piped(tmp_path):
    """The issue's acceptance: ``record`` of a 12-layer HF decoder on a terminal draws a line
    naming the stage and the kernel n of N, N the compile's kernels in its output code (the
    report's), beside the last run's stage time (the report at --json); piped, none."""
    pytest.importorskip("transformers")
    script = tmp_path / "decoder.py"
    script.write_text(DECODER)
    out = tmp_path / "run.json"
    cmd = [sys.executable, "-m", "explorer", "record", "--json", str(out), str(script)]
    piped = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=900)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout.splitlines()[0] == "(1, 16, 256)"
    for text in (piped.stdout, piped.stderr):  # whole lines only
        assert "\r" not in text and "\x1b" not in text and "compiling [" not in text
    last = compiler.load(str(out))

    # on a terminal, cold (--fresh: the wrapper module is written and its kernels compiled)
    tty, stdout, rc = _on_a_terminal(cmd[:4] + ["--fresh"] + cmd[4:], tmp_path)
    assert rc == 0 and stdout.splitlines()[0] == "(1, 16, 256)"
    assert "\r" not in stdout and "\x1b" not in stdout
    report = compiler.load(str(out))
    lines = [ln for ln in tty.split(CLEAR) if ln.startswith("pt2-explorer: compiling [")]
    assert lines and all(LINE.match(ln) for ln in lines), lines
    counted = {}
    for ln in lines:
        m = LINE.match(ln)
        k = re.search(
            r" · (?:kernel (\d+) of (\d+) \w+|(?:waiting on compile workers: )?(\d+) of (\d+) kernels compiled) · ",
            ln,
        )
        if k is not None:
            assert m["stage"] == "codegen"
            n, total = int(k[1] or k[3]), int(k[2] or k[4])
            assert 0 <= n <= total
            counted.setdefault(m["cid"], set()).add(total)
    kernels = {c.id: sum(1 for k in report.kernels if k.compile_id == c.id) for c in report.compiles}
    assert counted and all(totals == {kernels[cid]} for cid, totals in counted.items()), (counted, kernels)
    assert any(re.search(r" · kernel 1 of \d+ cpp_fused_", ln) for ln in lines)
    # the frame and its file:line, the graph's size, and the last run's time of the same stage
    c = report.compiles[0]
    (frame,) = report.frames  # transformers' wrapper, called from the program's line 9
    assert frame.called_from is not None and frame.called_from.endswith("decoder.py:9")
    where = f"{os.path.basename(c.filename)}:{c.line}, called from decoder.py:9"
    assert any(f" · {c.name} ({where}) · " in ln for ln in lines), lines
    assert any(re.search(r" · [\d,]+ nodes$", ln) for ln in lines)
    before = last.compiles[0].stage_times_s["codegen"]
    assert any("codegen " in ln and f"(last run: {before:.1f} s)" in ln for ln in lines)


def test_a_report_at_json_that_is_none_is_one_line_and_the_run_goes_on(tmp_path, capsys, monkeypatch):
    """On a terminal, the file already at --json is read for the last run's times; one that is
    no report says so in one line, the program runs, and the new report replaces it."""
    from explorer.cli import main

    script = tmp_path / "prog.py"
    script.write_text("open('ran', 'w').close()\n")
    out = tmp_path / "run.json"
    out.write_text("[1, 2")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main(["record", "--json", str(out), str(script)]) == 0
    monkeypatch.undo()
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"pt2-explorer: no last-run times: {out}"), err
    assert (tmp_path / "ran").exists() and compiler.load(str(out)).compiles == ()

"""Breaks torch makes on purpose: a compiled optimizer step (PyTorch's compiled-optimizer
recipe: AdamW's ``opt.step()`` inside a ``torch.compile``d function) breaks inside
torch/optim/optimizer.py, where the optimizer's ``_use_grad`` calls ``torch._dynamo.graph_break()``
itself. The break is placed at torch's line, said to be torch's own, reached from the program's
``opt.step()`` line; ``check --no-breaks-in`` the program's folder passes unless
``--count-torch-breaks``; each frame's "called from" is the line that made the call. The facts
are torch's: its own structured trace, read directly in the test (tests/_torch_trace.py)."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import textwrap
from pathlib import Path

import pytest
import torch

import compiler
import explorer
from compiler.model._callsites import with_torch_breaks
from explorer import cli
from explorer.base._words import where
from explorer.model._view import build_view
from explorer.views._breaks import breaks_text
from tests._torch_trace import RawTrace, facts

DATA = Path(__file__).resolve().parent.parent / "notebooks" / "data"

TRAIN = textwrap.dedent(
    """\
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)


    @torch.compile
    def opt_step():
        opt.step()  # STEP


    x, y = torch.randn(4, 8), torch.randn(4, 1)
    for _ in range(2):
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt_step()  # CALL
    with torch.no_grad():
        print("trained", round(model(x).sum().item(), 4))
    """
)


def _line(mark: str) -> int:
    return next(i for i, ln in enumerate(TRAIN.splitlines(), 1) if ln.endswith(f"# {mark}"))


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The program checked once against its own folder (torch's trace heard beside it), and
    once with --count-torch-breaks: (torch's facts, report, check lines, exit status) each."""
    root = tmp_path_factory.mktemp("torchbreaks")
    prog = root / "prog"
    prog.mkdir()
    (prog / "train.py").write_text(TRAIN)
    here = os.getcwd()
    os.chdir(root)
    out = {}
    try:
        for name, extra in (("default", []), ("counted", ["--count-torch-breaks"])):
            torch._dynamo.reset()
            err = io.StringIO()
            with (
                RawTrace() as raw,
                contextlib.redirect_stderr(err),
                contextlib.redirect_stdout(io.StringIO()),
            ):
                rc = cli.main(
                    [
                        "check",
                        "-q",
                        "--json",
                        f"{name}.json",
                        *extra,
                        "--no-breaks-in",
                        "prog/",
                        "prog/train.py",
                    ]
                )
            lines = [ln for ln in err.getvalue().splitlines() if ln.startswith("check:")]
            out[name] = (facts(raw.records), compiler.load(root / f"{name}.json"), lines, rc)
    finally:
        os.chdir(here)
        torch._dynamo.reset()
    return root, prog, out


def test_the_break_is_torchs_own_at_torchs_line(run):
    root, prog, out = run
    torch_facts, report, _lines, _rc = out["default"]
    # torch's own trace: one break site, in torch's optimizer.py, of the user-inserted id
    ((file, line),) = torch_facts.break_sites
    assert file.endswith(os.path.join("torch", "optim", "optimizer.py"))
    assert Path(file).read_text().splitlines()[line - 1].strip() == "torch._dynamo.graph_break()"
    assert torch_facts.break_gb[(file, line)] == {"GB0025"}
    (b,) = report.graph_breaks
    assert b.torch_own and (b.torch_site.filename, b.torch_site.line) == (file, line)
    # beside it, the program's line that reached it: the opt.step() inside the compiled function
    assert (b.filename, b.line) == (str(prog / "train.py"), _line("STEP"))
    assert b.gb_id == "GB0025"


def test_views_say_torchs_own_and_give_no_hint(run):
    root, prog, out = run
    _f, report, _lines, _rc = out["default"]
    (b,) = report.graph_breaks
    cwd = os.getcwd()
    os.chdir(root)
    try:
        torch_line = where(b.torch_site.filename, b.torch_site.line)
        words = f"torch's own break (inside {torch_line}, reached from your prog/train.py:{_line('STEP')})"
        view = build_view(report)
        summary, breaks = explorer.text(report), breaks_text(view)
    finally:
        os.chdir(cwd)
    assert torch_line == f"torch/optim/optimizer.py:{b.torch_site.line}"
    assert f"  {torch_line}  Call to `torch._dynamo.graph_break()`  (hit " in summary
    assert f"      {words}\n" in summary
    (line,) = view.summary.break_lines  # the page's summary
    assert line.startswith(f"{torch_line}  Call to") and line.endswith(f"): {words}")
    assert breaks.startswith(f"{torch_line}  Call to `torch._dynamo.graph_break()`  GB0025  (hit ")
    assert f"  where: {words}\n" in breaks
    for text in (summary, breaks):  # torch's hint is not one the user can act on
        assert "Remove the `torch._dynamo.graph_break()` call" not in text
        assert "hint:" not in text


def test_check_passes_on_the_programs_folder_unless_asked(run):
    root, prog, out = run
    _f, report, lines, rc = out["default"]
    assert (rc, lines) == (
        0,
        [
            "check: passed (0 breaks in prog/, 0 breaks elsewhere, 1 break torch's own "
            "(--count-torch-breaks counts them), 0 recompiles)"
        ],
    )
    _f, report, lines, rc = out["counted"]
    (b,) = report.graph_breaks
    assert (rc, lines) == (
        1,
        [
            f"check: graph break in prog/ (prog/train.py:{_line('STEP')}, calling torch's own break at "
            f"torch/optim/optimizer.py:{b.torch_site.line}, GB0025 Call to `torch._dynamo.graph_break()`)",
            "check: 1 rule broken (--no-breaks-in prog/: 1 break)",
        ],
    )


def test_called_from_is_the_line_that_made_the_call(run):
    """The optimizer's wrapper, its resumed frame and Adam's step are called by the opt.step()
    line (torch's break stack shows that call); the compiled function by the program's call."""
    root, prog, out = run
    _f, report, _lines, _rc = out["default"]
    train = str(prog / "train.py")
    called = {(os.path.basename(f.filename), f.name): f.called_from for f in report.frames}
    (resumed,) = [
        k for k in called if k[0] == "optimizer.py" and k[1].startswith("torch_dynamo_resume_in_wrapper")
    ]
    assert called == {
        ("train.py", "opt_step"): f"{train}:{_line('CALL')}",
        ("optimizer.py", "wrapper"): f"{train}:{_line('STEP')}",
        ("adam.py", "step"): f"{train}:{_line('STEP')}",
        resumed: f"{train}:{_line('STEP')}",
    }


def test_an_older_report_is_made_current_on_load():
    """The shipped GPT-2 training recording (written before): torch's own break marked, no frame
    of this package in a stack, the resumed frames called from the lines that made the calls."""
    raw = json.loads(gzip.open(DATA / "h100-gpt2-train-bench.json.gz", "rt").read())
    assert "compiler/listen/_calls.py" in raw["strings"]  # what the older report holds
    r = compiler.load(DATA / "h100-gpt2-train-bench.json.gz")
    own = [b for b in r.graph_breaks if b.torch_own]
    assert [(b.gb_id, b.filename, b.line) for b in own] == [("GB0025", "examples/train_step.py", 32)]
    site = own[0].torch_site
    assert (site.filename, site.line, site.code) == (
        "site-packages/torch/optim/optimizer.py",
        80,
        "torch._dynamo.graph_break()",
    )
    assert not any(f.filename.endswith("_calls.py") for b in r.graph_breaks for f in b.user_stack)
    assert [f.filename for f in r.graph_breaks[1].user_stack] == ["examples/train_step.py"] * 3
    called = {f.name: f.called_from for f in r.frames}
    assert called["torch_dynamo_resume_in_wrapper_at_533"] == "examples/train_step.py:32"  # opt.step()
    wrappers = {f.filename: f.called_from for f in r.frames if f.name == "wrapper"}
    assert wrappers["site-packages/torch/optim/optimizer.py"] == "examples/train_step.py:32"
    assert {called[n] for n in called if n.startswith("torch_dynamo_resume_in_train_step")} == {
        "examples/train_step.py:38"  # main's call of train_step, not the tool's wrapper
    }
    assert not any((f.called_from or "").startswith("compiler/") for f in r.frames)


def test_a_current_report_loads_as_it_is(run):
    _root, _prog, out = run
    report = out["default"][1]
    data = report.to_dict()
    assert with_torch_breaks(data) is data


def test_the_plugin_counts_torchs_own_breaks_when_asked(run):
    """``pt2_check(no_breaks_in=..., count_torch_breaks=True)`` is ``--count-torch-breaks``."""
    from explorer._pytestplugin import Check
    from explorer.check._rules import check_report

    _root, prog, out = run
    report = out["default"][1]
    results = [
        check_report(report, Check(no_breaks_in=str(prog), count_torch_breaks=asked).rules)
        for asked in (False, True)
    ]
    assert [r.passed for r in results] == [True, False]
    assert results[1].broken == (f"--no-breaks-in {prog}: 1 break",)


def test_the_verdict_says_torchs_own_break_at_torchs_line_and_offers_no_hint(run):
    """The Why view's graph-break cause: its evidence names torch's line, reached from the
    program's, and neither a fix nor torch's "remove the graph_break() call" hint is offered."""
    from compiler.why._fixes import break_line

    root, prog, out = run
    torch_facts, report, _lines, _rc = out["default"]
    ((file, line),) = torch_facts.break_sites
    (b,) = report.graph_breaks
    assert line == 79 and break_line(b) == (
        f"torch/optim/optimizer.py:79: torch's own break, reached from train.py:{_line('STEP')}: "
        "Call to `torch._dynamo.graph_break()` (GB0025)"
    )
    assert b.hints  # torch's hint is there, and is never the advice
    v_breaks = [c for c in _judged_breaks(report) if c.key == "breaks"]
    assert v_breaks and all(c.fix is None and c.advice is None for c in v_breaks)
    assert any("torch's own break" in e for c in v_breaks for e in c.evidence)


def _judged_breaks(report):
    """The verdict's causes on the report, judged against a steady benchmark of two graphs' call
    (a benchmark is what the verdict reads; its figures do not matter to the breaks' words)."""
    from compiler.model._benchtypes import Benchmark, KernelTime, Timeline, Timing

    t = Timing(median_ms=2.0, p25_ms=2.0, p75_ms=2.0, min_ms=2.0, max_ms=2.0, reps=5)
    e = Timing(median_ms=3.0, p25_ms=3.0, p75_ms=3.0, min_ms=3.0, max_ms=3.0, reps=5)
    timeline = Timeline(
        call_ms=2.0, kernel_ms=0.5, busy_ms=0.5, launches=4, graphs=2, regions=2, outside_ms=1.0
    )
    bench = Benchmark(
        name="opt_step", device="cpu", device_name="cpu", method="", warmup=1, eager=e, compiled=t,
        speedup=1.5, timeline=timeline, profiled_calls=3,
        kernels=(KernelTime("aten::_foreach_add_", "extern", 3, 1.5, 0.5, 1.0, compile_id="1/0"),),
    )  # fmt: skip
    return compiler.analysis.verdict(report, bench).causes

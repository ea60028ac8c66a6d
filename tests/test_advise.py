"""``advise``: the fixes a verdict calls for, each tried and measured. The choice of fixes is
checked on the H100 recordings of programs built to have one cause each (notebooks/data,
make_why_causes.py); the CLI and ``compiler.advise`` on real programs written here and run on
the CPU: a `.item()` graph break that ``capture_scalar_outputs`` removes (fewer breaks, counted
in the fixed run's own report), a compiled function recompiling per batch size that
``dynamic`` compiles once, a fix under which the program raises (a row, not an abort), and
the user's file byte for byte as it was."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import compiler
import compiler._viewer
import explorer

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "notebooks" / "data"

SCALED = """\
import torch
from torch import nn

torch.manual_seed(0)
torch.set_num_threads(1)


class Scaled(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.a, self.b, self.c = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, x):
        x = torch.relu(self.a(x))
        s = x.norm().item()  # a scalar read on the host between stages, outside a loop
        x = torch.relu(self.b(x / (1.0 + s)))
        t = x.mean().item()
        return self.c(x - t)


model = torch.compile(Scaled())
with torch.no_grad():
    out = model(torch.randn(8, 32))
print("out", tuple(out.shape))
"""

SIZES = """\
import torch
from torch import nn

if torch._dynamo.config.capture_dynamic_output_shape_ops:  # the fix this program cannot take
    raise RuntimeError("this program refuses capture_dynamic_output_shape_ops")
torch.manual_seed(0)
torch.set_num_threads(1)
torch._dynamo.config.automatic_dynamic_shapes = False  # every new batch size: a recompile

model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 16))
compiled = torch.compile(model)
with torch.no_grad():
    for n in (3, 5, 7, 9):
        out = compiled(torch.randn(n, 16))
print("out", tuple(out.shape))
"""


# ---- which fixes: from the verdict's causes (torch-free) ----------------------------------------


def _fixes(name: str, tries=()):
    r = compiler.load(DATA / f"h100-{name}.json.gz")
    return [(f.name, f.why) for f in compiler.analysis.fixes_for(r, tries)]


def test_the_fixes_are_the_ones_the_verdict_calls_for():
    assert _fixes("cause-item") == [
        ("capture_scalar_outputs", "graph breaks: 2 sites (the verdict on Scaled)"),
        ("reduce-overhead", "host-bound: the GPU waits for the host (the verdict on Scaled)"),
    ]
    # with capture_scalar_outputs set the break is gone, and the medians are within the spread:
    # no clear winner, so no cause is named; the parts it measured still call for their fixes,
    # whose own runs settle what the unsteady timings could not
    assert _fixes("cause-item-fixed") == [
        (
            "reduce-overhead",
            "host-bound: the GPU waits for the host (the verdict on Scaled; the verdict named no cause: "
            "its timings were unsteady)",
        )
    ]
    # sizes that change from call to call: the recompile limit was hit, the frame fell back
    assert [n for n, _ in _fixes("cause-recompile")] == ["dynamic"]
    # a GEMM-bound block in fp32 without TF32 (its host time, 0.4% of the call, calls for no
    # CUDA graphs: the verdict names a part's fix from 10% of the call)
    assert [n for n, _ in _fixes("why-gemm")] == ["float32_matmul_precision", "max_autotune"]
    # compiled with reduce-overhead already, CUDA graphs skipped: no setting of ours fixes that
    assert _fixes("cause-cudagraph-skip") == []
    # --try adds one not called for
    assert _fixes("cause-cudagraph-skip", ("recompile_limit",)) == [("recompile_limit", "asked for (--try)")]
    with pytest.raises(ValueError, match="no fix named 'fast': the fixes are capture_scalar_outputs, "):
        compiler.analysis.fix_named("fast")


def test_each_fix_is_a_setting_of_torchs_said_as_code():
    fx = compiler.analysis.FIXES
    assert fx["capture_scalar_outputs"].lines == ("torch._dynamo.config.capture_scalar_outputs = True",)
    assert fx["dynamic"].lines == ("torch._dynamo.config.assume_static_by_default = False",)
    assert fx["reduce-overhead"].lines == ("torch._inductor.config.triton.cudagraphs = True",)
    assert fx["float32_matmul_precision"].lines == ("torch.set_float32_matmul_precision('high')",)
    assert {n for n, f in fx.items() if f.cuda_only} == {"reduce-overhead", "float32_matmul_precision"}
    # the change to make is the verdict's own text
    assert fx["dynamic"].code.startswith("torch.compile(..., dynamic=True)")


def test_settings_are_torchs_config_patched_and_put_back():
    from compiler.bench._settings import patched

    fix = compiler.analysis.FIXES["recompile_limit"]
    before = torch._dynamo.config.recompile_limit
    with patched(fix):
        assert torch._dynamo.config.recompile_limit == 64
        assert compiler._viewer.settings_overridden(fix) == []
        torch._dynamo.config.recompile_limit = 3  # as a program setting it itself would
        assert compiler._viewer.settings_overridden(fix) == [
            "torch._dynamo.config.recompile_limit is 3, not 64: the program set it itself"
        ]
    assert torch._dynamo.config.recompile_limit == before
    precision = torch.get_float32_matmul_precision()
    with patched(compiler.analysis.FIXES["float32_matmul_precision"]):
        assert torch.get_float32_matmul_precision() == "high"
    assert torch.get_float32_matmul_precision() == precision


def test_outputs_agree_within_a_stated_tolerance_the_largest_difference_named():
    from compiler.bench._outputs import agreement, kept

    x = torch.ones(2, 3)
    base = kept((x,), {}, {"logits": torch.zeros(2, 3), "loss": torch.tensor(1.0)})
    same = kept((x.clone(),), {}, {"logits": torch.zeros(2, 3), "loss": torch.tensor(1.0)})
    assert agreement(base, same) == (
        True,
        "yes: 2 tensors, largest difference 0 (identical); atol=0.001, rtol=0.001 (fp32)",
    )
    off = kept((x,), {}, {"logits": torch.zeros(2, 3), "loss": torch.tensor(1.01)})
    assert agreement(base, off) == (
        False,
        "NO: 2 tensors, largest difference 0.01 at out['loss']; atol=0.001, rtol=0.001 (fp32)",
    )
    # TF32: looser, and said
    assert agreement(base, off, ("float32_matmul_precision",)) == (
        True,
        "yes: 2 tensors, largest difference 0.01 at out['loss']; atol=0.01, rtol=0.01 (fp32 matmuls in TF32)",
    )
    # not the same call: not compared
    other = kept((x * 2,), {}, {"logits": torch.zeros(2, 3), "loss": torch.tensor(1.0)})
    ok, words = agreement(base, other)
    assert ok is None and words.startswith(
        "not compared: the last call's inputs differ from the baseline's (1 at args[0]; "
    )


def test_the_cli_refuses_an_output_directory_with_files_and_an_unknown_fix(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text("print('never run')\n")
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "mine.txt").write_text("the user's")
    busy = _cli(tmp_path, "advise", "--out", "busy", "prog.py")
    assert busy.returncode == 2 and busy.stdout == ""
    assert (
        busy.stderr
        == "pt2-explorer: error: --out busy: exists and is not an empty directory; give a new one\n"
    )
    unknown = _cli(tmp_path, "advise", "--try", "capture_scalar_outputs,fast", "prog.py")
    assert unknown.returncode == 2 and "no fix named 'fast'" in unknown.stderr
    assert sorted(os.listdir(tmp_path)) == ["busy", "prog.py"]  # nothing made, nothing run


# ---- measured: real programs on the CPU (Inductor's C++ backend) -----------------------------


def _cli(cwd: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "explorer", *argv]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def _table(stdout: str) -> dict[str, list[str]]:
    """The printed table's rows by fix: its cells, split where two spaces or more part them."""
    lines = stdout.splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith(("# ", "fix ")))
    end = lines.index("", start)
    rows = [re.split(r"  +", x) for x in lines[start + 1 : end]]
    if lines[start].startswith("fix "):  # a table kept from before the rank and gain columns
        return {cells[0]: [*cells[:7], "—", "—", *cells[7:]] for cells in rows}
    # by fix, the rank cell left off (the fix's cells first, as before the rank came)
    return {cells[1]: cells[1:] for cells in rows}


# the columns that are counts and words, not timings (fix, graphs, breaks, recompiles, outputs agree)
def _facts(row: list[str]) -> tuple[str, ...]:
    return (row[0], row[1], row[2], row[3], row[9])


@pytest.mark.slow
@pytest.mark.child
def test_advise_measures_capture_scalar_outputs_on_item_breaks(tmp_path):
    script = tmp_path / "scaled.py"
    script.write_text(SCALED)
    before = script.read_bytes()
    done = _cli(tmp_path, "advise", "--reps", "10", "scaled.py")
    assert done.returncode == 0, done.stderr
    assert script.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["advise-scaled", "scaled.py"]
    rows = _table(done.stdout)
    assert list(rows) in (["capture_scalar_outputs", "baseline"], ["baseline", "capture_scalar_outputs"])
    assert _facts(rows["baseline"]) == ("baseline", "3", "2", "0", "(reference)")
    assert _facts(rows["capture_scalar_outputs"]) == ("capture_scalar_outputs", "1", "0", "0", "yes")
    # the counts are each run's own report's
    out = tmp_path / "advise-scaled"
    fixed = compiler.load(out / "capture_scalar_outputs" / "report.json")
    base = compiler.load(out / "baseline" / "report.json")
    assert (len(base.graph_breaks), len(fixed.graph_breaks)) == (2, 0)
    (b,) = fixed.benchmarks
    assert rows["capture_scalar_outputs"][6] == b.speedup_words.removeprefix("compiled is ").removesuffix(
        " than eager"
    )
    text = done.stdout
    assert "  change:    torch._dynamo.config.capture_scalar_outputs = True\n" in text
    assert "  outputs:   yes: 1 tensor, largest difference " in text
    assert "; atol=0.001, rtol=0.001 (fp32)\n" in text
    assert f"  report:    {os.path.join('advise-scaled', 'capture_scalar_outputs', 'report.json')}\n" in text
    assert (
        out / "advice.txt"
    ).read_text() + f"advice: {os.path.join('advise-scaled', 'advice.txt')}\n" == text
    # stderr, not a terminal: what is tried, then one line per run
    ours = [x for x in done.stderr.splitlines() if x.startswith("pt2-explorer: ")]
    assert [re.sub(r"\(\d+ s", "(N s", x) for x in ours] == [
        "pt2-explorer: advise: runs scaled.py once as it is, then once per fix its verdict calls for (at most "
        f"{1 + len(compiler.analysis.FIXES)} runs in all): whatever the program does (files it writes, messages "
        "it sends) happens each time",
        "pt2-explorer: advise: baseline: done (N s)",
        "pt2-explorer: advise: fixes to try: capture_scalar_outputs",
        "pt2-explorer: advise: capture_scalar_outputs: done (N s; 1 of 1 fixes)",
    ]
    # the program's own output, kept beside each run's report
    assert (out / "baseline" / "stdout.txt").read_text() == "out (8, 32)\n"


@pytest.mark.slow
@pytest.mark.child
def test_advise_measures_dynamic_shapes_and_a_fix_that_crashes_is_a_row(tmp_path):
    script = tmp_path / "sizes.py"
    script.write_text(SIZES)
    before = script.read_bytes()
    done = _cli(
        tmp_path,
        "advise",
        "--reps", "10", "--jobs", "2", "--try", "capture_dynamic_output_shape_ops", "--out", "runs",
        "sizes.py",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert script.read_bytes() == before
    rows = _table(done.stdout)
    assert _facts(rows["baseline"]) == ("baseline", "1", "0", "3", "(reference)")
    assert _facts(rows["dynamic"]) == ("dynamic", "1", "0", "0", "yes")
    crashed = rows["capture_dynamic_output_shape_ops"]
    assert crashed == ["capture_dynamic_output_shape_ops", *["—"] * 10, "failed (below)"]  # compile s too
    assert list(rows)[-1] == "capture_dynamic_output_shape_ops"  # crashes last
    assert len(compiler.load(tmp_path / "runs" / "dynamic" / "report.json").recompiles) == 0
    assert len(compiler.load(tmp_path / "runs" / "baseline" / "report.json").recompiles) == 3
    assert (
        "  failed:    exited with status 1: RuntimeError: this program refuses capture_dynamic_output_shape_ops\n"
        in done.stdout
    )
    assert (
        "  measured:  torch._dynamo.config.assume_static_by_default = False (set before anything compiled)\n"
        in (done.stdout)
    )
    assert (
        "pt2-explorer: advise: warning: --jobs 2: the runs share the CPUs (and GPU) at once, which disturbs "
        "each other's timings; for figures to quote, --jobs 1"
    ) in done.stderr.splitlines()


@pytest.mark.slow
def test_a_logging_break_is_fixed_as_code_with_its_method_and_advise_tries_it():
    """A transformers logger's ``warning_once`` inside the compiled call breaks the graph
    (GB0291; torch's hint is words: "Add the logging method to ignore_logging_functions"). The
    verdict's fix is that setting as code, with the method named; ``advise`` tries it, and under
    it torch's own counters see no break and the function's output is unchanged."""
    transformers = pytest.importorskip("transformers")
    import logging

    logger = transformers.utils.logging.get_logger("pt2x_logging_fix")

    def scaled(x):
        y = x.sin() * 2
        logger.warning_once("scaling")  # the break
        return y.cos() + 1

    x = torch.randn(64)
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    with torch.no_grad():
        advice = compiler.advise(
            scaled, x, reps=3, warmup=1, progress=False, compile_kwargs={"backend": "eager"}
        )
    by = {r.fix: r for r in advice.rows}
    name = "ignore_logging:pt2x_logging_fix:warning_once"
    assert set(by) >= {"baseline", name}, list(by)
    (brk,) = by["baseline"].report.graph_breaks
    assert brk.gb_id == "GB0291"
    code = (
        "torch._dynamo.config.ignore_logging_functions.add(logging.Logger.warning_once)"
        "  # after import logging; compiled code skips pt2x_logging_fix's warning_once calls"
    )
    v = compiler.analysis.verdict(by["baseline"].report, by["baseline"].report.benchmarks[-1])
    assert next(c for c in v.causes if c.key == "breaks").fix == code
    fixed = by[name]
    assert (fixed.code, fixed.lines) == (
        code,
        ("torch._dynamo.config.ignore_logging_functions.add(logging.Logger.warning_once)",),
    )
    assert (by["baseline"].breaks, fixed.breaks, fixed.error, fixed.agree) == (1, 0, None, True)
    # torch's own view, the fix made the way advise makes it
    from compiler.bench._settings import patched

    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    with patched(compiler.analysis.fix_named(name)):
        assert logging.Logger.warning_once in torch._dynamo.config.ignore_logging_functions
        torch.compile(scaled, backend="eager")(x)
    assert not torch._dynamo.utils.counters["graph_break"]
    assert logging.Logger.warning_once not in torch._dynamo.config.ignore_logging_functions  # put back
    torch._dynamo.reset()


def test_compiler_advise_recompiles_the_function_under_each_fix(tmp_path):
    from torch import nn

    torch.manual_seed(0)
    lin = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 16))
    calls = [(torch.randn(n, 16),) for n in (3, 5, 7)]
    with torch.no_grad(), torch._dynamo.config.patch(automatic_dynamic_shapes=False):
        advice = compiler.advise(lin, calls=calls, reps=5, progress=False, tries=("reduce-overhead",))
    assert torch._dynamo.config.automatic_dynamic_shapes  # the patch above, put back: nothing of ours left
    by = {r.fix: r for r in advice.rows}
    # max-autotune is tried where the baseline's verdict says the call is its kernels (library
    # or generated kernels first): on a busy CPU it may be, on an idle one the host's overhead
    base = by["baseline"].report
    main = compiler.analysis.verdict(base, base.benchmarks[-1]).main
    assert ("max_autotune" in by) == (main in ("library", "generated")), main
    assert [f for f in by if f != "max_autotune"] in (
        ["baseline", "dynamic", "reduce-overhead"],
        ["dynamic", "baseline", "reduce-overhead"],
    )
    assert (by["baseline"].recompiles, by["dynamic"].recompiles) == (2, 0)
    assert len(by["dynamic"].report.recompiles) == 0 and by["dynamic"].agree is True
    assert by["reduce-overhead"].error == "skipped: it needs a CUDA device; the function ran on CPU"
    assert not advice.separate and advice.device == "cpu"
    text = explorer.text(advice)
    assert text.startswith("advise: Sequential (cpu): each fix measured, best first\n")
    assert "Each row is the function compiled again in this process" in text


# ---- the table at a terminal's width (torch-free) -----------------------------------------------


def _advice_of_two_rows():
    from compiler.model._advicetypes import Advice, AdviceRow
    from compiler.model._benchtypes import Timing

    def t(ms):
        return Timing(ms, ms * 0.9, ms * 1.1, ms * 0.8, ms * 1.2, 20)

    fixed = AdviceRow(
        "capture_dynamic_output_shape_ops", "x", "Scaled", graphs=1, breaks=0, recompiles=0, eager=t(1.234),
        compiled=t(0.5), speedup=2.468, compile_s=1.5, agree=True, cautions=("noisy: a", "bimodal: b"),
    )  # fmt: skip
    base = AdviceRow(
        "baseline", None, "Scaled", graphs=3, breaks=2, recompiles=0, eager=t(1.2), compiled=t(1.9),
        speedup=0.63, compile_s=2.25,
    )  # fmt: skip
    return Advice("scaled.py", "cpu", (fixed, base))


def test_the_table_fits_the_terminal_cells_wrapping_in_their_columns():
    """At 100 columns the table fits without cutting a word: a fix's long name is cut in its
    middle (its whole name is in the row's lines below), cells wrap between their words, and
    the columns the row's lines below also give are left out, named under the table; piped (no
    width), whole lines. The compile-time column is each run's own Benchmark.compile_time_s."""
    from explorer.views._advice import advice_text

    advice = _advice_of_two_rows()
    table = advice_text(advice, 100).split("\n\n")[0].splitlines()
    assert table == [
        "advise: scaled.py (cpu): each fix measured, best first",
        "#  fix                       graphs  breaks  recompiles  eager ms  compiled   speedup    outputs",
        "                                                                   ms                    agree",
        "—  capture…output_shape_ops  1       0       0           1.234     0.5        2.47×      yes",
        "                                                                              faster",
        "—  baseline                  3       2       0           1.2       1.9        1.59×      (reference)",
        "                                                                              slower",
        "(left out at this width: caution, can win, won, compile s; each row's lines below give them)",
    ]
    below = advice_text(advice, 100).split("\n\n", 2)[2]
    assert "capture_dynamic_output_shape_ops · Scaled\n" in below  # the name whole, below
    assert "  compile:   1.5 s (the function's, in this run)\n" in below
    assert "  caution:   noisy: a\n  caution:   bimodal: b\n" in below
    whole = advice_text(advice).splitlines()
    assert re.split(r"  +", whole[1])[-3:] == ["outputs agree", "compile s", "caution"]
    assert re.split(r"  +", whole[2]) == [
        "—", "capture_dynamic_output_shape_ops", "1", "0", "0", "1.234", "0.5", "2.47× faster", "—", "—", "yes", "1.5",
        "noisy; bimodal",
    ]  # fmt: skip
    for width in (60, 80, 120):
        lines = advice_text(advice, width).split("\n\n")[0].splitlines()[1:]
        assert max(len(x) for x in lines) <= width


def test_an_advice_rows_compile_time_is_its_benchmarks():
    r = compiler.load(DATA / "h100-cause-item.json.gz")
    b = r.benchmarks[-1]
    from compiler.why._advice import advice_row

    assert b.compile_time_s is not None
    assert advice_row(None, r, b).compile_s == b.compile_time_s


def test_the_h100_advise_run_of_notebook_16s_model():
    """`advise` on notebook 16's model on the H100 (notebooks/data/make_advise_data.py): each
    row's counts are its own run's report (read here), capture_scalar_outputs removes both
    `.item()` breaks and the recompiles, its outputs agree, and the row's compile time is its
    benchmark's."""
    import gzip

    text = gzip.open(DATA / "h100-advise-item.txt.gz", "rt", encoding="utf-8").read()
    rows = _table(text)
    assert list(rows)[0] == "capture_scalar_outputs" and set(rows) == {
        "capture_scalar_outputs", "baseline", "reduce-overhead",
    }  # fmt: skip
    for fix, cells in rows.items():
        r = compiler.load(DATA / f"h100-advise-item-{fix}.json.gz")
        (b,) = r.benchmarks
        graphs = f"{b.timeline.graphs:g}"
        assert cells[:4] == [fix, graphs, str(len(r.graph_breaks)), str(len(r.recompiles))]
        assert cells[10] == f"{b.compile_time_s:.3g}" and b.device == "cuda"
    assert _facts(rows["capture_scalar_outputs"]) == ("capture_scalar_outputs", "1", "0", "0", "yes")
    base = compiler.load(DATA / "h100-advise-item-baseline.json.gz")
    assert {b.gb_id for b in base.graph_breaks} == {"GB0124"} and len(base.graph_breaks) == 2


# ---- predicted beside measured: the known-cause programs (notebooks/data, H100) ----------------


def _row(fix_name: str):
    from compiler.why._advice import advice_row

    base = compiler.load(DATA / "h100-advise-item-baseline.json.gz")
    mine = compiler.load(DATA / f"h100-advise-item-{fix_name}.json.gz")
    fix = compiler.analysis.fix_named(fix_name)
    return base, advice_row(fix, mine, mine.benchmarks[-1], base=(base, base.benchmarks[-1]))


def test_a_fixs_measured_gain_is_held_against_what_the_verdict_predicted():
    """On the `.item()` program (two breaks, host-bound; notebooks/data/make_advise_data.py):
    the baseline's verdict says capture_scalar_outputs can make the call up to ~1.87× faster
    (the breaks' 41% of the call and the guards of the two frames they resume, 2/3 of 8.6%);
    its run measured 1.92× (its speedup over the baseline's), within the band of ±max(15%, the
    rows' widest IQR over its median). Reduce-overhead's run timed its eager arm at 0.2193 ms
    against the baseline's 0.349 ms, beyond their spread: not compared, not ranked."""
    base, row = _row("capture_scalar_outputs")
    (b,) = base.benchmarks
    v = compiler.analysis.verdict(base, b)
    brk = next(c for c in v.causes if c.key == "breaks")
    guards = next(c for c in v.causes if c.key == "guards")
    assert brk.removes == pytest.approx(brk.share + guards.share * 2 / 3)
    assert brk.gain == pytest.approx(1 / (1 - brk.removes)) and row.predicted == brk.gain
    (fixed,) = compiler.load(DATA / "h100-advise-item-capture_scalar_outputs.json.gz").benchmarks
    assert row.measured == pytest.approx(fixed.speedup / b.speedup)
    assert (round(row.predicted, 2), round(row.measured, 2)) == (1.87, 1.92)
    band = max(0.15, *(t.iqr_ms / t.median_ms for t in (b.eager, b.compiled, fixed.eager, fixed.compiled)))
    assert row.predicted / (1 + band) <= row.measured <= row.predicted * (1 + band)
    assert row.versus == (
        f"predicted up to ~1.87× (graph breaks: 2 sites), measured 1.92×: as predicted (within ±{band:.0%})"
    )
    assert row.unranked is None
    _base, ro = _row("reduce-overhead")
    assert ro.unranked == (
        "its eager arm (0.2193 ms) disagrees with the baseline's (0.349 ms) beyond their spread and 10%: the two "
        "runs were timed at different speeds; run advise again"
    )
    from compiler.why._advice import advice_row, ranked

    base_row = advice_row(None, base, b, agreement="the reference")
    out = ranked([base_row, row, dataclasses.replace(ro, agree=True)])
    assert [(r.fix, r.rank) for r in out] == [
        ("capture_scalar_outputs", "1"),
        ("baseline", "2"),
        ("reduce-overhead", ""),
    ]


def test_where_measured_and_predicted_disagree_it_says_which_was_wrong():
    """A gain over the bound: the verdict was wrong (its share too small). One under it while
    the fixed run's verdict still names the cause: the fix did not take."""
    base, row = _row("capture_scalar_outputs")
    (b,) = base.benchmarks
    mine = compiler.load(DATA / "h100-advise-item-capture_scalar_outputs.json.gz")
    (fixed,) = mine.benchmarks
    from compiler.why._advice import compare

    fix = compiler.analysis.fix_named("capture_scalar_outputs")
    fast = dataclasses.replace(row, speedup=b.speedup * 5)
    assert compare(fast, fix, (base, b), (mine, fixed)).versus.endswith(
        ": the verdict was wrong, the fix won more than its cause's share allows"
    )
    # no faster, and the fixed run is the baseline itself: its breaks are still there
    same = dataclasses.replace(row, speedup=b.speedup)
    assert compare(same, fix, (base, b), (base, b)).versus == (
        "predicted up to ~1.87× (graph breaks: 2 sites), measured 1×: the fix did not take, graph breaks: "
        "2 sites is still 41% of the fixed call"
    )


def test_advise_measures_again_a_fix_whose_eager_arm_was_timed_at_another_speed(tmp_path, capsys):
    """The H100 `.item()` program's reduce-overhead run timed its eager arm at 0.2193 ms against
    the baseline's 0.349 ms: advise runs that fix again (and no other), and ranks the run whose
    eager arm agrees. Here the second run is the same report with its eager arm as the
    baseline's (a run on a host at the baseline's speed)."""
    import gzip
    import json

    from explorer.cli import _advise

    names = ("baseline", "capture_scalar_outputs", "reduce-overhead")
    files = {n: str(DATA / f"h100-advise-item-{n}.json.gz") for n in names}
    base_eager = json.loads(gzip.open(files["baseline"]).read())["benchmarks"][0]["eager"]
    again = json.loads(gzip.open(files["reduce-overhead"]).read())
    again["benchmarks"][0]["eager"] = base_eager
    steady = tmp_path / "reduce-overhead-again.json"
    steady.write_text(json.dumps(again))

    class Runner:
        jobs, tty, total = 1, False, 0

        def __init__(self):
            self.ran: list[str] = []

        def run(self, fix):
            name = fix.name if fix else "baseline"
            self.ran.append(name)
            if name not in files:  # a fix this program's runs were not made with
                return compiler._viewer.AdviceRun(fix, None, error="not run in this test")
            path = str(steady) if self.ran.count(name) > 1 else files[name]
            return compiler._viewer.AdviceRun(fix, path)

        def run_all(self, fixes):
            return [self.run(f) for f in fixes]

    runner = Runner()
    assert _advise._advise(compiler, runner, "item", ("reduce-overhead",), str(tmp_path)) == 0
    assert runner.ran[0] == "baseline" and runner.ran.count("reduce-overhead") == 2
    assert all(runner.ran.count(n) == 1 for n in runner.ran if n != "reduce-overhead"), runner.ran
    err = capsys.readouterr().err
    assert (
        "pt2-explorer: advise: reduce-overhead: its eager arm was timed at another speed than the baseline's; "
        "measuring again (1 of 2)"
    ) in err
    table = (tmp_path / "advice.txt").read_text()
    assert "not ranked" not in table.split("\n\n")[0]
    ranks = {ln.split()[1]: ln.split()[0] for ln in table.split("\n\n")[0].splitlines()[2:]}
    assert ranks["reduce-overhead"] != "no" and ranks["baseline"] != "no", table

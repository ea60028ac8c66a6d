"""``compiler.numerics``: where compiled diverges from eager, and why, checked against torch
itself in each test: torch's own ``emulate_precision_casts`` and ``fallback_random`` runs, and
torch's ``CompilerBisector.do_bisect`` called directly."""

from __future__ import annotations

import math
import re

import _torch_trace as tt
import pytest
import torch
import torch._inductor.config as inductor_config
from torch import nn

import compiler
from compiler.model._numericstypes import (
    ModuleError,
    Numerics,
    NumericsCause,
    NumericsTrial,
    StepError,
    TensorError,
)
from explorer import cli
from explorer.views._numerics import numerics_text

ROUNDING, RANDOM, INDUCTOR = (
    "rounding inside a fusion",
    "random numbers drawn differently",
    "an Inductor pass or lowering",
)


class Block(nn.Module):
    """A pre-LayerNorm residual block: the first residual add fuses into the second LayerNorm."""

    def __init__(self, d: int):
        super().__init__()
        self.ln1, self.proj = nn.LayerNorm(d), nn.Linear(d, d)
        self.ln2, self.fc1, self.act, self.fc2 = (
            nn.LayerNorm(d),
            nn.Linear(d, 2 * d),
            nn.GELU(),
            nn.Linear(2 * d, d),
        )

    def forward(self, x):
        x = x + self.proj(self.ln1(x))
        return x + self.fc2(self.act(self.fc1(self.ln2(x))))


class Net(nn.Module):
    def __init__(self, d: int = 32):
        super().__init__()
        self.blocks = nn.ModuleList([Block(d)])
        self.ln = nn.LayerNorm(d)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.ln(x)


def _fresh(fn, *args, **config):
    """torch.compile(fn)(*args), compiled afresh under the Inductor config changes."""
    torch.compiler.reset()
    with inductor_config.patch(config):
        return torch.compile(fn)(*args)


# ---- without compiling ----------------------------------------------------------------------


def test_errors_hold_each_dtype_to_its_stated_tolerance():
    from compiler.bench._numrun import error

    e = torch.tensor([1.0, 2.0, 0.0], dtype=torch.bfloat16)
    c = torch.tensor([1.0078125, 2.0, 0.0], dtype=torch.bfloat16)  # one bf16 step above 1
    got = error("output", e, c)
    assert (got.dtype, got.rtol, got.atol, got.max_abs, got.ok) == (
        "torch.bfloat16",
        1.6e-2,
        1e-5,
        0.0078125,
        True,
    )
    assert got.max_rel == 0.0078125 / 2
    c = torch.tensor([1.0, 2.0, 0.0078125], dtype=torch.bfloat16)  # off at zero: atol only
    assert error("output", e, c).ok is False
    f = torch.tensor([1.0, float("nan")])
    assert error("o", f, torch.tensor([1.0, float("nan")])).ok is True  # NaN on both sides agrees
    one_sided = error("o", f, torch.tensor([1.0, 2.0]))
    assert (one_sided.ok, one_sided.max_abs) == (False, math.inf)
    shapes = error("o", f, torch.zeros(3))
    assert (shapes.ok, shapes.note) == (False, "shapes differ: (2,) eager, (3,) compiled")


def _sample() -> Numerics:
    err = TensorError("output", "torch.bfloat16", (4, 8), 0.015625, 0.005, 1.6e-2, 1e-5, False)
    ok = TensorError("blocks.0.ln1", "torch.bfloat16", (4, 8), 0.0, 0.0, 1.6e-2, 1e-5, True)
    return Numerics(
        "Net",
        "torch.no_grad(), model.eval()",
        outputs=(err,),
        modules=(
            ModuleError("blocks.0.ln1", "LayerNorm", 0, ok),
            ModuleError(
                "blocks.0",
                "Block",
                6,
                TensorError("blocks.0", "torch.bfloat16", (4, 8), 0.0078, 0.004, 1.6e-2, 1e-5, False),
            ),
            ModuleError("", "Net", 8, err),
        ),
        first_module="blocks.0",
        trials=(
            NumericsTrial(
                "emulate_precision_casts", "torch._inductor.config.emulate_precision_casts = True", True, 0.0
            ),
        ),
        cause=NumericsCause(
            ROUNDING,
            "compiled agrees with eager when ...",
            "torch._inductor.config.emulate_precision_casts = True",
        ),
        steps=(StepError(1, None, ok, True), StepError(2, err, ok, False)),
        first_step=2,
        runs=9,
        max_runs=40,
        not_narrowed=("not narrowed below 'blocks.0': the bound on runs",),
    )


def test_numerics_are_saved_with_the_report_and_shown_as_the_view(tmp_path, capsys):
    n = _sample()
    report = compiler.Report("2.13.0", "cpu", numerics=(n,))
    path = tmp_path / "r.json"
    report.to_json(path)
    assert compiler.load(path).numerics == (n,)
    assert cli.main(["report", str(path), "--view", "numerics"]) == 0
    out = capsys.readouterr().out
    assert "Net under torch.no_grad(), model.eval(): compiled diverges from eager" in out
    assert re.search(
        r"\n  6\. blocks\.0 +Block +0\.0078 +█{15} +← first to diverge\n", out
    )  # half the longest
    assert re.search(r"\n  8\. \(the module called\) +Net +0\.0156 +█{30}\n", out)
    assert re.search(r"\n  0\. blocks\.0\.ln1 +LayerNorm +0\n", out)
    assert "cause: rounding inside a fusion" in out
    assert "fix: torch._inductor.config.emulate_precision_casts = True" in out
    assert "first step to cross the tolerance: 2" in out
    assert "not narrowed down: not narrowed below 'blocks.0': the bound on runs" in out
    assert "compiled runs: 9 of at most 40" in out
    page = tmp_path / "r.html"
    assert cli.main(["report", str(path), "--html", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    assert "Numerics (1)" in html and "cause: rounding inside a fusion" in html


# ---- compiling: each against torch's own runs -----------------------------------------------


@pytest.mark.slow
def test_bf16_blocks_diverge_by_rounding_inside_a_fusion_as_torchs_precision_casts_show():
    torch.manual_seed(0)
    model = Net().to(torch.bfloat16).eval()
    x = torch.randn(4, 8, 32, dtype=torch.bfloat16)
    lines: list[str] = []
    with torch.no_grad():
        n = compiler.numerics(model, x, progress=lines.append)
        eager = model(x)
        with tt.RawTrace() as raw:
            plain = _fresh(model, x)
        emulated = _fresh(model, x, emulate_precision_casts=True)
    # torch's own: compiled differs beyond bf16's tolerance; with precision casts it is eager's
    rtol, atol = 1.6e-2, 1e-5
    assert not torch.allclose(plain.float(), eager.float(), rtol=rtol, atol=atol)
    assert torch.equal(emulated, eager)
    (out,) = n.outputs
    assert (out.ok, out.max_abs) == (False, (plain.float() - eager.float()).abs().max().item())
    assert n.state == "torch.no_grad(), model.eval()"
    assert n.first_module == "blocks.0"  # alone, each of its children agrees; it does not
    paths = [m.path for m in n.modules]
    assert paths == [
        "blocks.0.ln1",
        "blocks.0.proj",
        "blocks.0.ln2",
        "blocks.0.fc1",
        "blocks.0.act",
        "blocks.0.fc2",
        "blocks.0",
        "",
    ]
    assert [m.error.ok for m in n.modules] == [True] * 6 + [False, False]
    assert n.cause.kind == ROUNDING and n.cause.fix == "torch._inductor.config.emulate_precision_casts = True"
    # the program draws no random numbers: no fallback_random run; precision casts: eager's output
    assert [(t.name, t.ok, t.max_abs) for t in n.trials] == [("emulate_precision_casts", True, 0.0)]
    # the first kernel to diverge: measured on the CPU from the wrapper's kernel calls, run as
    # the program compiles it and with precision casts; the C++ kernel that fuses the first
    # residual add into the second LayerNorm, as torch's output code defines and calls it
    (code,) = [p for meta, p in raw.records if "inductor_output_code" in meta]
    calls = re.findall(r"^\s+(cpp_fused_\w+)\(", code, re.M)
    assert n.first_kernel == "cpp_fused_add_native_layer_norm_view_1" and n.first_kernel in calls
    assert calls.index(n.first_kernel) == 1  # the one before it (the first LayerNorm) agrees
    assert not n.kernel_error.ok and n.kernel_error.name.startswith(n.first_kernel + " buf")
    assert n.runs == 11 and lines[0] == "numerics: run 1/40: compiled as the program compiles it"
    assert (
        lines[8] == "numerics: run 9/40: compiled with torch._inductor.config.emulate_precision_casts = True"
    )
    assert lines[-1] == (
        "numerics: run 11/40: kernels with emulate_precision_casts = True (the wrapper's kernel calls)"
    )


@pytest.mark.slow
def test_a_module_search_cut_short_by_max_runs_says_where_it_stopped():
    torch.manual_seed(0)
    model = Net().to(torch.bfloat16).eval()
    x = torch.randn(4, 8, 32, dtype=torch.bfloat16)
    with torch.no_grad():
        n = compiler.numerics(model, x, max_runs=3, progress=False, classify=False)
    assert n.runs == 3 and n.first_module == "blocks.0" and n.cause is None
    assert n.not_narrowed == (
        "not narrowed below 'blocks.0': the bound on runs (max_runs=3) was reached before 'blocks.0.proj' was compiled",
    )


def _relu_program(x):
    return torch.relu(x) * 2 + 1


@pytest.mark.slow
def test_a_lowering_made_wrong_by_a_config_flip_is_named_as_torchs_bisector_names_it():
    from torch._inductor.compiler_bisector import CompilerBisector

    x = torch.randn(64)
    bug = {"cpp.inject_relu_bug_TESTING_ONLY": "accuracy"}  # Inductor's own switch: relu made wrong
    lines: list[str] = []
    with inductor_config.patch(bug):
        n = compiler.numerics(_relu_program, x, progress=lines.append)

        def check() -> bool:  # torch's bisector, called directly, on the same check
            torch.compiler.reset()
            return torch.allclose(torch.compile(_relu_program)(x), _relu_program(x), rtol=1e-5, atol=1e-5)

        theirs = CompilerBisector.do_bisect(check)
    assert (theirs.backend, theirs.subsystem) == ("inductor", "lowerings")
    c = n.cause
    assert c.kind == INDUCTOR and n.modules == () and n.not_narrowed == ()  # a plain function: no modules
    assert (c.backend, c.subsystem, c.bisect_number, c.debug_info) == (
        theirs.backend,
        theirs.subsystem,
        theirs.bisect_number,
        theirs.debug_info,
    )
    assert (
        c.words
        == f"torch's bisector: inductor - lowerings, application {theirs.bisect_number} (Inductor's lowering of relu)"
    )
    assert [(t.name, t.ok) for t in n.trials] == [
        ("emulate_precision_casts", False),
        ("aot_eager", True),
        ("aot_eager_decomp_partition", True),
    ]
    steps = [line for line in lines if ": bisecting: " in line]
    assert len(steps) == n.runs - 4 and any("subsystem lowerings, range [0, " in line for line in steps)


def _dropout_program(x):
    return torch.nn.functional.dropout(x, p=0.5, training=True) * 3


@pytest.mark.slow
def test_dropout_draws_differently_and_agrees_under_fallback_random():
    x = torch.randn(256)
    torch.manual_seed(1)
    n = compiler.numerics(_dropout_program, x, progress=False)
    assert n.cause.kind == RANDOM and n.cause.fix == "torch._inductor.config.fallback_random = True"
    assert [(t.name, t.ok, t.max_abs) for t in n.trials] == [("fallback_random", True, 0.0)]
    # the kernel search's two runs: fallback_random draws through eager's op, outside the
    # fused kernel, so the kernels themselves differ and no pairing of them is made
    assert (n.runs, n.not_narrowed) == (
        4,
        (
            "the first diverging kernel: the fix changes which kernels run from launch 1 "
            "(cpp_fused_mul_native_dropout_0 against cpp_fused_mul_0)",
        ),
    )
    # torch's own: from one seed, fallback_random draws what eager draws; without it, not
    torch.manual_seed(1)
    eager = _dropout_program(x)
    torch.manual_seed(1)
    assert torch.equal(_fresh(_dropout_program, x, fallback_random=True), eager)
    torch.manual_seed(1)
    assert not torch.equal(_fresh(_dropout_program, x), eager)


@pytest.mark.slow
def test_an_adamw_training_step_names_the_first_step_that_crosses_the_tolerance():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 1))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    x, y = torch.randn(64, 16), torch.randn(64, 1)

    def step(x, y):
        opt.zero_grad()
        out = model(x)
        # centred: the last bias's gradient is zero but for rounding, which AdamW's normalised
        # update (m / sqrt(v)) turns into a step of about lr either way
        loss = torch.nn.functional.mse_loss(out - out.mean(), y - y.mean())
        loss.backward()
        opt.step()
        return loss

    before = [p.detach().clone() for p in model.parameters()]
    n = compiler.numerics(step, x, y, steps=4, progress=False)
    assert all(torch.equal(p, b) for p, b in zip(model.parameters(), before))  # put back
    # the test's own: eager four steps, then compiled four steps, from the same start
    state = {k: v.clone() for k, v in model.state_dict().items()}

    def run(fn):
        model.load_state_dict(state)
        opt.state.clear()
        out = []
        for _ in range(4):
            loss = fn(x, y).detach().clone()
            out.append((loss, [p.detach().clone() for p in model.parameters()]))
        return out

    eager = run(step)
    torch.compiler.reset()
    compiled = run(torch.compile(step))
    model.load_state_dict(state)
    opt.state.clear()
    crossed = [
        not torch.allclose(cl, el, rtol=1e-5, atol=1e-5)
        or any(not torch.allclose(c, e, rtol=1e-5, atol=1e-5) for c, e in zip(cp, ep))
        for (el, ep), (cl, cp) in zip(eager, compiled)
    ]
    assert [not s.ok for s in n.steps] == crossed
    assert n.first_step == crossed.index(True) + 1 == 1  # the first step already
    # the last Linear's bias: eager's and compiled's rounding noise stepped apart by AdamW
    assert n.steps[0].worst.name == "model.2.bias" and n.steps[0].worst.max_abs > 1e-3
    assert n.steps[0].loss.name == "step 1 loss"


@pytest.mark.slow
def test_cli_numerics_runs_the_program_and_prints_the_view(tmp_path, capsys, monkeypatch):
    prog = tmp_path / "prog.py"
    prog.write_text(
        "import torch\n"
        "f = torch.compile(lambda x: torch.nn.functional.dropout(x, 0.5, training=True) * 3)\n"
        "torch.manual_seed(0)\n"
        "print('sum', f(torch.ones(64)).shape)\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    assert cli.main(["numerics", "--json", "r.json", "prog.py"]) == 0
    out = capsys.readouterr()
    assert "sum torch.Size([64])" in out.out  # the program's own output, as it is
    assert "cause: random numbers drawn differently" in out.out
    assert "numerics: run 2/40: compiled with torch._inductor.config.fallback_random = True" in out.err
    (n,) = compiler.load(tmp_path / "r.json").numerics
    assert n.name == "<lambda>" and n.cause.kind == RANDOM and n.compile_ids == ("0/0",)
    assert numerics_text(compiler.load(tmp_path / "r.json")).startswith(
        "<lambda>: compiled diverges from eager"
    )


@pytest.mark.slow
def test_compile_magic_numerics_compares_the_cell():
    ip = pytest.importorskip("IPython.testing.globalipapp").get_ipython()
    ip.run_line_magic("load_ext", "explorer")
    ip.run_cell("import torch\nv = torch.randn(128)")
    ip.run_cell_magic("compile", "--numerics", "w = torch.nn.functional.dropout(v, 0.5, training=True) * 3")
    assert ip.user_ns["w"].shape == (128,)  # the cell as it ran, written back
    (n,) = ip.user_ns["_pt2_report"].numerics
    # the cell's function returns (its last value, None here; {"w": w}): w is its second output
    assert (n.name, n.cause.kind, [o.name for o in n.outputs]) == ("the cell", RANDOM, ["output 1"])
    assert [(t.name, t.ok) for t in n.trials] == [("fallback_random", True)]


def test_the_view_puts_the_first_modules_kernels_beside_the_eager_ops_they_replaced():
    """On a report recorded on an H100 (tests/fixtures/reports/README.md): the forward kernels
    holding the first diverging module's ops, by the report's kernel-to-node provenance."""
    from pathlib import Path

    r = compiler.load(Path(__file__).parent / "fixtures" / "reports" / "h100-torch211-gpu-block.json.gz")
    e = TensorError("output", "torch.bfloat16", (8,), 0.03, 0.01, 1.6e-2, 1e-5, False)
    k = "triton_per_fused_native_layer_norm_0"
    kernel_error = TensorError(f"{k} out_ptr0", "torch.bfloat16", (8,), 0.0078, 0.01, 1.6e-2, 1e-5, False)
    modules = (ModuleError("norm", "LayerNorm", 0, e), ModuleError("", "Block", 3, e))
    r.numerics = (
        Numerics(
            "Block",
            "",
            outputs=(e,),
            modules=modules,
            first_module="norm",
            compile_ids=("0/0",),
            first_kernel=k,
            kernel_error=kernel_error,
        ),
    )
    text = numerics_text(r)
    assert f"first kernel to diverge (measured, DebugMode): {k}: max abs 0.0078" in text
    tail = text[text.index("Kernels holding its ops") :].splitlines()
    assert tail[1:3] == [  # the norm's forward kernel alone: the backward's are not the outputs'
        f"  [0/0] {k}: torch.nn.functional.layer_norm  ← first to diverge",
        "      examples/gpu_block.py:19  h = nn.functional.gelu(self.up(self.norm(x)))",
    ]
    assert tail[3] == "compiled runs: 0 of at most 0"

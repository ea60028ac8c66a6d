"""Recordings of ``compiler.numerics`` on the GPU (needs CUDA; run from the repository root):

    python notebooks/data/make_numerics_data.py OUT_DIR [CASE ...]

Each case records the program's own compiled call (its compiles, kernels and their provenance)
and then runs ``compiler.numerics`` on it into the same report, written as
``OUT_DIR/h200-numerics-CASE.json.gz``; it prints the Numerics view today's code gives it:

- ``bf16``: two pre-LayerNorm residual blocks in bfloat16 under ``torch.no_grad()``. Inductor
  fuses the first residual add into the second LayerNorm and keeps the sum in fp32: rounding
  inside a fusion; the first diverging Triton kernel measured through DebugMode.
- ``dropout``: a training-mode block with dropout: random numbers drawn differently.
- ``relu-bug``: ``triton.inject_relu_bug_TESTING_ONLY = "accuracy"`` (a switch Inductor keeps
  for its own tests) makes the Triton relu wrong: torch's bisector names the lowering.
- ``adamw``: four AdamW training steps: the first step whose parameters cross the tolerance.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(ROOT := Path(__file__).resolve().parents[2]))  # reports name files from ROOT

import torch  # noqa: E402
from torch import nn  # noqa: E402

import compiler._viewer  # noqa: E402  (binds compiler too)
import explorer  # noqa: E402
from tests.test_numerics import Net  # noqa: E402  (the CPU tests' model)


def _record(fn, *args, context=None):
    """The program: its compiled call under its context, recorded."""
    compiled = torch.compile(fn)
    with compiler.recording() as rec:
        with context or torch.no_grad():
            compiled(*args)
    return rec.report, [c.id for c in rec.report.compiles]


def bf16():
    torch.manual_seed(0)
    model = Net(64).to("cuda", torch.bfloat16).eval()
    x = torch.randn(8, 16, 64, device="cuda", dtype=torch.bfloat16)
    report, ids = _record(model, x)
    with torch.no_grad():
        compiler.numerics(model, x, report=report, compile_ids=ids)
    return report


class DropBlock(nn.Module):
    def __init__(self, d: int = 64):
        super().__init__()
        self.fc, self.drop = nn.Linear(d, d), nn.Dropout(0.1)

    def forward(self, x):
        return self.drop(torch.relu(self.fc(x))) + x


def dropout():
    torch.manual_seed(0)
    model = DropBlock().cuda().train()
    x = torch.randn(32, 64, device="cuda")
    report, ids = _record(model, x, context=torch.enable_grad())
    compiler.numerics(model, x, report=report, compile_ids=ids)
    return report


def program(x):
    return torch.relu(x) * 2 + 1


def relu_bug():
    x = torch.randn(1024, device="cuda")
    with torch._inductor.config.patch({"triton.inject_relu_bug_TESTING_ONLY": "accuracy"}):
        report, ids = _record(program, x)
        compiler.numerics(program, x, report=report, compile_ids=ids, max_runs=30)
    return report


def adamw():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 1)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    x, y = torch.randn(64, 16, device="cuda"), torch.randn(64, 1, device="cuda")

    def step(x, y):
        opt.zero_grad()
        out = model(x)
        loss = torch.nn.functional.mse_loss(out - out.mean(), y - y.mean())
        loss.backward()
        opt.step()
        return loss

    state = {k: v.clone() for k, v in model.state_dict().items()}
    report, ids = _record(step, x, y, context=torch.enable_grad())
    model.load_state_dict(state)
    opt.state.clear()
    compiler.numerics(step, x, y, steps=4, report=report, compile_ids=ids)
    return report


CASES = {"bf16": bf16, "dropout": dropout, "relu-bug": relu_bug, "adamw": adamw}


def main(argv: list[str]) -> int:
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name in argv[1:] or list(CASES):
        torch.compiler.reset()
        try:
            report = CASES[name]()
        except Exception:
            traceback.print_exc()
            failed += 1
            continue
        path = out / f"h200-numerics-{name}.json.gz"
        compiler.relative_paths(report, ROOT).to_json(path)
        print(f"== {name}: {path}")
        print(explorer.text(report, "numerics"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

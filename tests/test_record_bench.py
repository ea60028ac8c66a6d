"""`pt2-explorer record --bench SCRIPT`: after the program, each compiled function is
benchmarked on its last call against eager, a training step with its state (parameters,
optimizer, grads) restored around each call, and the report gets the Benchmark and Why tabs,
on CPU too. The program's own output is what plain python prints. A frame Dynamo gave up on
is the verdict's first word, checked against the report's own record of the failed compile.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

import compiler
import explorer
from tests._torch_trace import REGISTRY

# compiles a training step with Inductor's C++ backend, in fresh processes
pytestmark = [pytest.mark.slow, pytest.mark.child]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TRAIN = """\
import torch
from torch import nn

torch.manual_seed(0)
torch.set_num_threads(1)
model = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.1)


@torch.compile
def train_step(x, y):
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss


infer = torch.compile(model)
for i in range(2):
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    print(f"step {i}: loss {train_step(x, y).item():.4f}")
with torch.no_grad():
    print("eval", tuple(infer(torch.randn(2, 16)).shape))
"""

FALLBACK = """\
import torch
from torch import nn

torch.manual_seed(0)
torch.set_num_threads(1)


class Checked(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(16, 16) for _ in range(3))

    def forward(self, x):
        for b in self.blocks:
            x = torch.relu(b(x))
            if x.abs().max().item() > 1e6:  # CHECK
                x = x / 2
        return x


model = torch.compile(Checked())
with torch.no_grad():
    for _ in range(2):
        out = model(torch.randn(4, 16))
print("out", tuple(out.shape))
"""


def _run(tmp_path, name: str, source: str, *tool: str) -> subprocess.CompletedProcess:
    script = tmp_path / name
    script.write_text(source)
    env = {**os.environ, "PYTHONPATH": ROOT}
    cmd = [sys.executable, *(["-m", "explorer", *tool] if tool else []), str(script)]
    return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)


def test_record_bench_times_a_training_step_and_a_module(tmp_path):
    plain = _run(tmp_path, "train.py", TRAIN)
    done = _run(
        tmp_path, "train.py", TRAIN, "record", "--bench", "-q", "--json", "r.json", "--html", "r.html"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == plain.stdout  # the program's own lines, as under python
    r = compiler.load(tmp_path / "r.json")
    steps = {b.name: b for b in r.benchmarks}
    assert list(steps) == ["train_step", "Sequential"]
    step, infer = steps["train_step"], steps["Sequential"]
    # the training step changes the parameters and their grads: restored around each call
    assert step.state == "restored" and step.accuracy.ok
    params = {f"model.{i}.{w}" for i in (0, 2) for w in ("weight", "bias")}
    assert params <= set(step.mutated), step.mutated
    assert (infer.state, infer.mutated, infer.accuracy.ok) == ("unchanged", (), True)
    # each function's compile time is its own: the compiles that began during its calls
    # (torch's compilation_metrics start_time_us); `infer` compiled Sequential's forward on its
    # first call (the frame torch names "forward", or "Sequential.forward" since 2.12), the
    # training step all the others (its own frame, its resumes, the optimizer's)
    forward = [c for c in r.compiles if c.name in ("forward", "Sequential.forward")]
    rest = [c for c in r.compiles if c not in forward]
    assert len(forward) == 1 and len(rest) >= 2
    assert infer.compile_ids == (forward[0].id,)
    assert step.compile_ids == tuple(c.id for c in rest if c.status == "ok")
    assert infer.compile_time_s == pytest.approx(forward[0].compile_time_s)
    assert step.compile_time_s == pytest.approx(sum(c.compile_time_s for c in rest if c.status == "ok"))
    assert forward[0].compile_time_s == forward[0].metrics["entire_frame_compile_time_s"]
    # stderr: torch's own log lines as under python, then (-q: no progress) what was written
    torch_logs = re.compile(r"^[IWE]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ ")
    assert len([x for x in plain.stderr.splitlines() if torch_logs.match(x)]) == len(
        [x for x in done.stderr.splitlines() if torch_logs.match(x)]
    )
    assert [x for x in done.stderr.splitlines() if not torch_logs.match(x)] == [
        "pt2-explorer: wrote r.json, r.html"
    ]
    # a CPU recording with benchmarks has the Benchmark and the Why tabs, the speedup in the
    # same words in both
    page = (tmp_path / "r.html").read_text()
    assert 'data-tab="tab-bench"' in page and 'data-tab="tab-why"' in page
    for b in (step, infer):
        v = compiler.analysis.verdict(r, b)
        assert v.headline.startswith(b.speedup_words + ": ")
        assert b.speedup_words in explorer.text(r, "bench") and v.headline in explorer.text(r, "why")


def test_record_bench_names_an_eager_fallback_first_on_cpu(tmp_path):
    done = _run(tmp_path, "checked.py", FALLBACK, "record", "--bench", "--json", "r.json")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("out (4, 16)\n")  # the program's line, then the summary
    r = compiler.load(tmp_path / "r.json")
    line = FALLBACK.splitlines().index(next(x for x in FALLBACK.splitlines() if x.endswith("# CHECK"))) + 1
    # torch's record: the frame of Checked.forward failed in capture at the .item() line
    (failed,) = [c for c in r.compiles if c.status == "failed"]
    (frame,) = [f for f in r.frames if f.id == failed.frame]
    (brk,) = r.graph_breaks
    assert (frame.name, frame.compiles, failed.failed_stage) == ("forward", 0, "capture")
    assert (os.path.basename(brk.filename), brk.line, brk.gb_id) == ("checked.py", line, "GB0124")
    (b,) = r.benchmarks
    v = compiler.analysis.verdict(r, b)
    assert v.main == "fallback"
    fb = next(c for c in v.causes if c.key == "fallback")
    # the reason is the break's registered type (torch's graph-break registry) and its id
    (gb_type,) = {e["Gb_type"] for e in REGISTRY["GB0124"]}
    assert fb.title == f"eager fallback: {gb_type} (GB0124) in forward"
    assert f"forward (checked.py:{frame.line}): [{failed.id}] failed in capture: {gb_type} (GB0124): " in (
        "\n".join(fb.evidence)
    )
    assert fb.fix == "torch._dynamo.config.capture_scalar_outputs = True"
    assert v.headline.startswith(f"{b.speedup_words}: {fb.title}: ")
    # the terminal summary ends with the verdict in one line: the speedup in words, the first
    # cause, and its fix, before the report's path
    why = [x for x in done.stdout.splitlines() if x.startswith("why ")]
    assert why == [f"why Checked: {v.headline}; fix: torch._dynamo.config.capture_scalar_outputs = True"]
    assert done.stdout.splitlines()[-2:] == [why[0], "report: r.json"]

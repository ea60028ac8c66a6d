"""Recordings of programs whose slowness has one cause known by construction (needs CUDA; run
from the repository root):

    python notebooks/data/make_why_causes.py OUT_DIR [CASE ...]

Each case is a report (``compiler.load``) with one benchmark (eager against compiled, the
kernel profile, the timeline), written as ``OUT_DIR/h100-cause-CASE.json.gz``; it prints the
verdict today's code gives it, so a change to the verdict can be held against the cause the
program was built to have:

- ``fallback``: a forward that loops over blocks and checks ``x.abs().max().item()`` inside
  the loop. Dynamo gives up on the frame ("graph break in for loop"), so the compiled call runs
  eagerly: no compiled code at all. ``fallback-ro``: the same under ``mode="reduce-overhead"``.
- ``item``: the shape of aimnetcentral#109: ``.item()`` on a tensor the next step depends on,
  outside any loop, several times a call (a graph break at each, Python between graphs).
  ``item-fixed``: the same with ``torch._dynamo.config.capture_scalar_outputs=True``.
- ``recompile``: a function called on a new batch size each call until the recompile limit;
  the benchmark times the last one.
- ``cudagraph-skip``: ``mode="reduce-overhead"`` on a function that mutates an input in place,
  which CUDA graphs skip (torch says why).
- ``sync``: a host↔device copy inside the compiled call (``.cpu()`` of an intermediate).
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(ROOT := Path(__file__).resolve().parents[2]))  # reports name files from ROOT

import torch  # noqa: E402
from torch import nn  # noqa: E402

import compiler._viewer  # noqa: E402  (binds compiler too)


class Block(nn.Module):
    def __init__(self, d: int = 256) -> None:
        super().__init__()
        self.lin = nn.Linear(d, d)

    def forward(self, x):
        return torch.nn.functional.gelu(self.lin(x)) + x


class Checked(nn.Module):
    """Blocks in a loop, each checked on the host: a break inside the loop, so Dynamo skips the
    frame and the whole forward runs eagerly."""

    def __init__(self, d: int = 256, n: int = 4) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(Block(d) for _ in range(n))

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
            if x.abs().max().item() > 1e6:
                x = x / 2
        return x


class Scaled(nn.Module):
    """aimnetcentral#109's shape: a scalar read on the host between stages, outside a loop."""

    def __init__(self, d: int = 256) -> None:
        super().__init__()
        self.a, self.b, self.c = Block(d), Block(d), Block(d)

    def forward(self, x):
        x = self.a(x)
        s = x.norm().item()
        x = self.b(x / (1.0 + s))
        t = x.mean().item()
        return self.c(x - t)


def _bench(report, model, compiled, args, reps: int):
    compiler._viewer.remember_benchmark_subject(report, model, compiled, args, {})
    return compiler.benchmark(report, reps=reps, progress=False)


def _record(model, x, reps: int = 30, mode=None):
    torch.set_float32_matmul_precision("high")
    with torch.inference_mode():
        compiled = torch.compile(model, mode=mode)
        with compiler.recording() as rec:
            for _ in range(3):  # reduce-overhead records its CUDA graph on a later call
                compiled(x)
        _bench(rec.report, model, compiled, (x,), reps)
    return rec.report


def fallback(mode=None):
    torch.manual_seed(0)
    return _record(Checked().cuda().eval(), torch.randn(64, 256, device="cuda"), mode=mode)


def item(fixed: bool = False):
    torch.manual_seed(0)
    torch._dynamo.reset()
    with torch._dynamo.config.patch(capture_scalar_outputs=fixed):
        return _record(Scaled().cuda().eval(), torch.randn(64, 256, device="cuda"))


def recompile():
    torch.manual_seed(0)
    torch._dynamo.reset()
    model = Block().cuda().eval()
    compiled = torch.compile(model, dynamic=False)
    with torch.inference_mode(), torch._dynamo.config.patch(automatic_dynamic_shapes=False):
        with compiler.recording() as rec:
            for n in range(1, 10):
                x = torch.randn(n, 256, device="cuda")
                compiled(x)
        _bench(rec.report, model, compiled, (x,), 30)
    return rec.report


def cudagraph_skip():
    torch.manual_seed(0)
    torch._dynamo.reset()

    def step(x, buf):
        buf.add_(x)  # an input mutated in place: CUDA graphs skip the graph
        return torch.relu(buf) * 2

    x, buf = torch.randn(1024, device="cuda"), torch.zeros(1024, device="cuda")
    compiled = torch.compile(step, mode="reduce-overhead")
    with torch.inference_mode():
        with compiler.recording() as rec:
            for _ in range(3):
                compiled(x, buf)
        compiler._viewer.remember_benchmark_subject(rec.report, step, compiled, (x, buf), {})
        compiler.benchmark(rec.report, reps=30, progress=False, mutates=True)
    return rec.report


def sync():
    torch.manual_seed(0)
    torch._dynamo.reset()

    def f(x):
        y = torch.relu(x) + 1
        host = y.sum().cpu()  # a copy to the host inside the call
        return y * host.to(x.device)

    x = torch.randn(4096, device="cuda")
    compiled = torch.compile(f)
    with torch.inference_mode():
        with compiler.recording() as rec:
            compiled(x)
        _bench(rec.report, f, compiled, (x,), 30)
    return rec.report


CASES = {
    "fallback": lambda: fallback(),
    "fallback-ro": lambda: fallback("reduce-overhead"),
    "item": lambda: item(False),
    "item-fixed": lambda: item(True),
    "recompile": recompile,
    "cudagraph-skip": cudagraph_skip,
    "sync": sync,
}


def show(name: str, report) -> None:
    b = report.benchmarks[-1]
    v = compiler.analysis.verdict(report, b)
    e = b.eager.median_ms if b.eager else float("nan")
    c = b.compiled.median_ms if b.compiled else float("nan")
    print(f"== {name}: eager {e:.4f} ms, compiled {c:.4f} ms, mode {b.config.mode!r}")
    print(
        f"   compiles {len(report.compiles)}, breaks {len(report.graph_breaks)}, "
        f"recompiles {len(report.recompiles)}, kernels {len(report.kernels)}, failed "
        f"{[c.id for c in report.compiles if c.status != 'ok']}"
    )
    print(f"   verdict [{v.main}]: {v.headline}")
    for cause in v.causes:
        share = "" if cause.share is None else f"{cause.share:6.1%}"
        print(f"   {share:>7} {cause.title}: {'; '.join(cause.evidence)[:200]}")
    for k in b.kernels[:6]:
        print(f"     kernel {k.name[:70]} {k.kind} {k.per_call_ms:.4f} ms")


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "notebooks/data")
    out.mkdir(parents=True, exist_ok=True)
    names = sys.argv[2:] or list(CASES)
    failed = 0
    for name in names:
        try:  # one case's failure leaves the others' files
            torch._dynamo.reset()
            report = CASES[name]()
            show(name, report)
            compiler.relative_paths(report, ROOT).to_json(out / f"h100-cause-{name}.json.gz")
        except Exception:
            traceback.print_exc()
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

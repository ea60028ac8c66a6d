"""Make the "why isn't compiled faster" recordings in notebooks/data (needs CUDA; run from the
repository root):

    python notebooks/data/make_why_data.py OUT_DIR

Three cases whose cause is known by construction, each a report (``compiler.load``) with one
benchmark (launches, timeline, eager by module, matmul settings):

- ``h100-why-gemm.json.gz``: the MLP block of make_gpu_data.py in fp32 with TF32 off: two
  cuBLAS fp32 GEMMs are nearly all of the time, the same in both arms. Recorded with
  ``triton_ir=True``: every Triton kernel's TTIR, TTGIR, LLIR, PTX (SASS where nvdisasm is
  present), registers and spills.
- ``h100-why-launch.json.gz``: a stack of small layers on a small batch: each kernel runs for
  microseconds, the host's launches take longer, CUDA graphs are off.
- ``h100-why-break.json.gz``: a loop over layers that calls Python compile cannot take over
  (``torch._dynamo.disable``) between layers: one graph per layer, Python between them.

Each prints its verdict. tests/test_gpu_why.py runs the same cases with fewer repetitions.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(ROOT := Path(__file__).resolve().parents[2]))  # reports name files from ROOT
sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402
from make_gpu_data import MLPBlock  # noqa: E402  the block of h100-bench-mlp.json.gz
from torch import nn  # noqa: E402

import compiler._viewer  # noqa: E402  (binds compiler too)


class Stack(nn.Module):
    """Small layers, each a few kernels of microseconds."""

    def __init__(self, d: int = 64, layers: int = 8) -> None:
        super().__init__()
        self.layers = nn.ModuleList(MLPBlock(d) for _ in range(layers))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


@torch._dynamo.disable
def route(i: int) -> int:
    """Host-side Python between layers (a router, a logger, a tokenizer step...)."""
    total = 0
    for j in range(20000):
        total += j * j
    return total % (i + 2)


class Routed(Stack):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for i, layer in enumerate(self.layers):
            x = layer(x)
            route(i)  # a graph break in the hot loop
        return x


def _record(model, x, reps: int, triton_ir: bool = False):
    with torch.inference_mode(), torch._inductor.config.patch(benchmark_kernel=True):
        compiled = torch.compile(model)
        with compiler.recording(triton_ir=triton_ir) as rec:
            compiled(x)
        report = rec.report
        compiler._viewer.remember_benchmark_subject(report, model, compiled, (x,), {})
        compiler.benchmark(report, reps=reps, progress=False)
    return report


def gemm_case(reps: int = 20, triton_ir: bool = True):
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    return _record(MLPBlock().cuda().eval(), torch.randn(16, 256, 1024, device="cuda"), reps, triton_ir)


def launch_case(reps: int = 50):
    torch.manual_seed(0)
    torch.set_float32_matmul_precision("high")
    return _record(Stack().cuda().eval(), torch.randn(2, 4, 64, device="cuda"), reps)


def break_case(reps: int = 20):
    torch.manual_seed(0)
    torch.set_float32_matmul_precision("high")
    return _record(Routed(layers=4).cuda().eval(), torch.randn(32, 64, 64, device="cuda"), reps)


def show(report) -> None:
    b = report.benchmarks[-1]
    v = compiler.analysis.verdict(report, b)
    print(f"{b.name}: eager {b.eager.median_ms:.4f} ms, compiled {b.compiled.median_ms:.4f} ms")
    print(f"  verdict [{v.main}]: {v.headline}")
    for c in v.causes:
        share = "" if c.share is None else f"{c.share:6.1%}"
        print(f"  {share:>7} {c.title}: {'; '.join(c.evidence)[:160]}")
    costs = compiler.analysis.kernel_costs(report, b)
    print(
        f"  kernels joined: {sum(1 for c in costs if c.nodes)}/{len(costs)} with nodes, {len(b.launches)} launch rows"
    )
    for k in report.kernels:
        for x in k.binaries:
            if x.chosen:
                print(f"  {k.name}: regs {x.n_regs} spills {x.n_spills} shared {x.shared} IR {sorted(x.ir)}")


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "notebooks/data")
    out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name, make in (("gemm", gemm_case), ("launch", launch_case), ("break", break_case)):
        try:  # one case's failure leaves the others' files
            report = make()
            show(report)
            compiler.relative_paths(report, ROOT).to_json(out / f"h100-why-{name}.json.gz")
        except Exception:
            import traceback

            traceback.print_exc()
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

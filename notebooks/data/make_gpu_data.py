"""Make the GPU recordings in notebooks/data (needs CUDA; run from the repository root):

    python notebooks/data/make_gpu_data.py OUT_DIR [--no-modes]

writes OUT_DIR/h100-bench-mlp.json.gz (one recording of a small MLP block with its
benchmark: Triton kernels, per-kernel profile with bytes moved, timings) and
OUT_DIR/h100-modes-mlp.json.gz (``compiler.compare_modes`` on a small batch, TF32 on:
default, reduce-overhead, max-autotune, dynamic, and default under bf16 autocast). The compile runs with
``torch._inductor.config.benchmark_kernel=True`` so each Triton kernel carries Inductor's
``kernel_num_gb`` (bytes moved), which gives achieved bandwidth per kernel.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(ROOT := Path(__file__).resolve().parents[2]))  # reports name files from ROOT

import torch  # noqa: E402
from torch import nn  # noqa: E402

import compiler  # noqa: E402


class MLPBlock(nn.Module):
    def __init__(self, d: int = 1024) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.up = nn.Linear(d, 4 * d)
        self.down = nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.down(nn.functional.gelu(self.up(self.norm(x))))


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "notebooks/data")
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    model = MLPBlock().cuda().eval()
    x = torch.randn(64, 256, 1024, device="cuda")
    with torch.inference_mode(), torch._inductor.config.patch(benchmark_kernel=True):
        _, report = compiler.record(model, x)
        b = compiler.benchmark(report, reps=50, progress=False)
    print(
        f"bench: eager {b.eager.median_ms:.3f} ms, compiled {b.compiled.median_ms:.3f} ms, x{b.speedup:.2f}"
    )
    for k in b.kernels:
        print(f"  {k.name:60s} {k.kind:7s} {k.per_call_ms:.4f} ms {k.share:6.1%} {k.gb_per_s or 0:8.0f} GB/s")
    compiler.relative_paths(report, ROOT).to_json(out / "h100-bench-mlp.json")
    _gzip(out / "h100-bench-mlp.json")
    if "--no-modes" not in sys.argv:
        # a small batch: launch overhead matters here, which is where modes differ
        torch.set_float32_matmul_precision("high")
        xs = torch.randn(8, 32, 1024, device="cuda")
        with torch.inference_mode():
            fp32 = compiler.compare_modes(
                model, xs, modes=("default", "reduce-overhead"), max_autotune=True, reps=100, progress=False
            )
            extra = compiler.compare_modes(
                model,
                xs,
                modes=("default",),
                dynamic=(True,),
                autocast=(None, torch.bfloat16),
                reps=100,
                progress=False,
            )
            cmp = compiler.types.ModeComparison(fp32.rows + extra.rows, "MLPBlock, 8×32×1024")
        for r in cmp.rows:
            bb = r.benchmark
            print(
                r.label, r.skipped or r.error or f"x{bb.speedup:.2f} compiled {bb.compiled.median_ms:.3f} ms"
            )
        compiler.relative_paths(cmp, ROOT).save(out / "h100-modes-mlp.json.gz")
    return 0


def _gzip(path: Path) -> None:
    import gzip

    with open(path, "rb") as f, gzip.open(str(path) + ".gz", "wb", compresslevel=9) as g:
        g.write(f.read())
    path.unlink()


if __name__ == "__main__":
    sys.exit(main())

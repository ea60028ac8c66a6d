"""Make the CUDA-graph and cache recordings in notebooks/data (needs CUDA; run from the
repository root, with a fresh TORCHINDUCTOR_CACHE_DIR):

    TORCHINDUCTOR_CACHE_DIR=$(mktemp -d) python notebooks/data/make_cudagraph_data.py OUT_DIR

writes
* OUT_DIR/h100-cudagraphs.json.gz: mode="reduce-overhead" done wrong and right: a step that
  mutates its input (CUDA graphs skipped), the same step without the mutation (used), a
  CPU tensor in the graph (skipped), and a function called at many sizes with dynamic=True
  (a CUDA graph per size, torch's "distinct sizes" warning);
* OUT_DIR/h100-caches.json.gz: the same function compiled cold, then after
  ``torch._dynamo.reset()`` warm (FX-graph and AOTAutograd cache hits), with the caches kept;
* OUT_DIR/h100-caches-changed.json.gz: the warm start again with one Inductor option changed
  (a miss, and the key component that differs).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(ROOT := Path(__file__).resolve().parents[2]))  # reports name files from ROOT

import torch  # noqa: E402

import compiler  # noqa: E402


def step_mutating(x, w):
    x.mul_(0.5)  # the input is changed in place: CUDA graphs would replay a stale copy
    return torch.relu(x @ w).sum()


def step_pure(x, w):
    x = x * 0.5  # the fix: a new tensor, the input untouched
    return torch.relu(x @ w).sum()


def with_cpu_scale(x, scale):
    return torch.relu(x * scale.to(x.device)).sum()


def layer(x, w):
    return torch.nn.functional.gelu(x @ w)


def cudagraphs(out: Path) -> None:
    w = torch.randn(256, 256, device="cuda")
    with compiler.recording() as rec:
        f = torch.compile(step_mutating, mode="reduce-overhead")
        for _ in range(3):
            f(torch.randn(64, 256, device="cuda"), w)
        g = torch.compile(step_pure, mode="reduce-overhead")
        x = torch.randn(64, 256, device="cuda")
        for _ in range(3):
            g(x, w)
        h = torch.compile(with_cpu_scale, mode="reduce-overhead")
        for _ in range(2):
            h(x, torch.rand(256))
        d = torch.compile(layer, mode="reduce-overhead", dynamic=True)
        with torch._inductor.config.patch({"triton.cudagraph_dynamic_shape_warn_limit": 4}):
            for n in (8, 16, 24, 32, 40, 48):
                for _ in range(2):
                    d(torch.randn(n, 256, device="cuda"), w)
    torch.cuda.synchronize()
    compiler.relative_paths(rec.report, ROOT).to_json(out / "h100-cudagraphs.json.gz")


def caches(out: Path) -> None:
    w = torch.randn(256, 256, device="cuda")
    x = torch.randn(64, 256, device="cuda")
    with compiler.recording(caches=True) as rec:
        torch.compile(layer)(x, w)  # cold: misses, the caches written
        torch._dynamo.reset()
        torch.compile(layer)(x, w)  # warm: hits
    compiler.relative_paths(rec.report, ROOT).to_json(out / "h100-caches.json.gz")
    torch._dynamo.reset()
    with torch._inductor.config.patch({"max_fusion_size": 32}), compiler.recording(caches=True) as rec:
        torch.compile(layer)(x, w)
    compiler.relative_paths(rec.report, ROOT).to_json(out / "h100-caches-changed.json.gz")


if __name__ == "__main__":
    dest = Path(sys.argv[1])
    dest.mkdir(parents=True, exist_ok=True)
    cudagraphs(dest)
    torch._dynamo.reset()
    caches(dest)
    for p in sorted(dest.glob("h100-*.json.gz")):
        r = compiler.load(str(p))
        print(
            p.name,
            [(c.id, c.config and c.config.mode, c.cudagraphs and c.cudagraphs.state) for c in r.compiles],
        )

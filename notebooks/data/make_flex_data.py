"""Make the FlexAttention recording (needs CUDA; run from the repository root):

    TORCH_TRACE=OUT_DIR/trace python notebooks/data/make_flex_data.py OUT_DIR

writes OUT_DIR/h100-flex-sliding-window.json.gz: one compiled FlexAttention call (causal
sliding-window mask_mod, a distance score_mod, 1x2x512x64, 128-wide blocks) recorded with
``compiler.recording()``; TORCH_TRACE writes torch's own structured trace of the same run
beside it (the oracle tests/test_flex.py reads). Prints the block mask's sparsity.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(ROOT := Path(__file__).resolve().parents[2]))  # reports name files from ROOT

import torch  # noqa: E402
from torch.nn.attention.flex_attention import create_block_mask, flex_attention  # noqa: E402

import compiler  # noqa: E402

WINDOW = 128


def sliding_window_causal(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & (q_idx - kv_idx <= WINDOW)


def distance_penalty(score, b, h, q_idx, kv_idx):
    return score - 0.01 * (q_idx - kv_idx)


def attention(q, k, v, block_mask):
    return flex_attention(q, k, v, score_mod=distance_penalty, block_mask=block_mask)


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "notebooks/data")
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, 512, 64, device="cuda") for _ in range(3))
    block_mask = create_block_mask(sliding_window_causal, 1, 1, 512, 512, device="cuda")
    print("sparsity", block_mask.sparsity(), "block_size", block_mask.BLOCK_SIZE)
    print(block_mask)
    with torch.no_grad():
        expected = attention(q, k, v, block_mask)
        with compiler.recording() as rec:
            got = torch.compile(attention)(q, k, v, block_mask)
    torch.cuda.synchronize()
    print("max abs diff vs eager", (got - expected).abs().max().item())
    report = rec.report
    for kern in report.kernels:
        print("kernel", kern.compile_id, kern.name, kern.language, kern.nodes, len(kern.source))
    compiler.relative_paths(report, ROOT).to_json(out / "h100-flex-sliding-window.json.gz")  # gzipped
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""FlexAttention recorded live on the GPU (`python -m pytest -m gpu tests/test_gpu_flex.py`):
the template kernel, the user's score_mod/mask_mod and the block grid, against torch's own
structured trace of the same compile. Skipped without CUDA."""

from __future__ import annotations

import inspect
import json

import pytest
import torch
from _torch_trace import RawTrace

import compiler

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU with Triton"),
]


def sliding_window_causal(b, h, q_idx, kv_idx):
    return (q_idx >= kv_idx) & (q_idx - kv_idx <= 64)


def relative_bias(score, b, h, q_idx, kv_idx):
    return score + 0.05 * (kv_idx - q_idx)


def test_flex_attention_live():
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    def attend(q, k, v, bm):
        return flex_attention(q, k, v, score_mod=relative_bias, block_mask=bm)

    torch._dynamo.reset()
    q, k, v = (torch.randn(1, 2, 256, 32, device="cuda") for _ in range(3))
    bm = create_block_mask(sliding_window_causal, 1, 1, 256, 256, device="cuda")
    with torch.no_grad():
        expected = attend(q, k, v, bm)
        with RawTrace() as raw, compiler.recording() as rec:
            got = torch.compile(attend)(q, k, v, bm)
    torch.testing.assert_close(got, expected, atol=1e-4, rtol=1e-4)
    (info,) = [
        json.loads(p) for m, p in raw.records if m.get("artifact", {}).get("name") == "triton_kernel_info"
    ]
    (call,) = compiler.analysis.flex_calls(rec.report)
    assert call.kernels == tuple(sorted(info)) and call.kernels[0].startswith(
        "triton_tem_fused_flex_attention"
    )
    assert (call.q_len, call.kv_len, call.block_size, call.block_grid) == (256, 256, (128, 128), (2, 2))
    for mod, fn in ((call.score_mod, relative_bias), (call.mask_mod, sliding_window_causal)):
        lines, start = inspect.getsourcelines(fn)
        assert (mod.function, mod.filename, mod.line) == (fn.__name__, __file__, start + 1)
        assert mod.source == "".join(lines).rstrip()
    s = compiler.analysis.flex_summary(bm)
    assert s.sparsity == bm.sparsity() and s.partial_blocks == tuple(bm.kv_num_blocks[0, 0].tolist())

"""``compiler.numerics`` on the GPU: the first Triton kernel whose output diverges, named
through torch's ``DebugMode`` kernel records, for a bf16 model whose difference is rounding
inside a fusion; checked against torch's own ``emulate_precision_casts`` run."""

from __future__ import annotations

import pytest
import torch
import torch._inductor.config as inductor_config

import compiler

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]


def test_bf16_blocks_name_the_first_diverging_triton_kernel():
    from tests.test_numerics import Net  # the CPU test's model, on the GPU

    torch.manual_seed(0)
    model = Net(64).to("cuda", torch.bfloat16).eval()
    x = torch.randn(8, 16, 64, device="cuda", dtype=torch.bfloat16)
    with torch.no_grad():
        n = compiler.numerics(model, x, progress=False)
        eager = model(x)
        torch.compiler.reset()
        with inductor_config.patch(emulate_precision_casts=True):
            emulated = torch.compile(model)(x)
    assert torch.allclose(emulated.float(), eager.float(), rtol=1.6e-2, atol=1e-5)  # torch's own
    assert n.cause.kind == "rounding inside a fusion" and n.first_module == "blocks.0"
    assert n.first_kernel is not None and n.first_kernel.startswith("triton_"), n.not_narrowed
    # the first residual add fused into the second LayerNorm: where eager rounds to bf16 between
    assert "add" in n.first_kernel and "layer_norm" in n.first_kernel, n.first_kernel
    assert n.kernel_error is not None and not n.kernel_error.ok

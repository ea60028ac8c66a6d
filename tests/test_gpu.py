"""GPU path: Triton kernels, triton_kernel_info, CUDA graphs, SDPA. Skipped without CUDA.

Run on a GPU machine with `python -m pytest -m gpu tests/test_gpu.py`.
"""

from __future__ import annotations

import inspect

import pytest
import torch

import compiler

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU with Triton"),
]


@pytest.fixture(autouse=True)
def _reset():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _line_of(fn, marker: str) -> int:
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, ln in enumerate(lines) if marker in ln)


def _gelu_sum(x, w):
    return torch.nn.functional.gelu(x @ w).sum(-1)


def test_triton_kernels_with_metadata_and_source_nodes():
    x = torch.randn(32, 128, device="cuda")
    w = torch.randn(128, 128, device="cuda")
    expected = torch.compile(_gelu_sum)(x, w)
    torch._dynamo.reset()
    with compiler.recording(fusion_ir=True) as rec:
        got = torch.compile(_gelu_sum)(x, w)
    torch.testing.assert_close(got, expected)
    r = rec.report
    assert r.device == "cuda"
    assert [c.status for c in r.compiles] == ["ok"]
    assert r.kernels, "no kernels recorded"
    assert {k.language for k in r.kernels} == {"triton"}
    fused = [k for k in r.kernels if "gelu" in k.name]
    assert fused, [k.name for k in r.kernels]
    k = fused[0]
    assert "@triton.jit" in k.source and f"def {k.name}(" in k.source
    # torch's "Topologically Sorted Source Nodes" comment above the kernel
    assert "gelu" in k.nodes
    # triton_kernel_info artifact: launch config and compile time per kernel
    assert k.metadata, f"no triton_kernel_info for {k.name}"
    assert "compile_time_us" in k.metadata
    cg = r.compiles[0].stages.codegen
    assert cg is not None and cg.output_code[0].role == "inference"
    assert r.compiles[0].stages.fuse.ir_post_fusion, "fusion IR not recorded"


class _Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(64, 64)
        self.b = torch.nn.Linear(64, 64)

    def forward(self, x):
        y = torch.relu(self.a(x))
        if y.sum() > 0:  # BREAK-HERE
            y = y * 2
        return self.b(y).softmax(-1)


def test_break_backward_recompile_on_gpu():
    torch.manual_seed(0)
    m = _Net().cuda()
    x = torch.randn(8, 64, device="cuda", requires_grad=True)
    with compiler.recording() as rec:
        cm = torch.compile(m)
        cm(x).sum().backward()
        cm(torch.randn(16, 64, device="cuda")).sum()
    r = rec.report
    (b,) = r.graph_breaks
    assert b.type == "Data-dependent branching"
    assert (b.filename, b.line) == (__file__, _line_of(_Net.forward, "BREAK-HERE"))
    assert b.count == 2
    roles = {(k.compile_id, k.role) for k in r.kernels}
    assert ("0/0", "forward") in roles and ("0/0", "backward") in roles
    assert {k.language for k in r.kernels} == {"triton"}
    reasons = {rc.compile_id: rc.reasons for rc in r.recompiles}
    # the first input required grad, the second does not: that guard fails first
    assert reasons["0/1"] == ("0/0: tensor 'x' requires_grad mismatch. expected requires_grad=1",)
    assert reasons["1/1"] == ("1/0: tensor 'y' size mismatch at index 0. expected 8, actual 16",)
    saved = r.compile("0/0").stages.autograd.saved_tensors
    assert saved and all(s.bytes for s in saved)


def test_reduce_overhead_cuda_graphs():
    x = torch.randn(32, 128, device="cuda")
    w = torch.randn(128, 128, device="cuda")
    eager = _gelu_sum(x, w)
    with compiler.recording() as rec:
        cf = torch.compile(_gelu_sum, mode="reduce-overhead")
        outs = [cf(x, w).clone() for _ in range(3)]
    for o in outs:
        torch.testing.assert_close(o, eager, rtol=1e-4, atol=1e-4)
    r = rec.report
    assert [c.status for c in r.compiles] == ["ok"]
    assert {k.language for k in r.kernels} == {"triton"}


def _attn(q, k, v):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


def test_sdpa_kernel_choice_is_visible():
    q, k, v = (torch.randn(2, 4, 256, 64, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    with torch.no_grad(), compiler.recording() as rec:
        out = torch.compile(_attn)(q, k, v)
    torch.testing.assert_close(out, _attn(q, k, v), rtol=2e-2, atol=2e-2)
    post = rec.report.compiles[0].stages.decompose.ops_after
    sdpa = [op for op in post if "scaled_dot_product" in op]
    # which fused attention kernel the dispatcher chose is visible in the post-grad graph;
    # torch 2.11 on an H100 picks cuDNN's for bf16 causal attention
    backends = {
        f"torch.ops.aten._scaled_dot_product_{b}_attention.default" for b in ("flash", "efficient", "cudnn")
    }
    assert len(sdpa) == 1 and sdpa[0] in backends, post


def test_fusion_ir_is_the_text_inductors_loggers_carry_on_gpu():
    """A training step (its backward compiled in autograd's device thread) and a foreach
    optimizer step, whose ops Inductor groups into one node between its pre-fusion logger and
    the hook the recording snapshots at: the IR equals what torch's loggers carry."""
    from _torch_trace import InductorIR

    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU()).cuda()
    x = torch.randn(4, 3, 16, 16, device="cuda")
    params = [torch.ones(100, device="cuda", requires_grad=True) for _ in range(4)]
    for p in params:
        p.grad = torch.ones(100, device="cuda")
    opt = torch.optim.Adam(params, lr=0.1, foreach=True)
    with InductorIR() as theirs, compiler.recording(fusion_ir=True) as rec:
        torch.compile(m)(x).sum().backward()
        torch.compile(opt.step)()
    for field in InductorIR.ARTIFACTS:
        ours = [t for c in rec.report.compiles if c.stages.fuse for t in getattr(c.stages.fuse, field)]
        assert sorted(ours) == sorted(theirs.texts[field]) and len(ours) >= 3
    assert any("ForeachKernelSchedulerNode" in t for t in theirs.texts["ir_post_fusion"])


def test_progress_names_each_triton_kernel_n_of_n_and_the_autotuning():
    """The live line's facts on the GPU (compiler/listen/_progress.py): the Triton kernels' count
    is the output code's (the report's), each kernel's compile is heard (its n reaches N, its
    name one of the report's), and under max-autotune the op whose GEMM choices Inductor
    benchmarks ("mm") and the kernels Triton tunes at their first call are named."""
    x = torch.randn(64, 128, device="cuda")
    w = torch.randn(128, 128, device="cuda")
    said = []
    with compiler.recording(caches=False, on_progress=said.append) as rec:
        torch.compile(_gelu_sum)(x, w)
    ((cid, n),) = {
        (c.id, sum(1 for k in rec.report.kernels if k.compile_id == c.id)) for c in rec.report.compiles
    }
    assert n >= 1 and {p.kernels for p in said if p.kernels is not None} == {n}
    assert max(p.kernel_n or 0 for p in said if p.kernels is not None) == n
    assert {p.kernel for p in said if p.kernel} <= {k.name for k in rec.report.kernels}
    assert said[-1].ended and said[-1].compile_id == cid

    torch._dynamo.reset()
    said.clear()
    with compiler.recording(caches=False, on_progress=said.append) as rec:
        torch.compile(_gelu_sum, mode="max-autotune-no-cudagraphs")(x, w)
    tuned = {p.autotuning for p in said if p.autotuning}
    assert "mm" in tuned, tuned  # select_algorithm's mm_template_autotuning phase
    names = {k.name for k in rec.report.kernels}
    assert any(t in names for t in tuned), (tuned, names)  # CachingAutotuner at the first call

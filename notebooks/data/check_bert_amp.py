"""Checks on a GPU what would fix BERT compiled under AMP (bf16 autocast), eval.

The H100 speed census (census-h100-speed.json) has BERT-base at x0.66 under AMP: eager runs
cuDNN attention (0.94 ms a call), while the compiled graph runs SDPA's math decomposition,
24 fp32 bmm and a softmax (14.55 ms a call): transformers builds an all-true mask while Dynamo
traces, where eager passes none, and math SDPA upcasts bf16 to fp32. This times, on the
census's case (BERT-base from transformers' default config, random weights, batch 32, 510
tokens: explorer/census/zoo_hfbase.py's hf-base entry):

- eager;
- compiled (torch.compile, default mode);
- compiled with ``torch.backends.cuda.allow_fp16_bf16_reduction_math_sdp(True)`` (math SDPA
  keeps bf16);
- compiled under ``sdpa_kernel`` without the math backend (a fused kernel takes the mask,
  or the compile says none can).

Each arm: the median of CUDA-event times over ``--reps`` calls after warm-up, the attention
ops its profiled call ran, and the largest difference from eager's output. Needs CUDA and
transformers; weights are random (no network).

    python notebooks/data/check_bert_amp.py [--reps 50] [--batch 32] [--seq 510]

Run on an NVIDIA H100 80GB HBM3, torch 2.11.0+cu130, 2026-11-27, ``--reps 30``:

    arm                          median ms  speedup max |diff|  attention ops (one call)
    eager                           11.415    x1.00          0  aten::_cudnn_attention_forward x12 0.93 ms
    compiled                        23.236    x0.49      0.028  aten::bmm x24 8.89 ms
    compiled, math SDPA in bf16     23.395    x0.49      0.028  aten::bmm x24 8.9 ms
    compiled, no math SDPA               -        -          -  failed: TorchRuntimeError

Torch's warnings name why: "All fused kernels require the last dimension of the input to have
stride 1 ... Attn_mask.stride(-1): 0" (the all-true mask transformers builds while Dynamo traces
is expanded). So the bf16 switch is no fix; the verdict advises on the mask instead.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys

ATTENTION_OPS = (
    "aten::_cudnn_attention_forward",
    "aten::_flash_attention_forward",
    "aten::_efficient_attention_forward",
    "aten::bmm",
)


def build(batch: int, seq: int):
    import torch
    from transformers import AutoConfig, AutoModel

    cfg = AutoConfig.for_model("bert")  # bert-base: transformers' default, as hf-base builds it
    torch.manual_seed(0)
    model = AutoModel.from_config(cfg).cuda().eval()
    g = torch.Generator().manual_seed(batch)
    ids = torch.randint(3, cfg.vocab_size, (batch, seq), generator=g).cuda()
    return model, ids


def call(fn, ids):
    import torch

    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        return fn(input_ids=ids).last_hidden_state


def timed(fn, ids, reps: int) -> list[float]:
    import torch

    for _ in range(3):
        call(fn, ids)
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call(fn, ids)
        end.record()
        torch.cuda.synchronize()
        out.append(start.elapsed_time(end))
    return out


def attention_ops(fn, ids) -> str:
    """The attention ops one call ran, with their GPU time: which SDPA backend ran."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        call(fn, ids)
        torch.cuda.synchronize()
    rows = []
    for e in prof.key_averages():
        if e.key in ATTENTION_OPS:
            ms = getattr(e, "device_time_total", getattr(e, "cuda_time_total", 0.0)) / 1000
            rows.append(f"{e.key} ×{e.count} {ms:.3g} ms")
    return ", ".join(rows) or "none of " + ", ".join(ATTENTION_OPS)


def arm(name: str, model, ids, reps: int, ref, *, compiled: bool, setting=contextlib.nullcontext):
    import torch

    torch._dynamo.reset()  # each compiled arm traces afresh, under its own settings
    with setting():
        fn = torch.compile(model) if compiled else model
        try:
            times = timed(fn, ids, reps)
            ops = attention_ops(fn, ids)
            out = call(fn, ids).float()
        except Exception as e:  # an arm that cannot run says why; the others still run
            return name, None, f"failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}", None
    diff = (out - ref).abs().max().item() if ref is not None else 0.0
    return name, statistics.median(times), ops, diff


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=50)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--seq", type=int, default=510)
    a = p.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        print("check_bert_amp: needs a CUDA GPU", file=sys.stderr)
        return 2
    from torch.nn.attention import SDPBackend, sdpa_kernel

    @contextlib.contextmanager
    def bf16_math():
        before = torch.backends.cuda.fp16_bf16_reduction_math_sdp_allowed()
        torch.backends.cuda.allow_fp16_bf16_reduction_math_sdp(True)
        try:
            yield
        finally:
            torch.backends.cuda.allow_fp16_bf16_reduction_math_sdp(before)

    def fused_only():
        return sdpa_kernel(
            [SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]
        )

    model, ids = build(a.batch, a.seq)
    print(
        f"{torch.cuda.get_device_name()}, torch {torch.__version__}; BERT-base, batch {a.batch}, {a.seq} tokens, bf16 autocast, eval"
    )
    ref = call(model, ids).float()
    rows = [
        arm("eager", model, ids, a.reps, ref, compiled=False),
        arm("compiled", model, ids, a.reps, ref, compiled=True),
        arm("compiled, math SDPA in bf16", model, ids, a.reps, ref, compiled=True, setting=bf16_math),
        arm("compiled, no math SDPA", model, ids, a.reps, ref, compiled=True, setting=fused_only),
    ]
    eager = rows[0][1]
    print(f"{'arm':30s} {'median ms':>10s} {'speedup':>8s} {'max |diff|':>10s}  attention ops (one call)")
    for name, ms, ops, diff in rows:
        speed = f"×{eager / ms:.2f}" if ms and eager else "—"
        med = f"{ms:.3f}" if ms else "—"
        d = f"{diff:.3g}" if diff is not None else "—"
        print(f"{name:30s} {med:>10s} {speed:>8s} {d:>10s}  {ops}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Fidelity: does ``Report.benchmark`` measure the same eager/compiled ratio as an independent
harness (``triton.testing.do_bench``)? Needs CUDA, timm and transformers. Prints a table.

    python benchmarks/fidelity.py                      # resnet50 bert gpt2, fp32 and bf16
    python benchmarks/fidelity.py resnet50 --dtypes bf16 --json out.json

Models are built from their configs with random weights (no downloads), in eval mode under
``torch.inference_mode()``; bf16 means the model and its inputs cast with ``.to(bfloat16)``
(not autocast). Each (model, dtype) is compiled once (default mode); in the same process the
explorer's benchmark and do_bench (median, warm-up 25 ms, 500 ms of repetitions, its own L2
flush) time the same eager and compiled callables. Agreement: |ours / do_bench - 1| <= 3%.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

import compiler  # noqa: E402

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


def build(name: str, dtype: torch.dtype):
    g = torch.Generator().manual_seed(0)
    if name == "resnet50":
        import timm

        model = timm.create_model("resnet50", pretrained=False)
        inputs = (torch.randn(64, 3, 224, 224, generator=g),)
    elif name == "bert":
        from transformers import BertConfig, BertModel

        model = BertModel(BertConfig())
        inputs = (torch.randint(0, 30522, (16, 512), generator=g),)
    elif name == "gpt2":
        from transformers import GPT2Config, GPT2LMHeadModel

        model = GPT2LMHeadModel(GPT2Config())
        inputs = (torch.randint(0, 50257, (8, 1024), generator=g),)
    else:
        raise SystemExit(f"unknown model {name!r}")
    model = model.eval().cuda().to(dtype)
    inputs = tuple(x.cuda().to(dtype) if x.is_floating_point() else x.cuda() for x in inputs)
    return model, inputs


def host_syncs(call) -> int:
    """How many times one call makes the CPU wait for the GPU (``.item()``, ``torch.all(...)`` in
    an ``if``): such a call is timed partly by its CPU side, in any harness."""
    import warnings

    torch.cuda.synchronize()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            call()
        finally:
            torch.cuda.set_sync_debug_mode("default")
    return sum("synchroniz" in str(w.message) for w in caught)


def one(name: str, dtype_name: str, reps: int, trial: int = 0, state: dict | None = None) -> dict:
    """One (model, dtype); ``state`` keeps the compiled model between trials."""
    import triton.testing

    state = {} if state is None else state
    with torch.inference_mode():
        if not state:
            torch._dynamo.reset()
            model, inputs = build(name, DTYPES[dtype_name])
            t = time.perf_counter()
            _, report = compiler.record(model, *inputs)
            state.update(model=model, inputs=inputs, report=report, compile_wall=time.perf_counter() - t)
            state["syncs"] = (
                host_syncs(lambda: model(*inputs)),
                host_syncs(lambda: report._subject.compiled(*inputs)),
            )
        model, inputs, report = state["model"], state["inputs"], state["report"]
        compile_wall = state["compile_wall"]
        b = report.benchmark(reps=reps, warmup=5, profile=False, progress=False)
        compiled = report._subject.compiled

        def eager_call():
            return model(*inputs)

        def compiled_call():
            return compiled(*inputs)

        db_e = triton.testing.do_bench(eager_call, warmup=25, rep=500, return_mode="median")
        db_c = triton.testing.do_bench(compiled_call, warmup=25, rep=500, return_mode="median")
    ours = b.speedup
    theirs = db_e / db_c
    row = {
        "model": name,
        "dtype": dtype_name,
        "trial": trial,
        "host_syncs_eager": state["syncs"][0],
        "host_syncs_compiled": state["syncs"][1],
        "eager_ms": b.eager.median_ms,
        "compiled_ms": b.compiled.median_ms,
        "eager_iqr_ms": b.eager.iqr_ms,
        "compiled_iqr_ms": b.compiled.iqr_ms,
        "do_bench_eager_ms": db_e,
        "do_bench_compiled_ms": db_c,
        "speedup": ours,
        "do_bench_speedup": theirs,
        "rel_diff": ours / theirs - 1,
        "within_3pct": abs(ours / theirs - 1) <= 0.03,
        "compile_time_s": b.compile_time_s,
        "compile_wall_s": compile_wall,
        "break_even_calls": b.break_even_calls,
        "peak_mem_eager_gb": (b.peak_memory_eager or 0) / 1e9,
        "peak_mem_compiled_gb": (b.peak_memory_compiled or 0) / 1e9,
        "accuracy_ok": b.accuracy.ok if b.accuracy else None,
        "max_abs": b.accuracy.max_abs if b.accuracy else None,
        "max_rel": b.accuracy.max_rel if b.accuracy else None,
        "reps": b.eager.reps,
        "device": b.device_name,
    }
    print(json.dumps(row), file=sys.stderr, flush=True)
    return row


def table(rows: list[dict]) -> str:
    head = (
        "| model | dtype | trial | host syncs e/c | eager ms (IQR) | compiled ms (IQR) | our speedup | do_bench speedup "
        "| rel. diff | within 3% | compile s | break-even calls | peak mem eager/compiled GB | max abs err |"
    )
    out = [head, "|" + "---|" * 14]
    for r in rows:
        be = f"{r['break_even_calls']:.0f}" if r["break_even_calls"] is not None else "never"
        out.append(
            f"| {r['model']} | {r['dtype']} | {r['trial']} | {r['host_syncs_eager']}/{r['host_syncs_compiled']} "
            f"| {r['eager_ms']:.2f} ({r['eager_iqr_ms']:.2f}) "
            f"| {r['compiled_ms']:.2f} ({r['compiled_iqr_ms']:.2f}) | {r['speedup']:.3f} "
            f"| {r['do_bench_speedup']:.3f} | {100 * r['rel_diff']:+.1f}% | {'yes' if r['within_3pct'] else 'NO'} "
            f"| {r['compile_time_s']:.1f} | {be} | {r['peak_mem_eager_gb']:.2f} / {r['peak_mem_compiled_gb']:.2f} "
            f"| {r['max_abs']:.2g} |"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("models", nargs="*", default=["resnet50", "bert", "gpt2"])
    p.add_argument("--dtypes", default="fp32,bf16")
    p.add_argument("--reps", type=int, default=150, help="timed calls per arm of our benchmark")
    p.add_argument(
        "--trials", type=int, default=1, help="measure each model this many times, alternating harnesses"
    )
    p.add_argument("--json", metavar="OUT")
    ns = p.parse_args(argv)
    if not torch.cuda.is_available():
        print("fidelity.py needs a CUDA GPU", file=sys.stderr)
        return 2
    rows = []
    for m in ns.models:
        for d in ns.dtypes.split(","):
            state: dict = {}
            rows += [one(m, d, ns.reps, trial, state) for trial in range(ns.trials)]
            state.clear()  # free GPU memory before the next model
            torch.cuda.empty_cache()
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}")
    print(table(rows))
    if ns.json:
        Path(ns.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

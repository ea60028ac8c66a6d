"""Fidelity: does ``compiler.benchmark`` measure the same eager/compiled ratio as an independent
harness (``triton.testing.do_bench``)? Needs CUDA, timm and transformers. Prints a table.

    python benchmarks/fidelity.py                      # resnet50 bert gpt2, fp32 and bf16
    python benchmarks/fidelity.py resnet50 --dtypes bf16 --json out.json

Models are built from their configs with random weights (no downloads), in eval mode under
``torch.inference_mode()``; bf16 means the model and its inputs cast with ``.to(bfloat16)``
(not autocast). Each (model, dtype) is compiled once (default mode); in the same process the
explorer's benchmark and do_bench (median, warm-up 25 ms, its own L2 flush; 500 ms of
repetitions per arm, split into --rounds calls interleaved eager/compiled, see do_bench_pair)
time the same eager and compiled callables. Agreement: |ours / do_bench - 1| <= 3%.
The "attention" column is what the compiled graph runs for scaled_dot_product_attention, read
from the recording's post-grad op census (a fused SDPA op, or "math": bmm + softmax).
"""

from __future__ import annotations

import argparse
import json
import statistics
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
    # only the per-operation warning: torch also warns once that the debug mode is a prototype
    return sum("called a synchronizing CUDA operation" in str(w.message) for w in caught)


def do_bench_pair(do_bench, eager_call, compiled_call, rounds: int) -> tuple[float, float]:
    """do_bench's median of each arm, interleaved: ``rounds`` calls of do_bench per arm (500 ms of
    repetitions in all per arm) in ABBA order, and the median of each arm's medians. One 500 ms
    do_bench per arm, one after the other, would time eager and compiled at different moments:
    a launch-bound arm follows the host CPU's speed, which drifts by 10-20% over seconds on the
    H100 host, and the ratio would then measure the drift."""
    rep = max(25, 500 // rounds)
    out: dict[str, list[float]] = {"eager": [], "compiled": []}
    calls = {"eager": eager_call, "compiled": compiled_call}
    for i in range(rounds):
        for arm in ("eager", "compiled") if i % 2 == 0 else ("compiled", "eager"):
            out[arm].append(do_bench(calls[arm], warmup=25, rep=rep, return_mode="median"))
    return statistics.median(out["eager"]), statistics.median(out["compiled"])


def attention_ops(report) -> str:
    """The SDPA ops of the post-grad graphs, or "math" when attention was decomposed into bmm."""
    ops: dict[str, int] = {}
    for c in report.compiles:
        d = c.stages.decompose
        for op, n in (d.ops_after if d else {}).items():
            if "scaled_dot_product" in op or op.endswith((".bmm.default", "._safe_softmax.default")):
                ops[op] = ops.get(op, 0) + n
    sdpa = sorted({op.split(".")[-2] for op in ops if "scaled_dot_product" in op})
    if sdpa:
        return ", ".join(sdpa)
    return "math (bmm)" if any(op.endswith(".bmm.default") for op in ops) else "-"


def one(
    name: str, dtype_name: str, reps: int, trial: int = 0, state: dict | None = None, rounds: int = 6
) -> dict:
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
        b = compiler.benchmark(report, reps=reps, warmup=5, profile=False, progress=False)
        compiled = report._subject.compiled

        def eager_call():
            return model(*inputs)

        def compiled_call():
            return compiled(*inputs)

        db_e, db_c = do_bench_pair(triton.testing.do_bench, eager_call, compiled_call, rounds)
    ours = b.speedup
    theirs = db_e / db_c
    row = {
        "model": name,
        "dtype": dtype_name,
        "trial": trial,
        "attention": attention_ops(report),
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
        "| model | dtype | trial | attention | host syncs e/c | eager ms (IQR) | compiled ms (IQR) | our speedup | do_bench speedup "
        "| rel. diff | within 3% | compile s | break-even calls | peak mem eager/compiled GB | max abs err |"
    )
    out = [head, "|" + "---|" * 15]
    for r in rows:
        be = f"{r['break_even_calls']:.0f}" if r["break_even_calls"] is not None else "never"
        out.append(
            f"| {r['model']} | {r['dtype']} | {r['trial']} | {r['attention']} | {r['host_syncs_eager']}/{r['host_syncs_compiled']} "
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
    p.add_argument(
        "--rounds",
        type=int,
        default=6,
        help="do_bench calls per arm, interleaved ABBA (500 ms of reps in all)",
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
            rows += [one(m, d, ns.reps, trial, state, ns.rounds) for trial in range(ns.trials)]
            state.clear()  # free GPU memory before the next model
            torch.cuda.empty_cache()
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}")
    print(table(rows))
    if ns.json:
        Path(ns.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

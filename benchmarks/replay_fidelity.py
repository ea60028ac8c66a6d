"""The replayed call against independent timings (GPU): a small HF model called under
``torch.no_grad()`` (as inference programs call it), compiled with each mode, timed three ways
in one process, every call inside the program's context:

- ours: ``compiled_calls`` keeps the program's last call and its state, then
  ``benchmark_calls`` times it (what ``record --bench`` does after the program);
- do_bench: ``triton.testing.do_bench`` medians, 6 rounds per arm in ABBA order;
- loop: the wall time of 300 back-to-back calls, synchronised at the end (what a loop of the
  user's calls costs), the median of 5 rounds per arm in ABBA order;
- our timing loop alone (compiler/bench/_timing.py's Timer, no recording, no replayed state
  around it but the program's context).

    python benchmarks/replay_fidelity.py                 # bert-tiny, default and reduce-overhead
    python benchmarks/replay_fidelity.py --models bert-tiny,gpt2-6l-amp --modes default
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

import compiler  # noqa: E402
from compiler.bench._timing import Timer  # noqa: E402


def build(name: str):
    torch.manual_seed(0)
    stack = contextlib.ExitStack
    if name == "bert-tiny":
        from transformers import BertConfig, BertModel

        cfg = BertConfig(hidden_size=128, num_hidden_layers=2, num_attention_heads=2, intermediate_size=512)
        model = BertModel(cfg).eval().cuda()
        ids = torch.randint(0, cfg.vocab_size, (1, 8), device="cuda")

        def context():
            return torch.no_grad()

    elif name == "gpt2-6l-amp":
        from transformers import GPT2Config, GPT2LMHeadModel

        model = GPT2LMHeadModel(GPT2Config(n_layer=6)).eval().cuda()
        ids = torch.randint(0, 50257, (8, 512), device="cuda")

        def context():
            s = stack()
            s.enter_context(torch.no_grad())
            s.enter_context(torch.autocast("cuda", dtype=torch.bfloat16))
            return s

    else:
        raise SystemExit(f"unknown model {name!r}")
    return model, ids, context


def loop_ms(call, n: int = 300) -> float:
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        call()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) * 1e3 / n


def abba(calls: dict, measure, rounds: int) -> tuple[float, float]:
    out: dict[str, list[float]] = {"eager": [], "compiled": []}
    for i in range(rounds):
        for arm in ("eager", "compiled") if i % 2 == 0 else ("compiled", "eager"):
            out[arm].append(measure(calls[arm]))
    return statistics.median(out["eager"]), statistics.median(out["compiled"])


def one(name: str, mode: str, trials: int = 1) -> None:
    from triton.testing import do_bench

    torch._dynamo.reset()
    model, ids, context = build(name)
    with compiler.compiled_calls() as kept, compiler.recording() as rec:
        compiled = torch.compile(model, mode=mode)
        with context():
            for _ in range(20):
                compiled(ids)
    calls = {"eager": lambda: model(ids), "compiled": lambda: compiled(ids)}
    for trial in range(trials):  # the harnesses in turn, on the same compiled callable
        compiler.benchmark_calls(rec.report, kept.called, progress=False)
        b = rec.report.benchmarks[-1]
        with context():
            db = abba(calls, lambda f: do_bench(f, warmup=25, rep=80, return_mode="median"), 6)
            lp = abba(calls, loop_ms, 5)
            timer = Timer(calls, True, lambda *a, **k: None)  # our timing loop alone, as ours runs it
            timer.run(None, 3, name)
            tm = (statistics.median(timer.samples["eager"]), statistics.median(timer.samples["compiled"]))
        cells = [
            name,
            mode,
            str(trial + 1),
            f"{b.eager.median_ms:.3f} / {b.compiled.median_ms:.3f} = x{b.speedup:.2f}",
            f"{db[0]:.3f} / {db[1]:.3f} = x{db[0] / db[1]:.2f}",
            f"{lp[0]:.3f} / {lp[1]:.3f} = x{lp[0] / lp[1]:.2f}",
            f"{tm[0]:.3f} / {tm[1]:.3f} = x{tm[0] / tm[1]:.2f}",
            f"{len(b.compiles_while_timing)}",
        ]
        print("| " + " | ".join(cells) + " |", flush=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default="bert-tiny")
    p.add_argument("--modes", default="default,reduce-overhead")
    p.add_argument("--trials", type=int, default=1, help="the three harnesses in turn, this many times")
    ns = p.parse_args(argv)
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}")
    print(
        "| model | mode | trial | ours eager/compiled ms | do_bench | loop of 300 calls | our timing loop alone "
        "| compiles while benchmarked |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name in ns.models.split(","):
        for mode in ns.modes.split(","):
            one(name, mode, ns.trials)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Steady state after a recording ended: does a function compiled inside
``compiler.recording()`` run as fast as one compiled without? Prints figures; asserts nothing.

In one process, a step function is compiled inside a recording, the block is left, and its
calls are timed against a copy of the same function (its own code object, so its own Dynamo
cache entry) compiled with no recording at all, and against a third copy also compiled
without recording (an A/A control: the noise floor). The arms alternate call by call; each
round gives the median call per arm. Target: median ratio <= 1.01. (Compile time with and
without recording: benchmarks/overhead.py.)

    .venv/bin/python benchmarks/overhead_steady.py
    .venv/bin/python benchmarks/overhead_steady.py --workloads mlp --rounds 12 --calls 15 --json out/steady.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKLOADS = ("mlp", "transformer")
STEADY_TARGET = 1.01


def log(msg: str) -> None:
    print(f"[steady {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def _build(workload: str):
    """Model and input for a workload; same seed, so the same in every process."""
    import torch
    from torch import nn

    torch.manual_seed(0)
    if workload == "mlp":
        model = nn.Sequential(
            nn.Linear(256, 512),
            nn.ReLU(),
            nn.Linear(512, 512),
            nn.ReLU(),
            nn.Linear(512, 512),
            nn.ReLU(),
            nn.Linear(512, 10),
        )
        x = torch.randn(64, 256)
    elif workload == "transformer":
        model = nn.TransformerEncoderLayer(
            d_model=128, nhead=4, dim_feedforward=512, dropout=0.0, batch_first=True
        )
        x = torch.randn(8, 64, 128)
    else:
        raise SystemExit(f"unknown workload {workload!r} (known: {', '.join(WORKLOADS)})")
    return model, x


def _step(model, x):
    return model(x)


def _copy_fn(fn, name: str):
    """A copy of ``fn`` with its own code object: Dynamo keys its cache on the code object,
    so two copies compile and are looked up independently."""
    code = fn.__code__.replace(co_name=name)
    return types.FunctionType(code, fn.__globals__, name, fn.__defaults__, fn.__closure__)


def child_steady(workload: str, rounds: int, calls: int) -> dict:
    """Three copies of one step function, each with its own code object and its own model
    copy: ``recorded`` is compiled inside a recording; ``plain`` and ``control`` are
    compiled with none. ``control / plain`` is an A/A comparison: the noise floor that
    ``recorded / plain`` has to be read against."""
    import copy
    import gc

    import torch

    import compiler

    model, x = _build(workload)
    arms = {
        name: (torch.compile(_copy_fn(_step, f"step_{name}")), copy.deepcopy(model))
        for name in ("recorded", "plain", "control")
    }

    def call(name: str) -> None:
        step, m = arms[name]
        step(m, x).sum().backward()
        m.zero_grad(set_to_none=True)

    with compiler.recording() as rec:
        call("recorded")
    events = len(rec.events)
    call("plain")  # compiled with no recording anywhere in sight
    call("control")
    # Inductor's compile workers keep starting up in the background for a while after a
    # compile and would disturb the first rounds; nothing compiles from here on.
    try:
        from torch._inductor.async_compile import shutdown_compile_workers

        shutdown_compile_workers()
    except ImportError:
        pass
    gc.collect()
    warm_until = time.perf_counter() + 3.0  # warm all three for a few seconds
    while time.perf_counter() < warm_until:
        for name in arms:
            call(name)

    # Arms alternate call by call (the order rotating), so the machine's drift hits all
    # three alike; a round's figure per arm is the median of its calls.
    names = list(arms)
    per_call: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        times: dict[str, list[float]] = {name: [] for name in names}
        for c in range(calls):
            k = (r + c) % 3
            for name in names[k:] + names[:k]:
                t0 = time.perf_counter()
                call(name)
                times[name].append(time.perf_counter() - t0)
        for name in names:
            per_call[name].append(statistics.median(times[name]))
    return {
        "workload": workload,
        "rounds": rounds,
        "calls_per_round": calls,
        "recorded_call_s": per_call["recorded"],
        "plain_call_s": per_call["plain"],
        "control_call_s": per_call["control"],
        "ratios": [a / b for a, b in zip(per_call["recorded"], per_call["plain"])],
        "control_ratios": [a / b for a, b in zip(per_call["control"], per_call["plain"])],
        "events": events,
    }


def summarize(r: dict) -> dict:
    r["median_ratio"] = statistics.median(r["ratios"])
    r["min_ratio"] = min(r["ratios"])
    r["max_ratio"] = max(r["ratios"])
    r["median_control_ratio"] = statistics.median(r["control_ratios"])
    # best round of each arm: the least disturbed by the machine
    r["best_ratio"] = min(r["recorded_call_s"]) / min(r["plain_call_s"])
    r["median_recorded_us"] = statistics.median(r["recorded_call_s"]) * 1e6
    r["median_plain_us"] = statistics.median(r["plain_call_s"]) * 1e6
    return r


def print_table(results: list[dict]) -> None:
    print("\nSteady state after the recording ended: per-call time of a forward+backward step compiled")
    print("inside a recording vs the same step compiled without one; per round, the median call of")
    print(
        f"each arm. 'A/A' is a second copy compiled without recording vs the first. Target <= {STEADY_TARGET}\n"
    )
    hdr = (
        f"{'workload':<12} {'rounds x calls':>14} {'recorded us':>11} {'plain us':>9} {'median':>7} "
        f"{'min':>6} {'max':>6} {'best':>6} {'A/A med':>7}"
    )
    print(hdr)
    print("-" * len(hdr))
    for r in results:
        rc = f"{r['rounds']} x {r['calls_per_round']}"
        print(
            f"{r['workload']:<12} {rc:>14} {r['median_recorded_us']:>11.1f} {r['median_plain_us']:>9.1f} "
            f"{r['median_ratio']:>7.4f} {r['min_ratio']:>6.3f} {r['max_ratio']:>6.3f} {r['best_ratio']:>6.3f} "
            f"{r['median_control_ratio']:>7.4f}"
        )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workloads", default=",".join(WORKLOADS), help="comma list (default mlp,transformer)")
    p.add_argument("--rounds", type=int, default=40, help="interleaved rounds (default 40)")
    p.add_argument("--calls", type=int, default=25, help="calls per arm per round (default 25)")
    p.add_argument("--json", metavar="OUT", help="also write every figure to this JSON file")
    a = p.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    results = []
    for wl in [w.strip() for w in a.workloads.split(",") if w.strip()]:
        log(f"[{wl}] {a.rounds} rounds x {a.calls} calls x 3 arms ...")
        results.append(summarize(child_steady(wl, a.rounds, a.calls)))
    print_table(results)
    if a.json:
        Path(a.json).parent.mkdir(parents=True, exist_ok=True)
        Path(a.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How much does ``compiler.recording()`` cost? Prints figures; asserts nothing.

(a) Compile wall time with vs without recording. Every measurement is a fresh Python
    process (this script re-run with the hidden ``--child`` mode), so nothing is warm
    from a previous compile. Runs come in pairs, one process per arm, and the order
    alternates from pair to pair so slow drift of the machine cancels. Both arms run with
    Inductor's caches force-disabled (``TORCHINDUCTOR_FORCE_DISABLE_CACHES=1``) and a
    fresh empty ``TORCHINDUCTOR_CACHE_DIR``, so both really compile: the recording arm
    turns the FX-graph and AOTAutograd caches off anyway, and letting the plain arm hit
    a cache would make the comparison meaningless. Both arms import ``compiler``, build
    the same seeded model and run one eager forward+backward before the clock starts;
    the timed region is the first compiled forward+backward, inside
    ``with compiler.recording():`` in the recording arm.
    Target: median ratio (with / without) <= 1.03.

(b) Steady-state cost after a recording ended: in one process, a step function is
    compiled inside a recording, the block is left, and its calls are timed against a
    copy of the same function (its own code object, so its own Dynamo cache entry)
    compiled with no recording at all, and against a third copy also compiled without
    recording (an A/A control: the noise floor). The arms alternate call by call; each
    round gives the median call per arm. Target: median ratio <= 1.01.

    .venv/bin/python benchmarks/overhead.py                   # 5 pairs per workload
    .venv/bin/python benchmarks/overhead.py --quick --json out/overhead.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import types
from contextlib import nullcontext
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKLOADS = ("mlp", "transformer")
COMPILE_TARGET = 1.03
STEADY_TARGET = 1.01
RESULT_TAG = "OVERHEAD_RESULT "
# Anything in the caller's environment that would attach trace handlers or debug output
# to one arm and not the other (or change both in ways we don't measure).
SCRUBBED_ENV = ("TORCH_TRACE", "TORCH_LOGS", "TORCH_COMPILE_DEBUG", "TORCHINDUCTOR_CACHE_DIR")


def log(msg: str) -> None:
    print(f"[overhead {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- child side


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


def _logging_overhead_s() -> float | None:
    """torch's own measure of time spent in structured logging (building records and
    payloads, plus our handlers), summed over compiled frames. The value is cumulative
    per frame, so take the largest seen per compile id."""
    try:
        from torch._dynamo.utils import _compilation_metrics
    except ImportError:
        return None
    per_id: dict[str, float] = {}
    for m in list(_compilation_metrics):
        v = getattr(m, "structured_logging_overhead_s", None)
        if v is None and getattr(m, "structured_logging_overhead_us", None) is not None:
            v = m.structured_logging_overhead_us / 1e6
        if v is not None:
            key = str(m.compile_id)
            per_id[key] = max(per_id.get(key, 0.0), v)
    return sum(per_id.values()) if per_id else None


def child_compile(workload: str, arm: str) -> dict:
    import torch

    import compiler

    model, x = _build(workload)
    model(x).sum().backward()  # eager warm-up: one-time kernel/allocator set-up off the clock
    model.zero_grad(set_to_none=True)
    compiled = torch.compile(model)
    ctx = compiler.recording() if arm == "record" else nullcontext()

    t_enter = time.perf_counter()
    with ctx as rec:
        c0, o0 = time.process_time(), os.times()
        t0 = time.perf_counter()
        out = compiled(x)
        t1 = time.perf_counter()
        out.sum().backward()
        t2 = time.perf_counter()
        c1, o1 = time.process_time(), os.times()
    t_exit = time.perf_counter()

    result = {
        "workload": workload,
        "arm": arm,
        "compile_s": t2 - t0,  # first forward + first backward: both graphs compiled
        "fwd_s": t1 - t0,
        "bwd_s": t2 - t1,
        "block_s": t_exit - t_enter,  # adds recording set-up and building the report
        # CPU of this process only: where recording's work happens (handlers, payloads,
        # provenance). Excludes the C++ compiler and Inductor's compile workers, which
        # make most of the wall-time noise.
        "cpu_s": c1 - c0,
        # C++ compiler runs this process waited for (not the compile-worker pool)
        "children_cpu_s": (o1.children_user + o1.children_system) - (o0.children_user + o0.children_system),
        "logging_overhead_s": _logging_overhead_s(),
        "torch": torch.__version__,
        "pid": os.getpid(),
    }
    if rec is not None:
        result["events"] = len(rec.events)
        result["report_error"] = rec.report.error if rec.report is not None else "no report"
    return result


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


def run_child(argv: list[str]) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--child", choices=("compile", "steady"), required=True)
    p.add_argument("--workload", required=True)
    p.add_argument("--arm", choices=("plain", "record"), default="plain")
    p.add_argument("--rounds", type=int, default=40)
    p.add_argument("--calls", type=int, default=25)
    a = p.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    if a.child == "compile":
        result = child_compile(a.workload, a.arm)
    else:
        result = child_steady(a.workload, a.rounds, a.calls)
    print(RESULT_TAG + json.dumps(result), flush=True)


# -------------------------------------------------------------------------- parent side


COMPILE_THREADS: str | None = None  # --compile-threads, passed to both arms alike


def spawn(args: list[str], timeout: float = 900) -> dict:
    """Run this script as a child in a fresh process with caches off and its own empty
    Inductor cache dir; return the JSON it prints."""
    cache_dir = tempfile.mkdtemp(prefix="pt2x-bench-inductor-")
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED_ENV}
    env["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"
    env["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
    env["PYTHONUNBUFFERED"] = "1"
    if COMPILE_THREADS is not None:
        env["TORCHINDUCTOR_COMPILE_THREADS"] = COMPILE_THREADS
    try:
        proc = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(RESULT_TAG):
            return json.loads(line[len(RESULT_TAG) :])
    tail = "\n".join((proc.stderr or proc.stdout).splitlines()[-20:])
    raise RuntimeError(f"child {' '.join(args)} exited {proc.returncode} without a result:\n{tail}")


def measure_compile(workload: str, pairs: int) -> dict:
    rows = []
    for i in range(pairs):
        order = ("plain", "record") if i % 2 == 0 else ("record", "plain")
        got = {}
        for arm in order:
            label = "with recording" if arm == "record" else "without recording"
            log(f"[{workload}] compile pair {i + 1}/{pairs}: {label} (fresh process) ...")
            r = spawn(["--child", "compile", "--workload", workload, "--arm", arm])
            got[arm] = r
            log(f"[{workload}]   {label}: compile {r['compile_s']:.2f}s wall, {r['cpu_s']:.2f}s CPU")
        w, wo = got["record"], got["plain"]
        rows.append(
            {
                "pair": i + 1,
                "order": "w/o->with" if order[0] == "plain" else "with->w/o",
                "without": wo,
                "with": w,
                "ratio": w["compile_s"] / wo["compile_s"],
                "block_ratio": w["block_s"] / wo["block_s"],
                "cpu_ratio": w["cpu_s"] / wo["cpu_s"],
            }
        )
    ratios = [r["ratio"] for r in rows]
    without = [r["without"]["compile_s"] for r in rows]
    with_ = [r["with"]["compile_s"] for r in rows]
    return {
        "workload": workload,
        "pairs": rows,
        "median_without_s": statistics.median(without),
        "median_with_s": statistics.median(r["with"]["compile_s"] for r in rows),
        "median_ratio": statistics.median(ratios),
        "min_ratio": min(ratios),
        "max_ratio": max(ratios),
        "median_block_ratio": statistics.median(r["block_ratio"] for r in rows),
        "median_cpu_ratio": statistics.median(r["cpu_ratio"] for r in rows),
        # run-to-run spread between identical fresh processes (the larger of the two arms'):
        # the noise the ratio sits in
        "spread": max(_spread(without), _spread(with_)),
        "median_logging_overhead_s": statistics.median(r["with"]["logging_overhead_s"] or 0.0 for r in rows),
        "events": rows[0]["with"].get("events"),
        "target": COMPILE_TARGET,
    }


def _spread(xs: list[float]) -> float:
    return (max(xs) - min(xs)) / statistics.median(xs)


def measure_steady(workload: str, rounds: int, calls: int) -> dict:
    log(f"[{workload}] steady state: {rounds} rounds x {calls} calls x 3 arms, one process ...")
    r = spawn(["--child", "steady", "--workload", workload, "--rounds", str(rounds), "--calls", str(calls)])
    r["median_ratio"] = statistics.median(r["ratios"])
    r["min_ratio"] = min(r["ratios"])
    r["max_ratio"] = max(r["ratios"])
    r["median_control_ratio"] = statistics.median(r["control_ratios"])
    # best round of each arm: the least disturbed by the machine
    r["best_ratio"] = min(r["recorded_call_s"]) / min(r["plain_call_s"])
    r["median_recorded_us"] = statistics.median(r["recorded_call_s"]) * 1e6
    r["median_plain_us"] = statistics.median(r["plain_call_s"]) * 1e6
    r["target"] = STEADY_TARGET
    log(
        f"[{workload}]   steady median ratio {r['median_ratio']:.4f} "
        f"(A/A control {r['median_control_ratio']:.4f})"
    )
    return r


def verdict(value: float, target: float, spread: float | None = None) -> str:
    v = "within target" if value <= target else "ABOVE target"
    if spread is not None and spread > 2 * (target - 1):
        v += "; noise > margin, inconclusive"
    return v


def print_tables(compile_res: list[dict], steady_res: list[dict], meta: dict) -> None:
    out: list[str] = []
    w = out.append
    nan = float("nan")
    w("")
    w(
        f"PT2 Explorer recording overhead  (torch {meta['torch']}, {meta['cpus']} CPUs, python {meta['python']}, "
        f"compile threads: {meta['compile_threads']})"
    )
    if compile_res:
        w("")
        w("(a) Compile time of the first compiled forward+backward; one fresh process per run,")
        w("    Inductor caches force-disabled and a fresh cache dir in BOTH arms.")
        w(f"    ratio = with recording / without.  Target: median wall ratio <= {COMPILE_TARGET:.2f}")
        w("")
        hdr = (
            f"    {'workload':<12} {'pair':>4}  {'order':<9} {'w/o s':>7} {'with s':>7} {'ratio':>6} "
            f"{'block':>6}  {'w/o cpu':>7} {'w/ cpu':>7} {'cpu rt':>6}  {'log ovh':>7}"
        )
        w(hdr)
        w("    " + "-" * (len(hdr) - 4))
        for res in compile_res:
            for r in res["pairs"]:
                ovh = r["with"]["logging_overhead_s"]
                w(
                    f"    {res['workload']:<12} {r['pair']:>4}  {r['order']:<9} "
                    f"{r['without']['compile_s']:>7.2f} {r['with']['compile_s']:>7.2f} {r['ratio']:>6.3f} "
                    f"{r['block_ratio']:>6.3f}  {r['without']['cpu_s']:>7.2f} {r['with']['cpu_s']:>7.2f} "
                    f"{r['cpu_ratio']:>6.3f}  {ovh if ovh is not None else nan:>7.3f}"
                )
        w("")
        w("    w/o s, with s: wall seconds of the first call; ratio = with / w/o")
        w("    block: wall ratio counting also entering the recording and building the report on exit")
        w("    w/o cpu, w/ cpu, cpu rt: CPU seconds of the compiling process alone (not the C++ compiler's")
        w("      or the compile workers', which carry most of the wall-time noise) and their ratio")
        w("    log ovh: torch's structured_logging_overhead_s with recording (payloads + our handlers)")
        w("")
        hdr = (
            f"    {'workload':<12} {'pairs':>5} {'med w/o':>8} {'med with':>8} {'median':>7} {'min':>6} "
            f"{'max':>6} {'spread':>6} {'med cpu rt':>10}  verdict (wall, <= {COMPILE_TARGET:.2f})"
        )
        w(hdr)
        w("    " + "-" * (len(hdr) - 4))
        for res in compile_res:
            w(
                f"    {res['workload']:<12} {len(res['pairs']):>5} {res['median_without_s']:>8.2f} "
                f"{res['median_with_s']:>8.2f} {res['median_ratio']:>7.3f} {res['min_ratio']:>6.3f} "
                f"{res['max_ratio']:>6.3f} {res['spread']:>6.0%} {res['median_cpu_ratio']:>10.3f}  "
                f"{verdict(res['median_ratio'], COMPILE_TARGET, res['spread'])}"
            )
        w("")
        w("    spread: (max - min) / median of one arm's wall times (the larger arm's): the noise between")
        w("    identical fresh processes; a ratio is only meaningful well outside it.")
    if steady_res:
        w("")
        w("(b) Steady state after the recording ended: per-call time of a forward+backward step")
        w("    compiled inside a recording vs the same step compiled without one; one process, the arms")
        w("    alternate call by call; per round, the median call of each arm. 'A/A' is a second copy")
        w("    compiled without recording vs the first: the noise floor.")
        w(f"    Target: median ratio <= {STEADY_TARGET:.2f}")
        w("")
        hdr = (
            f"    {'workload':<12} {'rounds x calls':>14} {'recorded us':>11} {'plain us':>9} {'median':>7} "
            f"{'min':>6} {'max':>6} {'best':>6} {'A/A med':>7}  verdict (<= {STEADY_TARGET:.2f})"
        )
        w(hdr)
        w("    " + "-" * (len(hdr) - 4))
        for r in steady_res:
            rc = f"{r['rounds']} x {r['calls_per_round']}"
            w(
                f"    {r['workload']:<12} {rc:>14} {r['median_recorded_us']:>11.1f} {r['median_plain_us']:>9.1f} "
                f"{r['median_ratio']:>7.4f} {r['min_ratio']:>6.3f} {r['max_ratio']:>6.3f} {r['best_ratio']:>6.3f} "
                f"{r['median_control_ratio']:>7.4f}  {verdict(r['median_ratio'], STEADY_TARGET)}"
            )
        w("")
        w("    best: fastest round of each arm, recorded / plain.")
    w("")
    print("\n".join(out), flush=True)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--child" in argv:
        run_child(argv)
        return 0
    p = argparse.ArgumentParser(description="Measure the overhead of compiler.recording(); prints figures.")
    p.add_argument("--pairs", type=int, default=5, help="process pairs per workload for (a) (default 5)")
    p.add_argument("--workloads", default=",".join(WORKLOADS), help="comma list (default mlp,transformer)")
    p.add_argument("--quick", action="store_true", help="2 pairs and shorter steady-state rounds")
    p.add_argument("--json", metavar="OUT", help="also write every figure to this JSON file")
    p.add_argument("--steady-rounds", type=int, default=40, help="interleaved rounds for (b) (default 40)")
    p.add_argument("--steady-calls", type=int, default=25, help="calls per arm per round (default 25)")
    p.add_argument("--no-steady", action="store_true", help="skip (b)")
    p.add_argument(
        "--compile-threads",
        type=int,
        metavar="N",
        help="TORCHINDUCTOR_COMPILE_THREADS for every child, both arms alike (default: torch's "
        "choice); 1 compiles serially, which can steady the wall times on a small machine",
    )
    a = p.parse_args(argv)
    global COMPILE_THREADS
    if a.compile_threads is not None:
        COMPILE_THREADS = str(a.compile_threads)
    pairs, rounds, calls = a.pairs, a.steady_rounds, a.steady_calls
    if a.quick:
        pairs, rounds, calls = 2, 12, 15
    workloads = [x.strip() for x in a.workloads.split(",") if x.strip()]
    bad = [x for x in workloads if x not in WORKLOADS]
    if bad or not workloads or pairs < 1:
        p.error(f"workloads must be from {', '.join(WORKLOADS)} and --pairs >= 1")

    import platform

    meta = {
        "torch": _torch_version(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "pairs": pairs,
        "workloads": workloads,
        "steady_rounds": rounds,
        "steady_calls": calls,
        "compile_threads": COMPILE_THREADS or "torch default",
    }
    started = time.perf_counter()
    log(f"workloads {','.join(workloads)}, {pairs} pair(s) each; every run is a fresh process")
    compile_res = [measure_compile(wl, pairs) for wl in workloads]
    steady_res = [] if a.no_steady else [measure_steady(wl, rounds, calls) for wl in workloads]
    meta["elapsed_s"] = time.perf_counter() - started
    log(f"done in {meta['elapsed_s']:.0f}s")
    print_tables(compile_res, steady_res, meta)
    if a.json:
        Path(a.json).parent.mkdir(parents=True, exist_ok=True)
        Path(a.json).write_text(
            json.dumps({"meta": meta, "compile": compile_res, "steady": steady_res}, indent=1)
        )
        print(f"figures written to {a.json}")
    return 0


def _torch_version() -> str:
    """Without importing torch in the parent (it only spawns and prints)."""
    try:
        from importlib.metadata import version

        return version("torch")
    except Exception:
        return "?"


if __name__ == "__main__":
    sys.exit(main())

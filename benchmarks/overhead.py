"""What does ``compiler.recording()`` add to a compile? Prints figures; asserts nothing.

One compile per fresh Python process: the first call of the compiled model, an inference
forward (``model.eval()``, ``torch.no_grad()``) or, for the ``*-train`` models, a training step
(a forward with labels and its backward; ``llama-train`` in bfloat16, TinyLlama-1.1B's shape).
This script runs itself again in a hidden ``--child`` mode.
Arms, one process each:

    plain       torch.compile alone
    record      inside ``with compiler.recording():`` (defaults: every stage, fusion IR,
                kernel-to-node map); the report is built after the clock stops, and timed apart
    trace       TORCH_TRACE=<fresh dir> (torch's own structured trace to files, what tlparse reads)
    fusionlog   recording(fusion_logs=True): with Inductor's fusion decisions (off by default)
    light       recording(provenance=False)
    prov1       recording() with Inductor's "normal" provenance level 1 (the earlier default)
    tritonir    recording(triton_ir=True): kernels compiled in-process, one at a time, and
                every kernel's IR read (what giving up Inductor's compile workers costs)
    fusionir    recording(fusion_ir=True): Inductor's IR before and after fusion, rendered
                when the report is built

For the recording arms the report is then built (``rec.report``) and written (``to_json``, a
plain ``.json``), each timed apart: the user's total is the compile's wall plus both.

A round runs every arm once; rounds rotate the order (ABC, BCA, CAB, ...) so the machine's
drift spreads over the arms. With ``--together`` a round's arms run at the same time instead,
each pinned to an equal share of the CPUs (its compile workers too), the shares rotating from
round to round: the arms of a round see the same machine (on a machine whose identical
processes differ by 15-20% from one minute to the next, pairs in time are what resolve 5%). Every child gets Inductor's caches force-disabled
(``TORCHINDUCTOR_FORCE_DISABLE_CACHES=1``) and a fresh empty ``TORCHINDUCTOR_CACHE_DIR``, so
each really compiles; the recording turns the FX-graph and AOTAutograd caches off anyway.
Both figures are taken around the first compiled call only (model built, weights random,
one eager call before): main-process CPU (``getrusage(RUSAGE_SELF)``: the compile is
single-threaded Python; C++ compilers and Inductor's compile workers are other processes)
and wall. Ratio = arm / plain of the same round; the table gives the median over rounds.
Target: record <= 1.05 on both.

    .venv/bin/python benchmarks/overhead.py                                # bert,gpt2 on cuda if any, else cpu; 3 rounds
    .venv/bin/python benchmarks/overhead.py --models bert-2l --device cpu --rounds 5
    .venv/bin/python benchmarks/overhead.py --arms plain,record,trace,fusionlog --json out/overhead.json
    .venv/bin/python benchmarks/overhead.py --models llama-train --rounds 1 --keep out/kept  # the files, to read
    .venv/bin/python benchmarks/overhead.py --models llama-train --arms plain,record --rounds 6 --together
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULT_TAG = "OVERHEAD_RESULT "
TARGET = 1.05
ARMS = ("plain", "record", "trace", "fusionlog", "light", "prov1", "tritonir", "fusionir", "progress")
# TinyLlama-1.1B's shape (22 layers, hidden 2048, grouped-query attention with 4 KV heads)
TINYLLAMA = dict(
    hidden_size=2048, intermediate_size=5632, num_hidden_layers=22, num_attention_heads=32,
    num_key_value_heads=4, vocab_size=32000, max_position_embeddings=2048,
)  # fmt: skip
# transformers configs built without weights: name -> (config class, model class, config kwargs,
# what runs: "infer" (eval, no_grad, a forward), "train" (a forward with labels and a backward),
# "train-bf16" (the same in bfloat16))
MODELS = {
    "bert": ("BertConfig", "BertModel", {}, "infer"),  # BERT-base: 12 layers, hidden 768
    "gpt2": ("GPT2Config", "GPT2LMHeadModel", {}, "infer"),  # GPT-2 small: 12 layers, hidden 768
    "bert-2l": ("BertConfig", "BertModel", {"num_hidden_layers": 2}, "infer"),
    "gpt2-2l": ("GPT2Config", "GPT2LMHeadModel", {"n_layer": 2}, "infer"),
    "gpt2-train": ("GPT2Config", "GPT2LMHeadModel", {}, "train"),
    "gpt2-2l-train": ("GPT2Config", "GPT2LMHeadModel", {"n_layer": 2}, "train"),
    "llama-train": ("LlamaConfig", "LlamaForCausalLM", TINYLLAMA, "train-bf16"),
    "llama-2l-train": ("LlamaConfig", "LlamaForCausalLM", {**TINYLLAMA, "num_hidden_layers": 2}, "train"),
}
# the caller's settings that would attach trace handlers or debug output to some arms only
SCRUBBED_ENV = (
    "TORCH_TRACE",
    "TORCH_LOGS",
    "TORCH_COMPILE_DEBUG",
    "TORCHINDUCTOR_CACHE_DIR",
    "INDUCTOR_PROVENANCE",
    "TRITON_CACHE_DIR",
)


def log(msg: str) -> None:
    print(f"[overhead {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- child side


def _cpu_s() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _arm_context(arm: str):
    from contextlib import contextmanager, nullcontext

    import compiler

    if arm in ("plain", "trace"):  # TORCH_TRACE is set in the environment by the parent
        return nullcontext()
    if arm == "record":
        return compiler.recording()
    if arm == "fusionlog":
        return compiler.recording(fusion_logs=True)
    if arm == "light":
        return compiler.recording(provenance=False)
    if arm == "tritonir":
        return compiler.recording(triton_ir=True)
    if arm == "fusionir":
        return compiler.recording(fusion_ir=True)
    if arm == "progress":  # record's live line on a terminal, every change drawn (none throttled)
        import io

        from explorer.cli import _live

        class Terminal(io.StringIO):
            def isatty(self):
                return True

        _live.EVERY_S = -1.0
        return compiler.recording(on_progress=_live.LiveLine(Terminal()).on_progress)
    if arm == "prov1":
        import torch._inductor.config as inductor

        @contextmanager
        def prov1():
            with compiler.recording() as rec, inductor.patch({"trace.provenance_tracking_level": 1}):
                yield rec

        return prov1()
    raise SystemExit(f"unknown arm {arm!r}")


def workload(model_name: str, device: str):
    """The model built from its config (random weights), and ``step(m)``: one inference
    forward of ``m``, or one training step (a forward with labels, its backward), run under
    no_grad / enable_grad as fits; ``sync()`` waits for the device."""
    import torch
    import transformers

    cfg_cls, model_cls, kwargs, what = MODELS[model_name]
    torch.manual_seed(0)
    cfg = getattr(transformers, cfg_cls)(**kwargs)
    model = getattr(transformers, model_cls)(cfg).to(device)
    if what == "train-bf16":
        model = model.to(torch.bfloat16)
    x = torch.randint(0, cfg.vocab_size, (8, 128), device=device)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    train = what.startswith("train")
    model.train(train)

    def step(m):
        with torch.enable_grad() if train else torch.no_grad():
            if not train:
                return m(input_ids=x)
            m(input_ids=x, labels=x).loss.backward()
            model.zero_grad(set_to_none=True)

    return model, step, sync


def child(model_name: str, arm: str, device: str) -> dict:
    import torch

    model, step, sync = workload(model_name, device)
    step(model)  # eager: one-time kernel and allocator set-up off the clock
    sync()
    compiled = torch.compile(model)
    ctx = _arm_context(arm)
    c0, w0 = _cpu_s(), time.perf_counter()
    with ctx as rec:
        step(compiled)
        sync()
    c1, w1 = _cpu_s(), time.perf_counter()
    result = {"model": model_name, "arm": arm, "device": device, "cpu_s": c1 - c0, "wall_s": w1 - w0}
    if rec is not None:  # what the user waits for next: the report built, then written
        c2, w2 = _cpu_s(), time.perf_counter()
        report = rec.report
        c3, w3 = _cpu_s(), time.perf_counter()
        out = Path(os.environ["PT2X_OVERHEAD_SCRATCH"], "report.json")
        report.to_json(out)
        result["report_cpu_s"], result["report_wall_s"] = c3 - c2, w3 - w2
        result["write_cpu_s"], result["write_wall_s"] = _cpu_s() - c3, time.perf_counter() - w3
        result["json_bytes"] = out.stat().st_size
        result["events"] = len(rec.events)
        result["kernels"] = len(report.kernels)
        result["report_error"] = report.error
    result["torch"] = torch.__version__
    result["cpus"] = len(os.sched_getaffinity(0))
    result["compile_threads"] = torch._inductor.config.compile_threads
    result["gpu"] = torch.cuda.get_device_name() if device == "cuda" else None
    return result


# -------------------------------------------------------------------------- parent side


def spawn(
    model: str,
    arm: str,
    device: str,
    timeout: float = 900,
    keep: str | None = None,
    cpus: list[int] | None = None,
) -> dict:
    """One child in a fresh process with caches off and its own empty cache dir; ``keep``: a
    directory to copy the child's report (``MODEL-ARM.json``) or TORCH_TRACE logs into;
    ``cpus``: the CPUs the child (and its compile workers) may run on."""
    return Child(model, arm, device, keep, cpus).result(timeout)


class Child:
    """A child started (``spawn`` without waiting): ``result()`` waits for it and reads its figures."""

    def __init__(
        self, model: str, arm: str, device: str, keep: str | None = None, cpus: list[int] | None = None
    ):
        self.model, self.arm, self.keep = model, arm, keep
        self.scratch = tempfile.mkdtemp(prefix="pt2x-overhead-")
        env = {k: v for k, v in os.environ.items() if k not in SCRUBBED_ENV}
        env["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"
        env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(self.scratch, "inductor")
        env["TRITON_CACHE_DIR"] = os.path.join(self.scratch, "triton")
        env["PYTHONUNBUFFERED"] = "1"
        env["PT2X_OVERHEAD_SCRATCH"] = self.scratch
        if arm == "trace":
            env["TORCH_TRACE"] = os.path.join(self.scratch, "trace")
        cmd = [sys.executable, str(Path(__file__).resolve()), "--child", model, arm, device]
        # pinned before Python starts: torch sizes its compile-worker pool by the CPUs it may use
        pin = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=pin
        )

    def result(self, timeout: float = 900) -> dict:
        arm = self.arm
        try:
            try:
                stdout, stderr = self.proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                raise
            if arm == "trace":
                logs = list(Path(self.scratch, "trace").glob("*"))
                trace_bytes = sum(p.stat().st_size for p in logs)
            if self.keep is not None:
                _keep(Path(self.scratch), Path(self.keep), f"{self.model}-{arm}")
        finally:
            shutil.rmtree(self.scratch, ignore_errors=True)
        for line in reversed(stdout.splitlines()):
            if line.startswith(RESULT_TAG):
                result = json.loads(line[len(RESULT_TAG) :])
                if arm == "trace":
                    result["trace_bytes"] = trace_bytes
                return result
        tail = "\n".join((stderr or stdout).splitlines()[-20:])
        raise RuntimeError(
            f"child {self.model} {arm} exited {self.proc.returncode} without a result:\n{tail}"
        )


def _keep(scratch: Path, keep: Path, name: str) -> None:
    keep.mkdir(parents=True, exist_ok=True)
    if (scratch / "report.json").exists():
        shutil.copyfile(scratch / "report.json", keep / f"{name}.json")
    if (scratch / "trace").is_dir():
        shutil.copytree(scratch / "trace", keep / f"{name}-trace", dirs_exist_ok=True)


def measure(
    model: str,
    arms: list[str],
    rounds: int,
    device: str,
    once: frozenset = frozenset(),
    keep: str | None = None,
    together: bool = False,
) -> dict:
    """``rounds`` rounds of every arm, those in ``once`` in the first round only; the first
    round's reports and logs copied into ``keep`` when given. ``together``: a round's arms run
    at the same time, each pinned to its own equal share of the CPUs, the shares rotating
    from round to round, so that the machine's drift falls on every arm of a round alike."""
    runs: list[dict[str, dict]] = []
    for r in range(rounds):
        k = r % len(arms)
        order = [a for a in arms[k:] + arms[:k] if r == 0 or a not in once]
        got = {}
        if together:  # every arm at once, each on its own share of the CPUs, shares rotating
            shares = _cpu_shares(len(order))
            present = [a for a in arms if a in order]  # an arm's share: its place here, plus the round
            started = [
                Child(
                    model,
                    arm,
                    device,
                    keep if r == 0 else None,
                    shares[(present.index(arm) + r) % len(present)],
                )
                for arm in order
            ]
            results = {s.arm: s.result() for s in started}
        for arm in order:
            res = got[arm] = (
                results[arm] if together else spawn(model, arm, device, keep=keep if r == 0 else None)
            )
            extra = ""
            if "report_wall_s" in res:
                extra = (
                    f"  report {res['report_wall_s']:.2f}s  write {res['write_wall_s']:.2f}s"
                    f"  json {res['json_bytes'] / 1e6:.2f} MB"
                )
            if "trace_bytes" in res:
                extra = f"  trace {res['trace_bytes'] / 1e6:.2f} MB"
            log(
                f"[{model}] round {r + 1}/{rounds} {arm:<8} cpu {res['cpu_s']:6.2f}s  wall {res['wall_s']:6.2f}s{extra}"
            )
        runs.append(got)
    summary = {}
    for arm in arms:
        runs_of = [g for g in runs if arm in g]
        cpu = [g[arm]["cpu_s"] for g in runs_of]
        wall = [g[arm]["wall_s"] for g in runs_of]
        row = {
            "cpu_s": cpu,
            "wall_s": wall,
            "cpu_ratio": statistics.median(g[arm]["cpu_s"] / g["plain"]["cpu_s"] for g in runs_of),
            "wall_ratio": statistics.median(g[arm]["wall_s"] / g["plain"]["wall_s"] for g in runs_of),
        }
        if "report_cpu_s" in runs[0][arm]:
            row["report_cpu_s"] = statistics.median(g[arm]["report_cpu_s"] for g in runs_of)
            row["write_cpu_s"] = statistics.median(g[arm]["write_cpu_s"] for g in runs_of)
            # the user's total: the compile under the recording, then the report built and written
            row["total_ratio"] = statistics.median(_total(g[arm]) / g["plain"]["wall_s"] for g in runs_of)
            row["json_mb"] = statistics.median(g[arm]["json_bytes"] for g in runs_of) / 1e6
        if "trace_bytes" in runs[0][arm]:
            row["trace_mb"] = statistics.median(g[arm]["trace_bytes"] for g in runs_of) / 1e6
        summary[arm] = row
    first = runs[0]
    return {"model": model, "device": device, "rounds": runs, "summary": summary, "meta": first["plain"]}


def _cpu_shares(n: int) -> list[list[int]]:
    """The CPUs this process may use cut into ``n`` equal shares (the rest left idle)."""
    cpus = sorted(os.sched_getaffinity(0))
    k = len(cpus) // n
    if k < 1:
        raise SystemExit(f"--together needs at least {n} CPUs, this process may use {len(cpus)}")
    return [cpus[i * k : (i + 1) * k] for i in range(n)]


def _total(run: dict) -> float:
    return run["wall_s"] + run["report_wall_s"] + run["write_wall_s"]


def print_table(results: list[dict]) -> None:
    out = []
    w = out.append
    w("")
    w("Compile overhead: the first compiled call (an inference forward, or a training step's")
    w("forward and backward), one fresh process per run, Inductor caches off. CPU = main process")
    w("(getrusage RUSAGE_SELF), seconds per round; ratio = arm / plain of the same round, median")
    w(f"over rounds. Target: record <= {TARGET:.2f}, and so the user's total.")
    w("")
    hdr = (
        f"{'model':<14} {'device':<6} {'arm':<9} {'CPU s (rounds)':<28} {'CPU ratio':>9} "
        f"{'wall s (rounds)':<28} {'wall ratio':>10} {'report s':>8} {'write s':>7} {'total':>6} {'MB':>6}"
    )
    w(hdr)
    w("-" * len(hdr))
    for res in results:
        for arm, row in res["summary"].items():
            cpu = " / ".join(f"{x:.2f}" for x in row["cpu_s"])
            wall = " / ".join(f"{x:.2f}" for x in row["wall_s"])
            rep = f"{row['report_cpu_s']:.2f}" if "report_cpu_s" in row else ""
            wri = f"{row['write_cpu_s']:.2f}" if "write_cpu_s" in row else ""
            tot = f"{row['total_ratio']:.3f}" if "total_ratio" in row else ""
            mb = row.get("json_mb", row.get("trace_mb"))
            w(
                f"{res['model']:<14} {res['device']:<6} {arm:<9} {cpu:<28} {row['cpu_ratio']:>9.3f} "
                f"{wall:<28} {row['wall_ratio']:>10.3f} {rep:>8} {wri:>7} {tot:>6} "
                f"{'' if mb is None else f'{mb:.2f}':>6}"
            )
    w("")
    w("report s / write s: CPU seconds to build the report at the first rec.report, after the")
    w("block, and to write it (to_json, plain .json), medians. total: the user's total (the")
    w("compile's wall + building + writing the report) / the plain compile's wall, median.")
    w("MB: the report's .json, or the TORCH_TRACE directory (trace arm), median.")
    print("\n".join(out), flush=True)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        sys.path.insert(0, str(ROOT))
        print(RESULT_TAG + json.dumps(child(*argv[1:4])), flush=True)
        return 0
    p = argparse.ArgumentParser(description="Compile overhead of compiler.recording(); prints figures.")
    p.add_argument(
        "--models", default="bert,gpt2", help=f"comma list from {', '.join(MODELS)} (default bert,gpt2)"
    )
    p.add_argument("--arms", default="plain,record,trace", help=f"comma list from {', '.join(ARMS)}")
    p.add_argument("--rounds", type=int, default=3, help="rounds, each one process per arm (default 3)")
    p.add_argument(
        "--device", choices=("auto", "cuda", "cpu"), default="auto", help="auto: cuda when available"
    )
    p.add_argument(
        "--once", default="", help="comma list of arms run in the first round only (e.g. trace, for its size)"
    )
    p.add_argument(
        "--together",
        action="store_true",
        help="run a round's arms at the same time, each pinned to an equal share of the CPUs (rotating)",
    )
    p.add_argument("--json", metavar="OUT", help="also write every figure to this JSON file")
    p.add_argument("--keep", metavar="DIR", help="copy the first round's reports and TORCH_TRACE logs here")
    a = p.parse_args(argv)
    models = [m for m in a.models.split(",") if m]
    arms = [x for x in a.arms.split(",") if x]
    if any(m not in MODELS for m in models) or any(x not in ARMS for x in arms) or a.rounds < 1:
        p.error(f"models from {', '.join(MODELS)}, arms from {', '.join(ARMS)}, --rounds >= 1")
    if "plain" not in arms:
        arms.insert(0, "plain")
    device = a.device
    if device == "auto":
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
    started = time.perf_counter()
    once = frozenset(x for x in a.once.split(",") if x)
    results = [measure(m, arms, a.rounds, device, once, a.keep, a.together) for m in models]
    meta = results[0]["meta"]
    print(
        f"\ntorch {meta['torch']}, {meta['gpu'] or 'CPU'}, {os.cpu_count()} CPUs, python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d')}, {time.perf_counter() - started:.0f} s; each child: {meta['cpus']} CPUs, "
        f"{meta['compile_threads']} compile threads{', arms run together' if a.together else ''}"
    )
    print_table(results)
    if a.json:
        Path(a.json).parent.mkdir(parents=True, exist_ok=True)
        Path(a.json).write_text(json.dumps(results, indent=1))
        print(f"figures written to {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What `pt2-explorer record --json --html` costs a program, against running it plainly. Prints
figures; asserts nothing.

Each workload is a small Python program (a Hugging Face training step built from a small
config, no weights, Inductor on CPU), run as a fresh process in two arms:

    plain    python PROGRAM
    record   pt2-explorer record --json OUT.json --html OUT.html PROGRAM  (the report and the
             page written, as a user runs it)

and in two starts:

    cold     Inductor's caches force-disabled and a fresh empty cache dir each run (every
             stage runs; record's report is complete when it returns)
    empty    a fresh empty cache dir each run, the caches on: a new user's first run (record
             keeps the caches: every compile a miss, its kernel-to-node map filled in after)
    warm     one cache dir per program, filled by a plain run before the rounds (not timed):
             the user's second run. record keeps the caches (its default) and starts its
             fill-in in the background when the program ends; the arm's wall ends when record
             returns, as the user's prompt comes back; the fill-in's own wall is printed apart,
             and the next run waits for it to end (it would share the CPUs).

A round runs both arms of a start, in an order alternating from round to round; ratio = record
/ plain of the same round, median over rounds. Per run: wall, and CPU time of the process and
its children (os.wait4: Inductor's C++ compiler and compile workers are children), and the
sizes of what `record` wrote. Target: record <= 1.2x the plain run's wall, cold and warm.

    .venv/bin/python benchmarks/record_cli.py                     # gpt2, qwen2, t5; 3 rounds
    .venv/bin/python benchmarks/record_cli.py --models gpt2 --rounds 5 --starts warm
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = 1.2
# each program: a training step of tests/hf_corpus.py's small models, or one written here
PROGRAMS = {
    "gpt2": "import hf_corpus\nprint(float(hf_corpus.gpt2_train('inductor')))\n",
    "t5": "import hf_corpus\nprint(float(hf_corpus.t5_train('inductor')))\n",
    "qwen2": """import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

torch.manual_seed(0)
cfg = Qwen2Config(
    hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
    num_key_value_heads=2, vocab_size=128, max_position_embeddings=64,
)
model = Qwen2ForCausalLM(cfg).train()
step = torch.compile(model)
ids = torch.randint(0, 128, (2, 16), generator=torch.Generator().manual_seed(1))
out = step(input_ids=ids, labels=ids)
out.loss.backward()
print(float(out.loss))
""",
}
# BERT-base inference on the GPU (the H100's figure in benchmarks/README.md)
PROGRAMS["bert_cuda"] = """import torch
from transformers import BertConfig, BertModel

torch.manual_seed(0)
model = BertModel(BertConfig()).cuda().eval()
f = torch.compile(model)
ids = torch.randint(0, 30522, (8, 128), device="cuda", generator=torch.Generator("cuda").manual_seed(1))
with torch.no_grad():
    for _ in range(3):
        out = f(input_ids=ids)
torch.cuda.synchronize()
print(float(out.last_hidden_state.float().mean()))
"""
STOP_FILL = False  # --fill stop
SCRUBBED_ENV = ("TORCH_TRACE", "TORCH_LOGS", "TORCH_COMPILE_DEBUG", "TORCHINDUCTOR_CACHE_DIR")


def log(msg: str) -> None:
    print(f"[record_cli {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def run(model: str, arm: str, work: Path, start: str = "cold", warm: Path | None = None) -> dict:
    """One fresh process of ``arm`` in ``start`` (cold, empty, warm: ``warm`` is then the
    program's cache dir); its wall, CPU (own + children) and what it wrote."""
    program = work / f"{model}_step.py"
    program.write_text(PROGRAMS[model])
    scratch = Path(tempfile.mkdtemp(prefix="pt2x-record-cli-"))
    env = {k: v for k, v in os.environ.items() if k not in SCRUBBED_ENV}
    env["TORCHINDUCTOR_CACHE_DIR"] = str(warm if start == "warm" else scratch / "inductor")
    if start == "cold":
        env["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "tests"), str(ROOT)])
    cmd = [sys.executable, str(program)]
    if arm == "record":
        cmd = [sys.executable, "-m", "explorer", "record", "-q", "--json", str(scratch / "r.json")]
        cmd += ["--html", str(scratch / "r.html"), str(program)]
    try:
        w0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - w0
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        proc.stderr.close()
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"{model} {arm} failed:\n{err[-2000:]}")
        out = {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime}
        # wait4's usage is the child's own plus its waited-for children's (the C++ compiler)
        fill = re.search(r"in the background \(pid (\d+),", err)
        if fill and STOP_FILL:  # --fill stop: the fill-in ended as record returns (not timed)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(int(fill.group(1)), signal.SIGTERM)
        elif fill:  # record's fill-in: its wall apart; nothing else runs beside it
            out["fill_s"] = _wait(int(fill.group(1))) + wall
        for name in ("r.json", "r.html"):
            p = scratch / name
            if p.exists():
                out[name] = p.stat().st_size
        return out
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _wait(pid: int) -> float:
    """Seconds until process ``pid`` (record's background fill-in, not our child) has ended."""
    t0 = time.perf_counter()
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return time.perf_counter() - t0
        time.sleep(0.2)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description="pt2-explorer record --json --html against a plain run; prints figures."
    )
    p.add_argument("--models", default="gpt2,qwen2,t5", help=f"comma list from {', '.join(PROGRAMS)}")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--starts", default="cold,warm", help="comma list from cold, empty, warm")
    p.add_argument(
        "--fill",
        choices=("wait", "stop"),
        default="wait",
        help="record's background fill-in: wait for it before the next run (its wall printed), or stop it",
    )
    a = p.parse_args(argv)
    global STOP_FILL
    STOP_FILL = a.fill == "stop"
    models = [m for m in a.models.split(",") if m]
    starts = [x for x in a.starts.split(",") if x]
    if any(m not in PROGRAMS for m in models) or a.rounds < 1 or not set(starts) <= {"cold", "empty", "warm"}:
        p.error(f"models from {', '.join(PROGRAMS)}; --rounds >= 1; --starts from cold, empty, warm")
    work = Path(tempfile.mkdtemp(prefix="pt2x-record-cli-work-"))
    started = time.perf_counter()
    rows = []
    try:
        for model in models:
            for start in starts:
                cache = None
                if start == "warm":  # the user's first run, untimed: it fills the caches
                    cache = work / f"{model}-cache"
                    run(model, "plain", work, start, cache)
                runs = []
                for r in range(a.rounds):
                    got = {}
                    for arm in ("plain", "record") if r % 2 == 0 else ("record", "plain"):
                        got[arm] = run(model, arm, work, start, cache)
                        fill = (
                            f" (fill-in ended at {got[arm]['fill_s']:.1f}s)" if "fill_s" in got[arm] else ""
                        )
                        log(
                            f"[{model} {start}] round {r + 1}/{a.rounds} {arm:<6} wall {got[arm]['wall_s']:6.2f}s "
                            f"cpu {got[arm]['cpu_s']:6.2f}s{fill}"
                        )
                    runs.append(got)
                rows.append((model, start, runs))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    import torch

    print(
        f"\ntorch {torch.__version__}, {os.cpu_count()} CPUs, python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d')}, {time.perf_counter() - started:.0f} s"
    )
    print(
        "record --json --html against python PROGRAM, fresh processes; cold: caches off; empty: an empty cache; warm: the "
        f"second run of a cache; target <= {TARGET}x wall; CPU: the process and its children\n"
    )
    hdr = (
        f"{'model':<7} {'start':<5} {'plain wall s':<22} {'record wall s':<22} {'wall ratio':>10} "
        f"{'CPU ratio':>9} {'fill-in s':>9} {'json MB':>7} {'html MB':>7}"
    )
    print(hdr)
    print("-" * len(hdr))
    for model, start, runs in rows:
        pw = " / ".join(f"{g['plain']['wall_s']:.1f}" for g in runs)
        rw = " / ".join(f"{g['record']['wall_s']:.1f}" for g in runs)
        wr = statistics.median(g["record"]["wall_s"] / g["plain"]["wall_s"] for g in runs)
        cr = statistics.median(g["record"]["cpu_s"] / g["plain"]["cpu_s"] for g in runs)
        fills = [g["record"]["fill_s"] for g in runs if "fill_s" in g["record"]]
        fs = f"{statistics.median(fills):.1f}" if fills else "-"
        js = statistics.median(g["record"].get("r.json", 0) for g in runs) / 1e6
        hs = statistics.median(g["record"].get("r.html", 0) for g in runs) / 1e6
        print(f"{model:<7} {start:<5} {pw:<22} {rw:<22} {wr:>10.3f} {cr:>9.3f} {fs:>9} {js:>7.2f} {hs:>7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

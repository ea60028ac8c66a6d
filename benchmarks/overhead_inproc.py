"""The recording's cost measured inside one process: plain and recorded compiles of the same
model, alternating. Prints figures; asserts nothing.

``overhead.py`` compares fresh processes, as a user runs them; on a machine where identical
processes differ by 15-20% its medians of a few rounds cannot resolve 5%. Here one process
builds the model, runs it eagerly, compiles it once unrecorded (discarded: imports, CUDA and
Triton set-up, the compile workers started), then ``--pairs`` pairs of compiles, the order
alternating (plain record, record plain, ...), each after ``torch._dynamo.reset()``, with
Inductor's caches off (``TORCHINDUCTOR_FORCE_DISABLE_CACHES=1``, a fresh cache dir): every
compile compiles again, in the same process state. Per compile: main-process CPU and wall of
the first compiled call; for the recorded one also building the report (``rec.report``) and
writing it (``to_json``). Ratio per pair: the recorded compile's wall plus report and write
(the user's total) / the plain compile's wall; the median over pairs.

    .venv/bin/python benchmarks/overhead_inproc.py --model llama-train --pairs 3
    .venv/bin/python benchmarks/overhead_inproc.py --model gpt2-2l-train --device cpu --pairs 4
    .venv/bin/python benchmarks/overhead_inproc.py --model gpt2-train --arm fusionlog   # recording(fusion_logs=True)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from overhead import ARMS, MODELS, ROOT, SCRUBBED_ENV, _arm_context, _cpu_s, log, workload  # noqa: E402

TAG = "INPROC_RESULT "


def child(model_name: str, device: str, pairs: int, recorded: str = "record") -> list[dict]:
    import torch

    model, step, sync = workload(model_name, device)
    step(model)
    sync()
    order = ["warm-up"] + [
        a for i in range(pairs) for a in (("plain", "record") if i % 2 == 0 else ("record", "plain"))
    ]
    out = []
    scratch = Path(os.environ["PT2X_INPROC_SCRATCH"])
    for arm in order:
        torch._dynamo.reset()
        compiled = torch.compile(model)
        c0, w0 = _cpu_s(), time.perf_counter()
        if arm == "record":
            with _arm_context(recorded) as rec:
                step(compiled)
                sync()
        else:
            step(compiled)
            sync()
        row = {"arm": arm, "cpu_s": _cpu_s() - c0, "wall_s": time.perf_counter() - w0}
        if arm == "record":
            w1 = time.perf_counter()
            report = rec.report
            w2 = time.perf_counter()
            report.to_json(scratch / "report.json")
            row.update(report_s=w2 - w1, write_s=time.perf_counter() - w2, events=len(rec.events))
            del rec, report
        log(f"[{model_name}] {arm:<8} cpu {row['cpu_s']:6.2f}s  wall {row['wall_s']:6.2f}s"
            + (f"  report {row['report_s']:.2f}s  write {row['write_s']:.2f}s" if arm == "record" else ""))  # fmt: skip
        out.append(row)
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        sys.path.insert(0, str(ROOT))
        print(TAG + json.dumps(child(argv[1], argv[2], int(argv[3]), argv[4])), flush=True)
        return 0
    p = argparse.ArgumentParser(description="Plain and recorded compiles alternating in one process.")
    p.add_argument("--model", default="llama-train", choices=sorted(MODELS))
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument(
        "--arm", default="record", choices=[a for a in ARMS if a not in ("plain", "trace")],
        help="the recorded compile's settings (overhead.py's arms; default: recording())",
    )  # fmt: skip
    a = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="pt2x-inproc-") as scratch:
        env = {k: v for k, v in os.environ.items() if k not in SCRUBBED_ENV}
        env.update(
            TORCHINDUCTOR_FORCE_DISABLE_CACHES="1", TORCHINDUCTOR_CACHE_DIR=os.path.join(scratch, "inductor"),
            TRITON_CACHE_DIR=os.path.join(scratch, "triton"), PT2X_INPROC_SCRATCH=scratch, PYTHONUNBUFFERED="1",
        )  # fmt: skip
        cmd = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--child",
            a.model,
            a.device,
            str(a.pairs),
            a.arm,
        ]
        proc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    rows = next(
        (json.loads(line[len(TAG) :]) for line in proc.stdout.splitlines() if line.startswith(TAG)), None
    )
    if rows is None:
        raise SystemExit(f"the child exited {proc.returncode} without a result")
    rows = rows[1:]  # the warm-up compile
    ratios, cpu = [], []
    for i in range(0, len(rows) - 1, 2):
        pair = {r["arm"]: r for r in rows[i : i + 2]}
        rec, plain = pair["record"], pair["plain"]
        ratios.append((rec["wall_s"] + rec["report_s"] + rec["write_s"]) / plain["wall_s"])
        cpu.append(rec["cpu_s"] / plain["cpu_s"])
    print(
        f"\n{a.model} on {a.device}, {a.arm} against plain, {len(ratios)} pairs in one process, {time.strftime('%Y-%m-%d')}"
    )
    print("user's total / plain wall, per pair: " + " / ".join(f"{r:.3f}" for r in ratios))
    print(
        f"median {statistics.median(ratios):.3f}; compile CPU record / plain, median {statistics.median(cpu):.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

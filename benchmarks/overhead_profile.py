"""Where the recording's cost goes: cProfile of a plain and a recorded compile of the same model
in one process, and the functions whose time differs most. Prints figures; asserts nothing.

``overhead.py`` and ``overhead_inproc.py`` say how much the recording adds; this says where.
One process builds the model, runs it eagerly, compiles it once unrecorded (discarded: imports,
CUDA and Triton set-up), then compiles it plain and recorded (``--arm``, overhead.py's arms),
each after ``torch._dynamo.reset()`` with Inductor's caches off, each first call under
cProfile (the main process only: Inductor's compile workers are other processes). cProfile
slows Python code, so its seconds are larger than a run's; what matters is the difference.
Printed: both compiles' profiled seconds, then the functions by the difference of their own
time (``tottime``, recorded - plain) and of their cumulative time for code under compiler/ and
torch's logging and tracing helpers. ``--out DIR`` keeps both profiles (``pstats`` files).

    .venv/bin/python benchmarks/overhead_profile.py --model llama-train --out $OUT        # H100
    .venv/bin/python benchmarks/overhead_profile.py --model gpt2-2l-train --device cpu
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from overhead import ARMS, MODELS, ROOT, _arm_context, workload  # noqa: E402


def _profiled(fn) -> tuple[pstats.Stats, float]:
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.runcall(fn)
    return pstats.Stats(prof), time.perf_counter() - t0


def _by_function(stats: pstats.Stats) -> dict[tuple, tuple[float, float]]:
    return {f: (tt, ct) for f, (_cc, _nc, tt, ct, _callers) in stats.stats.items()}  # type: ignore[attr-defined]


def _name(f: tuple) -> str:
    path, line, func = f
    for root in (str(ROOT) + os.sep, "site-packages" + os.sep):
        if root in path:
            path = path.split(root, 1)[1]
    return f"{path}:{line}({func})"


def compare(plain: pstats.Stats, recorded: pstats.Stats, top: int) -> None:
    a, b = _by_function(plain), _by_function(recorded)
    keys = set(a) | set(b)
    own = sorted(keys, key=lambda f: b.get(f, (0, 0))[0] - a.get(f, (0, 0))[0], reverse=True)
    print(f"\nown time, recorded - plain (top {top}):")
    for f in own[:top]:
        d = b.get(f, (0, 0))[0] - a.get(f, (0, 0))[0]
        print(f"  {d:+8.3f} s  {_name(f)}")
    ours = [f for f in keys if "/compiler/" in f[0] or "_logging" in f[0] or "trace_structured" in f[2]]
    cum = sorted(ours, key=lambda f: b.get(f, (0, 0))[1] - a.get(f, (0, 0))[1], reverse=True)
    print(f"\ncumulative time, recorded - plain, compiler/ and torch's logging (top {top}):")
    for f in cum[:top]:
        d = b.get(f, (0, 0))[1] - a.get(f, (0, 0))[1]
        print(f"  {d:+8.3f} s  {_name(f)}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="cProfile of a plain and a recorded compile, compared.")
    p.add_argument("--model", default="llama-train", choices=sorted(MODELS))
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--arm", default="record", choices=[a for a in ARMS if a not in ("plain", "trace")])
    p.add_argument("--top", type=int, default=30)
    p.add_argument("--out", metavar="DIR", help="keep both profiles here (plain.pstats, ARM.pstats)")
    a = p.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    scratch = tempfile.mkdtemp(prefix="pt2x-oprof-")
    os.environ.update(TORCHINDUCTOR_FORCE_DISABLE_CACHES="1", TORCHINDUCTOR_CACHE_DIR=scratch)
    import torch

    model, step, sync = workload(a.model, a.device)
    step(model)
    sync()

    def compile_once(arm: str):
        torch._dynamo.reset()
        compiled = torch.compile(model)

        def run():
            if arm == "plain":
                step(compiled)
            else:
                with _arm_context(arm):
                    step(compiled)
            sync()

        return run

    compile_once("plain")()  # warm-up, discarded
    plain, plain_s = _profiled(compile_once("plain"))
    recorded, rec_s = _profiled(compile_once(a.arm))
    print(f"{a.model} on {a.device}, torch {torch.__version__}: profiled compile, plain {plain_s:.2f} s, "
          f"{a.arm} {rec_s:.2f} s ({rec_s / plain_s:.3f}x)")  # fmt: skip
    compare(plain, recorded, a.top)
    if a.out:
        Path(a.out).mkdir(parents=True, exist_ok=True)
        plain.dump_stats(os.path.join(a.out, "plain.pstats"))
        recorded.dump_stats(os.path.join(a.out, f"{a.arm}.pstats"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

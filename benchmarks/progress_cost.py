"""What the live line costs a compile: the time spent in the recording's progress tracker
(compiler/listen/_progress.py) and in drawing ``record``'s line (explorer/cli/_live.py), timed
inside one cold compile, beside the main process's CPU time for it. Prints figures; asserts
nothing. ``--every -1`` draws every change (none throttled); the default is the line's own.

    .venv/bin/python benchmarks/progress_cost.py --model gpt2-2l --device cpu
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from overhead import MODELS, ROOT, workload  # noqa: E402


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="gpt2-2l", choices=sorted(MODELS))
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    p.add_argument(
        "--every", type=float, default=None, help="the line's redraw interval (s); -1: every change"
    )
    a = p.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    import torch

    import compiler
    from compiler.listen import _progress
    from explorer.cli import _live

    if a.every is not None:
        _live.EVERY_S = a.every
    spent = {"tracker": 0.0, "events": 0, "line": 0.0, "calls": 0}
    event = _progress.ProgressTracker.event

    def timed_event(self, ev):
        t = time.perf_counter()
        event(self, ev)
        spent["tracker"] += time.perf_counter() - t
        spent["events"] += 1

    _progress.ProgressTracker.event = timed_event  # our own code, timed
    live = _live.LiveLine(_Terminal())

    def drawn(progress):
        t = time.perf_counter()
        live(progress)
        spent["line"] += time.perf_counter() - t
        spent["calls"] += 1

    model, step, sync = workload(a.model, a.device)
    torch._dynamo.reset()
    cpu = time.process_time()
    with compiler.recording(on_progress=drawn, caches=False):
        step(torch.compile(model))
        sync()
    cpu = time.process_time() - cpu
    share = 100 * (spent["tracker"] + spent["line"]) / cpu
    print(
        f"{a.model} on {a.device}, torch {torch.__version__}: {spent['events']} structured-trace events, "
        f"{spent['calls']} progress calls; the tracker on those events {spent['tracker']:.3f} s, the line "
        f"{spent['line']:.3f} s (partly inside the tracker's), of {cpu:.2f} s main-process CPU (at most {share:.1f}%)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

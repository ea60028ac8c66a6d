"""How eager and compiled calls are timed (``compiler.benchmark``); docs/benchmark.md.

CPU: single calls interleave in ABBA order (E C, C E, E C, ...), so drift (thermal, frequency,
other processes) and order effects cancel; ``time.perf_counter`` per call. Around each call,
how long the process's threads waited for a core (Linux's per-thread ``schedstat`` run delay,
``waited_ms``): on a machine whose cores are taken, a call that runs a parallel region (a bf16
matmul under autocast, even on 2x8) waits for its second thread's core on every call, and its
time is the scheduler's (12 ms against 0.05 ms on a shared 2-core machine), for both arms alike.

GPU: as ``triton.testing.do_bench`` times one function — a 256 MB buffer zeroed before every
call (flushes L2, not timed), a pair of CUDA events around each call, no synchronisation
between calls so the CPU runs ahead as it would in a loop of that call — but in *blocks* of
back-to-back calls of one arm, the blocks interleaved ABBA. Each block begins with about 25 ms of
untimed lead-in calls, so a timed call sees the queue a stream of its own arm leaves: a launch-bound
arm is timed at its launch rate, as in a steady loop, and cannot hide its CPU overhead behind
the other arm's queued GPU work (which single interleaved calls allow). ``reps`` timed calls
per arm in all.
"""

from __future__ import annotations

import glob
import math
import time
from collections.abc import Callable

import torch

from ..model._benchtypes import Timing
from ..model._progress import LineProgress

# torch is imported where calls are timed: the notes on timings (Benchmark.timing_notes) are
# read where torch is not installed, with the saved report

L2_FLUSH_BYTES = 256 * 1024 * 1024
TARGET_S = 1.0  # per arm, when reps is not given
BLOCK_MS = 100.0  # a GPU block's timed calls last about this long
LEAD_MS = 25.0  # and its untimed lead-in calls this long (do_bench's warm-up)


def schedule(reps: int) -> list[str]:
    """The order of timed units (calls on CPU, blocks on GPU): pairs alternate E C / C E
    (ABBA), so a linear drift adds the same to both arms and neither always runs second."""
    out: list[str] = []
    for i in range(reps):
        out += ["eager", "compiled"] if i % 2 == 0 else ["compiled", "eager"]
    return out


def block_size(per_call_ms: float) -> tuple[int, int]:
    """(lead-in calls, timed calls) of a GPU block: about LEAD_MS then BLOCK_MS of work, 2 to 10
    lead-in calls and 2 to 50 timed ones. A queue takes some calls to reach the state a steady
    loop of one function leaves (full for a GPU-bound arm, paced by launches for a CPU-bound
    one); the lead-in covers that."""
    per_call_ms = max(per_call_ms, 1e-3)
    return max(2, min(10, round(LEAD_MS / per_call_ms))), max(2, min(50, round(BLOCK_MS / per_call_ms)))


def block_sizes(reps: int, k: int) -> list[int]:
    """Timed calls in each block of one arm: blocks of ``k``, the last one shorter, ``reps`` in all."""
    return [k] * (reps // k) + ([reps % k] if reps % k else [])


def _quantile(sorted_xs: list[float], q: float) -> float:
    pos = (len(sorted_xs) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (pos - lo)


def waited_ms() -> float | None:
    """How long this process's threads have waited, runnable, for a core since they started
    (the second field of Linux's ``/proc/self/task/*/schedstat``), in ms; None where the
    kernel does not say (another OS, no schedstats). A thread that ended in between drops out:
    a difference of two readings is a lower bound."""
    total, seen = 0, False
    for path in glob.glob("/proc/self/task/*/schedstat"):
        try:
            with open(path, encoding="ascii") as f:
                total += int(f.read().split()[1])
            seen = True
        except (OSError, ValueError, IndexError):
            continue
    return total / 1e6 if seen else None


def timing(samples_ms: list[float], waits_ms: list[float] | None = None) -> Timing:
    """Median, quartiles (linear interpolation, as numpy's default), min, max; and the median
    call's wait for a core where each call's was measured (``waits_ms``)."""
    if not samples_ms:
        raise ValueError("no samples")
    xs = sorted(samples_ms)
    waits = sorted(waits_ms) if waits_ms and len(waits_ms) == len(samples_ms) else None
    return Timing(
        median_ms=_quantile(xs, 0.5),
        p25_ms=_quantile(xs, 0.25),
        p75_ms=_quantile(xs, 0.75),
        min_ms=xs[0],
        max_ms=xs[-1],
        reps=len(xs),
        samples_ms=tuple(samples_ms),
        waited_ms=_quantile(waits, 0.5) if waits else None,
    )


def break_even(compile_time_s: float | None, eager_ms: float, compiled_ms: float) -> float | None:
    """Calls after which the compile has paid for itself; None ("never") when compiled is
    not faster or the compile time is unknown."""
    saved_s = (eager_ms - compiled_ms) / 1e3
    if compile_time_s is None or saved_s <= 0:
        return None
    return compile_time_s / saved_s


class Timer:
    """Times ``calls["eager"]`` and ``calls["compiled"]`` into ``samples`` (ms per call); on
    KeyboardInterrupt the samples taken so far stay."""

    def __init__(self, calls: dict[str, Callable], cuda: bool, show: Callable[[str], None]):
        self.calls, self.cuda, self.show = calls, cuda, show
        self.samples: dict[str, list[float]] = {"eager": [], "compiled": []}
        self.waits: dict[str, list[float]] = {"eager": [], "compiled": []}  # CPU, where Linux says
        self.note = ""

    def run(self, reps: int | None, warmup: int, label: str) -> None:

        t0 = time.perf_counter()
        for i in range(warmup):
            self.show(f"benchmark {label}: warm-up {i + 1}/{warmup}")
            for arm in ("eager", "compiled"):
                self.calls[arm]()
        if self.cuda:
            torch.cuda.synchronize()
        per_call_ms = (time.perf_counter() - t0) * 1e3 / max(2 * warmup, 1)
        if reps is None:
            reps = int(
                min(200 if self.cuda else 100, max(10 if self.cuda else 5, TARGET_S * 1e3 / per_call_ms))
            )
        if self.cuda:
            self._gpu(reps, per_call_ms, label)
        else:
            self._cpu(reps, label)

    def _cpu(self, reps: int, label: str) -> None:
        for i, arm in enumerate(schedule(reps)):
            w = waited_ms()  # read outside the timed region
            t = time.perf_counter()
            self.calls[arm]()
            self.samples[arm].append((time.perf_counter() - t) * 1e3)
            w2 = waited_ms() if w is not None else None
            if w is not None and w2 is not None:
                self.waits[arm].append(max(w2 - w, 0.0))
            if i % 2 == 1:
                self.show(f"benchmark {label}: rep {i // 2 + 1}/{reps}")

    def _gpu(self, reps: int, per_call_ms: float, label: str) -> None:

        try:
            flush = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
        except torch.OutOfMemoryError:
            flush = None
            self.note = " (L2 NOT flushed: no memory for the flush buffer)"
        lead, k = block_size(per_call_ms)
        sizes = block_sizes(reps, k)
        done = {"eager": 0, "compiled": 0}  # blocks run per arm
        try:
            for i, arm in enumerate(schedule(len(sizes))):
                call, n = self.calls[arm], sizes[done[arm]]
                done[arm] += 1
                torch.cuda.synchronize()
                events = []
                for j in range(lead + n):
                    if flush is not None:
                        flush.zero_()
                    if j < lead:
                        call()
                        continue
                    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    start.record()
                    call()
                    end.record()
                    events.append((start, end))
                torch.cuda.synchronize()
                self.samples[arm] += [s.elapsed_time(e) for s, e in events]
                if i % 2 == 1:
                    self.show(f"benchmark {label}: block {i // 2 + 1}/{len(sizes)} ({n} calls per arm)")
        finally:
            del flush


def method(cuda: bool) -> str:
    if cuda:
        return (
            "CUDA events around each call; 256 MB written before each call to flush L2 (not timed); "
            f"calls back to back (no synchronisation) in blocks of about {BLOCK_MS:.0f} ms of one arm, each led "
            f"in by about {LEAD_MS:.0f} ms of untimed calls; blocks of eager and compiled interleaved in ABBA order"
        )
    import os

    return (
        f"time.perf_counter per call; eager and compiled interleaved in ABBA order; "
        f"{torch.get_num_threads()} threads (OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')})"
    )


# ---- progress --------------------------------------------------------------------------------


def progress_line(progress) -> Callable[..., None]:
    """``progress=True``: a LineProgress; falsy: silent; else the caller's own callable."""
    if progress is True:
        return LineProgress()
    if not progress:
        return lambda text, final=False: None
    return progress

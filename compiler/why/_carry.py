"""What a benchmark's figures carry, and what a fix can win at most. Torch-free.

A verdict names a cause only where the figures can carry one:

- **compiled anew**: torch compiled during the benchmark's calls (``Benchmark.compiles_while_timing``:
  a guard failed, torch's reason with it). The calls it timed ran code the recording does not
  hold, so no part of them is the recorded program's: no cause is named, and the headline says
  so first.
- **no clear winner**: the medians differ by less than the wider IQR, an arm's median call
  waited for a core a tenth of its time (``compiler/model/_benchtypes.py``: ``within_spread``,
  ``waited``), or the profiled calls' kernels took half as long again as the timed median (a
  busy machine): the headline is "no clear winner" with the remedy, and names no cause read from
  the timings. An eager fallback is not read from them (the report says no compiled code ran
  for a frame), nor is a backend that runs the graph with eager kernels (the report's config
  says so): either is named where it leads, whatever they say (``_verdict.py``: ``REPORT_FACTS``).

Each cause whose fix the verdict names says what the fix can win at most, an Amdahl bound from
the share of the call the fix removes: the call without that part. Graph breaks removed take the
Python between the graphs with them and the guards of the frames they resume (all but one
graph's); every other fix takes its own part.
"""

from __future__ import annotations

import dataclasses

from ..model._benchtypes import Benchmark, waited, within_spread
from ..model._verdicttypes import Cause
from ._text import first_line

# the profiled kernels over this many times the timed median: the profile is not the timed call's.
# The profiler's own cost and an L2 left warm or cold move a steady call's kernel sum by some
# tenths; a busy host's by whole multiples (969.8 ms of kernels beside a 37.33 ms median)
PROFILE_OVER = 1.5
WHOLE = 0.99  # a part this share of the call bounds nothing: "up to 100×" says no more than "much"


def unread(bench: Benchmark, kernels_ms: float, compiled_ms: float) -> tuple[str, str] | None:
    """Why the verdict names no cause, and its headline; None where the figures carry one."""
    anew = compiled_anew(bench)
    if anew is not None:
        return anew, compiled_anew_headline(bench, anew)
    reasons = unclear(bench, kernels_ms, compiled_ms)
    return ("no clear winner: " + "; ".join(reasons), unclear_headline(bench, reasons)) if reasons else None


def compiled_anew(bench: Benchmark) -> str | None:
    """Why no cause can be named where the benchmark made torch compile: its compiles, the
    first with torch's reason (the guard that failed); None where it compiled nothing."""
    timing = bench.compiles_while_timing
    if not timing:
        return None
    n = len(timing)
    return f"the benchmark compiled anew: {n} compile{'s' * (n > 1)} while it ran, the first {first_line(timing)}"


def compiled_anew_headline(bench: Benchmark, why: str) -> str:
    return (
        f"{why}; no cause is named: the calls it timed ran code the recording does not hold, so their "
        f"parts are not the recorded program's ({bench.speedup_words} is that code's figure)"
    )


def unclear(bench: Benchmark, kernels_ms: float, compiled_ms: float) -> tuple[str, ...]:
    """The cautions under which the figures name no cause, each in words; () where none holds."""
    out = []
    e, c = bench.eager, bench.compiled
    if e is not None and c is not None and within_spread(e, c):
        out.append(
            f"the medians differ by {abs(e.median_ms - c.median_ms):.3g} ms, within the wider IQR "
            f"({max(e.iqr_ms, c.iqr_ms):.3g} ms)"
        )
    for arm, t in (("eager", e), ("compiled", c)):
        if t is not None and waited(t):
            out.append(
                f"{arm}'s median call waited {t.waited_ms:.4g} ms for a core, of its {t.median_ms:.4g} ms"
            )
    if kernels_ms > PROFILE_OVER * compiled_ms:
        out.append(
            f"the profiled calls' kernels took {kernels_ms:.4g} ms a call, more than the timed median's "
            f"{compiled_ms:.4g} ms"
        )
    return tuple(out)


def remedy(cpu: bool) -> str:
    threads = "fewer threads than free cores (OMP_NUM_THREADS=N), " if cpu else ""
    return f"to tell, time it again with {threads}more calls (--reps N) on a quiet machine"


def unclear_headline(bench: Benchmark, reasons: tuple[str, ...]) -> str:
    return (
        f"no clear winner ({bench.speedup_words}, as timed): {'; '.join(reasons)}; no cause is named from "
        f"figures this unsteady; {remedy(bench.device == 'cpu')}"
    )


def with_gains(causes: list[Cause], pieces: float | None) -> list[Cause]:
    """Each cause with a fix, with what the fix can win at most (``Cause.gain``)."""
    guards = next((c.share for c in causes if c.key == "guards"), None) or 0.0
    out = []
    for c in causes:
        if c.fix is None or c.share is None:
            out.append(c)
            continue
        removes = c.share
        if c.key == "breaks" and pieces and pieces > 1:  # the resumed frames' guards go with the breaks
            removes += guards * (pieces - 1) / pieces
        out.append(dataclasses.replace(c, gain=bound(removes), removes=removes))
    return out


def bound(removes: float) -> float | None:
    """The call up to this many times faster without a part that is ``removes`` of it; None
    where the part is nearly all of the call (``WHOLE``)."""
    return 1.0 / (1.0 - removes) if 0.0 <= removes < WHOLE else None

"""The words of a compile's progress (a ``compiler.types.Progress``), one line: what
``pt2-explorer record``'s live line (explorer/cli/_live.py) and ``%%compile``'s progress widget
(explorer/notebook/_progress.py) both say."""

from __future__ import annotations

import os
import time


def progress_text(p, last_run: dict[str, tuple[str | None, dict[str, float]]] | None = None, now=None) -> str:
    """The line for a ``compiler.types.Progress``, most telling first (a terminal cuts the rest):
    the compile, its stage and the seconds in it (beside that stage's seconds in the last run:
    ``last_run`` maps a compile id to its frame's name and stage times, ``baseline_times``),
    what it is doing (the wait on compile workers, the kernel n of N, the op autotuned, or
    torch's timed phase), the frame and its ``file:line``, the graph's FX nodes. ``now``:
    time.monotonic()."""
    now = time.monotonic() if now is None else now
    stage = f"compiling [{p.compile_id}] {p.stage} {now - p.stage_since:.1f} s"
    before = (last_run or {}).get(p.compile_id)
    if before is not None and before[0] == p.frame and p.stage in before[1]:
        stage += f" (last run: {before[1][p.stage]:.1f} s)"
    parts = [stage]
    if p.waiting and p.kernels:
        parts.append(f"waiting on compile workers: {p.kernels_done or 0} of {p.kernels} kernels compiled")
    elif p.waiting:
        parts.append("waiting on compile workers")
    elif p.autotuning is not None:
        parts.append(f"autotuning {p.autotuning}")
    elif p.kernels and p.kernels_done == p.kernels:
        parts.append(f"{p.kernels} of {p.kernels} kernels compiled")
    elif p.kernels is not None and p.kernel_n:
        parts.append(f"kernel {p.kernel_n} of {p.kernels}" + (f" {p.kernel}" if p.kernel else ""))
    elif p.kernel_n:  # loaded from the cache: torch logs the module's code once it is loaded
        parts.append(f"kernel {p.kernel_n}")
    elif p.phase is not None:
        parts.append(p.phase)
    if p.frame is not None:
        where = [f"{os.path.basename(p.filename)}:{p.line}"] if p.filename else []
        if p.called_from:
            where.append(f"called from {os.path.basename(p.called_from)}")
        parts.append(p.frame + (f" ({', '.join(where)})" if where else ""))
    if p.graph_nodes is not None:
        parts.append(f"{p.graph_nodes:,} nodes")
    return " · ".join(parts)


def progress_key(p) -> tuple:
    """What changes a display at once, however soon after the last: the compile, its stage, the
    op autotuned, and each step of its kernels (known, the first begun, the wait, all compiled);
    other changes (the phase, the next kernel) wait their turn."""
    kernels = (
        p.kernels is not None,
        bool(p.kernel_n),
        p.waiting,
        bool(p.kernels) and p.kernels_done == p.kernels,
    )
    return (p.compile_id, p.stage, p.autotuning, kernels)


def baseline_times(report) -> dict[str, tuple[str | None, dict[str, float]]]:
    """Each compile's frame name and stage times, by compile id: what the line compares with."""
    return {c.id: (c.name, dict(c.stage_times_s)) for c in report.compiles}

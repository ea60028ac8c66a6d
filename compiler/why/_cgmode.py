"""How the benchmarked function was compiled to run, as the verdict says it: the mode the user
compiled it with (the benchmark's own, else torch's records of the report's compiles), and
whether its graphs ran under CUDA graphs (the report's own CUDA-graph facts: the share of the
profiled GPU time under them, each skip with torch's reason). Torch-free."""

from __future__ import annotations

from ..assemble._speed import cudagraph_share
from ..model._benchtypes import Benchmark
from ..model._report import Report


def mode_of(report: Report | None, bench: Benchmark) -> str:
    """The mode the benchmarked function was compiled with: the benchmark's own where it
    compiled it, else what torch's records of the report's compiles say (a user's
    ``torch.compile(model, mode="reduce-overhead")`` that the benchmark reused)."""
    own = bench.config.mode
    if own not in (None, "default") or report is None:
        return own or "default"
    seen = [c.config.mode for c in report.compiles if c.config is not None and c.config.mode]
    return max(dict.fromkeys(seen), key=seen.count) if seen else own or "default"


def cudagraphs(bench: Benchmark, report: Report | None = None) -> tuple[bool, str]:
    """Whether the compiled arm ran under CUDA graphs, and why we think so: from the report's
    own CUDA-graph facts where it has them (the share of the profiled GPU time that ran in
    compiles whose graphs were used, and each skip's reason), else the mode."""
    share = cudagraph_share(report, bench) if report is not None else None
    if share is not None:
        why = f"{share:.0%} of the profiled GPU time ran under CUDA graphs" + "".join(
            f"; {s}" for s in skips(report)[:3]
        )
        return share > 0.5, why
    mode = mode_of(report, bench)
    on = mode == "reduce-overhead"
    return on, f"mode={mode}: CUDA graphs {'on' if on else 'off'}"


def skips(report: Report) -> list[str]:
    """``[0/1] skipped: <torch's reason, short>`` of each compile whose CUDA graphs torch skipped."""
    return [
        f"[{c.id}] skipped: {c.cudagraphs.short_reason or ''}"
        for c in report.compiles
        if c.cudagraphs is not None and c.cudagraphs.state == "skipped"
    ]

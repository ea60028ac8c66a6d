"""Which cause a verdict's headline names (``main_cause``), and why where a larger part
follows it (``order_note``): the causes of ``ORDER`` are named first when they hold, then the
largest part. Torch-free."""

from __future__ import annotations

from ..model._benchtypes import Benchmark
from ..model._verdicttypes import Cause

ORDER = ("fallback", "backend", "breaks", "recompiles", "cudagraphs", "sync")  # named first when they hold


def main_cause(causes: list[Cause], bench: Benchmark, all_eager: bool = False) -> Cause | None:
    """The first cause of ``ORDER`` that holds and takes 5% of the call (recompiles only where
    they happened during the timed calls); else the largest part. An eager fallback leads where
    every kernel of the call ran outside the compiled graphs (``all_eager``), else only by its
    share: a frame that failed while its inner frames compiled (a wrapper around the model's
    forward) costs the call only the kernels it ran outside the graphs, and is ranked by that
    share like the rest. Generated kernels that beat eager's are no cause: the largest other
    part is named, unless no other part is 5% of the call (then the generated kernels are, as
    already faster than eager's)."""
    for key in ORDER:
        hit = next((x for x in causes if x.key == key), None)
        if key == "recompiles" and not bench.compiles_while_timing:
            continue  # recompiles before the timed calls cost the steady call nothing: listed, not named
        always = key in ("cudagraphs", "backend") or (key == "fallback" and all_eager)
        if hit is not None and (hit.share is None or hit.share >= 0.05 or always):
            return hit
    ranked = [x for x in causes if x.share is not None and (x.key not in ORDER or x.key == "fallback")]
    top = max(ranked, key=lambda x: x.share or 0.0, default=None)
    if top is not None and top.key == "generated-ok" and bench.eager_launches:
        rest = [x for x in ranked if x.key != "generated-ok"]
        other = max(rest, key=lambda x: x.share or 0.0, default=None)
        if other is not None and (other.share or 0.0) >= 0.05:
            return other
    return top


def order_note(main: Cause | None, causes: list[Cause]) -> str:
    """Why the headline names a cause that a larger one follows: causes are named in a fixed
    order (``ORDER``), a cause of that order before the largest part; "" where none is larger."""
    if main is None or main.key not in ORDER or main.share is None:
        return ""
    larger = [c for c in causes if c is not main and c.share is not None and c.share > main.share]
    if not larger:
        return ""
    top = max(larger, key=lambda c: c.share or 0.0)
    return (
        f" (named before {top.title}, {top.share:.0%}: causes are named in a fixed order, fallback, "
        "backend, graph breaks, recompiles, CUDA-graph skips, host↔device copies, then the largest part)"
    )

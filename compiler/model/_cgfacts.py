"""What torch's CUDA-graph texts say, read once: a skip reason's first line without torch's
prefix (``CudaGraphs.short_reason``), and the count of sizes torch's size warning gives
(``CudaGraphs.warned_sizes``). Read when the report is built (compiler/assemble/_speed.py),
and when a report written before it held them loads (``with_cudagraph_facts``, one of
``UPGRADES``): in the file form's layer, so that the loader reaches it."""

from __future__ import annotations

import re
from typing import Any

from ._refill import refilled

SKIP = re.compile(r"^skipping cudagraphs? (?:due to )?", re.I)  # torch's prefix of a skip reason
_OBSERVED = re.compile(r"observed (\d+) distinct sizes")


def short_reason(reason: str | None) -> str:
    """A skip reason's first line without torch's "skipping cudagraphs due to"."""
    first = reason.strip().splitlines()[0] if reason and reason.strip() else ""
    while SKIP.match(first):  # torch prefixes some reasons twice
        first = SKIP.sub("", first, count=1)
    first = first.split("Found from")[0]
    return first.strip().rstrip(".:").strip()


def observed_sizes(warning: str) -> int | None:
    """torch's CUDA-graph warning "… We have observed 5 distinct sizes …" -> 5: the count when
    it warned (once, at its limit), not the sizes recorded in all."""
    m = _OBSERVED.search(warning)
    return int(m[1]) if m else None


def with_cudagraph_facts(report: Any) -> Any:
    """A report's JSON form with each compile's CUDA-graph ``short_reason`` and
    ``warned_sizes`` (reports written before the build read them). ``report`` itself is left
    as it was; a part not of the schema's shape is kept for the schema check to name."""
    return refilled(report, "compiles", _missing, _read)


def _missing(c: Any) -> bool:
    cg = c.get("cudagraphs") if isinstance(c, dict) else None
    if not isinstance(cg, dict):
        return False
    reason, warnings = cg.get("reason"), cg.get("warnings")
    # the file form leaves a None and an empty tuple out: a record that needs neither has none
    old_reason = isinstance(reason, str) and "short_reason" not in cg
    old_warnings = isinstance(warnings, list) and bool(warnings) and "warned_sizes" not in cg
    return old_reason or old_warnings


def _read(c: dict) -> dict:
    cg = dict(c["cudagraphs"])
    if isinstance(cg.get("reason"), str) and "short_reason" not in cg:
        cg["short_reason"] = short_reason(cg["reason"])
    warnings = cg.get("warnings")
    if isinstance(warnings, list) and warnings and "warned_sizes" not in cg:
        cg["warned_sizes"] = [observed_sizes(w) if isinstance(w, str) else None for w in warnings]
    return {**c, "cudagraphs": cg}

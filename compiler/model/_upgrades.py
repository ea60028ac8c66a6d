"""An older report's JSON form made current when it loads (``UPGRADES``, run by the loader,
compiler/model/_report.py: ``from_json``)."""

from __future__ import annotations

from typing import Any

from ._callsites import with_torch_breaks
from ._cgfacts import with_cudagraph_facts
from ._externcalls import with_extern_calls
from ._irbounds import with_ir_bounds
from ._phasenames import with_phase_names
from ._reasons import with_short_reasons
from ._skipwarn import with_folded_warnings
from ._speedtypes import with_component_lines

# an older report's form, made current when it loads (each takes and returns a report's JSON
# form, leaving it as it was): cache key components as one text; WON'T CONVERT warnings as
# breaks of their own; torch's own breaks marked, no frame of this package in a stack, a
# resumed frame's caller from the break stacks; the facts the build reads from torch's text
UPGRADES = (
    with_component_lines,
    with_folded_warnings,
    with_torch_breaks,
    with_phase_names,
    with_cudagraph_facts,
    with_extern_calls,
    with_short_reasons,
    with_ir_bounds,
)


def upgraded(report: Any) -> Any:
    """``report`` and each rank's report in it, through ``UPGRADES``."""
    if not isinstance(report, dict):
        return report
    for upgrade in UPGRADES:
        report = upgrade(report)
    ranks = report.get("ranks")
    if isinstance(ranks, list):
        new = [upgraded(r) for r in ranks]
        if any(a is not b for a, b in zip(new, ranks)):
            report = {**report, "ranks": new}
    return report

"""torch's timed phases (chromium_event records): seconds per phase and per stage."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from ._events import Event
from ._stages import FAILURE_PHASE_STAGE, PHASE_STAGE

if TYPE_CHECKING:
    pass


def _timing(ev: Event, acc_for, accs) -> None:
    try:
        data = json.loads(ev.payload) if ev.payload else None
    except json.JSONDecodeError:
        return
    if not isinstance(data, dict):
        return
    cid = (data.get("args") or {}).get("compile_id") or ev.compile_id
    if not isinstance(cid, str) or not re.fullmatch(r"(?:!\d+/)?\d+/\d+", cid):
        return
    a = acc_for(cid, ev.metadata)
    name, ph, ts = data.get("name"), data.get("ph"), data.get("ts")
    if not isinstance(name, str) or not isinstance(ts, (int, float)):
        return
    if ph == "B":
        a.open_phases.setdefault(name, []).append(ts)
        if name in FAILURE_PHASE_STAGE:
            a.last_phase = name
    elif ph == "E" and a.open_phases.get(name):
        start = a.open_phases[name].pop()
        a.phase_times[name] = a.phase_times.get(name, 0.0) + (ts - start) / 1e6
        stage = PHASE_STAGE.get(name)
        if stage:
            a.stage_spans.setdefault(stage, []).append((start, ts))


def _union_s(spans: list[tuple[float, float]]) -> float:
    """Seconds covered by possibly nested/overlapping phase spans (microsecond stamps)."""
    total, end = 0.0, None
    for s, e in sorted(spans):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total / 1e6

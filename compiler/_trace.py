"""Read TORCH_TRACE logs (``TORCH_TRACE=dir python prog.py``) into a Report."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import warnings

import torch

from . import _build
from ._events import TraceFormatError, TraceTruncatedError, rank_of, read_trace_file, trace_files
from ._report import Report


def load_trace(path: str | os.PathLike[str], *, rank: int | None = None, strict: bool = False) -> Report:
    """Read one TORCH_TRACE log file (plain or gzipped), or a directory of them (one per rank).

    With several ranks, ``rank`` picks one (default: the lowest); only that rank's files
    are read when torch put the rank in their names (``dedicated_log_torch_trace_rank_N_*``).

    A file that is not a TORCH_TRACE log, or is damaged in its middle, raises
    ``TraceFormatError`` naming the file and line. A log cut off at its end (the process
    was killed or crashed, or the copy is incomplete) keeps every complete event before the
    cut: the report's ``error`` names the file and line of the cut, a compile that was still
    running shows as failed ("did not finish"), and a warning is issued. ``strict=True``
    raises ``TraceTruncatedError`` (a ``TraceFormatError``) instead.
    """
    path = os.fspath(path)
    files = trace_files(path)
    by_name = {f: _rank_in_name(f) for f in files}
    named = {r for r in by_name.values() if r is not None}
    want = rank if rank is not None else (min(named) if named else None)
    per_rank: dict[int | None, tuple[str, list, list[str]]] = {}
    for f in files:
        if by_name[f] is not None and by_name[f] != want:
            continue  # another rank's log: not read, so its damage cannot stop this one
        events: list = []
        cuts: list[str] = []
        try:
            for ev in read_trace_file(f):
                events.append(ev)
        except TraceTruncatedError as e:
            if strict or not events:
                raise
            cuts.append(str(e))
        if not events:
            raise TraceFormatError(f"{f}: empty file, no TORCH_TRACE events")
        r = rank_of(f, events)
        if r in per_rank:
            per_rank[r][1].extend(events)
            per_rank[r][2].extend(cuts)
        else:
            per_rank[r] = (f, events, cuts)
    if rank is not None:
        if rank not in per_rank:
            present = sorted(named | {r for r in per_rank if r is not None})
            raise ValueError(f"{path}: no log for rank {rank}; ranks present: {present}")
        chosen = rank
    else:
        chosen = sorted(per_rank, key=lambda r: (r is not None, r or 0))[0]
    src_file, events, cuts = per_rank[chosen]
    version = _version_of(events)
    report = _build.build(events, torch_version=version, source=f"torch-trace:{src_file}")
    if cuts:  # the compile that was running shows as failed ("did not finish")
        report = dataclasses.replace(report, error="; ".join(cuts))
        warnings.warn(report.error, stacklevel=2)
    return report


def _rank_in_name(path: str) -> int | None:
    m = re.search(r"rank_(\d+)_", os.path.basename(path))
    return int(m.group(1)) if m else None


def _version_of(events) -> str:
    for ev in events:
        if ev.name == "compilation_metrics" and isinstance(ev.body, dict):
            v = ev.body.get("pytorch_version")
            if v:
                return str(v)
    for ev in events:  # newer torch (2.13 here) logs its version once, before any compile
        if ev.name == "artifact:torch_version" and ev.payload:
            try:
                v = json.loads(ev.payload).get("pytorch_version")
            except (json.JSONDecodeError, AttributeError):
                continue
            if v:
                return str(v)
    return f"unknown (read with {torch.__version__})"


__all__ = ["load_trace", "TraceFormatError"]

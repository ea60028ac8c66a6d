"""Read TORCH_TRACE logs (``TORCH_TRACE=dir python prog.py``) into a Report."""

from __future__ import annotations

import os

import torch

from . import _build
from ._events import TraceFormatError, rank_of, read_trace_file, trace_files
from ._report import Report


def load_trace(path: str | os.PathLike[str], *, rank: int | None = None) -> Report:
    """Read one TORCH_TRACE log file, or a directory of them (one per rank).

    With several ranks, ``rank`` picks one (default: the lowest). A garbage or truncated
    file raises ``TraceFormatError`` naming the file and line; the events before a
    truncation are not silently dropped into a half report.
    """
    path = os.fspath(path)
    files = trace_files(path)
    per_rank: dict[int | None, tuple[str, list]] = {}
    for f in files:
        events = list(read_trace_file(f))
        if not events:
            raise TraceFormatError(f"{f}: empty file, no TORCH_TRACE events")
        r = rank_of(f, events)
        if r in per_rank:
            per_rank[r][1].extend(events)
        else:
            per_rank[r] = (f, events)
    if rank is not None:
        if rank not in per_rank:
            raise ValueError(f"{path}: no log for rank {rank}; ranks present: {sorted(per_rank, key=str)}")
        chosen = rank
    else:
        chosen = sorted(per_rank, key=lambda r: (r is not None, r or 0))[0]
    src_file, events = per_rank[chosen]
    version = _version_of(events)
    return _build.build(events, torch_version=version, source=f"torch-trace:{src_file}")


def _version_of(events) -> str:
    for ev in events:
        if ev.name == "compilation_metrics" and isinstance(ev.body, dict):
            v = ev.body.get("pytorch_version")
            if v:
                return str(v)
    return f"unknown (read with {torch.__version__})"


__all__ = ["load_trace", "TraceFormatError"]

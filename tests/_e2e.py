"""Helpers for the end-to-end tests of the in-process recorder (tests/test_e2e_*.py,
tests/test_recording_lifecycle.py)."""

from __future__ import annotations

import linecache
import logging

import torch

from compiler.listen._torch import FUSION_LOGGERS


def marker_line(path: str, marker: str) -> int:
    """The line number of the one line of ``path`` that carries ``# <marker>``."""
    tag = f"# {marker}"
    hits = [i for i, text in enumerate(linecache.getlines(path), start=1) if text.rstrip().endswith(tag)]
    assert len(hits) == 1, f"marker {tag!r} found on lines {hits} of {path}"
    return hits[0]


def source_line(path: str, line: int) -> str:
    return linecache.getline(path, line).strip()


def logger_state() -> dict[str, tuple]:
    """What a recording touches: the structured-trace logger's handlers and Inductor's fusion
    artifact loggers' (level, propagate, handlers)."""
    trace = logging.getLogger("torch.__trace")
    # torch's own LazyTraceHandler removes itself at the first trace record when TORCH_TRACE
    # is unset, recording or not: not ours to compare. (pytest's log capture attaches its
    # handlers to every non-propagating logger, these included: they must stay.)
    handlers = tuple(h for h in trace.handlers if type(h).__name__ != "LazyTraceHandler")
    state: dict[str, tuple] = {"torch.__trace": (trace.level, trace.propagate, handlers)}
    for module, artifact in FUSION_LOGGERS:
        log = torch._logging.getArtifactLogger(module, artifact)
        state[log.name] = (log.level, log.propagate, tuple(log.handlers))
    return state

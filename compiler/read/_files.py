"""TORCH_TRACE files: found (a file, or a directory of ranks), opened (gunzipped, within the
expansion limit), and the errors that name a place in one. Torch-free."""

from __future__ import annotations

import json
import os
from typing import Any

from ..assemble._events import Event
from ..model import _limits
from ..parse._names import rank_of_log


class TraceFormatError(ValueError):
    """A TORCH_TRACE file that cannot be read; the message starts with ``<file>:<line>:``
    (``<file>:`` alone where the whole file is wrong: empty, or not a regular file)."""


class TraceTruncatedError(TraceFormatError):
    """The log ends in the middle of an event (the process was killed or crashed while
    writing it). Every complete event before ``line`` is good."""

    def __init__(self, message: str, path: str, line: int):
        super().__init__(message)
        self.path = path
        self.line = line


def open_log(path: str):
    """The file as bytes (gunzipped when it is gzip). Lines are split on b"\n" only: a
    "\r" inside a payload is payload text. gzip data expands at most ``max_expansion`` ×
    the file's size + 16 MiB (compiler/model/_limits.py: load_trace's argument, else
    PT2_EXPLORER_MAX_EXPANSION, else 64); reading past that raises TraceFormatError naming
    the line it was reached in."""

    with open(path, "rb") as f:
        magic = f.read(2)
    if magic != b"\x1f\x8b":
        return open(path, "rb")
    ratio = _limits.reading.get()
    return _limits.open_gzip(
        path,
        _limits.ratio() if ratio is None else ratio,
        lambda line, problem: TraceFormatError(f"{path}:{line}: {problem}"),
    )


def not_utf8(path: str, lineno: int, line: bytes, col: int) -> TraceFormatError:
    """``line[col]`` (0-based) is where decoding failed; the message counts from 1."""
    return TraceFormatError(
        f"{path}:{lineno}: byte 0x{line[col]:02x} at column {col + 1} is not UTF-8 text: "
        "the log was damaged, or is not a TORCH_TRACE log"
    )


def size_text(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 2**20 else f"{n} bytes"


def shown_value(value: Any) -> str:
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def truncated(path: str, start: int, end: int, what: str) -> TraceTruncatedError:
    where = f"line {start}" if start >= end else f"lines {start}-{end}"
    return TraceTruncatedError(
        f"{path}:{start}: the log is truncated at {where}: {what} (a killed process or a cut "
        f"copy?); the events before line {start} are complete",
        path,
        start,
    )


def trace_files(path: str) -> list[str]:
    """The log files under ``path`` (a file, or a TORCH_TRACE directory of ranks)."""
    if os.path.isdir(path):
        files = sorted(
            os.path.join(path, n)
            for n in os.listdir(path)
            if os.path.isfile(os.path.join(path, n)) and not n.startswith(".")
        )
        if not files:
            raise FileNotFoundError(f"{path}: no TORCH_TRACE logs in this directory")
        return files
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file or directory")
    if not os.path.isfile(path):  # /dev/zero, a FIFO, a socket: refused, never read
        raise TraceFormatError(
            f"{path}: not a regular file or directory (a device, FIFO or socket is not read)"
        )
    return [path]


def rank_of(path: str, events: list[Event]) -> int | None:
    for ev in events:
        if "rank" in ev.metadata:
            return int(ev.metadata["rank"])
    return rank_of_log(path)

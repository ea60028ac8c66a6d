"""Raw structured-trace events: from in-process log records or from TORCH_TRACE files."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


def event_name(metadata: dict) -> str | None:
    """The event's name: the one key that is not context (``artifact:<name>`` for artifacts)."""
    for key in metadata:
        if key in _CONTEXT_KEYS:
            continue
        if key == "artifact":
            art = metadata[key]
            return f"artifact:{art.get('name')}" if isinstance(art, dict) else "artifact:?"
        return key
    return None


_CONTEXT_KEYS = frozenset(
    {
        "frame_id",
        "frame_compile_id",
        "attempt",
        "has_payload",
        "compiled_autograd_id",
        "rank",
        "stack",
        "subgraph_name",
        "severity",
        "timestamp",
        "pathname",
        "thread",
    }
)


@dataclass
class Event:
    name: str  # see _stages.event_name
    metadata: dict[str, Any]
    payload: str | None = None
    line: int | None = None  # where it came from in a TORCH_TRACE file

    @property
    def compile_id(self) -> str | None:
        fid = self.metadata.get("frame_id")
        cid = self.metadata.get("frame_compile_id")
        if fid is None or cid is None:
            return None
        return f"{fid}/{cid}"

    @property
    def body(self) -> Any:
        """The event's own metadata (the value under its name)."""
        key = "artifact" if self.name.startswith("artifact:") else self.name
        return self.metadata.get(key)


def from_record(metadata: dict[str, Any], payload: str | None) -> Event | None:
    name = event_name(metadata)
    if name is None:
        return None
    return Event(name, metadata, payload)


# "V1122 08:16:07.449000 399 torch/_dynamo/utils.py:2126] {json}" (glog prefix, then JSON)
_GLOG = re.compile(r"^[VIWEC]\d{4} [\d:.]+\s+\d+ [^\]]*\] ")


class TraceFormatError(ValueError):
    """A TORCH_TRACE file that cannot be read; names the file and line."""


class TraceTruncatedError(TraceFormatError):
    """The log ends in the middle of an event (the process was killed or crashed while
    writing it). Every complete event before ``line`` is good."""

    def __init__(self, message: str, path: str, line: int):
        super().__init__(message)
        self.path = path
        self.line = line


def _open(path: str):
    with open(path, "rb") as f:
        magic = f.read(2)
    # newline="\n": only "\n" ends a record; a "\r" inside a payload is payload text
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace", newline="\n")
    return open(path, encoding="utf-8", errors="replace", newline="\n")


def read_trace_file(path: str) -> Iterator[Event]:
    """Events of one TORCH_TRACE log. Raises TraceFormatError naming the bad line.

    A log cut off at its end (a killed or crashed process, a truncated copy) first yields
    every complete event, then raises ``TraceTruncatedError`` naming the line where the
    incomplete event starts; that event itself is not yielded. torch ends every record
    with a newline and puts the MD5 of the payload in ``has_payload``: that is how a cut
    between two payload lines is told from a complete event.
    """
    pending: Event | None = None
    payload_lines: list[str] = []
    lineno = 0
    seen = 0  # events started so far
    complete_last_line = True  # did the last line read end with a newline?

    def finish(ev: Event) -> Event:
        ev.payload = "\n".join(payload_lines) if payload_lines else None
        return ev

    with _open(path) as f:
        try:
            for lineno, raw in enumerate(f, start=1):
                complete_last_line = raw.endswith("\n")
                line = raw[:-1] if complete_last_line else raw
                if line.startswith("\t"):
                    if pending is None:
                        raise TraceFormatError(f"{path}:{lineno}: payload line outside an event")
                    payload_lines.append(line[1:])
                    continue
                if pending is not None:
                    finish(pending)
                    if pending.metadata.get("has_payload") and pending.payload is None:
                        raise TraceFormatError(
                            f"{path}:{pending.line}: event {pending.name!r} announces a payload "
                            "but none follows"
                        )
                    yield pending
                    pending, payload_lines = None, []
                if not line.strip():
                    continue
                m = _GLOG.match(line)
                try:
                    metadata = json.loads(line[m.end() :]) if m else None
                except json.JSONDecodeError as e:
                    if not complete_last_line and seen:
                        raise _truncated(path, lineno, lineno, "its last line is cut off") from None
                    raise TraceFormatError(f"{path}:{lineno}: bad JSON in event: {e}") from None
                if not m:
                    if not complete_last_line and seen:
                        raise _truncated(path, lineno, lineno, "its last line is cut off")
                    raise TraceFormatError(f"{path}:{lineno}: not a TORCH_TRACE line: {line[:80]!r}")
                if not isinstance(metadata, dict):
                    raise TraceFormatError(f"{path}:{lineno}: event is not a JSON object")
                name = event_name(metadata)
                if name is None:
                    raise TraceFormatError(f"{path}:{lineno}: event has no name: {line[:80]!r}")
                pending = Event(name, metadata, None, lineno)
                seen += 1
        except EOFError:  # gzip stream cut off: what followed line `lineno` is lost
            if pending is not None and _payload_ok(finish(pending)) is True:
                yield pending
                pending = None
            start = pending.line if pending is not None else lineno + 1
            raise _truncated(path, start, lineno + 1, "the gzip stream ends early") from None
        except (gzip.BadGzipFile, zlib.error) as e:
            raise TraceFormatError(f"{path}:{lineno + 1}: corrupt gzip data: {e}") from None
    if pending is not None:
        ok = _payload_ok(finish(pending))
        if ok is False or (ok is None and not complete_last_line):
            raise _truncated(path, pending.line, lineno, f"event {pending.name!r} is incomplete")
        yield pending


def _truncated(path: str, start: int, end: int, what: str) -> TraceTruncatedError:
    where = f"line {start}" if start >= end else f"lines {start}-{end}"
    return TraceTruncatedError(
        f"{path}:{start}: the log is truncated at {where}: {what} (a killed process or a cut "
        f"copy?); the events before line {start} are complete",
        path,
        start,
    )


def _payload_ok(ev: Event) -> bool | None:
    """Is the payload what the event announced? torch puts the payload's MD5 in
    ``has_payload``; None when that cannot be checked (older torch wrote ``true``)."""
    announced = ev.metadata.get("has_payload")
    if not announced:
        return ev.payload is None
    if ev.payload is None:
        return False
    if isinstance(announced, str) and re.fullmatch(r"[0-9a-f]{32}", announced):
        return hashlib.md5(ev.payload.encode("utf-8")).hexdigest() == announced
    return None


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
    return [path]


def rank_of(path: str, events: list[Event]) -> int | None:
    for ev in events:
        if "rank" in ev.metadata:
            return int(ev.metadata["rank"])
    m = re.search(r"rank_(\d+)", os.path.basename(path))
    return int(m.group(1)) if m else None

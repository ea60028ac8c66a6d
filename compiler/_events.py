"""Raw structured-trace events: from in-process log records or from TORCH_TRACE files."""

from __future__ import annotations

import gzip
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ._stages import event_name


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


def _open(path: str):
    with open(path, "rb") as f:
        magic = f.read(2)
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def read_trace_file(path: str) -> Iterator[Event]:
    """Events of one TORCH_TRACE log. Raises TraceFormatError naming the bad line.

    A log cut off in the middle (a crashed or killed process) still yields every complete
    event before the cut; the truncated tail is reported as an error by ``load_trace``.
    """
    pending: Event | None = None
    payload_lines: list[str] = []
    with _open(path) as f:
        try:
            lines = enumerate(f, start=1)
            for lineno, raw in lines:
                line = raw.rstrip("\n")
                if line.startswith("\t"):
                    if pending is None:
                        raise TraceFormatError(f"{path}:{lineno}: payload line outside an event")
                    payload_lines.append(line[1:])
                    continue
                if pending is not None:
                    pending.payload = "\n".join(payload_lines) if payload_lines else None
                    _check_payload(path, pending)
                    yield pending
                    pending, payload_lines = None, []
                if not line.strip():
                    continue
                m = _GLOG.match(line)
                if not m:
                    raise TraceFormatError(f"{path}:{lineno}: not a TORCH_TRACE line: {line[:80]!r}")
                try:
                    metadata = json.loads(line[m.end() :])
                except json.JSONDecodeError as e:
                    raise TraceFormatError(f"{path}:{lineno}: bad JSON in event: {e}") from None
                if not isinstance(metadata, dict):
                    raise TraceFormatError(f"{path}:{lineno}: event is not a JSON object")
                name = event_name(metadata)
                if name is None:
                    raise TraceFormatError(f"{path}:{lineno}: event has no name: {line[:80]!r}")
                pending = Event(name, metadata, None, lineno)
            if pending is not None:
                pending.payload = "\n".join(payload_lines) if payload_lines else None
                _check_payload(path, pending)
                yield pending
        except (EOFError, gzip.BadGzipFile, UnicodeDecodeError) as e:
            raise TraceFormatError(f"{path}: truncated or corrupt file: {e}") from None


def _check_payload(path: str, ev: Event) -> None:
    if ev.metadata.get("has_payload") and ev.payload is None:
        raise TraceFormatError(
            f"{path}:{ev.line}: event {ev.name!r} announces a payload but none follows (truncated file?)"
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
    return [path]


def rank_of(path: str, events: list[Event]) -> int | None:
    for ev in events:
        if "rank" in ev.metadata:
            return int(ev.metadata["rank"])
    m = re.search(r"rank_(\d+)", os.path.basename(path))
    return int(m.group(1)) if m else None

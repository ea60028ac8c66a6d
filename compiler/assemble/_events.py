"""Raw structured-trace events: from in-process log records or from TORCH_TRACE files."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..parse._names import CompileId


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
    file: str | None = None  # that file
    damaged: str | None = None  # why its payload is not what torch wrote (kept as read)

    @property
    def compile_id(self) -> str | None:
        """torch's CompileId as it prints it: "0/1", or "!0/3/0" for Dynamo compiling
        compiled autograd's graph 0 (compiler/parse/_names.py)."""
        cid = CompileId.of_event(self.metadata)
        return cid.torch if cid is not None else None

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


def is_frameless(ev: Event) -> bool:
    """An event of a compile outside Dynamo (no frame, not Compiled Autograd's)."""
    m = ev.metadata
    return m.get("frame_id") is None and m.get("compiled_autograd_id") is None

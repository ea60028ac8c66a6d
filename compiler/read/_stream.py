"""One TORCH_TRACE log read straight into the report builder, event by event: no list of the
log's events (and their payloads) is held, so memory holds what the report keeps, not the
file. What ``load_trace`` needs besides the report (the rank, torch's version, the events
that are not as torch wrote them, where the log was cut) is noted on the way."""

from __future__ import annotations

import json
from collections.abc import Iterator

from ..assemble._events import Event
from ._files import TraceTruncatedError
from ._logfile import read_trace_file

LEFT_OUT = "; left out: the report cannot be built from it"


def damaged_line(ev: Event) -> str:
    return f"{ev.file}:{ev.line}: event {ev.name!r}: {ev.damaged}"


def torch_version(of_metrics: str | None, of_artifact: str | None) -> str:
    """torch's version: compilation_metrics says it; newer torch (2.13 here) also logs it
    once, before any compile (``artifact:torch_version``); "unknown" where neither does."""
    return of_metrics or of_artifact or "unknown"


_NOTED = frozenset({"compilation_metrics", "artifact:torch_version"})  # Pass.note reads these


class Pass:
    """The events of one log file, as the builder reads them (once, in order); events at the
    lines in ``skip`` are left out (damaged ones the report cannot be built from). ``at``
    is the event the builder is at (None before and after the pass)."""

    def __init__(self, path: str, strict: bool, skip: frozenset[int] = frozenset()):
        self.path, self.strict, self.skip = path, strict, skip
        self.at: Event | None = None
        self.count = 0  # events read, those left out included
        self.cut: str | None = None  # the log is truncated: where (TraceTruncatedError's message)
        self.damaged: list[str] = []
        self.rank: int | None = None  # the first "rank" of an event
        self.versions: list[str | None] = [None, None]  # compilation_metrics', the artifact's

    def __iter__(self) -> Iterator[Event]:
        skip, noted = self.skip, _NOTED
        try:
            for ev in read_trace_file(self.path, strict=self.strict):
                self.count += 1
                if ev.name in noted or (self.rank is None and "rank" in ev.metadata):
                    self.note(ev)
                if ev.line in skip:
                    self.damaged.append(damaged_line(ev) + LEFT_OUT)
                    continue
                if ev.damaged:
                    self.damaged.append(damaged_line(ev))
                self.at = ev
                yield ev
        except TraceTruncatedError as e:
            if self.strict or not self.count:
                raise
            self.cut = str(e)
        self.at = None

    def note(self, ev: Event) -> None:
        if self.rank is None and "rank" in ev.metadata:
            self.rank = int(ev.metadata["rank"])
        if ev.name == "compilation_metrics" and self.versions[0] is None:
            self.versions[0] = _metrics_version(ev)
        elif ev.name == "artifact:torch_version" and self.versions[1] is None:
            self.versions[1] = _artifact_version(ev)

    @property
    def torch_version(self) -> str:
        return torch_version(*self.versions)


def _metrics_version(ev: Event) -> str | None:
    body = ev.body
    v = body.get("pytorch_version") if isinstance(body, dict) else None
    return str(v) if v else None


def _artifact_version(ev: Event) -> str | None:
    if not ev.payload:
        return None
    try:
        v = json.loads(ev.payload).get("pytorch_version")
    except (json.JSONDecodeError, AttributeError):
        return None
    return str(v) if v else None


def version_of(events: list[Event]) -> str:
    """torch's version in a list of events (``torch_version``)."""
    of_metrics = next(
        (v for ev in events if ev.name == "compilation_metrics" if (v := _metrics_version(ev))), None
    )
    of_artifact = next(
        (v for ev in events if ev.name == "artifact:torch_version" if (v := _artifact_version(ev))), None
    )
    return torch_version(of_metrics, of_artifact)

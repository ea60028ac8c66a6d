"""torch's seq_nr of each node of a joint graph, heard on the "annotation" artifact loggers
(``_torch.SEQ_NR_LOGGERS``): one ``log:seq_nr`` event per joint graph, its payload the lines
torch logged, which compiler/parse/_seqnr.py reads. The printed joint graph does not carry
seq_nr: it is what joins a backward node to the forward node it differentiates."""

from __future__ import annotations

import logging
import threading

from ..assemble._events import Event
from . import _torch
from ._listeners import Scope, compile_event


class SeqNrHandler(logging.Handler):
    """Keeps, per compile and thread, the lines about seq_nr; at the joint graph's output
    (the last node torch lists) appends them as one event. A subgraph's lines (a higher-order
    op's, listed after the joint graph's, without forward lines of their own) are dropped."""

    def __init__(self, sink: list[Event], scope: Scope):
        super().__init__(level=logging.DEBUG)
        self.sink = sink
        self.scope = scope
        self.lines: dict[tuple[int | None, object], list[str]] = {}
        self.guard = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        msg = record.getMessage()
        if not (msg.endswith(_torch.SEQ_NR_BACKWARD) or msg.startswith(_torch.SEQ_NR_LINES)):
            return
        # torch logs ~20,000 such lines for a 22-layer training step: each is filed under its
        # thread and compile by torch's own CompileId; the event, and whether the recording
        # sees that compile, are made once per joint graph
        key = (record.thread, _torch.compile_context_key())
        with self.guard:
            lines = self.lines.setdefault(key, [])
            done = msg.startswith("seq_nr: ") and bool(lines) and lines[-1] == "node: output"
            lines.append(msg)
            if not done:
                return
            del self.lines[key]
        ev = compile_event("log:seq_nr")
        if self.scope.accepts(record.thread, ev.compile_id) and any(
            line.startswith("forward:: ") for line in lines
        ):
            ev.payload = "\n".join(lines)
            self.sink.append(ev)

    def handleError(self, record: logging.LogRecord) -> None:  # never disturb the user's run
        pass

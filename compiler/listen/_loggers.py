"""Listening to torch's loggers: a recording's handler on a logger at DEBUG, the logger's own
state saved by the first recording and restored by the last, whatever order they end in."""

from __future__ import annotations

import logging
import threading

# torch's loggers are process-wide: the first recording to listen saves their state, the
# last one to stop restores it, in whatever order recordings end
_lock = threading.Lock()
listened: dict[str, list] = {}  # logger name -> [count, saved level, saved propagate, _PassOn]


def listen_on(log: logging.Logger, handler: logging.Handler) -> None:
    """``handler`` on ``log`` at DEBUG, the logger kept from passing its DEBUG records to the
    user's handlers; what it showed before (records at its level or above, where it
    propagated) still reaches them, through ``_PassOn``."""
    with _lock:
        state = listened.get(log.name)
        if state is None:
            passon = _PassOn(log, log.getEffectiveLevel()) if log.propagate else None
            state = listened[log.name] = [0, log.level, log.propagate, passon]
            if log.getEffectiveLevel() > logging.DEBUG:
                log.setLevel(logging.DEBUG)
            log.propagate = False
            if passon is not None:
                log.addHandler(passon)
        state[0] += 1
        log.addHandler(handler)


def unlisten(log: logging.Logger, handler: logging.Handler) -> None:
    with _lock:
        log.removeHandler(handler)
        state = listened.get(log.name)
        if state is None:
            return
        state[0] -= 1
        if state[0] <= 0:
            del listened[log.name]
            log.setLevel(state[1])
            log.propagate = state[2]
            if state[3] is not None:
                log.removeHandler(state[3])


class _PassOn(logging.Handler):
    """Hands the records a logger would have propagated without us (at its former level or
    above) to its ancestors' handlers, as propagation does (``Logger.callHandlers``)."""

    def __init__(self, log: logging.Logger, level: int):
        super().__init__(level=level)
        self.log = log

    def emit(self, record: logging.LogRecord) -> None:
        if self.log.parent is not None:
            self.log.parent.callHandlers(record)

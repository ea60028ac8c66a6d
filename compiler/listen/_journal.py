"""A recording's journal: its events appended to a file as they arrive, in the TORCH_TRACE
log format, so that what was recorded survives the process dying (a signal, ``os._exit``, a
crash in native code) and ``load_trace`` (compiler/read/_journal.py) rebuilds the report from it.

Each event is one ``os.write`` of its metadata line and payload lines, straight to the
kernel: nothing waits in a buffer of this process, so everything recorded before a death
is in the file (a death in the middle of one write cuts that event; the reader keeps the
events before it). What is not an event is not in it: the IR before and after fusion, which
a recording renders from snapshots when its report is built. A forked child of the
recording process never writes to it. Torch-free (the reading side runs without torch).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
import weakref

from ..assemble._events import Event

_open: weakref.WeakSet[Journal] = weakref.WeakSet()


class Journal:
    """Appends events to ``path`` (created if missing, never truncated)."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = os.fspath(path)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        self._fd: int | None = os.open(self.path, flags, 0o644)
        self._lock = threading.Lock()
        _open.add(self)

    def write(self, ev: Event) -> None:
        data = _format(ev)
        with self._lock:
            if self._fd is None:
                return
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view) :]

    def write_strings(self, interned: dict[int, str]) -> None:
        """torch's table of interned file names so far, as the ``str`` events that made it
        (a recording that starts after earlier compiles never sees those)."""
        for i, s in sorted(interned.items()):
            self.write(Event("str", {"str": [s, i]}))

    def close(self) -> None:
        with self._lock:
            fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def _forget(self) -> None:
        """In a forked child: the lock may have been held by a thread the child does not
        have, so neither it nor the shared descriptor is used again."""
        self._lock = threading.Lock()
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


class JournaledEvents(list):
    """A recording's event list whose ``append`` also writes the event to the journal.
    ``extend`` does not: the fusion IR's placeholders go in that way, their payload rendered
    only when the report is built."""

    def __init__(self, journal: Journal):
        super().__init__()
        self.journal = journal

    def append(self, ev: Event) -> None:
        super().append(ev)
        try:
            self.journal.write(ev)
        except Exception:  # a full disk must not break the user's compile: the report still comes
            pass


def _format(ev: Event) -> bytes:
    """One TORCH_TRACE record: the glog-style prefix and the metadata as JSON on one line, then
    each payload line after a tab, ``has_payload`` the payload's MD5 (as torch writes them)."""
    meta = dict(ev.metadata)
    payload = None
    if ev.payload is not None:
        payload = ev.payload.encode("utf-8", "replace")
        meta["has_payload"] = hashlib.md5(payload, usedforsecurity=False).hexdigest()
    else:
        meta.pop("has_payload", None)
    now = time.time()
    stamp = time.strftime("%m%d %H:%M:%S", time.localtime(now)) + f".{int(now % 1 * 1e6):06d}"
    head = f"V{stamp} {os.getpid()} pt2-explorer/journal:0] {json.dumps(meta, default=repr)}\n"
    out = head.encode("utf-8", "replace")
    if payload is not None:
        out += b"".join(b"\t" + line + b"\n" for line in payload.split(b"\n"))
    return out


def _close_in_child() -> None:
    """A forked child (multiprocessing's workers) shares the descriptor: it must not write."""
    for journal in list(_open):
        journal._forget()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_close_in_child)

"""``pt2-explorer record``'s live line on a terminal: the compile torch is in, its frame and
``file:line``, the graph's size, the stage with its time so far (beside the same stage's time
in the last run's report, where one is at hand), the op being autotuned or the kernel being
compiled (n of N), as torch's events arrive (the recording's ``on_progress``: no polling),
redrawn in place, erased when a compile ends (the program runs on) and when the program ends. Nothing where stderr is not a terminal (a
pipe or a file gets whole lines only) and nothing under ``-q``."""

from __future__ import annotations

import shutil
import sys
import threading
import time

from explorer.lower._terminal import printable
from explorer.model._progress import progress_key, progress_text

CLEAR = "\r\x1b[K"  # back to the line's start, the line erased
EVERY_S = 0.1  # the line is redrawn at most this often, but at once when the stage or the wait changes


class LiveLine:
    def __init__(self, stream=None, quiet: bool = False, last_run=None):
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.on = not quiet and bool(isatty and isatty())
        self.last_run = last_run
        self.last = -EVERY_S
        self.key: tuple | None = None
        self.shown = False
        self.lock = threading.Lock()

    @property
    def on_progress(self):
        """The recording's callback: None where no line is drawn (the recording then calls none)."""
        return self if self.on else None

    def __call__(self, p) -> None:
        now = time.monotonic()
        key = progress_key(p)
        with self.lock:
            if key == self.key and now - self.last < EVERY_S:
                return
            self.last, self.key = now, key
            if p.ended:  # the compile is over: the program runs on, with no line
                self._clear()
                return
            text = printable("pt2-explorer: " + progress_text(p, self.last_run, now))
            room = shutil.get_terminal_size((80, 24)).columns - 1  # never wrapped: one line, redrawn
            self.stream.write(CLEAR + text[:room])
            self.stream.flush()
            self.shown = True

    def clear(self) -> None:
        """Erase the line (before the program's own last output and the report's summary)."""
        with self.lock:
            self._clear()

    def _clear(self) -> None:
        if self.shown:
            self.stream.write(CLEAR)
            self.stream.flush()
            self.shown = False

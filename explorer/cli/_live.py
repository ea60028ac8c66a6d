"""``pt2-explorer record``'s live line on a terminal: the compile torch is in and its stage, as
torch's events arrive (the recording's ``on_stage``: no polling), redrawn in place and cleared
when the program ends. Nothing where stderr is not a terminal (a pipe or a file gets whole
lines only) and nothing under ``-q``."""

from __future__ import annotations

import shutil
import sys
import time

from explorer.lower._terminal import printable

CLEAR = "\r\x1b[K"  # back to the line's start, the line erased
EVERY_S = 0.1  # the line is redrawn at most this often


class LiveLine:
    def __init__(self, stream=None, quiet: bool = False):
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.on = not quiet and bool(isatty and isatty())
        self.start = time.monotonic()
        self.last = -EVERY_S
        self.shown = False

    @property
    def on_stage(self):
        """The recording's callback: None where no line is drawn (the recording then calls none)."""
        return self if self.on else None

    def __call__(self, compile_id: str, stage: str) -> None:
        now = time.monotonic()
        if now - self.last < EVERY_S:
            return
        self.last = now
        text = printable(f"pt2-explorer: compiling [{compile_id}], {stage} · {now - self.start:.1f} s")
        room = shutil.get_terminal_size((80, 24)).columns - 1  # never wrapped: one line, redrawn
        self.stream.write(CLEAR + text[:room])
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        """Erase the line (before the program's own last output and the report's summary)."""
        if self.shown:
            self.stream.write(CLEAR)
            self.stream.flush()
            self.shown = False

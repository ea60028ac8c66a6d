"""A progress line for work that takes long (a benchmark, a fill-in, advise's runs, the census
page's row pages): each line with the time since the work began. On a terminal one line,
rewritten, its elapsed time kept going once a second while a step runs long; where stderr is no
terminal (a log, a pipe), whole lines: each step's first line, then one at most every
``PIPED_EVERY_S`` while the step lasts, and the final line, with no cursor codes. Imports no
torch."""

from __future__ import annotations

import re
import sys
import threading
import time

PIPED_EVERY_S = 10.0  # piped: a step's line again at most this often ("rep 5/20" after "rep 1/20")
_COUNT = re.compile(r"\d+")


def elapsed(seconds: float) -> str:
    """``seconds`` as a reader counts them: "0.4 s", "12 s", "3 min 05 s"."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    m, s = divmod(int(seconds), 60)
    return f"{m} min {s:02d} s"


class LineProgress:
    """Called with a line (``final=True`` for the last of a piece of work); the line is shown
    with the time since this progress began, ``text (12 s)``. ``clear()``: the terminal's line
    erased (what follows prints on it). ``stream``: stderr unless given (a benchmark keeps the
    calls' own output out of ``sys.stderr``: this one is the stream at the start)."""

    def __init__(self, stream=None, tick_s: float = 1.0) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.start = time.perf_counter()
        self.last = 0.0
        self.shown = False  # a line is on the terminal, not ended
        self.text: str | None = None  # the line the ticker keeps rewriting
        self.step = ""  # piped: the line without its figures (a new step prints at once)
        self.tick_s = tick_s
        self.lock = threading.Lock()
        self.ticker: threading.Thread | None = None

    def __call__(self, text: str, final: bool = False) -> None:
        now = time.perf_counter()
        line = f"{text} ({elapsed(now - self.start)})"
        with self.lock:
            if not self.tty:
                step = _COUNT.sub("#", text)
                if final or step != self.step or now - self.last >= PIPED_EVERY_S:
                    self.step, self.last = step, now
                    self.stream.write(line + "\n")
                    self.stream.flush()
                return
            self.text = None if final else text
            if not final and now - self.last < 0.2:
                return
            self.last = now
            self._write(line, "\n" if final else "")
            self.shown = not final
            if not final and self.tick_s and self.ticker is None:
                self.ticker = threading.Thread(target=self._tick, name="pt2x-progress", daemon=True)
                self.ticker.start()

    def clear(self) -> None:
        """The terminal's line erased and its ticking stopped (piped: nothing to do)."""
        with self.lock:
            self.text = None
            if self.tty and self.shown:
                self.stream.write("\r\x1b[2K")
                self.stream.flush()
            self.shown = False

    def _write(self, line: str, end: str = "") -> None:
        """``line`` over the terminal's line, the rest of it erased; ``end``: "\\n" to keep it."""
        self.stream.write(f"\r{line}\x1b[K{end}")
        self.stream.flush()

    def _tick(self) -> None:
        """While a line is shown and not final: its elapsed time, once every ``tick_s``."""
        while True:
            time.sleep(self.tick_s)
            with self.lock:
                if self.text is None:
                    self.ticker = None
                    return
                now = time.perf_counter()
                if now - self.last >= self.tick_s:
                    self.last = now
                    try:
                        self._write(f"{self.text} ({elapsed(now - self.start)})")
                    except (OSError, ValueError):  # the terminal went away, or the stream closed
                        self.ticker, self.text = None, None
                        return

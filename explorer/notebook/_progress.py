"""``%%compile``'s progress while the cell runs: what ``pt2-explorer record``'s live line says
(explorer/model/_progress.py), as an HTML progress bar and its line in one display, updated in
place; read from the recording's ``on_progress`` (torch's events, no polling). The cell's
explorer replaces that display when the cell ends (as one output replaces another: no widget
of ours is left to close, which in JupyterLab hid the explorer drawn in its place); where no
report was left, the display is emptied: nothing of it stays behind."""

from __future__ import annotations

import html
import time

from IPython.display import HTML, display

from compiler.types import STAGES
from explorer.model._progress import progress_key, progress_text

EVERY_S = 0.2  # updated at most this often, but at once when the stage or the wait changes


def progress_html(text: str, done: int | None = None, total: int | None = None) -> HTML:
    """The bar (where there is a count) and the line, the line escaped."""
    bar = (
        f'<progress value="{min(done or 0, total)}" max="{total}" style="vertical-align:middle;margin-right:6px">'
        "</progress>"
        if total
        else ""
    )
    return HTML(f'<div class="pt2x-progress">{bar}<i>{html.escape(text)}</i></div>')


class CellProgress:
    def __init__(self, show=None) -> None:
        show = show or display
        self.last = -EVERY_S
        self.key: tuple | None = None
        self.shown: HTML = progress_html("PT2 Explorer: running the cell…")
        self.handle = show(self.shown, display_id=True)

    def __call__(self, p) -> None:
        """The recording's ``on_progress``."""
        now = time.monotonic()
        key = progress_key(p)
        if key == self.key and now - self.last < EVERY_S:
            return
        self.last, self.key = now, key
        if p.ended:  # the compile is over: the cell runs on
            self._show(f"PT2 Explorer: compiled [{p.compile_id}] · running the cell…")
            return
        if p.kernels:  # the kernels compiled (begun, or done while waiting on the workers)
            done = (p.kernels_done or 0) if p.waiting else (p.kernel_n or 0)
            total = p.kernels
        else:
            done, total = STAGES.index(p.stage) + 1, len(STAGES)
        self._show("PT2 Explorer: " + progress_text(p, now=now), done, total)

    def bench(self, text: str, final: bool = False) -> None:
        """``compiler.benchmark``'s ``progress`` (``--bench``)."""
        now = time.monotonic()
        if final or now - self.last >= EVERY_S:
            self.last = now
            self._show(f"PT2 Explorer: {text}")

    def _show(self, text: str, done: int | None = None, total: int | None = None) -> None:
        self.shown = progress_html(text, done, total)
        self.handle.update(self.shown)

    def done(self, shown=None) -> None:
        """The cell ended: ``shown`` (the explorer) in its place, or nothing."""
        self.handle.update(shown if shown is not None else HTML(""))

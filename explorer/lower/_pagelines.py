"""Texts kept as lines (``LinesBlock``: a log's cache keys, its compiles' metrics) on the
static page: the page holds each distinct line once, in one JSON table (``LineTable.script``,
at the end of the compiles tab), and each block the numbers of its lines in that table, as
runs (``data-lines="0-538,600"``); the page's script (``pages/_page.py``) puts a block's text
together when it is first opened. A big log's cache keys repeat ~600 lines in each of ~800
lookups: 46 M characters of its 84 M page, ~110 K as a table."""

from __future__ import annotations

import html
from itertools import compress, count
from operator import sub

from ..base._types import LinesBlock
from ..graph._data import payload_json

TABLE_ID = "pt2x-lines"


class LineTable:
    """The distinct lines of a page's ``LinesBlock``s, numbered in the order first met; and
    whether the page highlights its code in the browser (``_html.browser_highlighting``,
    asked once for the page, not for each of its blocks)."""

    def __init__(self, lazy_code: bool = False) -> None:
        self.lazy_code = lazy_code
        self._index: dict[str, int] = {}
        self._chars = [0]  # characters of the lines before line i
        self._newlines = [0]  # newlines inside the lines before line i
        self._refs: dict[tuple[str, ...], tuple[str, int, int]] = {}

    def refs(self, lines: tuple[str, ...]) -> tuple[str, int, int]:
        """The lines' numbers as runs (``"0-538,600"``), the characters of their text (one
        newline between lines) and the lines it has (a line may hold newlines of its own)."""
        got = self._refs.get(lines)  # a text met before (a frame's recompiles: the same key)
        if got is None:
            got = self._refs[lines] = self._runs(lines)
        return got

    def _runs(self, lines: tuple[str, ...]) -> tuple[str, int, int]:
        index = self._index
        ix = list(map(index.get, lines))
        if None in ix:
            for line in lines:
                if line not in index:
                    index[line] = len(index)
                    self._chars.append(self._chars[-1] + len(line))
                    self._newlines.append(self._newlines[-1] + line.count("\n"))
            ix = list(map(index.__getitem__, lines))
        # where a run breaks (a line that is not the one after the line before), in C iterators
        breaks = compress(count(1), map((1).__ne__, map(sub, ix[1:], ix)))
        starts = [0, *breaks, len(ix)]
        runs, chars, newlines = [], len(ix) - 1, 0
        for s, e in zip(starts, starts[1:]):
            a, b = ix[s], ix[e - 1]
            runs.append(f"{a}-{b}" if b != a else str(a))
            chars += self._chars[b + 1] - self._chars[a]
            newlines += self._newlines[b + 1] - self._newlines[a]
        return ",".join(runs), chars, len(ix) + newlines

    def details_html(self, b: LinesBlock, limit: int) -> str:
        """``b`` folded, as ``_html.block_html`` draws a text block, its text left for the page's
        script to put in when it is opened (the first ``limit`` characters, as ``code_html``)."""
        runs, chars, lines = self.refs(b.lines)
        cut = note = ""
        if chars > limit:
            cut = f' data-cut="{limit}"'
            note = f'<div class="note">showing the first {limit:,} of {chars:,} characters</div>'
        return (
            f'<details data-lines="{runs}"{cut}><summary>{html.escape(b.title)} '
            f'<span class="meta">({lines} lines)</span></summary>'
            f'<div class="highlight"><pre></pre></div>{note}</details>'
        )

    def script(self) -> str:
        """The table, where a block used it: JSON that no line can end early."""
        if not self._index:
            return ""
        return f'<script type="application/json" id="{TABLE_ID}">{payload_json(list(self._index))}</script>'


# the page's script: a block's text from the table, put in as text (never read as HTML) when
# the block is first opened
FILL_JS = f"""
let pt2xLines;
const fillLines=d=>{{if(!d.open||d.dataset.lines===undefined||d.dataset.filled)return;
 pt2xLines=pt2xLines||JSON.parse(document.getElementById('{TABLE_ID}').textContent);
 const t=d.dataset.lines.split(',').flatMap(r=>{{const[a,b]=r.split('-').map(Number);return pt2xLines.slice(a,(b??a)+1);}}).join('\\n');
 d.querySelector('pre').textContent=d.dataset.cut?t.slice(0,+d.dataset.cut):t;d.dataset.filled='1';}};
document.addEventListener('toggle',e=>fillLines(e.target),true);
"""

"""Two sequences (a text's lines, a line's words) aligned in time linear in their length.

Every diff view aligns with difflib's ``SequenceMatcher``, whose search takes time quadratic in
the lines, or worse, where lines repeat: two guard trees of 32k lines from a two-line alphabet
took 90 s. ``Matcher`` is that matcher with its work counted against a budget linear in the
lengths (the count is an upper bound of difflib's inner loop: each search's ranges and, for
each line of ``a`` searched, the lines of ``b`` equal to it). Where difflib finishes within it,
its answer is the answer, as before. Past it the lines are aligned by a shortest edit script
(Myers' greedy algorithm, budgeted the same way: fast where the texts differ in few lines), and
past that they are simplified: the common head and tail, then the lines that occur once on each
side, in order; what lies between is replaced whole. ``Matcher.note`` says which.
"""

from __future__ import annotations

import bisect
import difflib
import itertools
from collections import Counter
from collections.abc import Iterator, Sequence

# steps of work allowed: difflib's (what the fixtures' diffs need stays under a quarter of it),
# then the edit script's, per pair of sequences and per item (line or word) of the two
DIFFLIB_WORK = (1_000_000, 20)
EDIT_WORK = (100_000, 5)
A_LINE = 10  # steps difflib's search costs per item of a it looks at (1: per equal item of b)
EDIT_ROUND = 10  # steps an edit-script round costs per diagonal it extends

EDIT_SCRIPT = (
    "lines aligned by a shortest edit script (difflib's matching costs too much on these repeated lines)"
)
SIMPLIFIED = (
    "simplified diff: too costly to align line by line, so past the common head and tail only "
    "lines that occur once on each side are matched and the lines between them count as changed"
)


class _OverBudget(Exception):
    pass


class Matcher(difflib.SequenceMatcher):
    """``difflib.SequenceMatcher(None, a, b, autojunk=autojunk)`` whose matching blocks (and
    the opcodes built on them) take time linear in ``len(a) + len(b)``. ``note``: None where
    difflib matched them, else how they were aligned (``EDIT_SCRIPT`` or ``SIMPLIFIED``)."""

    def __init__(self, a: Sequence, b: Sequence, autojunk: bool = False, budget: int | None = None):
        """``budget``: the steps difflib may take (default: ``DIFFLIB_WORK``'s for the lengths)."""
        self.note: str | None = None
        floor, per_item = DIFFLIB_WORK
        self._budget = floor + per_item * (len(a) + len(b)) if budget is None else budget
        self.work = 0  # the steps taken (an upper bound of difflib's, then the edit script's)
        self._spent = 0  # of the current budget
        self._cost: list[int] | None = None  # _cost[i]: the lines of b equal to a[:i], summed
        super().__init__(None, a, b, autojunk=autojunk)

    def _spend(self, steps: int) -> None:
        if self._spent + steps > self._budget:
            raise _OverBudget
        self.work += steps
        self._spent += steps

    def find_longest_match(self, alo=0, ahi=None, blo=0, bhi=None):
        ahi = len(self.a) if ahi is None else ahi
        bhi = len(self.b) if bhi is None else bhi
        if self._cost is None:
            b2j = self.b2j
            self._cost = [0, *itertools.accumulate(len(b2j.get(x, ())) for x in self.a)]
        self._spend(A_LINE * (ahi - alo) + (bhi - blo) + self._cost[ahi] - self._cost[alo])
        return super().find_longest_match(alo, ahi, blo, bhi)

    def get_matching_blocks(self):
        if self.matching_blocks is not None:
            return self.matching_blocks
        try:
            return super().get_matching_blocks()
        except _OverBudget:
            pass
        a, b = self.a, self.b
        head, tail = _common_ends(a, b)
        mid_a, mid_b = a[head : len(a) - tail], b[head : len(b) - tail]
        floor, per_item = EDIT_WORK
        self._budget, self._spent = floor + per_item * (len(mid_a) + len(mid_b)), 0
        try:
            inner = _edit_script(mid_a, mid_b, self._spend)
            self.note = EDIT_SCRIPT
        except _OverBudget:
            inner = _anchored(mid_a, mid_b)
            self.note = SIMPLIFIED
        blocks = [(0, 0, head), *((i + head, j + head, k) for i, j, k in inner)]
        blocks.append((len(a) - tail, len(b) - tail, tail))
        self.matching_blocks = [difflib.Match(*m) for m in _merged(blocks)]
        self.matching_blocks.append(difflib.Match(len(a), len(b), 0))
        return self.matching_blocks


def _common_ends(a: Sequence, b: Sequence) -> tuple[int, int]:
    """The lengths of the common head and (after it) the common tail of a and b."""
    n, m = len(a), len(b)
    head = 0
    while head < min(n, m) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(n, m) - head and a[n - 1 - tail] == b[m - 1 - tail]:
        tail += 1
    return head, tail


def _merged(blocks: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Blocks in order, empty ones left out, adjacent ones joined (as difflib returns them)."""
    out: list[tuple[int, int, int]] = []
    for i, j, k in blocks:
        if not k:
            continue
        if out and out[-1][0] + out[-1][2] == i and out[-1][1] + out[-1][2] == j:
            out[-1] = (out[-1][0], out[-1][1], out[-1][2] + k)
        else:
            out.append((i, j, k))
    return out


def _edit_script(a: Sequence, b: Sequence, spend) -> list[tuple[int, int, int]]:
    """The matching blocks of a shortest edit script from a to b (Myers 1986, the greedy
    forward search); ``spend(steps)`` is told of every step and may stop it."""
    n, m = len(a), len(b)
    v = {1: 0}  # diagonal k = x - y -> the furthest x reached on it
    trace: list[dict[int, int]] = []
    for d in range(n + m + 1):
        spend(EDIT_ROUND * (d + 1))
        trace.append(dict(v))
        for k in range(-d, d + 1, 2):
            x = v[k + 1] if k == -d or (k != d and v[k - 1] < v[k + 1]) else v[k - 1] + 1
            y, start = x - k, x
            while x < n and y < m and a[x] == b[y]:
                x, y = x + 1, y + 1
            spend(x - start)
            v[k] = x
            if x >= n and y >= m:
                return _path(trace, n, m)
    raise AssertionError("unreachable: n + m edits always suffice")


def _path(trace: list[dict[int, int]], x: int, y: int) -> list[tuple[int, int, int]]:
    """The diagonal runs of the path that ``trace`` (v before each round) found to (x, y)."""
    blocks = []
    for d in range(len(trace) - 1, -1, -1):
        v, k = trace[d], x - y
        down = k == -d or (k != d and v[k - 1] < v[k + 1])
        prev_k = k + 1 if down else k - 1
        start = v[prev_k] if down else v[prev_k] + 1  # where this round's run began
        if x > start:
            blocks.append((start, start - k, x - start))
        x = v[prev_k]
        y = x - prev_k
    return blocks[::-1]


def _anchored(a: Sequence, b: Sequence) -> list[tuple[int, int, int]]:
    """Matching blocks in linear time: the lines that occur once in a and once in b, the
    longest run of them in the same order on both sides, each widened by the equal lines
    around it."""
    ca, cb = Counter(a), Counter(b)
    once_b = {x: j for j, x in enumerate(b) if cb[x] == 1}
    pairs = [(i, once_b[x]) for i, x in enumerate(a) if ca[x] == 1 and x in once_b]
    blocks = []
    i = j = 0
    for ai, bj in [*_increasing(pairs), (len(a), len(b))]:
        h = 0
        while i + h < ai and j + h < bj and a[i + h] == b[j + h]:
            h += 1
        t = 0
        while t < min(ai - i, bj - j) - h and a[ai - 1 - t] == b[bj - 1 - t]:
            t += 1
        blocks += [(i, j, h), (ai - t, bj - t, t), (ai, bj, int(ai < len(a)))]
        i, j = ai + 1, bj + 1
    return _merged(blocks)


def _increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest subsequence of ``pairs`` (in order of their first item) whose second items
    increase (patience sorting)."""
    ends: list[int] = []  # ends[p]: the index in pairs of the run of length p + 1 ending lowest
    end_js: list[int] = []
    back: list[int] = []
    for n, (_, j) in enumerate(pairs):
        p = bisect.bisect_left(end_js, j)
        back.append(ends[p - 1] if p else -1)
        if p == len(ends):
            ends.append(n)
            end_js.append(j)
        else:
            ends[p], end_js[p] = n, j
    out = []
    n = ends[-1] if ends else -1
    while n >= 0:
        out.append(pairs[n])
        n = back[n]
    return out[::-1]


def unified_diff(m: Matcher, fromfile: str, tofile: str, n: int = 3) -> Iterator[str]:
    """``difflib.unified_diff(m.a, m.b, fromfile, tofile, n=n, lineterm="")``, from ``m``."""
    started = False
    for group in m.get_grouped_opcodes(n):
        if not started:
            started = True
            yield f"--- {fromfile}"
            yield f"+++ {tofile}"
        first, last = group[0], group[-1]
        yield f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                yield from (" " + line for line in m.a[i1:i2])
                continue
            if tag in ("replace", "delete"):
                yield from ("-" + line for line in m.a[i1:i2])
            if tag in ("replace", "insert"):
                yield from ("+" + line for line in m.b[j1:j2])


def _range(start: int, stop: int) -> str:
    """A range of lines as a unified diff's hunk header writes it (difflib's)."""
    length = stop - start
    if length == 1:
        return f"{start + 1}"
    return f"{start + 1 if length else start},{length}"

"""Two censuses side by side (torch 2.13 against 2.14, settings A against B): each model and
mode's changes, regressions first (a model that went from one graph to breaking, a new break
site, a new recompile, a slower compile or a lower speedup, a new error), then fixes, then
what one census has and the other has not.

Times move between two runs of the same census on the same machine. A compile time or a
speedup counts as changed only beyond the spread measured:

- a speedup: beyond each row's own spread (its benchmark's IQRs: eager / compiled, each
  median ± half its IQR), by ``FASTER`` at least, an arm's median moved by ``MIN_MS`` at
  least, and beyond the census-wide noise band below;
- a compile time: by ``SLOWER`` and ``SLOWER_S`` at least, and beyond the census-wide noise band;
- the floors (``SLOWER_S``, ``MIN_MS``) are what two runs of one census moved on a loaded
  machine: a change under them is not told apart from the machine's load;
- a row whose arms waited for a core (``waited``: in either census, an arm's median call
  waited, runnable, for ``WAITED`` of its time or more, as the benchmark measures on Linux)
  has its speedup left uncompared and named (``CensusDiff.waited``): its time is the machine's
  load (a bf16 call under autocast runs a parallel region, and on a machine whose other core is
  busy each call waits for it: 12 ms a call, both arms alike, against 0.05 ms idle), not its
  code's; a row written before this was measured is compared as before;
- the census-wide noise band (``Noise``): where ``MIN_ROWS`` rows or more have the figure in
  both, the log ratios of every row's figure (B over A) give their median, the shift of the
  whole census (a busier machine slows every compile), and ``K_MAD`` median absolute
  deviations around it (the row-to-row noise): a row counts where its ratio leaves that band.
  The shift itself is said (``compile times: ×1.31 overall``), not pinned on each row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ._headdiff import with_heads
from ._table import Census, CensusRow

# how bad a status is: a move up is a regression
RANK = {"one graph": 0, "no graph": 0, "several graphs": 1, "recompiles": 2, "graph break": 3, "error": 4}
SLOWER = 1.25  # a compile this much slower (and by SLOWER_S at least) is a regression
# floors below which a move is not told apart from a loaded machine, measured: two runs of the
# same census (tests/test_census_speed.py) on this project's shared 2-core machine moved an
# aot_eager compile from 0.3 s to 1.5 s; a call's speedup that moved from ×0.31 to ×0.99 was
# one whose calls waited for a core (WAITED: not compared), and MIN_MS, set from that swing
# before its cause was known, is kept for calls of a few hundredths of a ms timed under load
SLOWER_S = 2.0
FASTER = 1.05  # a speedup that moves by less than this factor is unchanged
MIN_MS = 0.2  # nor one whose arms' medians each moved by less than this
MIN_ROWS = 5  # rows with a figure in both censuses, for a census-wide noise band
K_MAD = 3.0  # the band's half-width, in median absolute deviations (scaled to a normal's sigma)
WAITED = 0.1  # an arm whose median call waited for a core this share of its time: timed the load


@dataclass(frozen=True)
class Noise:
    """The census-wide band of one figure's log ratio (B over A): its centre and half-width."""

    what: str
    rows: int
    centre: float = 0.0
    half: float = 0.0

    @classmethod
    def of(cls, what: str, pairs: list[tuple[float, float]]) -> Noise:
        logs = sorted(math.log(b / a) for a, b in pairs if a > 0 and b > 0)
        if len(logs) < MIN_ROWS:
            return cls(what, len(logs))
        centre = _median(logs)
        mad = _median(sorted(abs(x - centre) for x in logs))
        return cls(what, len(logs), centre, K_MAD * 1.4826 * mad)

    def outside(self, a: float, b: float, floor: float) -> int:
        """+1 where ``b`` over ``a`` is above the band (and ``floor``, a factor, from its
        centre), -1 below it, 0 inside."""
        x = math.log(b / a) - self.centre
        width = max(self.half, math.log(floor))
        return 1 if x > width else -1 if x < -width else 0

    @property
    def line(self) -> str:
        if self.rows < MIN_ROWS:
            return f"{self.what}: {self.rows} rows in both, too few for a noise band (fixed thresholds only)"
        return (
            f"{self.what}: ×{math.exp(self.centre):.2f} overall (median of {self.rows} rows), "
            f"row-to-row noise ×{math.exp(-self.half):.2f}–×{math.exp(self.half):.2f} around it"
        )


def _median(xs: list[float]) -> float:
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def waited(r: CensusRow) -> bool:
    """An arm's median call waited for a core ``WAITED`` of its time or more (unknown: no)."""
    return any(
        w is not None and ms and w >= WAITED * ms
        for w, ms in ((r.eager_waited_ms, r.eager_ms), (r.compiled_waited_ms, r.compiled_ms))
    )


def _speed_interval(r: CensusRow) -> tuple[float, float] | None:
    """The row's speedup from the ends of its arms' spreads: (lowest, highest)."""
    e, c, s = r.eager_ms, r.compiled_ms, r.speedup
    if not (e and c and s):
        return None
    de, dc = (r.eager_iqr_ms or 0.0) / 2, (r.compiled_iqr_ms or 0.0) / 2
    return (max(e - de, 0.0) / (c + dc), (e + de) / max(c - dc, 1e-12))


@dataclass(frozen=True)
class RowChange:
    key: str
    before: CensusRow
    after: CensusRow
    worse: tuple[str, ...] = ()
    better: tuple[str, ...] = ()

    @property
    def severity(self) -> int:
        return RANK.get(self.after.status, 0) - RANK.get(self.before.status, 0)


@dataclass(frozen=True)
class CensusDiff:
    a: str  # the censuses' names: their titles, torch versions or paths
    b: str
    regressions: tuple[RowChange, ...]
    fixes: tuple[RowChange, ...]
    unchanged: int
    only_a: tuple[str, ...] = ()
    only_b: tuple[str, ...] = ()
    noise: tuple[Noise, ...] = ()  # the census-wide bands of compile time and speedup
    waited: tuple[str, ...] = ()  # rows whose speedup was not compared: timed waiting for a core


def _site(b) -> str:
    return f"{b.gb_id or '?'} {b.type} at {b.where}"


def _sites(row: CensusRow) -> dict[str, list]:
    out: dict[str, list] = {}
    for x in row.breaks:
        out.setdefault(x.where, []).append(x)
    return out


def _types(breaks) -> str:
    return ", ".join(sorted({f"{x.gb_id or '?'} {x.type}" for x in breaks}))


def _changes(
    a: CensusRow, b: CensusRow, slower: float, slower_s: float, noise: dict[str, Noise] | None = None
) -> tuple[list[str], list[str]]:
    noise = noise or {"compile": Noise("compile times", 0), "speedup": Noise("speedups", 0)}
    worse: list[str] = []
    better: list[str] = []
    ra, rb = RANK.get(a.status, 0), RANK.get(b.status, 0)
    if a.status != b.status:
        (worse if rb > ra else better).append(f"status {a.status} → {b.status}")
    if b.error and b.error != a.error:
        worse.append(f"error: {b.error}")
    sa, sb = _sites(a), _sites(b)
    worse += [f"new break: {_site(x)}" for w, xs in sb.items() if w not in sa for x in xs]
    better += [f"break gone: {_site(x)}" for w, xs in sa.items() if w not in sb for x in xs]
    for w in sa.keys() & sb.keys():  # the same site, broken for another reason (or retyped)
        ta, tb = _types(sa[w]), _types(sb[w])
        if ta != tb:
            worse.append(f"break at {w}: {ta} → {tb}")
    for what, na, nb in (
        ("recompiles", len(a.recompiles), len(b.recompiles)),
        ("graphs", a.graphs, b.graphs),
    ):
        if na != nb and not (a.error or b.error):
            (worse if nb > na else better).append(f"{what} {na} → {nb}")
    ta, tb = a.compile_time_s, b.compile_time_s
    if ta and tb and not (a.error or b.error) and abs(tb - ta) >= slower_s:
        side = noise["compile"].outside(ta, tb, slower)
        if side > 0:
            worse.append(f"compile {ta:.1f} s → {tb:.1f} s (+{(tb / ta - 1) * 100:.0f}%)")
        elif side < 0:
            better.append(f"compile {ta:.1f} s → {tb:.1f} s (−{(1 - tb / ta) * 100:.0f}%)")
    ia, ib = (None, None) if waited(a) or waited(b) else (_speed_interval(a), _speed_interval(b))
    moved = max(abs((b.eager_ms or 0) - (a.eager_ms or 0)), abs((b.compiled_ms or 0) - (a.compiled_ms or 0)))
    if ia and ib and (ib[1] < ia[0] or ib[0] > ia[1]) and moved >= MIN_MS:  # beyond both spreads
        side = noise["speedup"].outside(a.speedup, b.speedup, FASTER)
        words = f"speedup ×{a.speedup:.2f} → ×{b.speedup:.2f}"
        if side < 0:
            worse.append(words + f" (spreads ×{ia[0]:.2f}–{ia[1]:.2f}, ×{ib[0]:.2f}–{ib[1]:.2f})")
        elif side > 0:
            better.append(words)
    return worse, better


def _weight(changes: tuple[str, ...]) -> int:
    """A row's changes beyond its times (breaks, recompiles, graphs, errors): these come
    before a compile or a speedup that only moved."""
    return sum(1 for x in changes if not x.startswith(("compile ", "speedup ")))


def _name(c: Census, other: Census) -> str:
    if c.title and c.title != other.title:
        return c.title
    if c.torch_version and c.torch_version != other.torch_version:
        return f"torch {c.torch_version}"
    return c.path or c.title or "census"


def diff_census(a: Census, b: Census, *, slower: float = SLOWER, slower_s: float = SLOWER_S) -> CensusDiff:
    """``b`` against ``a``: rows matched by model and mode. A row with any regression is a
    regression (its fixes listed beside); the worst status moves come first, then the rows
    with the most changes beyond their compile time."""
    rows_a = {r.key: r for r in a.rows}
    rows_b = {r.key: r for r in b.rows}
    both = [(ra, rows_b[k]) for k, ra in rows_a.items() if k in rows_b and not (ra.error or rows_b[k].error)]
    noise = {
        "compile": Noise.of(
            "compile times",
            [(x.compile_time_s, y.compile_time_s) for x, y in both if x.compile_time_s and y.compile_time_s],
        ),
        "speedup": Noise.of(
            "speedups",
            [
                (x.speedup, y.speedup)
                for x, y in both
                if x.speedup and y.speedup and not (waited(x) or waited(y))
            ],
        ),
    }
    regressions: list[RowChange] = []
    fixes: list[RowChange] = []
    unchanged = 0
    for key, ra in rows_a.items():
        rb = rows_b.get(key)
        if rb is None:
            continue
        worse, better = _changes(ra, rb, slower, slower_s, noise)
        change = RowChange(key, ra, rb, tuple(worse), tuple(better))
        if worse:
            regressions.append(change)
        elif better:
            fixes.append(change)
        else:
            unchanged += 1
    regressions.sort(key=lambda c: (-c.severity, -_weight(c.worse), c.key))
    fixes.sort(key=lambda c: (c.severity, -_weight(c.better), c.key))
    return CensusDiff(
        _name(a, b),
        _name(b, a),
        with_heads(regressions, a, b),  # a compile time that moved: the head that moved most
        with_heads(fixes, a, b),
        unchanged,
        tuple(k for k in rows_a if k not in rows_b),
        tuple(k for k in rows_b if k not in rows_a),
        tuple(noise.values()),
        tuple(k for k, ra in rows_a.items() if k in rows_b and (waited(ra) or waited(rows_b[k]))),
    )

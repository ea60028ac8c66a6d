"""Two censuses side by side (torch 2.13 against 2.14, settings A against B): each model and
mode's changes, regressions first (a model that went from one graph to breaking, a new break
site, a new recompile, a slower compile, a new error), then fixes, then what one census has
and the other has not."""

from __future__ import annotations

from dataclasses import dataclass

from ._table import Census, CensusRow

# how bad a status is: a move up is a regression
RANK = {"one graph": 0, "no graph": 0, "several graphs": 1, "recompiles": 2, "graph break": 3, "error": 4}
SLOWER = 1.25  # a compile this much slower (and by SLOWER_S at least) is a regression
SLOWER_S = 0.5


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


def _site(b) -> str:
    return f"{b.gb_id or '?'} {b.type} at {b.where}"


def _sites(row: CensusRow) -> dict[str, list]:
    out: dict[str, list] = {}
    for x in row.breaks:
        out.setdefault(x.where, []).append(x)
    return out


def _types(breaks) -> str:
    return ", ".join(sorted({f"{x.gb_id or '?'} {x.type}" for x in breaks}))


def _changes(a: CensusRow, b: CensusRow, slower: float, slower_s: float) -> tuple[list[str], list[str]]:
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
    if ta and tb and not (a.error or b.error):
        if tb > ta * slower and tb - ta >= slower_s:
            worse.append(f"compile {ta:.1f} s → {tb:.1f} s (+{(tb / ta - 1) * 100:.0f}%)")
        elif ta > tb * slower and ta - tb >= slower_s:
            better.append(f"compile {ta:.1f} s → {tb:.1f} s (−{(1 - tb / ta) * 100:.0f}%)")
    return worse, better


def _weight(changes: tuple[str, ...]) -> int:
    """A row's changes beyond its compile time (breaks, recompiles, graphs, errors): these
    come before a compile that only got slower or faster."""
    return sum(1 for x in changes if not x.startswith("compile "))


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
    regressions: list[RowChange] = []
    fixes: list[RowChange] = []
    unchanged = 0
    for key, ra in rows_a.items():
        rb = rows_b.get(key)
        if rb is None:
            continue
        worse, better = _changes(ra, rb, slower, slower_s)
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
        tuple(regressions),
        tuple(fixes),
        unchanged,
        tuple(k for k in rows_a if k not in rows_b),
        tuple(k for k in rows_b if k not in rows_a),
    )

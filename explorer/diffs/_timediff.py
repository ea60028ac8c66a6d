"""What grew between two runs: the compile-time heads (``compiler.analysis.compile_time``) of
each pair of compiles side by side, and the heads that grew named. A head grew where it moved
by ``GREW_S`` and by ``GREW`` of its first figure at least: one run of each side has no spread
of its own to tell noise by, so the floors are those a loaded machine moves a head by."""

from __future__ import annotations

from compiler._viewer import HEADS
from compiler.analysis import compile_time
from compiler.types import Compile

from ..model._compiletime import head_cell

GREW = 1.25  # a head this much larger (and by GREW_S at least) grew
GREW_S = 0.1


def _moved(a: float, b: float) -> int:
    """+1 where ``b`` grew past ``a`` beyond the floors, -1 where it shrank so, 0 otherwise."""
    if abs(b - a) < GREW_S:
        return 0
    if b > a * GREW:
        return 1
    if a > b * GREW:
        return -1
    return 0


def heads_table(pairs: list[tuple[str, Compile, Compile]]) -> tuple[str, str]:
    """The heads of each pair, one text per side, a line per compile and head: what the
    side-by-side section shows (equal lines where a head did not move)."""
    sides: tuple[list[str], list[str]] = ([], [])
    for label, x, y in pairs:
        for side, c in zip(sides, (x, y)):
            if not c.phases:
                side.append(f"[{label}] no timed phases")
                continue
            t = compile_time(c)
            side.append(f"[{label}] {c.name}: {head_cell(t.wall_s)}")
            side += [f"  {HEADS[k]}: {head_cell(v)}" for k, v in t.heads.items()]
    return "\n".join(sides[0]), "\n".join(sides[1])


def grown_lines(pairs: list[tuple[str, Compile, Compile]]) -> list[str]:
    """A line per pair of compiles whose heads moved beyond the floors, the heads that grew
    first, each with both figures; then the head that changed most over all pairs."""
    out = []
    totals: dict[str, list[float]] = {k: [0.0, 0.0] for k in HEADS}
    for label, x, y in pairs:
        if not (x.phases and y.phases):
            continue
        ta, tb = compile_time(x), compile_time(y)
        grew, shrank = [], []
        for k in HEADS:
            a, b = ta.heads[k], tb.heads[k]
            totals[k][0] += a
            totals[k][1] += b
            side = _moved(a, b)
            words = f"{HEADS[k]} {head_cell(a)} → {head_cell(b)}"
            (grew if side > 0 else shrank if side < 0 else []).append(words)
        if grew or shrank:
            bits = ([f"grew: {', '.join(grew)}"] if grew else []) + (
                [f"shrank: {', '.join(shrank)}"] if shrank else []
            )
            out.append(
                f"{label} compile time {head_cell(ta.wall_s)} → {head_cell(tb.wall_s)}; " + "; ".join(bits)
            )
    moved = max(totals, key=lambda k: abs(totals[k][1] - totals[k][0]))
    a, b = totals[moved]
    if out and abs(b - a) > 0:
        out.append(
            f"compile time: the head that changed most is {HEADS[moved]}, {head_cell(a)} → {head_cell(b)}"
        )
    return out


def grown(d) -> list[str]:
    """The diff's lines on compile time (its "Compile time by head" section's note), for the
    summary ``pt2-explorer diff`` prints: where the heads moved beyond the floors."""
    section = next((s for s in d.sections if s.id == "compile-time"), None)
    if section is None or not section.note:
        return []
    return [f"  {line}" for line in section.note.split(" | ") if " → " in line]

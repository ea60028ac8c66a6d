"""``advise``'s result as text (``explorer.text(advice)``, what ``pt2-explorer advise``
prints): one table of the measured fixes, best first, then each row's change as code, its
timings with their spread and cautions, how its outputs compare, and its report."""

from __future__ import annotations

import textwrap

from ..base._types import Table
from ..lower._fit import cut_middle
from ..lower._plaintable import fitted_table, word_widths
from ..lower._text import table_text
from ._bench import ms_text

COLUMNS = (
    "#",
    "fix",
    "graphs",
    "breaks",
    "recompiles",
    "eager ms",
    "compiled ms",
    "speedup",
    "can win",
    "won",
    "outputs agree",
    "compile s",
    "caution",
)
BASELINE = "baseline"


def _num(x) -> str:
    return "—" if x is None else f"{x:g}"


def _median(t) -> str:
    return "—" if t is None else f"{t.median_ms:.4g}"


def _agree(r) -> str:
    if r.fix == BASELINE:
        return "(reference)"
    return {True: "yes", False: "NO"}.get(r.agree, "—")


def advice_table(advice) -> Table:
    several = len({r.function for r in advice.rows if r.function}) > 1
    columns = (*COLUMNS[:2], "function", *COLUMNS[2:]) if several else COLUMNS
    rows = []
    for r in advice.rows:
        cells = (
            r.rank or ("no" if r.unranked else "—"),
            r.fix,
            _num(r.graphs),
            _num(r.breaks),
            _num(r.recompiles),
            _median(r.eager),
            _median(r.compiled),
            r.speedup_words,
            "—" if r.predicted is None else f"up to {r.predicted:.3g}×",
            "—" if r.measured is None else f"{r.measured:.3g}×",
            _agree(r),
            "—" if r.compile_s is None else f"{r.compile_s:.3g}",
            # labels: the lines below say why
            _failed(r.error) if r.error else "; ".join(n.split(":", 1)[0] for n in r.cautions),
        )
        rows.append((*cells[:2], r.function or "—", *cells[2:]) if several else cells)
    title = f"advise: {advice.name} ({advice.device}): each fix measured, best first"
    return Table(title, columns, tuple(rows))


def _failed(error: str) -> str:
    return "skipped (below)" if error.startswith("skipped") else "failed (below)"


def _spread(t) -> str:
    return f"{ms_text(t.median_ms)} (middle half {t.p25_ms:.4g}–{t.p75_ms:.4g} ms, {t.reps} timed calls)"


def _how(advice) -> str:
    counts = "graphs: compiled graphs a call of the function runs; breaks (sites) and recompiles: in the " + (
        "whole program's report of that run." if advice.separate else "report of that row's calls."
    )
    counts += (
        " #: the rank, =N a tie (their speedups' spreads overlap); a row that compiled anew while timing, or "
        "whose eager arm disagrees with the baseline's beyond their spread, is not ranked (no). can win: what the "
        "baseline's verdict says the fix can win at most; won: its speedup over the baseline's."
    )
    if advice.separate:
        return (
            "Each row is its own process running the whole program (`record --bench`, the fix set at "
            "start-up): its speedup is its compiled against its own eager, timed interleaved in that "
            "process after warm-up. Compare the speedups; compare ms across rows only where their "
            "eager ms agree (separate processes, timed at different moments). " + counts
        )
    return (
        "Each row is the function compiled again in this process (Dynamo reset, the fix's settings "
        "patched around the compile, the calls and the benchmark): its speedup is its compiled "
        "against its own eager, timed interleaved after warm-up. " + counts
    )


# at a terminal's width, the columns left out first where the table does not fit (each row's
# lines below the table say each of them), and the widest a fix's name is shown there (cut in its
# middle: the row's own lines name it whole)
NARROW_DROPS = ("caution", "can win", "won", "compile s", "recompiles")
FIX_ROOM = 24


def fitted_advice(t: Table, width: int, drops: tuple[str, ...] = NARROW_DROPS) -> tuple[list[str], list[str]]:
    """``t``'s lines at most ``width`` wide, and the columns left out: a fix's name cut in its
    middle (``cut_middle``, its end kept), cells wrapped between their words, never inside one;
    where the columns still do not fit, those of ``drops`` left out in that order."""
    columns = list(t.columns)
    fix = columns.index("fix")
    rows = [[*r[:fix], cut_middle(r[fix], FIX_ROOM), *r[fix + 1 :]] for r in t.rows]
    dropped: list[str] = []

    def need() -> int:
        return sum(word_widths(columns, rows)) + 2 * (len(columns) - 1)

    for name in drops:
        if need() <= width or name not in columns:
            continue
        i = columns.index(name)
        columns.pop(i)
        rows = [r[:i] + r[i + 1 :] for r in rows]
        dropped.append(name)
    over = need() - width
    if over > 0:  # the fix's names cut further, to what the other columns leave them
        room = max(word_widths(columns, rows)[fix] - over, len(columns[fix]), 8)
        rows = [[*r[:fix], cut_middle(r[fix], room), *r[fix + 1 :]] for r in rows]
    return fitted_table(columns, rows, width), dropped


def fitted_text(t: Table, width: int | None, drops: tuple[str, ...] = NARROW_DROPS) -> str:
    """The table as text: whole lines (``width`` None), or fitted to ``width`` (``fitted_advice``),
    the columns it left out named under it."""
    if width is None:
        return table_text(t)
    lines, dropped = fitted_advice(t, width, drops)
    if dropped:
        said = f"(left out at this width: {', '.join(dropped)}; each row's lines below give them)"
        lines += textwrap.wrap(said, width)
    return "\n".join([t.title, *lines]) + "\n"


def change_lines(r, head: str, when: str) -> list[str]:
    """A row's first lines: its fix and why, the change as code, the settings measured
    (``when`` they were made), and how its run failed or why it was skipped."""
    out = [head + (f" — {r.why}" if r.why else " — the program as it is" if r.fix == BASELINE else "")]
    if r.code:
        out.append(f"  change:    {r.code}")
    if r.lines and tuple(r.lines) != (r.code,):
        out.append(f"  measured:  {'; '.join(r.lines)} ({when})")
    if r.error and r.error.startswith("skipped: "):
        out.append(f"  skipped:   {r.error.removeprefix('skipped: ')}")
    elif r.error:
        out.append(f"  failed:    {r.error}")
    return out


def closing_lines(r, report: str | None) -> list[str]:
    """A row's last lines: how its outputs compared, its cautions and notes, its ``report``."""
    out = [f"  outputs:   {r.agreement}"] if r.agreement and r.fix != BASELINE else []
    out += [f"  caution:   {n}" for n in r.cautions]
    out += [f"  note:      {n}" for n in r.notes]
    return out + ([f"  report:    {report}"] if report else [])


def advice_text(advice, width: int | None = None) -> str:
    """The table, how to read it, then each row: its change, timings, outputs, report. At
    ``width`` (a terminal's) the table fits it (``fitted_advice``: the columns it leaves out are
    named under it); None: whole lines."""
    out = [fitted_text(advice_table(advice), width), _how(advice), ""]
    for r in advice.rows:
        out += change_lines(
            r, r.fix + (f" · {r.function}" if r.function else ""), "set before anything compiled"
        )
        if r.eager is not None and r.compiled is not None:
            out.append(f"  eager:     {_spread(r.eager)}")
            out.append(f"  compiled:  {_spread(r.compiled)}: {r.speedup_words}")
        if r.compile_s is not None:
            out.append(f"  compile:   {r.compile_s:.3g} s (the function's, in this run)")
        if r.unranked:
            out.append(f"  not ranked: {r.unranked}")
        if r.versus:
            out.append(f"  gain:      {r.versus}")
        out += closing_lines(r, r.path)
    out += [f"note: {n}" for n in advice.notes]
    return "\n".join(out).rstrip() + "\n"

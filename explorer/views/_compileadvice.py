"""``advise --compile-time``'s result as text (``explorer.text(advice)``, what ``pt2-explorer
advise --compile-time`` prints): one table of each fix's compile time, cold and warm, most
saved first, beside its steady-state speed and whether its outputs agree; then each row's
change as code, its figures in words, and its reports."""

from __future__ import annotations

from ..base._types import Table
from ._advice import BASELINE, change_lines, closing_lines, fitted_text
from ._bench import ms_text

COLUMNS = (
    "#",
    "fix",
    "compile s",
    "saved s",
    "compiles",
    "cache hits",
    "warm s",
    "compiled ms",
    "speedup",
    "outputs agree",
    "caution",
)
# at a terminal's width, left out first (each row's lines below give them)
DROPS = ("caution", "compiles", "cache hits", "compiled ms")


def _n(n: int | None, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def _s(x: float | None) -> str:
    return "—" if x is None else f"{x:.3g}"


def _saved(r) -> str:
    if r.fix == BASELINE:
        return "(reference)"
    if r.saved_s is None:
        return "—"
    return f"{r.saved_s:+.3g}".replace("-", "−")


def _agree(r) -> str:
    if r.fix == BASELINE:
        return "(reference)"
    return {True: "yes", False: "NO"}.get(r.agree, "—")


def _caution(r) -> str:
    if r.error:
        return "skipped (below)" if r.error.startswith("skipped") else "failed (below)"
    labels = ["SLOWER steady state"] if r.slower else []
    return "; ".join(labels + [n.split(":", 1)[0] for n in r.cautions])


def compile_advice_table(advice) -> Table:
    rows = tuple(
        (
            r.rank or "—",
            r.fix,
            _s(r.compile_s),
            _saved(r),
            "—" if r.compiles is None else str(r.compiles),
            "—" if r.hits is None else str(r.hits),
            _s(r.warm_s),
            "—" if r.compiled is None else f"{r.compiled.median_ms:.4g}",
            r.speedup_words,
            _agree(r),
            _caution(r),
        )
        for r in advice.rows
    )
    title = (
        f"advise --compile-time: {advice.name} ({advice.device}): each fix's compile time, most saved first"
    )
    return Table(title, COLUMNS, rows)


HOW = (
    "Each row is its own process running the whole program (`record --bench`), its compile caches in a new "
    "empty directory (cold); warm s: the same again in a fresh process with that directory kept (a warm "
    "start). compile s: every compile of the run, as the Compile time view places it (torch's "
    "entire_frame_compile spans, and a backward's Inductor compile); saved s: the baseline's less the row's; "
    "cache hits: compiles with an FX-graph or AOTAutograd cache hit. compiled ms and speedup: the steady "
    "state, the benchmark of the baseline's slowest compiled function in that run, its compiled against its "
    "own eager; a row whose speedup is below the baseline's beyond both spreads says SLOWER. #: rows that ran "
    "and whose outputs agree, by compile time."
)


def compile_advice_text(advice, width: int | None = None) -> str:
    """The table (fitted to ``width``, a terminal's; None: whole lines), how to read it, then
    each row: its change, its figures, its reports."""
    out = [fitted_text(compile_advice_table(advice), width, DROPS), HOW, ""]
    for r in advice.rows:
        out += change_lines(r, r.fix, "made at start-up")
        if r.compile_s is not None:
            hits = f", {r.hits} with a cache hit" if r.hits else ""
            out.append(f"  compile:   {r.compile_s:.3g} s over {_n(r.compiles, 'compile')}{hits}")
        if r.warm_s is not None:
            out.append(f"  warm:      {r.warm_s:.3g} s, {_n(r.warm_hits, 'compile')} with a cache hit")
        if r.eager is not None and r.compiled is not None:
            out.append(
                f"  steady:    {r.function}: compiled {ms_text(r.compiled.median_ms)}, eager "
                f"{ms_text(r.eager.median_ms)}: {r.speedup_words}"
            )
        if r.slower:
            out.append(f"  SLOWER:    {r.slower}")
        out += closing_lines(r, r.path and r.path + (f" (warm: {r.warm_path})" if r.warm_path else ""))
    out += [f"note: {n}" for n in advice.notes]
    return "\n".join(out).rstrip() + "\n"

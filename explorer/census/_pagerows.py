"""The census page's row table, folded to fit a window of 1,400 px: a row's model carries its
family, its mode its precision, its speedup both arms' times and its peak memory both arms'
figures; the long cells (breaks, the cause) wrap. Each row with a finding (not one graph, or
compiled slower or barely faster) links to its report, else to the report of the same model's
row that has the same finding, else says that none was kept. Odd rows carry a note: a training
step that compiled faster than the same model's eval call, though it compiles a backward too."""

from __future__ import annotations

from ..lower._html import esc
from ._speedview import fmt_speedup, row_id
from ._table import BARELY, Census, CensusRow

# the census table's columns (the terminal's and the widget's), and the page's: folded, each
# of FOLDED shown under the column before it (family under model, precision under mode, both
# arms' times under the speedup), peak memory added
COLUMNS = (
    "model",
    "mode",
    "precision",
    "family",
    "status",
    "graphs",
    "breaks",
    "recompiles",
    "compile",
    "kernels",
    "speedup",
    "eager",
    "compiled",
    "cause",
)
FOLDED = ("precision", "family", "eager", "compiled")
PAGE_COLUMNS = (*(c for c in COLUMNS[:-1] if c not in FOLDED), "peak memory", COLUMNS[-1])
PAGE_CSS = (
    ".st-error{color:#b00}.st-graph-break{color:#a60}.st-recompiles{color:#06c}.where{color:#666}"
    "th{cursor:pointer}#census{max-width:100%}#census td,.headline td{white-space:nowrap}"
    "#census td.wrap{white-space:normal;overflow-wrap:anywhere;min-width:10em;max-width:26em}"
    "#census .sub{display:block;color:#57606a;font-size:11px}#census .odd{display:block;color:#9a6700;"
    "font-size:11px;white-space:normal;max-width:22em}"
)


def has_finding(r: CensusRow) -> bool:
    """A row the census found something in: a break, recompiles, an error, or compiled slower
    or barely faster than eager."""
    return r.status != "one graph" or (r.speedup is not None and r.speedup < BARELY)


def _finding(r: CensusRow) -> tuple:
    return (r.status, tuple(sorted({b.gb_id or b.type for b in r.breaks})), len(r.recompiles))


def row_links(rows, links: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Each row's report link and its words: its own (``report``), else, for a row with a
    finding, that of the same model and mode in another precision whose finding is the same
    (``the fp32 row's report``; the census kept one report per finding)."""
    out = {r.key: (links[r.key], "report") for r in rows if r.key in links}
    for r in rows:
        if r.key in out or not has_finding(r) or r.status == "one graph":
            continue
        peer = next(
            (
                p
                for p in rows
                if p.key in links
                and (p.model, p.mode, p.source) == (r.model, r.mode, r.source)
                and _finding(p) == _finding(r)
            ),
            None,
        )
        if peer is not None:
            out[r.key] = (links[peer.key], f"the {peer.precision} row's report (the same finding)")
    return out


def odd_notes(rows) -> dict[str, str]:
    """The rows whose figures go against what they measure, with a note: a training step that
    compiled faster than the same model's eval call in the same precision, though it compiles a
    backward too (the census's cases share one compile cache unless run ``--fresh``)."""
    evals = {(r.model, r.precision, r.source): r for r in rows if r.mode == "eval"}
    out = {}
    for r in rows:
        e = evals.get((r.model, r.precision, r.source)) if r.mode == "train" else None
        if e is None or r.compile_time_s is None or e.compile_time_s is None:
            continue
        if r.compile_time_s < e.compile_time_s:
            out[r.key] = (
                f"odd: compiled in {r.compile_time_s:.1f} s, faster than eval's {e.compile_time_s:.1f} s though "
                "it compiles a backward too"
            )
    return out


def cache_words(census: Census) -> str:
    """Why a case may compile faster than another: the caches the census's cases ran with."""
    if census.settings.get("fresh"):
        return "each case compiled with empty caches of its own (--fresh)"
    return (
        "the cases of one census share the host's compile caches: a case that runs after another "
        "compiling the same kernels finds them cached"
    )


def _mb(x: float | None) -> str:
    return "—" if x is None else f"{x:,.0f}"


def _sub(text: str) -> str:
    return f'<span class="sub">{esc(text)}</span>' if text else ""


def _breaks(r: CensusRow, link_cell) -> str:
    if not r.breaks:
        return "—"
    return "; ".join(
        f'{link_cell(b.gb_id or "?", b.link)} {esc(b.type)} <span class="where">{esc(b.where)}</span>'
        for b in r.breaks
    )


def page_row(r: CensusRow, link: tuple[str, str] | None, odd: str | None, link_cell) -> str:
    """One row of the page's table (``PAGE_COLUMNS``)."""
    status = f"error: {r.error}" if r.status == "error" and r.error else r.status
    model = link_cell(r.model, link[0] if link else None)
    if link and link[1] != "report":
        model += _sub(link[1])
    elif link is None and has_finding(r):
        model += _sub("its report was not kept")
    times = ""
    if r.eager_ms is not None or r.compiled_ms is not None:
        times = f"eager {_ms(r.eager_ms)}, compiled {_ms(r.compiled_ms)}"
    memory = "—"
    if r.peak_mb_eager is not None or r.peak_mb_compiled is not None:
        memory = f"{_mb(r.peak_mb_compiled)} MiB" + _sub(f"eager {_mb(r.peak_mb_eager)} MiB")
    compile_ = f"{r.compile_time_s:.1f} s" if r.compile_time_s is not None else "—"
    cells = (
        (model + _sub(r.family or ""), "", None),
        (esc(r.mode) + _sub(r.precision), "", None),
        (esc(status), f"st-{r.status.replace(' ', '-')} wrap", None),
        (str(r.graphs), "", None),
        (_breaks(r, link_cell), "wrap", None),
        (str(len(r.recompiles)), "", None),
        (compile_ + (f'<span class="odd">{esc(odd)}</span>' if odd else ""), "", r.compile_time_s or 0),
        (str(r.kernels), "", None),
        (esc(fmt_speedup(r.speedup)) + _sub(times), "", r.speedup or 0),
        (memory, "", r.peak_mb_compiled or 0),
        (esc((r.cause or "") if r.slower else ""), "wrap", None),
    )
    tds = "".join(
        f"<td{f' data-v={v!r}' if v is not None else ''}{f' class={cls!r}' if cls else ''}>{body}</td>"
        for body, cls, v in cells
    )
    return f'<tr id="{row_id(r)}">{tds}</tr>'


def _ms(x: float | None) -> str:
    return "—" if x is None else f"{x:.3g} ms"

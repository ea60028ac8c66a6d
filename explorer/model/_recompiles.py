"""The recompiles part of the view model (``model/_view.py``): per frame the timeline of its
compiles; per recompile the guard that failed, where it came from, the other entries torch
tried, and what the recompile made dynamic; every compile's dynamic dimensions."""

from __future__ import annotations

from compiler import Report
from compiler.analysis import without_local_scope
from compiler.types import Recompile

from ..base._types import DynamicDim, FrameTimeline, GuardLine, OtherFailure, RecompileView, TimelineEntry
from ._summary import display_name, reasons_line, where


def timelines(report: Report) -> tuple[FrameTimeline, ...]:
    reasons = {r.compile_id: reasons_line(r) for r in report.recompiles}
    out = []
    for f in report.frames:
        entries = []
        for c in report.compiles:
            if c.frame != f.id:
                continue
            if c.status != "ok":
                label = f"failed in {c.failed_stage}: {(c.error or '').splitlines()[0] if c.error else ''}"
            elif c.id.endswith("/0"):
                label = "first compile"
            else:
                label = reasons.get(c.id, "recompile")
            entries.append(TimelineEntry(c.id, c.status, label))
        out.append(
            FrameTimeline(
                display_name(f.name), where(f.filename, f.line), tuple(entries), f.recompile_limit_hit
            )
        )
    return tuple(out)


def previous_compile(report: Report, compile_id: str) -> str | None:
    """The compile before ``compile_id`` of the same frame, if any."""
    frame = report.compile(compile_id).frame
    ids = [c.id for c in report.compiles if c.frame == frame]
    i = ids.index(compile_id)
    return ids[i - 1] if i > 0 else None


def previous_compiles(report: Report) -> dict[str, str | None]:
    """``previous_compile`` of every compile, in one pass (not one pass per compile)."""
    prev: dict[str, str | None] = {}
    last: dict[int, str] = {}  # frame -> its latest compile so far
    for c in report.compiles:
        prev.setdefault(c.id, last.get(c.frame))
        last[c.frame] = c.id
    return prev


def _frame_and_index(compile_id: str) -> tuple[str, int]:
    """ "0/2" -> ("0", 2); the frame part keeps any prefix torch puts before it."""
    frame, _, k = compile_id.rpartition("/")
    return frame, int(k) if k.isdigit() else -1


def _failed_later_in(report: Report, r: Recompile) -> str | None:
    """The first later recompile of the same frame whose guard failures name ``r``'s compile:
    the compile ``r`` added stopped matching then."""
    frame, k = _frame_and_index(r.compile_id)
    later = []
    for other in report.recompiles:
        f, j = _frame_and_index(other.compile_id)
        entries = {x.entry for x in other.failures} | {other.failed_entry}
        if f == frame and j > k and r.compile_id in entries:
            later.append((j, other.compile_id))
    return min(later)[1] if later else None


def recompile_view(report: Report, r: Recompile, names: dict[str, str]) -> RecompileView:
    guards = ()
    if r.entry_guards:
        lines = [ln for ln in r.entry_guards.splitlines() if ln.strip()]
        failing = r.failing_guard
        guards = tuple(GuardLine(ln, bool(failing) and ln.rstrip().endswith(failing)) for ln in lines)
    guard_from = None
    if r.failures and r.failures[0].user_stack:
        f = r.failures[0].user_stack[-1]
        guard_from = f"{where(f.filename, f.line)} in {f.name}"
    also = tuple(OtherFailure(x.entry, x.short_reason or "", x.guard) for x in r.failures[1:])
    dynamic, later, note = (), None, None
    if r.dynamic:
        symbols = {}
        try:
            cap = report.compile(r.compile_id).stages.capture
            symbols = {s.symbol: s for s in cap.symbols} if cap else {}
        except KeyError:
            pass
        dynamic = tuple(
            ((without_local_scope(symbols[s].source) or s) if s in symbols else s, s) for s in r.dynamic
        )
        later = _failed_later_in(report, r)
        dims = ", ".join(f"{d} ({s})" if d != s else s for d, s in dynamic)
        fate = f"its guards failed later in [{later}]" if later else "later calls reuse it"
        note = f"compiled with dynamic {dims}; {fate}"
    return RecompileView(
        compile_id=r.compile_id,
        frame=names.get(r.compile_id, "?"),
        reasons=r.reasons,
        failed_entry=r.failed_entry,
        failing_guard=r.failing_guard,
        guards=guards,
        guard_from=guard_from,
        also_failed=also,
        dynamic=dynamic,
        failed_later_in=later,
        dynamic_note=note,
        diff_from=r.failed_entry or previous_compile(report, r.compile_id),
    )


def dynamic_dims(report: Report) -> tuple[DynamicDim, ...]:
    """Every compile's symbols (first compiles included: ``mark_dynamic``, ``dynamic=True``)
    and the dimensions it specialized, in compile order."""
    rows: list[DynamicDim] = []
    for c in report.compiles:
        cap = c.stages.capture
        if cap is None:
            continue
        for s in cap.symbols:
            rows.append(
                DynamicDim(c.id, s.symbol, without_local_scope(s.source) or "?", range=s.vr, seen=s.val)
            )
        for sp in cap.specializations:
            at = None
            if sp.user_stack:
                f = sp.user_stack[-1]
                at = where(f.filename, f.line)
            rows.append(
                DynamicDim(
                    c.id,
                    sp.symbol,
                    ", ".join(without_local_scope(s) for s in sp.sources) or "?",
                    specialized=sp.value,
                    reason=sp.reason,
                    at=at,
                )
            )
    return tuple(rows)

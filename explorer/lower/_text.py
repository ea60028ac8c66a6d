"""The view model lowered to plain text: the terminal's and the tests' form of each view."""

from __future__ import annotations

from ..base._types import (
    CodeBlock,
    CompileView,
    DynamicDim,
    ExplorerView,
    GraphBlock,
    LinesBlock,
    Table,
    hits,
    opening_compile,
)


def breaks_text(view: ExplorerView) -> str:
    out: list[str] = []
    if view.summary.error:  # users land on this view: say first how the program ended
        out += [f"The recorded program ended with: {view.summary.error}", ""]
    if not view.breaks:
        return "\n".join(out + ["No graph breaks: each compiled frame is one graph."])
    for b in view.breaks:
        gb = f"  {b.gb_id}" if b.gb_id else ""
        out.append(f"{b.site}  {b.type}{gb}  ({hits(b.count, b.compile_ids)})")
        if b.your_code:
            out.append(f"  your code: {b.your_code}")
        width = len(str(b.context[-1].number)) if b.context else 0
        for ln in b.context:
            mark = ">" if ln.highlight else " "
            out.append(f"  {mark} {ln.number:>{width}} | {ln.text}")
        if b.source_unread:
            out.append(f"  source: {b.source_unread}")
        if b.explanation:
            out.append(f"  why: {' '.join(b.explanation.split())}")
        out += [f"  hint: {h}" for h in b.hints]
        if b.user_stack:
            frames = (f"{f.text} [lib]" if f.library else f.text for f in b.user_stack)
            out.append(f"  stack: {' -> '.join(frames)}")
        graphs = []
        if b.graph_before:
            graphs.append(f"graph before: [{b.graph_before}]")
        if b.graph_after:
            graphs.append(f"graph after: [{b.graph_after}]")
        if graphs:
            out.append("  " + ", ".join(graphs))
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def recompiles_text(view: ExplorerView) -> str:
    out: list[str] = []
    for t in view.timelines:
        limit = "  (recompile limit hit)" if t.limit_hit else ""
        out.append(f"{t.frame}  {t.where}{limit}")
        for e in t.entries:
            out.append(f"  [{e.compile_id}] {e.status}: {e.label}")
    if not view.recompiles:
        out.append("No recompiles.")
    for r in view.recompiles:
        out.append("")
        out.append(f"[{r.compile_id}] {r.frame}: guards of [{r.failed_entry}] failed")
        for x in r.reasons:  # continuation lines (torch's "User stack trace:") indented under it
            out.append("  reason: " + "\n          ".join(x.strip().splitlines()))
        if r.failing_guard:
            out.append(f"  failing guard: {r.failing_guard}")
        if r.guard_from:
            out.append(f"  guard from: {r.guard_from}")
        for x in r.also_failed:
            out.append(f"  also failed: [{x.entry}] {x.reason}")
            if x.guard:
                out.append(f"    guard: {x.guard}")
        if r.dynamic_note:
            out.append(f"  {r.dynamic_note}")
    if view.dynamic_dims:
        out += ["", "Dynamic dimensions:"]
        out += [f"  {dynamic_dim_text(d)}" for d in view.dynamic_dims]
    return "\n".join(out).rstrip() + "\n"


def dynamic_dim_text(d: DynamicDim) -> str:
    """``[0/1] s27 = kwargs['input_ids'].size()[1] in [2, int_oo] (seen 24)`` or
    ``[0/0] specialized x.size()[0] = 8: range_refined_to_singleton at f.py:4``."""
    if d.specialized is None and d.reason is None:
        vr = f" in {d.range}" if d.range else ""
        seen = f" (seen {d.seen})" if d.seen is not None else ""
        return f"[{d.compile_id}] {d.symbol} = {d.dim}{vr}{seen}"
    reason = f": {d.reason}" if d.reason else ""
    at = f" at {d.at}" if d.at else ""
    return f"[{d.compile_id}] specialized {d.dim} = {d.specialized}{reason}{at}"


def table_text(t: Table) -> str:
    widths = [
        max(len(c), *(len(r[i]) for r in t.rows)) if t.rows else len(c) for i, c in enumerate(t.columns)
    ]
    lines = [t.title, "  ".join(c.ljust(w) for c, w in zip(t.columns, widths)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in t.rows]
    return "\n".join(lines) + "\n"


def stage_text(cv: CompileView, stage: str) -> str:
    """One compile's stage: its tables, its graphs' size and each code block in full."""
    sv = next(x for x in cv.stages if x.stage == stage)
    out = [f"{cv.label} · {stage}", ""]
    if not sv.blocks:
        return "\n".join(out + [f"{stage}: {sv.note or 'nothing recorded'}"]) + "\n"
    if sv.note:
        out += [sv.note, ""]
    out += [block_text(b) for b in sv.blocks]
    return "\n".join(out).rstrip() + "\n"


def compile_text(cv: CompileView) -> str:
    """One compile's own facts: how it ended, its stage times and caches, torch's traceback
    and metrics (its stages: ``stage_text``)."""
    out = [cv.label, ""]
    if cv.error:
        out += [cv.error, ""]
    out += [block_text(b) for b in cv.blocks]
    return "\n".join(out).rstrip() + "\n"


def block_text(b) -> str:
    if isinstance(b, Table):
        return table_text(b)
    if isinstance(b, GraphBlock):
        nodes = [n for n in b.graph.nodes if n.op != "output"]
        edges = sum(len(n.args) for n in b.graph.nodes)
        return f"{b.title}: {len(nodes)} nodes, {edges} edges\n"
    assert isinstance(b, (CodeBlock, LinesBlock))
    lines = b.code.rstrip("\n").splitlines()
    return f"{b.title} ({len(lines)} lines)\n" + "".join(f"    {ln}".rstrip() + "\n" for ln in lines)


def compile_of(view: ExplorerView, compile_id: str | None) -> CompileView:
    """``compile_id``'s view (None: the opening compile), or a ValueError naming the ids."""
    if compile_id is None:
        cv = opening_compile(view)
        if cv is None:
            raise ValueError("no compiles recorded: no stage to show")
        return cv
    for cv in view.compiles:
        if cv.compile_id == compile_id.strip("[]"):
            return cv
    ids = ", ".join(c.compile_id for c in view.compiles) or "none"
    raise ValueError(f"no compile {compile_id!r} in this report (compiles: {ids})")

"""The view model lowered to plain text: the terminal's and the tests' form of each view."""

from __future__ import annotations

from ._view import ExplorerView, Table


def summary_lines(view: ExplorerView) -> list[str]:
    s = view.summary
    out = [f"{s.title}  ({s.meta})", s.headline]
    if s.error:
        out.append(f"ended with: {s.error}")
    out += [f"break: {ln}" for ln in s.break_lines]
    out += [f"recompile: {ln}" for ln in s.recompile_lines]
    return out


def breaks_text(view: ExplorerView) -> str:
    if not view.breaks:
        return "No graph breaks: each compiled frame is one graph."
    out: list[str] = []
    for b in view.breaks:
        out.append(f"{b.site}  {b.type}  (hit {b.count}×: {', '.join(b.compile_ids)})")
        width = len(str(b.context[-1].number)) if b.context else 0
        for ln in b.context:
            mark = ">" if ln.highlight else " "
            out.append(f"  {mark} {ln.number:>{width}} | {ln.text}")
        if b.explanation:
            out.append(f"  why: {' '.join(b.explanation.split())}")
        out += [f"  hint: {h}" for h in b.hints]
        if b.user_stack:
            out.append(f"  stack: {' -> '.join(b.user_stack)}")
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
    return "\n".join(out).rstrip() + "\n"


def table_text(t: Table) -> str:
    widths = [
        max(len(c), *(len(r[i]) for r in t.rows)) if t.rows else len(c) for i, c in enumerate(t.columns)
    ]
    lines = [t.title, "  ".join(c.ljust(w) for c, w in zip(t.columns, widths)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in t.rows]
    return "\n".join(lines) + "\n"

"""Two reports side by side: frames matched by name + file + line (then name + file, the
name without a resume function's line + file, the name, the name without that line), compiles of matched frames in order, a
summary of what changed, then an overview, the op counts and, per pair of compiles, the
guards, Dynamo and post-grad graphs and kernels (``diff_compiles`` has every stage)."""

from __future__ import annotations

from collections import Counter

from compiler import Report
from compiler._viewer import cache_pairs, without_entry
from compiler.analysis import resume_of
from compiler.types import Compile, Frame

from ..model._speed import key_change_lines
from ..model._summary import display_name, where
from ._compiles import clip, compile_sections, failing, status
from ._parts import (
    Builder,
    KernelChanges,
    aten_ops,
    dynamo_ops,
    match,
    names,
    op_delta,
)
from ._timediff import grown_lines, heads_table
from ._view import Diff


def _frame(f: Frame) -> str:
    return f"{display_name(f.name)} at {where(f.filename, f.line)}"


def _compiles_by_frame(r: Report) -> dict[int, list[Compile]]:
    out: dict[int, list[Compile]] = {}
    for c in r.compiles:
        out.setdefault(c.frame, []).append(c)
    return out


def _phrase(label: str, parts: list[tuple[str, list[str]]]) -> str | None:
    bits = [f"{len(v)} {what} ({names(v)})" for what, v in parts if v]
    return f"{label}: {', '.join(bits)}" if bits else None


def overview(r: Report) -> str:
    """One line per frame, compile and break: what the diff's overview section compares."""
    recompiles = {x.compile_id: x for x in r.recompiles}
    kernels = Counter(k.compile_id for k in r.kernels)
    by_frame = _compiles_by_frame(r)
    lines = []
    frames = list(r.frames) + [
        Frame(fid, cs[0].name, cs[0].filename, cs[0].line, len(cs))
        for fid, cs in by_frame.items()
        if fid not in {f.id for f in r.frames}
    ]
    for f in frames:
        limit = ", recompile limit hit" if f.recompile_limit_hit else ""
        lines.append(f"frame {_frame(f)}: {f.compiles} compile{'s' if f.compiles != 1 else ''}{limit}")
        for k, c in enumerate(by_frame.get(f.id, [])):
            bits = [f"compile {k}", status(c)]  # not the id: its numbering differs between runs
            cap = c.stages.capture
            if cap is not None and cap.guard_count is not None:
                bits.append(f"{cap.guard_count} guards")
            if kernels[c.id]:
                bits.append(f"{kernels[c.id]} kernel{'s' if kernels[c.id] != 1 else ''}")
            if c.id in recompiles and recompiles[c.id].reasons:
                bits.append(f"recompiled: {recompiles[c.id].reasons[0]}")
            lines.append("  " + ", ".join(bits))
    for g in r.graph_breaks:
        lines.append(f"graph break at {where(g.filename, g.line)}: {g.type} (hit {g.count}×)")
    if r.error:
        lines.append(f"error: {r.error}")
    return "\n".join(lines)


def _ops_text(c: Counter) -> str:
    return "\n".join(
        f"{op}  {n}" for op, n in sorted((k.removeprefix("torch.ops."), v) for k, v in c.items())
    )


def diff_reports(a: Report, b: Report, labels: tuple[str, str] | None, context: int, max_lines: int) -> Diff:
    la, lb = labels or ("A", "B")
    bld = Builder(la, lb, max_lines)
    summary: list[str] = []

    fpairs = match(
        list(a.frames),
        list(b.frames),
        [
            lambda f: (f.name, f.filename, f.line),
            lambda f: (f.name, f.filename),
            lambda f: (_without_line(f.name), f.filename),
            lambda f: f.name,
            lambda f: _without_line(f.name),
        ],
    )
    summary.append(
        _phrase(
            "frames",
            [
                ("added", [_frame(y) for x, y in fpairs if x is None]),
                ("removed", [_frame(x) for x, y in fpairs if y is None]),
            ],
        )
    )

    # compiles of matched frames, in order; compiles of frames the report does not list last
    ba, bb = _compiles_by_frame(a), _compiles_by_frame(b)
    cpairs: list[tuple[Compile | None, Compile | None]] = []
    for fa, fb in fpairs:
        xs, ys = (ba.pop(fa.id, []) if fa else []), (bb.pop(fb.id, []) if fb else [])
        cpairs += [
            (xs[i] if i < len(xs) else None, ys[i] if i < len(ys) else None)
            for i in range(max(len(xs), len(ys)))
        ]
    cpairs += match(
        [c for cs in ba.values() for c in cs], [c for cs in bb.values() for c in cs], [lambda c: c.id]
    )
    summary += _unpaired(cpairs, la, lb)
    pairs = [(x, y) for x, y in cpairs if x is not None and y is not None]
    for x, y in pairs:
        if x.status != y.status or x.failed_stage != y.failed_stage:
            summary.append(f"status: {_pair(x, y)} {status(x)} → {status(y)}")

    bpairs = match(
        list(a.graph_breaks),
        list(b.graph_breaks),
        [lambda g: (g.type, g.filename, g.line), lambda g: (g.type, g.filename), lambda g: g.type],
    )
    summary.append(
        _phrase(
            "graph breaks",
            [
                ("added", [f"{where(y.filename, y.line)} {y.type}" for x, y in bpairs if x is None]),
                ("removed", [f"{where(x.filename, x.line)} {x.type}" for x, y in bpairs if y is None]),
                (
                    "moved",
                    [
                        f"{where(x.filename, x.line)} → {where(y.filename, y.line)} {x.type}"
                        for x, y in bpairs
                        if x and y and (x.filename, x.line) != (y.filename, y.line)
                    ],
                ),
            ],
        )
    )

    ra, rb = {r.compile_id: r for r in a.recompiles}, {r.compile_id: r for r in b.recompiles}
    added, removed, changed = [], [], []
    for x, y in cpairs:
        rx, ry = ra.get(x.id) if x else None, rb.get(y.id) if y else None
        if rx and not ry:
            removed.append(_recompile(rx))
        elif ry and not rx:
            added.append(_recompile(ry))
        elif rx and ry and [without_entry(s) for s in rx.reasons] != [without_entry(s) for s in ry.reasons]:
            changed.append(f"{_pair(x, y)} now {_reason(ry)}")
    summary.append(_phrase("recompiles", [("added", added), ("removed", removed), ("changed", changed)]))

    counts = []
    for x, y in pairs:
        gx, gy = (c.stages.capture.guard_count if c.stages.capture else None for c in (x, y))
        if gx != gy:
            counts.append(f"{_pair(x, y)} {gx} → {gy}")
    if counts:
        summary.append(f"guard counts: {names(counts)}")

    bld.add("overview", "Overview", "text", overview(a), overview(b))
    for id, title, fn in (
        ("ops:dynamo", "Dynamo ops (all compiles)", dynamo_ops),
        ("ops:aten", "ATen ops (all compiles)", aten_ops),
    ):
        ta, tb = sum((fn(c) for c in a.compiles), Counter()), sum((fn(c) for c in b.compiles), Counter())
        if ta or tb:
            bld.add(id, title, "text", _ops_text(ta), _ops_text(tb))

    kernels = KernelChanges([], [], [])
    for x, y in pairs:
        label = _pair(x, y)
        res = compile_sections(
            bld,
            x,
            y,
            full=False,
            prefix=f"{label}:",
            fails=(failing(a, x), failing(b, y)),
            reports=(a, b),
        )
        for mine, theirs in zip(kernels, res.kernels):
            mine += theirs
        # what changed in this pair besides kernels and op counts (summed over all pairs below)
        own = [ln for ln in res.lines if not ln.startswith(("kernels:", "Dynamo ops:", "ATen ops:"))]
        if own:
            summary.append(f"{label}: {'; '.join(own)}")
        summary += warm_start_lines(bld, label, x, y)
    if kernels.phrases():
        summary.append("kernels: " + ", ".join(kernels.phrases()))
    timed = [(_pair(x, y), x, y) for x, y in pairs if x.phases or y.phases]
    if timed:  # compile time by head, side by side; the heads that grew in its note (times
        # move from run to run: the summary keeps to what the programs did)
        grown = grown_lines(timed)
        bld.add(
            "compile-time",
            "Compile time by head",
            "text",
            *heads_table(timed),
            note=" | ".join(grown) or None,
        )
    for what, fn in (("Dynamo ops", dynamo_ops), ("ATen ops", aten_ops)):
        # the compiles both runs had: a compile on one side only is said above, not as ops lost
        delta = op_delta(sum((fn(x) for x, _ in pairs), Counter()), sum((fn(y) for _, y in pairs), Counter()))
        if delta:
            summary.append(f"{what}: {delta}")

    title = f"{la} vs {lb}" if labels else "report A vs report B"
    return bld.finish(title, [s for s in summary if s], context)


def _unpaired(cpairs: list[tuple[Compile | None, Compile | None]], la: str, lb: str) -> list[str]:
    """A line per compile one report has and the other has not ("B had no compile of 0/1 f"):
    e.g. a warm run whose earlier run's recompile it did not need (torch's profile of dynamic
    dimensions, kept beside the caches, compiled them dynamic at once). Its ops are not
    compared: the other run never traced them."""
    out = []
    for x, y in cpairs:
        if (x is None) == (y is None):
            continue
        had, c = (la, x) if y is None else (lb, y)
        missing = lb if y is None else la
        ops = sum(dynamo_ops(c).values())
        counted = f" ({had}'s {ops} Dynamo ops there are not counted as changes)" if ops else ""
        out.append(f"{missing} had no compile of {c.id} {display_name(c.name)}{counted}")
    return out


def warm_start_lines(bld: Builder, label: str, x: Compile, y: Compile) -> list[str]:
    """Why a warm start missed: each cache whose answer or key differs between the two
    compiles, with the key's components that differ (and a section with both keys' lists)."""
    states: Counter = Counter()
    for lx, ly in cache_pairs(x, y):
        if lx.state == ly.state and lx.key == ly.key:
            continue
        states[f"{lx.kind} cache {lx.state} → {ly.state}"] += 1
        if lx.key != ly.key and lx.components and ly.components:
            bld.add(
                f"{label}cache-key:{lx.kind}",
                f"{label} {lx.kind} cache key",
                "text",
                lx.components,
                ly.components,
            )
    out = [f"{label} {what}" + (f" ×{n}" if n > 1 else "") for what, n in states.items()]
    # each component once (a forward's and a backward's lookups share most of theirs), the
    # first KEY_CHANGES said; two torch versions differ in dozens of config entries
    changes = list(dict.fromkeys(key_change_lines(x, y)))
    if changes:
        more = len(changes) - KEY_CHANGES
        said = "; ".join(changes[:KEY_CHANGES]) + (
            f"; and {more} more (--full: both keys)" if more > 0 else ""
        )
        out.append(f"{label} key components that differ: {said}")
    return out


KEY_CHANGES = 6


def _pair(x: Compile, y: Compile) -> str:
    return x.id if x.id == y.id else f"{x.id}~{y.id}"


def _reason(r) -> str:
    return clip(without_entry(r.reasons[0]) if r.reasons else "?", 90)


def _recompile(r) -> str:
    return f"{r.compile_id}: {_reason(r)}"


def _without_line(name: str | None) -> str:
    """A resume function's name without the line it resumes after: the same code, moved."""
    resumed = resume_of(name)
    return f"torch_dynamo_resume_in_{resumed[0]}" if resumed else name or ""

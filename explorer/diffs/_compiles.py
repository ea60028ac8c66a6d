"""Two compiles as sections (``explorer.diff_compiles`` and each matched pair of a report
diff): the guards with the failing guard marked, every stage's graphs, IR, output code and
kernels, and the summary lines of what changed."""

from __future__ import annotations

from typing import Any, NamedTuple

from compiler import Report
from compiler.types import Compile, Graph, RoleGraph

from ._parts import (
    ROLES,
    Builder,
    KernelChanges,
    aten_ops,
    changes,
    compile_kernels,
    dynamo_ops,
    kernel_sections,
    op_delta,
    title_prefix,
)


def guards_text(c: Compile) -> str | None:
    cap = c.stages.capture
    return cap.guards.strip("\n") if cap is not None and cap.guards else None


def guard_marks(guards: str | None, failing: str | None) -> list[int]:
    """The 1-based line of ``guards`` that holds the failing guard."""
    if not guards or not failing:
        return []
    lines = guards.splitlines()
    for test in (lambda ln: ln.rstrip().endswith(failing), lambda ln: failing in ln):
        for n, ln in enumerate(lines, start=1):
            if test(ln):
                return [n]
    return []


def failing(report: Report | None, entry: Compile, recompiled: str | None = None) -> list[tuple[str, str]]:
    """(recompile id, failing guard) of the recompiles in ``report`` caused by ``entry``'s
    guards failing (only compile ``recompiled``'s when given)."""
    if report is None:
        return []
    return [
        (r.compile_id, r.failing_guard)
        for r in report.recompiles
        if r.failed_entry == entry.id and r.failing_guard and recompiled in (None, r.compile_id)
    ]


def _reasons(reports, ids: set[str]) -> list[tuple[str, str]]:
    """(recompile id, its reasons on one line) for the recompiles ``ids``, from either report."""
    seen: dict[str, str] = {}
    for rep in reports:
        for r in rep.recompiles if rep is not None else ():
            if r.compile_id in ids and r.compile_id not in seen and r.reasons:
                seen[r.compile_id] = "; ".join(x.strip().splitlines()[0] for x in r.reasons if x.strip())
    return sorted(seen.items())


def status(c: Compile) -> str:
    return "ok" if c.status == "ok" else f"failed in {c.failed_stage or '?'}"


def clip(s: str, n: int = 120) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def graph_code(g: Graph | RoleGraph | None) -> str | None:
    g = g.graph if isinstance(g, RoleGraph) else g
    return g.code if g is not None else None


def _by_role(graphs) -> dict[str, Graph]:
    out: dict[str, Graph] = {}
    for rg in graphs:
        out.setdefault(rg.role, rg.graph)
    return out


class PairResult(NamedTuple):
    lines: list[str]  # summary lines for a compile diff, in order
    kernels: KernelChanges


def compile_sections(
    bld: Builder,
    ca: Compile,
    cb: Compile,
    *,
    full: bool,
    prefix: str = "",
    fails: tuple[list, list] = ([], []),
    reports: tuple[Report | None, Report | None] = (None, None),
) -> PairResult:
    """Sections of two compiles (``full``: also the AOT graphs, the IR and the output code)."""
    lines: list[str] = []
    tp = title_prefix(prefix)
    sa, sb = ca.stages, cb.stages
    if ca.status != cb.status or ca.failed_stage != cb.failed_stage:
        lines.append(f"status: {status(ca)} → {status(cb)}")
    ga, gb = guards_text(ca), guards_text(cb)
    marks = [sorted({m for _, g in fl for m in guard_marks(text, g)}) for fl, text in zip(fails, (ga, gb))]
    notes = []
    for label, fl, mk, text in zip(bld.labels, fails, marks, (ga, gb)):
        if mk:
            ids = ", ".join(sorted({r for r, _ in fl}))
            notes.append(f"marked in {label}: the guard whose failure recompiled {ids}")
            guard = text.splitlines()[mk[0] - 1].split("+- ", 1)[-1].strip()
            lines.append(f"failing guard ({label} line {mk[0]}): {clip(guard, 240)}")
            for rid, why in _reasons(reports, {r for r, _ in fl}):
                lines.append(f"{rid} recompiled because {why}")
    # two compiles of one process: an object id in a guard is that object (ID_MATCH fails on a
    # new one), so ids stay; across processes they are noise
    same = reports[0] is not None and reports[0] is reports[1]
    guards = bld.add(
        f"{prefix}guards",
        f"{tp}Guards",
        "python",
        ga,
        gb,
        marks[0],
        marks[1],
        "; ".join(notes) or None,
        keep=("object ids",) if same else (),
    )
    if guards is not None and guards.changed:
        na, nb = (c.stages.capture.guard_count if c.stages.capture else None for c in (ca, cb))
        lines.append(changes(guards, "guards", unit="") + (f" ({na} → {nb} guards)" if na != nb else ""))
    graphs: list[tuple[str, str, Any, Any]] = [
        ("capture", "Dynamo graph", sa.capture and sa.capture.graph, sb.capture and sb.capture.graph)
    ]
    if full:
        aa, ab = sa.autograd, sb.autograd
        for role in ROLES:
            graphs.append(
                (f"autograd:{role}", f"AOT {role} graph", aa and getattr(aa, role), ab and getattr(ab, role))
            )
    pa = _by_role(sa.decompose.post_grad) if sa.decompose else {}
    pb = _by_role(sb.decompose.post_grad) if sb.decompose else {}
    for role in ROLES:
        graphs.append((f"decompose:{role}", f"Post-grad {role} graph", pa.get(role), pb.get(role)))
    texts = [(id, title, "python", graph_code(x), graph_code(y)) for id, title, x, y in graphs]
    if full:
        for part, title in (("pre", "IR before fusion"), ("post", "IR after fusion")):
            ir = [getattr(f, f"ir_{part}_fusion") if f else () for f in (sa.fuse, sb.fuse)]
            texts.append((f"fuse:{part}", title, "text", *("\n".join(x) if x else None for x in ir)))
        oa, ob = ({o.role: o.code for o in s.codegen.output_code} if s.codegen else {} for s in (sa, sb))
        for role in [r for r in ROLES if r in oa or r in ob] + sorted((set(oa) | set(ob)) - set(ROLES)):
            texts.append((f"codegen:{role}", f"Output code ({role})", "python", oa.get(role), ob.get(role)))
    for id, title, language, x, y in texts:
        s = bld.add(prefix + id, tp + title, language, x, y)
        if s is not None and s.changed:
            lines.append(changes(s, title))
    tag = f"{prefix.rstrip(':')} " if prefix else ""
    kernels = kernel_sections(
        bld, compile_kernels(ca, reports[0]), compile_kernels(cb, reports[1]), prefix, tag
    )
    if kernels.phrases():
        lines.append("kernels: " + ", ".join(kernels.phrases()))
    for what, fn in (("Dynamo ops", dynamo_ops), ("ATen ops", aten_ops)):
        delta = op_delta(fn(ca), fn(cb))
        if delta:
            lines.append(f"{what}: {delta}")
    return PairResult(lines, kernels)

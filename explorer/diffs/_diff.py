"""``explorer.diff(a, b)``: two reports, two compiles, or two stages / graphs side by side.

Comparable (both sides of one kind):

- two ``Report``s (``diffs/_report.py``): before / after a code edit, static vs dynamic,
  default vs ``mode="max-autotune"``;
- two ``Compile``s: guards (with ``report=``, the guard whose failure made ``b`` marked in
  ``a``'s), the graphs of every stage, the IR, the output code, the kernels;
- two ``Capture`` / ``Autograd`` / ``Decompose`` / ``Fuse`` / ``Codegen`` stages, two ``Graph``s,
  two ``Kernel``s, two output codes, two texts (``str`` / ``bytes``).

``compare_stages(report, "0/0", "capture", "decompose")`` compares two stages of one compile
(names in ``STAGE_NAMES``); ``diff_compiles(report, "0/0", "0/1")`` two compiles of one report.
Noise (kernel counters, cache paths, object ids, …) is normalised on both sides first, see
``compiler.analysis.normalize`` (compiler/parse/_normalize.py); docs/diff.md has the rules and the payload.
"""

from __future__ import annotations

from compiler import Report
from compiler.types import (
    Autograd,
    Capture,
    Codegen,
    Compile,
    Decompose,
    Fuse,
    Graph,
    Kernel,
    OutputCode,
    RoleGraph,
)

from ._compiles import compile_sections, failing, graph_code
from ._parts import (
    ROLES,
    Builder,
    changes,
    codegen_kernels,
    kernel_sections,
    op_counts,
    op_delta,
)
from ._view import Diff

STAGE_NAMES = (
    "capture",  # Dynamo's graph
    "guards",  # Dynamo's guards
    "autograd",  # AOTAutograd's forward graph (the inference graph when no grad was needed)
    "autograd:forward",
    "autograd:backward",
    "autograd:inference",
    "autograd:joint",
    "decompose",  # the post-grad graph Inductor lowers (forward, else inference)
    "decompose:forward",
    "decompose:backward",
    "decompose:inference",
    "fuse:pre",  # Inductor's IR before fusion
    "fuse:post",  # Inductor's IR after fusion
    "codegen",  # the output code (forward, else inference)
    "codegen:forward",
    "codegen:backward",
    "codegen:inference",
)

_KINDS: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (Report, "report"),
    (Compile, "compile"),
    (Capture, "capture"),
    (Autograd, "autograd"),
    (Decompose, "decompose"),
    (Fuse, "fuse"),
    (Codegen, "codegen"),
    ((Graph, RoleGraph), "graph"),
    (Kernel, "kernel"),
    (OutputCode, "output code"),
    ((str, bytes, bytearray), "text"),
)
COMPARABLE = (
    "two Reports, two Compiles, two stages of one kind (Capture, Autograd, Decompose, Fuse or "
    "Codegen), two Graphs, two Kernels, two OutputCodes, or two texts (str or bytes)"
)


_STAGE_KINDS = ("capture", "autograd", "decompose", "fuse", "codegen", "graph")


def _kind(x) -> str | None:
    for types, name in _KINDS:
        if isinstance(x, types):
            return name
    return None


def _a(x) -> str:
    if x is None:
        return "None"
    name = type(x).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def _not_comparable(a, b) -> TypeError:
    ka, kb = _kind(a), _kind(b)
    if ka is None or kb is None:
        odd = a if ka is None else b
        why = f"{_a(odd)} is not something a report holds"
    elif {ka, kb} == {"report", "compile"}:
        why = "a report holds many compiles: take one out with report.compile('0/0') and compare two compiles"
    elif ka in _STAGE_KINDS and kb in _STAGE_KINDS:
        why = (
            "they are different stages; to compare two stages of one compile use "
            "compare_stages(report, '0/0', 'capture', 'decompose')"
        )
    else:
        why = f"{_a(a)} and {_a(b)} hold different things, so a line-by-line diff says nothing"
    return TypeError(f"cannot diff {_a(a)} with {_a(b)}: {why}. Comparable: {COMPARABLE}.")


def diff(
    a,
    b,
    *,
    report: Report | None = None,
    context: int = 3,
    max_lines: int = 5000,
    labels: tuple[str, str] | None = None,
) -> Diff:
    """Compare two reports, compiles, stages, graphs, kernels or texts (see the module doc).

    ``report``: the report two compiles come from (marks the failing guard when ``b``
    recompiled because ``a``'s guards failed). ``context``: unchanged lines kept around each
    change in the HTML and text views. ``max_lines``: lines kept per side of a section.
    ``labels``: names for the two sides (default: compile ids, kernel names, or A and B).
    """
    ka, kb = _kind(a), _kind(b)
    if ka is None or ka != kb:
        raise _not_comparable(a, b)
    if max_lines < 1 or context < 0:
        raise ValueError(f"max_lines must be ≥ 1 and context ≥ 0 (got {max_lines}, {context})")
    if ka == "report":
        from ._report import diff_reports

        return diff_reports(a, b, labels, context, max_lines)
    if ka == "compile":
        return _compiles(a, b, report, labels, context, max_lines)
    if ka == "kernel" and labels is None:
        labels = (a.name, b.name) if a.name != b.name else (f"A {a.name}", f"B {b.name}")
    bld = Builder(*(labels or ("A", "B")), max_lines)
    summary = _STAGES[ka](bld, a, b)
    title = f"{ka}: {bld.labels[0]} vs {bld.labels[1]}"
    return bld.finish(title, summary, context)


def diff_compiles(report: Report, id_a: str, id_b: str, *, context: int = 3, max_lines: int = 5000) -> Diff:
    """Two compiles of one report, e.g. ``diff_compiles(report, "0/0", "0/1")`` for why and
    how a recompile differs (its failing guard marked in the first's guards)."""
    return diff(
        report.compile(id_a), report.compile(id_b), report=report, context=context, max_lines=max_lines
    )


def compare_stages(
    report: Report, compile_id: str, stage_a: str, stage_b: str, *, context: int = 3, max_lines: int = 5000
) -> Diff:
    """Two stages of one compile, e.g. ``compare_stages(report, "0/0", "capture", "decompose")``
    (what decomposition did to Dynamo's graph) or ``"fuse:pre", "fuse:post"`` (what fusion did
    to Inductor's IR). Stage names: ``STAGE_NAMES``."""
    c = report.compile(compile_id)
    ta, lang_a, title_a, ga = _stage(c, stage_a)
    tb, lang_b, title_b, gb = _stage(c, stage_b)
    bld = Builder(stage_a, stage_b, max_lines)
    title = title_a if title_a == title_b else f"{title_a} vs {title_b}"
    s = bld.add("stages", title, lang_a if lang_a == lang_b else "text", ta, tb)
    summary = [changes(s)] if s.changed else []
    if ga is not None and gb is not None:
        delta = op_delta(op_counts(ga), op_counts(gb))
        if delta:
            summary.append(f"ops: {delta}")
    return bld.finish(f"compile {compile_id}: {stage_a} vs {stage_b}", summary, context)


# ---- compiles ------------------------------------------------------------------------------


def _compiles(a: Compile, b: Compile, report, labels, context: int, max_lines: int) -> Diff:
    if labels is None:
        labels = (a.id, b.id) if a.id != b.id else (f"A {a.id}", f"B {b.id}")
    bld = Builder(*labels, max_lines)
    fails = (failing(report, a, b.id), failing(report, b, a.id))
    res = compile_sections(bld, a, b, full=True, fails=fails, reports=(report, report))
    return bld.finish(f"compile {a.id} vs {b.id}", res.lines, context)


# ---- stages --------------------------------------------------------------------------------


def _stage(c: Compile, name: str) -> tuple[str, str, str, Graph | None]:
    """(text, language, title, graph) of a stage of ``c`` named as in ``STAGE_NAMES``."""
    if name not in STAGE_NAMES:
        raise ValueError(f"unknown stage {name!r}; choose one of: {', '.join(STAGE_NAMES)}")
    stage, _, part = name.partition(":")
    st = c.stages
    text, language, title, graph = None, "python", name, None
    if stage == "capture" and st.capture:
        graph, title = st.capture.graph, "Dynamo graph"
    elif stage == "guards" and st.capture:
        text, title = (st.capture.guards or "").strip("\n") or None, "Guards"
    elif stage == "autograd" and st.autograd:
        role = part or ("forward" if st.autograd.forward else "inference")
        graph, title = getattr(st.autograd, role), f"AOT {role} graph"
    elif stage == "decompose" and st.decompose:
        by_role = {rg.role: rg.graph for rg in st.decompose.post_grad}
        role = part or ("forward" if "forward" in by_role else "inference")
        graph, title = by_role.get(role), f"Post-grad {role} graph"
    elif stage == "fuse" and st.fuse:
        ir = st.fuse.ir_pre_fusion if part == "pre" else st.fuse.ir_post_fusion
        text, language = ("\n".join(ir) or None), "text"
        title = f"IR {'before' if part == 'pre' else 'after'} fusion"
    elif stage == "codegen" and st.codegen:
        by_role = {o.role: o.code for o in st.codegen.output_code}
        role = part or ("forward" if "forward" in by_role else "inference")
        text, title = by_role.get(role), f"Output code ({role})"
    if graph is not None:
        text = graph.code
    if text is None:
        why = (
            f"the compile failed in {c.failed_stage}"
            if c.status != "ok"
            else "the IR was not recorded (compiler.recording(fusion_ir=True) keeps it)"
            if stage == "fuse" and st.fuse
            else "it did not run or left nothing there (another backend, a cache hit, no backward)"
        )
        raise ValueError(f"compile {c.id} has no {name}: {why}")
    return text, language, title, graph


def _texts(bld: Builder, items) -> list[str]:
    """Sections for ``(id, title, language, a, b)``; summary lines of those that changed."""
    out = []
    for id, title, language, x, y in items:
        s = bld.add(id, title, language, x, y)
        if s is not None and s.changed:
            out.append(changes(s))
    return out


def _ops(summary: list[str], a: list, b: list, what: str = "ops") -> list[str]:
    delta = op_delta(op_counts(*a), op_counts(*b))
    return summary + ([f"{what}: {delta}"] if delta else [])


def _capture(bld: Builder, a: Capture, b: Capture) -> list[str]:
    out = _texts(
        bld,
        [
            (
                "guards",
                "Guards",
                "python",
                (a.guards or "").strip("\n") or None,
                (b.guards or "").strip("\n") or None,
            ),
            ("capture", "Dynamo graph", "python", graph_code(a.graph), graph_code(b.graph)),
            (
                "shape-guards",
                "Shape guards",
                "python",
                "\n".join(a.shape_guards) or None,
                "\n".join(b.shape_guards) or None,
            ),
        ],
    )
    return _ops(out, [a.graph], [b.graph])


def _autograd(bld: Builder, a: Autograd, b: Autograd) -> list[str]:
    roles = ("joint", "forward", "backward", "inference")
    items = [
        (f"autograd:{r}", f"AOT {r} graph", "python", graph_code(getattr(a, r)), graph_code(getattr(b, r)))
        for r in roles
    ]

    def saved(x: Autograd) -> str | None:
        return "\n".join(f"{t.name}  {t.dtype}  {t.shape}  {t.bytes} bytes" for t in x.saved_tensors) or None

    items.append(("saved", "Tensors saved for backward", "text", saved(a), saved(b)))
    graphs = ("forward", "backward", "inference")
    return _ops(
        _texts(bld, items), [getattr(a, r) for r in graphs], [getattr(b, r) for r in graphs], "ATen ops"
    )


def _decompose(bld: Builder, a: Decompose, b: Decompose) -> list[str]:
    pa, pb = ({rg.role: rg.graph for rg in x.post_grad} for x in (a, b))
    items = [
        (f"decompose:{r}", f"Post-grad {r} graph", "python", graph_code(pa.get(r)), graph_code(pb.get(r)))
        for r in ROLES
    ]
    out = _texts(bld, items)
    delta = op_delta(a.ops_after, b.ops_after)
    return out + ([f"ATen ops: {delta}"] if delta else [])


def _fuse(bld: Builder, a: Fuse, b: Fuse) -> list[str]:
    def nodes(x: Fuse) -> str | None:
        return "\n".join(f"{k.kernel}: {', '.join(k.nodes)}" for k in x.kernel_nodes) or None

    return _texts(
        bld,
        [
            (
                "fuse:pre",
                "IR before fusion",
                "text",
                "\n".join(a.ir_pre_fusion) or None,
                "\n".join(b.ir_pre_fusion) or None,
            ),
            (
                "fuse:post",
                "IR after fusion",
                "text",
                "\n".join(a.ir_post_fusion) or None,
                "\n".join(b.ir_post_fusion) or None,
            ),
            ("fuse:kernels", "Nodes fused into each kernel", "text", nodes(a), nodes(b)),
            (
                "fuse:log",
                "Fusion log",
                "text",
                "\n".join(a.fusion_log) or None,
                "\n".join(b.fusion_log) or None,
            ),
        ],
    )


def _codegen(bld: Builder, a: Codegen, b: Codegen) -> list[str]:
    oa, ob = ({o.role: o.code for o in x.output_code} for x in (a, b))
    roles = [r for r in ROLES if r in oa or r in ob] + sorted((set(oa) | set(ob)) - set(ROLES))
    out = _texts(bld, [(f"codegen:{r}", f"Output code ({r})", "python", oa.get(r), ob.get(r)) for r in roles])
    kernels = kernel_sections(bld, codegen_kernels(a), codegen_kernels(b)).phrases()
    return out + (["kernels: " + ", ".join(kernels)] if kernels else [])


def _graph(bld: Builder, a, b) -> list[str]:
    return _ops(_texts(bld, [("graph", "Graph", "python", graph_code(a), graph_code(b))]), [a], [b])


def _kernel(bld: Builder, a: Kernel, b: Kernel) -> list[str]:
    language = a.language if a.language == b.language else "text"
    return _texts(bld, [("kernel", "Kernel", language, a.source, b.source)])


def _output_code(bld: Builder, a: OutputCode, b: OutputCode) -> list[str]:
    return _texts(bld, [("codegen", "Output code", "python", a.code, b.code)])


def _text(bld: Builder, a, b) -> list[str]:
    return _texts(bld, [("text", "Text", "text", a, b)])


_STAGES = {
    "capture": _capture,
    "autograd": _autograd,
    "decompose": _decompose,
    "fuse": _fuse,
    "codegen": _codegen,
    "graph": _graph,
    "kernel": _kernel,
    "output code": _output_code,
    "text": _text,
}

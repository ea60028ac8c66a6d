"""Where compiled diverges from eager (``report.numerics``: ``compiler.numerics``,
``pt2-explorer numerics``, ``%%compile --numerics``): each output's error against its dtype's
tolerance; the modules' errors, one bar per module in execution order, the first that diverges
marked; the cause with the runs that found it and the fix as code; a training step's error step
by step; the kernels that hold the first diverging module's ops, each beside the eager ops and
user lines it replaced (the report's kernel-to-node provenance). Text (``--view numerics``) and
HTML (the page's and notebook's Numerics tab) are lowered from the same rows."""

from __future__ import annotations

import math
from html import escape

from compiler import Report
from compiler.types import Compile, Kernel, Node, Numerics, TensorError

from ..base._types import GraphBlock, Table
from ..graph._view import graph_static_html, graph_widget
from ..lower._fit import table_lines
from ..lower._html import code_html, table_html
from ..model._stages import fuse_graph
from ._whyhtml import kernel_link

BAR = 30  # characters of the longest bar in the text chart
FIRST = "← first to diverge"


def _num(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.3g}"


def _short(dtype: str) -> str:
    return dtype.removeprefix("torch.")


def heading(n: Numerics) -> str:
    state = f" under {n.state}" if n.state else ""
    verdict = "agrees with eager within tolerance" if n.ok else "diverges from eager"
    ids = f" (compiles {', '.join(f'[{i}]' for i in n.compile_ids)})" if n.compile_ids else ""
    return f"{n.name}{state}: compiled {verdict}{ids}"


def _agrees(e: TensorError) -> str:
    """An output's or a state's word: within its tolerance, or where it crosses it, with why."""
    said = "yes" if e.ok else "no: crosses the tolerance"
    return said + (f" ({e.note})" if e.note else "")


def outputs_table(n: Numerics) -> Table:
    rows = tuple(
        (
            e.name,
            _short(e.dtype),
            "×".join(map(str, e.shape)) or "-",
            _num(e.max_abs),
            _num(e.max_rel),
            f"rtol {e.rtol:g}, atol {e.atol:g}",
            _agrees(e),
        )
        for e in n.outputs
    )
    return Table(
        "Outputs (an element agrees where |compiled − eager| ≤ atol + rtol·|eager|)",
        ("output", "dtype", "shape", "max abs", "max rel", "tolerance", "agrees"),
        rows,
    )


def module_rows(n: Numerics) -> list[tuple[str, str, float | None, bool, str]]:
    """(#order path, class, max abs or None, agrees, note) per module checked, in execution order."""
    out = []
    for m in sorted(n.modules, key=lambda m: m.order):
        path = f"{m.order}. {m.path or '(the module called)'}"
        if m.error is None:
            out.append((path, m.kind, None, True, m.note or "not compiled alone"))
        else:
            note = "; ".join(x for x in (FIRST if m.path == n.first_module else "", m.note or "") if x)
            out.append((path, m.kind, m.error.max_abs, m.error.ok, note))
    return out


def _bar(value: float | None, top: float) -> str:
    if value is None or not top or math.isinf(top):
        return "█" * BAR if value is not None and math.isinf(value) else ""
    return "█" * max(1 if value > 0 else 0, round(BAR * value / top))


def trials_table(n: Numerics) -> Table:
    rows = tuple(
        (
            t.name,
            t.code,
            "yes" if t.ok else "no: still differs",
            _num(t.max_abs) + (f" ({t.note})" if t.note else ""),
        )
        for t in n.trials
    )
    return Table("Runs with one thing changed", ("run", "changed", "agrees", "max abs"), rows)


def steps_table(n: Numerics) -> Table:
    def cell(e: TensorError | None) -> str:
        return "-" if e is None else f"{e.name}: {_num(e.max_abs)}" + ("" if e.ok else " (crosses)")

    rows = tuple(
        (str(s.step), cell(s.loss), cell(s.worst), "yes" if s.ok else "no: the step crosses it")
        for s in n.steps
    )
    return Table("Training steps", ("step", "loss", "largest state error", "within tolerance"), rows)


def kernels_of_module(report: Report, n: Numerics) -> list[tuple[Compile, Kernel, list[Node]]]:
    """The kernels of this function's compiles that hold ops of its first diverging module,
    each with those ops (nodes with their user line), from the report's provenance."""
    if n.first_module is None:
        return []
    prefix = n.first_module
    out = []
    for c in report.compiles:
        if n.compile_ids and c.id not in n.compile_ids:
            continue
        nodes = _nodes_by_name(c)
        cap = c.stages.capture.graph if c.stages.capture and c.stages.capture.graph else None
        # a later graph's node without a module path: the module of Dynamo's nodes of its line
        # (where that line is one module's alone)
        mods: dict[str, set] = {}
        for x in cap.nodes if cap else ():
            if x.source and x.module:
                mods.setdefault(x.source, set()).add(x.module)
        by_line = {line: next(iter(m)) for line, m in mods.items() if len(m) == 1}
        for k in report.kernels_of(c.id):
            if k.role == "backward" and not n.steps:  # the outputs compared are the forward's
                continue
            mine = [nodes[name] for name in k.nodes if name in nodes]
            inside = [x for x in mine if _within(x.module or by_line.get(x.source or "") or "", prefix)]
            if inside:
                out.append((c, k, inside))
    return out


FIRST_COLOUR, MODULE_COLOUR = "#cf222e", "#54aeff"  # the first diverging kernel; the module's others


def numerics_graph(report: Report, n: Numerics) -> GraphBlock | None:
    """The graph of the compile that holds the first diverging module's kernels, its nodes
    coloured by kernel (the first to diverge red, the module's other kernels blue) and the
    view opened on the first diverging kernel's nodes (or on the module's, where no kernel
    was measured)."""
    found = kernels_of_module(report, n)
    if not found:
        return None
    first = next((f for f in found if f[1].name == n.first_kernel), None)
    c = (first or found[0])[0]
    mine = [(k, nodes) for cc, k, nodes in found if cc.id == c.id]
    colors: dict[str, str] = {}
    kernel_of: dict[str, str] = {}
    for k, _nodes in mine:
        for name in k.nodes:
            colors.setdefault(name, FIRST_COLOUR if k.name == n.first_kernel else MODULE_COLOUR)
            kernel_of.setdefault(name, k.name)
    graph = fuse_graph(c, set(colors))
    if graph is None:
        return None
    if first is not None:
        focus, why = tuple(first[1].nodes), f"{first[1].name}: the first kernel to diverge from eager"
    else:
        focus = tuple(x.name for _k, nodes in mine for x in nodes)
        why = f"the ops of {n.first_module or 'the module called'}: the first module to diverge"
    title = f"[{c.id}] graph: the kernels holding {n.first_module or 'the module called'}'s ops"
    return GraphBlock(title, graph, colors, kernels=kernel_of, focus=focus, focus_why=why)


def _within(module: str, prefix: str) -> bool:
    return not prefix or module == prefix or module.startswith(prefix + ".")


def _nodes_by_name(c: Compile) -> dict[str, Node]:
    """The nodes kernels name: the post-grad graphs' (CPU), else Dynamo's (GPU)."""
    out: dict[str, Node] = {}
    if c.stages.capture and c.stages.capture.graph:
        out.update({x.name: x for x in c.stages.capture.graph.nodes})
    if c.stages.decompose:
        for rg in c.stages.decompose.post_grad:
            out.update({x.name: x for x in rg.graph.nodes})
    return out


def _ops(nodes: list[Node]) -> str:
    seen = dict.fromkeys(f"{x.target.removeprefix('torch.ops.')}" for x in nodes if x.op == "call_function")
    return ", ".join(seen)


def _lines(nodes: list[Node]) -> list[str]:
    seen = dict.fromkeys(f"{x.source}  {x.code.strip()}" if x.code else x.source for x in nodes if x.source)
    return list(seen)  # type: ignore[arg-type]


def one_text(report: Report, n: Numerics) -> list[str]:
    out = [heading(n)]
    t = outputs_table(n)
    out += ["", t.title, *table_lines(t.columns, t.rows, keep=(3, 4), indent=2)]
    if n.modules:
        rows = module_rows(n)
        top = max((v for _, _, v, _, _ in rows if v is not None and not math.isinf(v)), default=0.0)
        out += [
            "",
            "Modules in execution order (each compiled alone on the inputs eager gave it), max abs error",
        ]
        out += table_lines(
            None,
            [(p, k, "-" if v is None else _num(v), _bar(v, top), note) for p, k, v, _, note in rows],
            keep=(2,),
            indent=2,
        )
    if n.first_module is not None:
        out.append(f"first module to diverge: {n.first_module or '(the module called)'}")
    if n.first_kernel is not None and n.kernel_error is not None:
        e = n.kernel_error
        how = "DebugMode" if n.first_kernel.startswith("triton") else "the wrapper's kernel calls"
        out.append(f"first kernel to diverge (measured, {how}): {n.first_kernel}: max abs {_num(e.max_abs)}")
    found = kernels_of_module(report, n)
    if found:
        out += [
            "",
            "Kernels holding its ops, each beside the eager ops it replaced",
        ]
        for c, k, nodes in found:
            mark = f"  {FIRST}" if k.name == n.first_kernel else ""
            out.append(f"  [{c.id}] {k.name}: {_ops(nodes)}{mark}")
            out += [f"      {line}" for line in _lines(nodes)]
    if n.cause is not None:
        out += ["", f"cause: {n.cause.kind}: {n.cause.words}"]
        if n.cause.subsystem is not None:  # the bisector's own answer
            cc = n.cause
            out.append(
                f"bisector: backend {cc.backend}, subsystem {cc.subsystem}, application {cc.bisect_number}"
                + (f": {cc.debug_info}" if cc.debug_info else "")
            )
    if n.trials:
        t = trials_table(n)
        out += [t.title, *table_lines(t.columns, t.rows, keep=(3,), indent=2)]
    if n.cause is not None:
        out.append(f"fix: {n.cause.fix}" if n.cause.fix else "fix: none as code")
    if n.steps:
        t = steps_table(n)
        out += ["", *table_lines(t.columns, t.rows, keep=(0,), indent=2)]
        out.append(
            f"first step to cross the tolerance: {n.first_step}"
            if n.first_step
            else "every step within tolerance"
        )
    out.append(f"compiled runs: {n.runs} of at most {n.max_runs}")
    out += [f"not narrowed down: {line}" for line in n.not_narrowed]
    return out


def numerics_text(report: Report) -> str:
    if not report.numerics:
        return "no numerics in this report (pt2-explorer numerics SCRIPT, %%compile --numerics, compiler.numerics)"
    parts = ["\n".join(one_text(report, n)) for n in report.numerics]
    return "\n\n".join(parts)


def _bars_html(n: Numerics) -> str:
    rows = module_rows(n)
    top = max((v for _, _, v, _, _ in rows if v is not None and not math.isinf(v)), default=0.0)
    out = []
    for path, kind, v, ok, note in rows:
        width = 0.0 if v is None or not top else 100.0 if math.isinf(v) else 100 * v / top
        colour = "#cf222e" if not ok else "#1f6feb"
        out.append(
            f'<div class="pt2x-ph"><span>{escape(path)} ({escape(kind)})</span>'
            f'<span class="pt2x-ph-track"><span class="pt2x-ph-bar" style="width:{width:.2f}%;background:{colour}">'
            f"</span></span><span>{'-' if v is None else escape(_num(v))} {escape(note)}</span></div>"
        )
    return (
        "<h3>Modules in execution order, max abs error (each compiled alone on eager's inputs)</h3>"
        + "".join(out)
    )


def one_html(report: Report, n: Numerics, graph: bool = True) -> str:
    parts = [f"<h3>{escape(heading(n))}</h3>", table_html(outputs_table(n))]
    if n.modules:
        parts.append(_bars_html(n))
    if graph and (block := numerics_graph(report, n)) is not None:
        parts.append(graph_static_html(block))
    for c, k, nodes in kernels_of_module(report, n):
        lines = "<br>".join(escape(line) for line in _lines(nodes))
        mark = f" {FIRST}" if k.name == n.first_kernel else ""
        parts.append(
            f"<h4>[{escape(c.id)}] {kernel_link(k.name, c.id, k.name)}: {escape(_ops(nodes))}{escape(mark)}</h4>"
            f"<div class='pt2x-ph'><span>{lines}</span><span>{code_html(k.source, k.language)}</span></div>"
        )
    if n.cause is not None:
        parts.append(f"<p><b>cause: {escape(n.cause.kind)}</b>: {escape(n.cause.words)}</p>")
    if n.trials:
        parts.append(table_html(trials_table(n)))
    if n.cause is not None and n.cause.fix:
        parts.append(code_html(n.cause.fix, "python"))
    if n.steps:
        parts.append(table_html(steps_table(n)))
    parts += [f"<p>not narrowed down: {escape(line)}</p>" for line in n.not_narrowed]
    return "".join(parts)


def numerics_html(report: Report) -> str:
    return "".join(one_html(report, n) for n in report.numerics)


def numerics_widget(app):
    """The notebook's tab: each result's HTML (its kernel links followed by the explorer, as
    the Why tab's) with its graph as the graph widget, opened on the first diverging kernel."""
    import ipywidgets as w

    parts = []
    for n in app.report.numerics:
        parts.append(w.HTML(app.linked(one_html(app.report, n, graph=False))))
        block = numerics_graph(app.report, n)
        if block is not None:
            parts.append(graph_widget(block))
    return w.VBox(parts)

"""Views of the pipelines beside torch.compile's own: Compiled Autograd's captured backward
graphs (compiler/_autograd.py), torch.export + AOTInductor (compiler/_export.py). Text lines for the summary and blocks for a compile's
capture stage; the summary, the stage view, widgets and HTML all show these."""

from __future__ import annotations

from compiler import Compile, Report

from ._view import Block, CodeBlock, GraphBlock, Table


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def autograd_lines(report: Report) -> tuple[str, ...]:
    """One line per Compiled Autograd capture: which backward it is, what it holds, whether
    it was captured again."""
    out = []
    labels = {
        c.compiled_autograd.id: c.compiled_autograd.label for c in report.compiles if c.compiled_autograd
    }
    for c in report.compiles:
        ca = c.compiled_autograd
        if ca is None or c.id.rsplit("/", 1)[-1] != "0":
            continue
        where = f"the backward called at {ca.called_from}" if ca.called_from else "a backward"
        line = (
            f"[{c.id}] {ca.label}: {where}; {_plural(len(ca.autograd_nodes), 'autograd node')}"
            f" ({_plural(ca.compiled_backwards, 'AOT backward')} of compiled forwards inlined), "
            f"{_plural(len(ca.hooks), 'hook')}" + (f" ({', '.join(ca.hooks)})" if ca.hooks else "")
        )
        if ca.recaptured_from:
            why = "; ".join(ca.reasons) or "Compiled Autograd's cache missed"
            line += f"; recaptured ({why}), after {labels.get(ca.recaptured_from, ca.recaptured_from)}"
        else:
            line += "; first capture"
        out.append(line)
    return tuple(out)


def autograd_blocks(c: Compile) -> list[Block]:
    """The capture stage of Dynamo compiling a Compiled Autograd graph: first the backward
    that was captured, then (in the stage view) what Dynamo made of it."""
    ca = c.compiled_autograd
    if ca is None:
        return []
    rows = [
        ("compiled autograd id", ca.id),
        ("backward called at", ca.called_from or "?"),
        ("autograd nodes, in run order", ", ".join(ca.autograd_nodes) or "-"),
        ("hooks", ", ".join(ca.hooks) or "none"),
        ("AOT backwards of compiled forwards inlined", str(ca.compiled_backwards)),
        (
            "recaptured",
            f"yes: the cache missed, after {ca.recaptured_from}"
            if ca.recaptured_from
            else "no (first capture)",
        ),
    ]
    if ca.reasons:
        rows.append(("why", "; ".join(ca.reasons)))
    blocks: list[Block] = [Table(f"{ca.label}: the backward it captured", ("", ""), tuple(rows))]
    if ca.graph is not None:
        blocks += [
            GraphBlock("compiled autograd graph (hooks included)", ca.graph),
            CodeBlock("compiled autograd graph (code)", "python", ca.graph.code),
        ]
    return blocks


def export_lines(report: Report) -> tuple[str, ...]:
    """One line per AOTInductor compile: "export → AOTInductor, 1 graph, 2 kernels", its
    dynamic dims (torch.export's Dim ranges) and the generated C++ files."""
    out = []
    for c in report.compiles:
        if c.name != "export → AOTInductor":
            continue
        ks = report.kernels_of(c.id)
        langs = "/".join(sorted({k.language for k in ks}))
        line = f"[{c.id}] export → AOTInductor, 1 graph, {_plural(len(ks), 'kernel')}" + (
            f" ({langs})" if langs else ""
        )
        syms = c.stages.capture.symbols if c.stages.capture else ()
        if syms:
            line += "; dynamic dims: " + ", ".join(f"{s.dim} in {s.vr}" for s in syms)
        out.append(line)
        for oc in c.stages.codegen.output_code if c.stages.codegen else ():
            out.append(f"    {oc.role}: {oc.path}")
    return tuple(out)

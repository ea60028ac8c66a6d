"""Views of the pipelines beside torch.compile's own: Compiled Autograd's captured backward
graphs (compiler/assemble/_autograd.py), torch.export + AOTInductor (compiler/assemble/_export.py), FlexAttention
(compiler/parse/_flex.py). Text lines for the summary and blocks for a compile's
capture stage; the summary, the stage view, widgets and HTML all show these."""

from __future__ import annotations

from compiler import Report
from compiler.analysis import flex_calls, without_local_scope
from compiler.types import Compile

from ..base._types import Block, CodeBlock, GraphBlock, Table


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
    if ca.graph_pre_reordering is not None:
        title = "compiled autograd graph before torch moved its hooks and AccumulateGrad (code)"
        blocks.append(CodeBlock(title, "python", ca.graph_pre_reordering.code))
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
            line += "; dynamic dims: " + ", ".join(f"{without_local_scope(s.source)} in {s.vr}" for s in syms)
        out.append(line)
        for oc in c.stages.codegen.output_code if c.stages.codegen else ():
            out.append(f"    {oc.role}: {oc.path}")
    return tuple(out)


def _mod_text(m) -> str:
    return f"{m.function or m.subgraph} ({m.where.rsplit('/', 1)[-1]})"


def flex_lines(report: Report) -> tuple[str, ...]:
    """One line per FlexAttention op (compiler/parse/_flex.py): its shape and block grid, the
    template kernel computing it, the user's score_mod and mask_mod."""
    out = []
    for f in flex_calls(report):
        grid = f.block_grid
        line = f"[{f.compile_id}] flex_attention {f.query or ''}".rstrip()
        if grid and f.block_size:
            line += (
                f", {f.q_len}×{f.kv_len} in {grid[0]}×{grid[1]} blocks of {f.block_size[0]}×{f.block_size[1]}"
            )
        line += " → " + (", ".join(f.kernels) if f.kernels else "no kernel (not compiled by Inductor)")
        mods = [f"{m.role} {_mod_text(m)}" for m in (f.score_mod, f.mask_mod) if m is not None]
        out.append(line + ("; " + ", ".join(mods) if mods else ""))
    return tuple(out)


def flex_blocks(report: Report, c: Compile) -> list[Block]:
    """A compile's FlexAttention ops: the kernel, the block grid, each mod's source (the
    user's function where its file is readable, else the lines torch names) and subgraph."""
    blocks: list[Block] = []
    cap = c.stages.capture
    if cap is None or cap.graph is None or "flex_attention" not in cap.graph.code:
        return blocks  # none here: the report's other compiles are not read (once per compile)
    for f in flex_calls(report):
        if f.compile_id != c.id:
            continue
        grid = f.block_grid
        rows = [
            ("op", f"{f.node} (torch.ops.higher_order.flex_attention)"),
            ("query", f.query or "?"),
            ("kernels", ", ".join(f.kernels) or "none (not compiled by Inductor)"),
            (
                "block grid",
                f"{grid[0]}×{grid[1]} blocks of {f.block_size[0]}×{f.block_size[1]}" if grid else "?",
            ),
        ]
        for m in (f.score_mod, f.mask_mod):
            if m is not None:
                rows.append((m.role, f"{m.function or '?'} at {m.where} (subgraph {m.subgraph})"))
        rows.append(
            ("block mask sparsity", "not in the trace: explorer.flex_summary(block_mask) at the call")
        )
        blocks.append(Table(f"FlexAttention: {f.node}", ("", ""), tuple(rows)))
        for m in (f.score_mod, f.mask_mod):
            if m is not None:
                blocks.append(
                    CodeBlock(f"{m.role} {m.function or m.subgraph}", "python", m.source or "\n".join(m.code))
                )
                blocks.append(
                    CodeBlock(f"{m.role} as Dynamo traced it ({m.subgraph})", "python", m.graph.strip())
                )
    return blocks

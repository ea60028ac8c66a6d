"""Max-autotune's choices (``Fuse.autotune``: what Inductor's feedback hook gave for each op it
benchmarked): one summary line per op, a table per op in the fuse stage, and the same tables in
the codegen stage beside the kernel that runs the winner. The winner is the fastest choice,
the one Inductor selects; where it runs in the output code is read from the code itself
(compiler/parse/_wrappercode.py)."""

from __future__ import annotations

from compiler import Report
from compiler._viewer import autotune_runs_as
from compiler.types import Autotune, Compile

from ..base._types import Block, Table


def _ms(t: float | None) -> str:
    return "failed" if t is None else f"{t:.4f} ms"


def autotune_lines(report: Report) -> tuple[str, ...]:
    """One line per op max-autotune benchmarked: the choices, their times, which won."""
    out = []
    for c in report.compiles:
        for a in c.stages.fuse.autotune if c.stages.fuse else ():
            choices = ", ".join(f"{ch.name} {_ms(ch.time_ms)}" for ch in a.choices)
            out.append(f"[{c.id}] {a.op}({', '.join(a.inputs)}): {choices}; won: {a.winner or 'none'}")
    return tuple(out)


def runs_as(report: Report, c: Compile) -> dict[int, str]:
    """Index of each autotuned op of the compile -> what runs its winner in the output code."""
    st = c.stages
    code = "\n".join(oc.code for oc in st.codegen.output_code) if st.codegen else ""
    cpp = [(k.name, k.source) for k in report.kernels_of(c.id) if k.language == "cpp"]
    return autotune_runs_as(st.fuse.autotune if st.fuse else (), code, cpp)


def autotune_blocks(c: Compile, report: Report | None = None) -> list[Block]:
    """Each op Inductor benchmarked, its choices fastest first (their configs where torch gave
    them); with the report (the codegen stage), what runs the winner in the output code."""
    blocks: list[Block] = []
    ops: tuple[Autotune, ...] = c.stages.fuse.autotune if c.stages.fuse else ()
    codegen = report is not None
    ran = runs_as(report, c) if report is not None else {}
    for i, a in enumerate(ops):
        best = a.choices[0].time_ms if a.choices else None
        configs = any(ch.config for ch in a.choices)
        rows = tuple(
            (
                ch.name,
                _ms(ch.time_ms),
                f"{best / ch.time_ms:.1%}" if best and ch.time_ms else "-",
                *((ch.config,) if configs else ()),
                "won" if ch.name == a.winner else "",
            )
            for ch in a.choices
        )
        title = f"max-autotune: {a.op}({', '.join(a.inputs)})"
        if codegen:
            title += f": {a.winner or 'no choice'} won"
            title += (
                f", runs as {ran[i]}" if i in ran else (", not found in the output code" if a.winner else "")
            )
        if a.precompile_s is not None:
            title += f" ({len(a.choices)} choices precompiled in {a.precompile_s:.2f} s)"
        head = ("choice", "time", "vs fastest", *(("config",) if configs else ()), "")
        blocks.append(Table(title, head, rows))
    return blocks

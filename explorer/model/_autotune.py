"""Max-autotune's choices (``Fuse.autotune``: what Inductor's feedback hook gave for each op it
benchmarked): one summary line per op, a table per op in the fuse stage, and the same tables in
the codegen stage beside the kernel that runs the winner. The winner is the fastest choice,
the one Inductor selects; where it runs in the output code is read from the code itself: an
extern choice (``mm``, ``addmm``, ``_mkl_linear``) as its ``extern_kernels.<name>(`` call, a
Triton template as the template kernel (``triton_tem_*``) whose block sizes, stages and warps
are the winner's config, a C++ GEMM template (``cpp_CppMicroGemm…``) as the C++ kernel that
defines its micro-GEMM."""

from __future__ import annotations

import re

from compiler import Report
from compiler.types import Autotune, Compile

from ..base._types import Block, Table

_TEMPLATE = re.compile(r"async_compile\.triton\('(triton_tem_\w+)', '''(.*?)'''", re.S)
_KEYS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_stages", "num_warps")


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


def _config(text: str) -> dict[str, str]:
    """The template config's keys we match on, from torch's description of the choice."""
    pairs = (p.split("=", 1) for p in re.split(r",\s*", text) if "=" in p)
    return {k.strip(): v.strip() for k, v in pairs if k.strip() in _KEYS}


def _template_config(source: str) -> dict[str, str]:
    """The same keys as a template kernel's source states them (its constexprs and the
    ``@triton_heuristics.template(num_stages=…, num_warps=…)`` decorator)."""
    out = {}
    for k in _KEYS:
        m = re.search(rf"\b{k}\s*(?::\s*tl\.constexpr\s*)?=\s*(\w+)", source)
        if m:
            out[k] = m.group(1)
    return out


def runs_as(report: Report, c: Compile) -> dict[int, str]:
    """Index of each autotuned op of the compile -> the output code's call or kernel that runs
    its winner; an op whose winner is not found in the code is left out. Templates of one
    config are matched in order (the ops are lowered and their kernels defined in one order)."""
    st = c.stages
    ops = st.fuse.autotune if st.fuse else ()
    code = "\n".join(oc.code for oc in st.codegen.output_code) if st.codegen else ""
    templates = [(name, _template_config(src)) for name, src in _TEMPLATE.findall(code)]
    micro = [k.name for k in report.kernels_of(c.id) if k.language == "cpp" and "micro_gemm" in k.source]
    used: set[int] = set()
    out: dict[int, str] = {}
    for i, a in enumerate(ops):
        won = next((ch for ch in a.choices if ch.name == a.winner), None)
        if won is None:
            continue
        want = _config(won.config)
        if want:
            j = next((j for j, (_, cfg) in enumerate(templates) if j not in used and cfg == want), None)
            if j is not None:
                used.add(j)
                out[i] = templates[j][0]
        elif re.search(rf"\bextern_kernels\.{re.escape(won.name)}\(", code):
            out[i] = f"extern_kernels.{won.name}"
        elif won.name.startswith("cpp_CppMicroGemm") and micro:
            out[i] = micro.pop(0)
    return out


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

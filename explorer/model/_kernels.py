"""One kernel in the codegen view, read for people: the ``@triton.jit`` body first, its
metadata as a small table (size hints, signature, mutated arguments, the config that runs),
and, where the recording captured Triton's output (``recording(triton_ir=True)``), each
compiled variant's registers, spills, shared memory and occupancy, then its IR at every level
(its function only) with each IR line led by the kernel line it came from: the body's lines are
numbered as the kernel's source counts them, the numbers the IR's gutter gives."""

from __future__ import annotations

from compiler.analysis import ir_source_lines, occupancy, read_triton_source
from compiler.types import Kernel, TritonBinary, TritonSource

from ..base._types import Block, CodeBlock, Table

IR_TITLES = {
    "ttir": "TTIR (Triton IR)",
    "ttgir": "TTGIR (Triton GPU IR: layouts, warps)",
    "llir": "LLIR (LLVM IR)",
    "ptx": "PTX",
    "sass": "SASS (nvdisasm)",
}


def kernel_blocks(k: Kernel) -> list[Block]:
    """The blocks of one kernel: body, metadata, binaries and IR (Triton); its source (C++)."""
    ops = f" from {', '.join(k.aten_ops)}" if k.aten_ops else ""
    title = f"{k.role} kernel {k.name} ({k.language}){ops}"
    t = read_triton_source(k.source) if k.language == "triton" else None
    if t is None:
        meta = f"  {k.metadata}" if k.metadata else ""
        return [CodeBlock(title + meta, k.language, k.source), *_binary_blocks(k)]
    first = t.body_line - 1  # the body starts at its decorator, the line above ``def``
    body = t.body.splitlines()
    blocks: list[Block] = [
        CodeBlock(
            f"{title}, lines {first}–{first + len(body) - 1}",
            "python",
            gutter(range(first, first + len(body)), body),
        ),
        Table(f"{k.name}: metadata", ("", ""), _meta_rows(t, k)),
    ]
    return blocks + _binary_blocks(k)


def _binary_blocks(k: Kernel) -> list[Block]:
    if not k.binaries:
        return []
    chosen = next((b for b in k.binaries if b.chosen), k.binaries[0])
    return [_binaries_table(k), *ir_blocks(k, chosen)]


def _meta_rows(t: TritonSource, k: Kernel) -> tuple[tuple[str, str], ...]:
    rows = [
        ("heuristic", t.heuristic or "-"),
        (
            "size hints",
            ", ".join(f"{d}={n:,}" if isinstance(n, int) else f"{d}={n}" for d, n in t.size_hints.items()),
        ),
        ("signature", ", ".join(f"{a}: {ty}" for a, ty in t.signature.items())),
        ("mutated in place", ", ".join(t.mutated) or "none"),
        ("loads / stores / reductions", f"{_n(t.loads)} / {_n(t.stores)} / {_n(t.reductions)}"),
    ]
    if t.constants:
        rows.append(("constants", ", ".join(f"{a}={v}" for a, v in t.constants.items())))
    if t.num_gb is not None:
        rows.append(("bytes moved per launch", f"{t.num_gb * 1e3:.3f} MB (Inductor's kernel_num_gb)"))
    if t.flops:
        rows.append(("FLOPs per launch", f"{t.flops:,}"))
    rows.append(("config", _config(k)))
    if t.configs:
        rows.append(("configs written in", "; ".join(t.configs)))
    return tuple(rows)


def _n(v: int | None) -> str:
    return "?" if v is None else str(v)


def _config(k: Kernel) -> str:
    """The config that runs: the binary autotuning chose, the only one, or how many were tried."""
    chosen = next((b for b in k.binaries if b.chosen), None)
    if chosen is not None:
        return _config_text(chosen.config) + (
            f" (chosen of {len(k.binaries)})" if len(k.binaries) > 1 else ""
        )
    m = k.metadata
    if m.get("only_config"):
        return _config_text(dict(m["only_config"])) + " (the only config)"
    if m.get("num_configs"):
        return f"autotuned over {m['num_configs']} configs at the first run (the choice is recorded with triton_ir=True)"
    return "-"


def _config_text(cfg: dict) -> str:
    return ", ".join(f"{a}={v}" for a, v in cfg.items()) or "-"


def _binaries_table(k: Kernel) -> Table:
    rows = []
    for b in k.binaries:
        occ = occupancy(
            b.n_regs,
            b.num_warps,
            b.shared,
            regs_per_sm=b.regs_per_sm or 65536,
            threads_per_sm=b.threads_per_sm or 2048,
            shared_per_sm=b.shared_per_sm,
        )
        rows.append(
            (
                ("▶ " if b.chosen else "") + _config_text(b.config),
                _n(b.n_regs),
                _n(b.n_spills),
                f"{b.shared} B" if b.shared is not None else "?",
                f"{_n(b.num_warps)} / {_n(b.num_stages)}",
                f"{occ[0]:.0%} ({occ[1]})" if occ else "?",
                b.target or "?",
                f"{_n(b.regs_per_sm)} / {_n(b.threads_per_sm)} / {_n(b.shared_per_sm)}",
                b.hash,
            )
        )
    cols = ("config", "registers", "spills", "shared memory", "warps / stages", "occupancy (limit)", "target")
    cols += ("SM: registers / threads / shared", "Triton hash")
    return Table(f"{k.name}: compiled by Triton (▶ the config that runs)", cols, tuple(rows))


def ir_blocks(k: Kernel, b: TritonBinary) -> list[Block]:
    """Each IR level of ``b``, every line led by the kernel line it came from (Triton's
    locations, shifted to the lines of the kernel's source shown above)."""
    out: list[Block] = []
    for level, text in b.ir.items():
        lines = text.splitlines()
        start, stop = _bounds(b.ir_bounds.get(level), len(lines))
        src = ir_source_lines(level, text)[start:stop]
        code = gutter((None if s is None else s - b.line_offset for s in src), lines[start:stop])
        rest = len(lines) - (stop - start)
        cut = f" (the module's other {rest} lines left out)" if rest else ""
        title = (
            f"{k.name}: {IR_TITLES.get(level, level)}, its function: lines {start + 1}–{stop} of {len(lines)}{cut};"
            " left: the kernel's line, as numbered in its body"
        )
        if b.line_offset:  # Triton's locations count the kernel's file, which starts above the source
            title += f" (the IR's own locations count the kernel's file: {b.line_offset} more)"
        out.append(CodeBlock(title, "text", code))
    return out


def gutter(numbers, lines) -> str:
    """``lines``, each led by its number (blank for None) in a gutter: the kernel's body and its
    IR numbered alike."""
    return "\n".join(f"{'' if n is None else n:>4} │ {ln}" for n, ln in zip(numbers, lines, strict=True))


def _bounds(got, n: int) -> tuple[int, int]:
    """A level's function bounds as the report holds them, within its ``n`` lines; the whole
    text where they are not two such line indices."""
    if isinstance(got, (tuple, list)) and len(got) == 2 and all(type(x) is int for x in got):
        start, stop = got
        if 0 <= start < stop <= n:
            return start, stop
    return 0, n

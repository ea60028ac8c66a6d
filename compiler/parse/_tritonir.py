"""Each line of a Triton IR tied to the kernel's Python line, from Triton's own location info.

- TTIR / TTGIR (MLIR): an op ends in ``loc(#locN)``; the module's tail defines
  ``#locN = loc("file.py":L:C)``, or a name or call site wrapping another location
  (``loc("x"(#locM))``, ``loc(callsite(#locA at #locB))``: the first file location reached).
- LLIR: an instruction ends in ``!dbg !N``; ``!N = !DILocation(line: L, …)``.
- PTX: ``.loc F L C`` sets the line of the instructions after it.
- SASS (``nvdisasm --print-line-info``): ``//## File "…", line L`` sets it likewise.

A line outside the kernel's function (the module's location table, LLVM's declarations and
metadata, PTX's DWARF sections, SASS's symbol table) has no line: ``ir_function``
(compiler/model/_irbounds.py) bounds it.

Pure: text in, one source line (or None) per IR line out.
"""

from __future__ import annotations

import re

from ..model._irbounds import ir_function

LEVELS = ("ttir", "ttgir", "llir", "ptx", "sass")

_MLIR_USE = re.compile(r"loc\((#loc\d*)\)\s*$")
_MLIR_DEF = re.compile(r"^(#loc\d*) = loc\((.*)\)\s*$")
_MLIR_FILE = re.compile(r'^"[^"]*":(\d+):\d+')
_MLIR_REF = re.compile(r"#loc\d*")
_LLVM_USE = re.compile(r"!dbg (![0-9]+)")
_LLVM_DEF = re.compile(r"^(![0-9]+) = (?:distinct )?!DILocation\(line: (\d+)")
_PTX_LOC = re.compile(r"^\s*\.loc\s+\d+\s+(\d+)\s+\d+")
_SASS_LOC = re.compile(r'^\s*//## File "[^"]*", line (\d+)')


def ir_source_lines(level: str, text: str) -> tuple[int | None, ...]:
    """For each line of ``text`` (an IR of ``level``), the kernel file's line it came from."""
    lines = text.splitlines()
    if level in ("ttir", "ttgir"):
        got = _mlir(lines)
    elif level == "llir":
        got = _llvm(lines)
    elif level in ("ptx", "sass"):
        got = _running(lines, _PTX_LOC if level == "ptx" else _SASS_LOC)
    else:
        return tuple(None for _ in lines)
    start, stop = ir_function(level, text)
    return tuple(s if start <= i < stop else None for i, s in enumerate(got))


def _mlir(lines: list[str]) -> tuple[int | None, ...]:
    defs = {m.group(1): m.group(2) for m in map(_MLIR_DEF.match, lines) if m}
    memo: dict[str, int | None] = {}

    def resolve(ref: str, depth: int = 0) -> int | None:
        if ref in memo:
            return memo[ref]
        body = defs.get(ref)
        line = None
        if body is not None and depth < 32:
            m = _MLIR_FILE.match(body)
            if m:
                line = int(m.group(1))
            else:
                for inner in _MLIR_REF.findall(body):
                    line = resolve(inner, depth + 1)
                    if line is not None:
                        break
        memo[ref] = line
        return line

    out = []
    for ln in lines:
        m = _MLIR_USE.search(ln)
        out.append(resolve(m.group(1)) if m and not ln.startswith("#loc") else None)
    return tuple(out)


def _llvm(lines: list[str]) -> tuple[int | None, ...]:
    defs = {m.group(1): int(m.group(2)) for m in map(_LLVM_DEF.match, lines) if m}
    out = []
    for ln in lines:
        m = _LLVM_USE.search(ln)
        out.append(defs.get(m.group(1)) if m and not ln.startswith("!") else None)
    return tuple(out)


def _running(lines: list[str], directive: re.Pattern) -> tuple[int | None, ...]:
    out: list[int | None] = []
    current = None
    for ln in lines:
        m = directive.match(ln)
        if m:
            current = int(m.group(1))
            out.append(None)
        else:
            out.append(current if ln.strip() else None)
    return tuple(out)


def occupancy(
    n_regs: int | None,
    num_warps: int | None,
    shared: int | None,
    *,
    regs_per_sm: int = 65536,
    threads_per_sm: int = 2048,
    shared_per_sm: int | None = None,
    warp_size: int = 32,
) -> tuple[float, str] | None:
    """Resident warps per SM over the most an SM holds, and the limit that sets it
    ("threads", "registers", "shared memory"): CUDA's occupancy rules without the
    allocation granularities (registers rounded to 8 per thread, 256 per warp). None when a
    count is missing."""
    if not n_regs or not num_warps:
        return None
    max_warps = threads_per_sm // warp_size
    regs_per_warp = -(-n_regs * warp_size // 256) * 256
    limits = {
        "threads": max_warps // num_warps,
        "registers": regs_per_sm // (regs_per_warp * num_warps),
    }
    if shared and shared_per_sm:
        limits["shared memory"] = shared_per_sm // shared
    blocks = min(limits.values())
    which = min(limits, key=lambda k: (limits[k], k != "threads"))
    return blocks * num_warps / max_warps, which

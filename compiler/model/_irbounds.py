"""Where the kernel's function is in each IR level Triton compiled it to (a module holds more:
MLIR's location table, LLVM's declarations and metadata, PTX's DWARF sections, SASS's symbol
table): read once, when the kernel is recorded (``TritonBinary.ir_bounds``), and when a report
written before it held them loads (``with_ir_bounds``, one of ``UPGRADES``): in the file
form's layer, so that the loader reaches it. Pure: text in, line indices out."""

from __future__ import annotations

import re
from typing import Any

from ._refill import refilled

_MLIR_FUNC = re.compile(r"^(\s*)tt\.func\b")
_PTX_FUNC = re.compile(r"^(?:\.visible\s+|\.weak\s+)?\.(?:entry|func)\b")
_SASS_SECTION = re.compile(r"^//-+ (\S+)")


def ir_function(level: str, text: str) -> tuple[int, int]:
    """The kernel's function in an IR of ``level``: the indices of its first line and of the
    line after its last (``lines[start:stop]``), from its header to its closing brace (SASS: its
    ``.text`` section, up to the next section's banner). The whole text where no function is
    found (an unknown level, a text cut short)."""
    lines = text.splitlines()
    whole = (0, len(lines))
    if level in ("ttir", "ttgir"):
        start = next((i for i, ln in enumerate(lines) if _MLIR_FUNC.match(ln)), None)
        if start is None:
            return whole
        close = _MLIR_FUNC.match(lines[start]).group(1) + "}"
        stop = next((i + 1 for i in range(start + 1, len(lines)) if lines[i].startswith(close)), None)
        return (start, stop) if stop is not None else whole
    if level in ("llir", "ptx"):
        is_head = (lambda ln: ln.startswith("define ")) if level == "llir" else _PTX_FUNC.match
        start = next((i for i, ln in enumerate(lines) if is_head(ln)), None)
        if start is None:
            return whole
        end = len(lines) if level == "llir" else debug_sections_start(text) or len(lines)
        # the last closing brace at the left margin: PTX may hold device functions before its
        # entry; LLIR's first one closes the kernel (declarations follow, with no body)
        closes = [i for i in range(start + 1, end) if lines[i].rstrip() == "}"]
        if not closes:
            return whole
        return start, (closes[0] if level == "llir" else closes[-1]) + 1
    if level == "sass":
        start = next(
            (i for i, ln in enumerate(lines) if ".text." in ln and not ln.lstrip().startswith(".section")),
            None,
        )
        if start is None:
            return whole
        stop = next((i for i in range(start + 1, len(lines)) if _SASS_SECTION.match(lines[i])), len(lines))
        while stop > start + 1 and not lines[stop - 1].strip():
            stop -= 1
        return start, stop
    return whole


_DEBUG = re.compile(r"\s*\.section\s+\.debug_")


def debug_sections_start(text: str) -> int | None:
    """The index of the line where a PTX module's DWARF sections begin (``.section
    .debug_abbrev``…), after its function; None where it has none."""
    return next((i for i, ln in enumerate(text.splitlines()) if _DEBUG.match(ln)), None)


def ir_bounds(ir: dict[str, str]) -> dict[str, tuple[int, int]]:
    """Each level's function bounds (``ir_function``) in ``ir`` (level -> text)."""
    return {level: ir_function(level, text) for level, text in ir.items() if isinstance(text, str)}


def with_ir_bounds(report: Any) -> Any:
    """A report's JSON form with each Triton binary's ``ir_bounds`` (reports written before the
    recording read them). ``report`` itself is left as it was; a part not of the schema's shape
    is kept for the schema check to name."""
    return refilled(report, "kernels", _missing, _read)


def _binaries(k: Any) -> list:
    binaries = k.get("binaries") if isinstance(k, dict) else None
    return binaries if isinstance(binaries, list) else []


def _old(b: Any) -> bool:
    # the file form leaves an empty dict out: a binary without IR needs no bounds
    return isinstance(b, dict) and "ir_bounds" not in b and isinstance(b.get("ir"), dict) and bool(b["ir"])


def _missing(k: Any) -> bool:
    return any(_old(b) for b in _binaries(k))


def _read(k: dict) -> dict:
    return {
        **k,
        "binaries": [
            {**b, "ir_bounds": {lv: list(se) for lv, se in ir_bounds(b["ir"]).items()}} if _old(b) else b
            for b in _binaries(k)
        ],
    }

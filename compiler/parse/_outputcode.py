"""Inductor's output code (the Python wrapper module torch logs as ``inductor_output_code``)
split into its kernels, with the graph nodes each one fused (torch's comments, or Inductor's
provenance tracking)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

# ---- output code -> kernels ---------------------------------------------------------------------

_AOT_ID = re.compile(r"^# AOT ID: \['\d+_(?P<role>\w+)'\]", re.M)
_KERNEL_DEF = re.compile(
    r"^(?P<var>\w+) = async_compile\.(?P<kind>triton|cpp_pybinding|cpp|cuda|halide|mps)\((?P<pre>[^\n]*?)(?P<q>r?''')",
    re.M,
)
_SOURCE_NODES = re.compile(
    r"# Topologically Sorted Source Nodes: \[(?P<nodes>[^\]]*)\](?:, Original ATen: \[(?P<aten>[^\]]*)\])?"
)


# extern "C"  void  cpp_fused_0(float* out_ptr0)\n{ ... \n}
_EXTERN_C = re.compile(r'^extern "C"\s+\w[\w\s\*]*?\b(?P<name>\w+)\s*\(', re.M)


def extern_c_functions(code: str) -> list[tuple[str, str]]:
    """The ``extern "C"`` functions of a C++ kernel file (AOTInductor's), each ``(name, body)``:
    from its line to the next one's."""
    starts = list(_EXTERN_C.finditer(code))
    out = []
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(code)
        out.append((m["name"], code[m.start() : end].rstrip()))
    return out


def output_role(code: str) -> str | None:
    m = _AOT_ID.search(code)
    return m.group("role") if m else None


@dataclass
class KernelSource:
    name: str
    language: str
    source: str
    nodes: tuple[str, ...]
    aten_ops: tuple[str, ...]


def split_kernels(code: str) -> list[KernelSource]:
    """Kernels defined in an Inductor output module, with the source nodes torch lists."""
    out: list[KernelSource] = []
    for m in _KERNEL_DEF.finditer(code):
        start = m.end()
        end = code.find("'''", start)
        if end < 0:
            continue
        kind = m.group("kind")
        language = "triton" if kind == "triton" else ("cpp" if kind.startswith("cpp") else kind)
        nm = re.match(r"'(\w+)'", m.group("pre"))
        name = nm.group(1) if nm else m.group("var")
        source = code[start:end].strip("\n")
        nodes, aten = _provenance_before(code, m.start())
        if not nodes:
            nodes, aten = _provenance_at_call(code, m.group("var"))
        out.append(KernelSource(name, language, source, nodes, aten))
    return out


def _provenance_before(code: str, pos: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    # the comment block right above the definition (GPU: "# kernel path: ..." block)
    block_start = code.rfind("\n\n", 0, pos)
    block = code[block_start:pos]
    m = _SOURCE_NODES.search(block)
    return _nodes_from(m)


def _provenance_at_call(code: str, var: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    r"""CPU wrappers put the comment right above the call inside ``call()``: the first call of
    ``var`` at the start of a line whose last line before it (blank lines aside) is a comment.
    (One regex over both lines, ``\s*`` crossing blank lines, was quadratic in them.)"""
    for m in re.finditer(rf"^[^\S\n]*{re.escape(var)}\(", code, re.M):
        end = m.start()
        while end and code[end - 1].isspace():
            end -= 1
        line = code[code.rfind("\n", 0, end) + 1 : end]
        if end and line.lstrip().startswith("#"):
            return _nodes_from(_SOURCE_NODES.search(line))
    return (), ()


def _nodes_from(m) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if not m:
        return (), ()
    nodes = tuple(s.strip() for s in m.group("nodes").split(",") if s.strip())
    aten = tuple(s.strip() for s in (m.group("aten") or "").split(",") if s.strip())
    return nodes, aten


def provenance_map(payloads: list[str]) -> dict[str, tuple[str, ...]]:
    """kernel name -> post-grad nodes, from inductor_provenance_tracking_node_mappings
    (keys like ``cppCodeToPost`` / ``tritonCodeToPost``; kernel keys carry ``:N``)."""
    out: dict[str, list[str]] = {}
    for p in payloads:
        try:
            data = json.loads(p)
        except (json.JSONDecodeError, TypeError):
            continue
        if not isinstance(data, dict):
            continue
        for key, mapping in data.items():
            if not (key.endswith("CodeToPost") and isinstance(mapping, dict)):
                continue
            for kname, nodes in mapping.items():
                name = kname.rsplit(":", 1)[0]
                if name.startswith("extern_kernels.") or not isinstance(nodes, list):
                    continue
                have = out.setdefault(name, [])
                have.extend(str(n) for n in nodes if str(n) not in have)
    return {k: tuple(v) for k, v in out.items()}

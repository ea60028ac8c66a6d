"""Inductor's provenance tracking (artifact ``inductor_provenance_tracking_node_mappings``,
recorded when ``trace.provenance_tracking_level`` is on): which post-grad nodes each kernel
call of the wrapper computes, and which pre-grad (Dynamo graph) node each post-grad node came
from. Kernel keys carry the call's place in the wrapper (``triton_poi_fused_gelu_1:3``,
``extern_kernels.mm:2``); torch names the map ``cppCodeToPost`` on CPU and GPU alike in 2.11,
``tritonCodeToPost`` elsewhere. Pure: the payload texts in, the maps out."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

_CALL = re.compile(r"^(?P<name>.+?)(?::(?P<n>\d+))?$")


@dataclass(frozen=True)
class KernelCall:
    """One kernel call of the wrapper, as provenance names it."""

    key: str  # as torch wrote it: "extern_kernels.mm:2"
    name: str  # "extern_kernels.mm", "triton_poi_fused_gelu_1"
    place: int | None  # the number after the colon: the call's order in the wrapper
    nodes: tuple[str, ...]  # post-grad nodes

    @property
    def extern(self) -> bool:
        return not self.name.startswith(("triton_", "cpp_"))

    @property
    def op(self) -> str:
        """The ATen op's base name an extern call runs: "mm" for ``extern_kernels.mm`` and
        ``aten.mm.default`` alike; the kernel's name otherwise."""
        return op_base(self.name) if self.extern else self.name


@dataclass(frozen=True)
class Provenance:
    calls: tuple[KernelCall, ...] = ()
    post_to_pre: dict[str, tuple[str, ...]] = field(default_factory=dict)


def op_base(name: str) -> str:
    """``extern_kernels.mm`` / ``torch.ops.aten.mm.default`` / ``aten::mm`` -> ``mm``."""
    name = name.replace("::", ".")
    for prefix in ("extern_kernels.", "torch.ops.", "aten.", "_inductor_"):
        if name.startswith(prefix):
            name = name[len(prefix) :]
    for suffix in (".default", ".Tensor", ".out"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name


def read_provenance(text: str | None) -> Provenance:
    """Every kernel call and the post→pre map found in ``text`` (one or more JSON payloads,
    one after another); anything else in it is skipped."""
    calls: list[KernelCall] = []
    post_to_pre: dict[str, tuple[str, ...]] = {}
    for doc in _docs(text or ""):
        for key, mapping in doc.items():
            if not isinstance(mapping, dict):
                continue
            if key.endswith("CodeToPost"):
                for k, nodes in mapping.items():
                    m = _CALL.match(str(k))
                    if m and isinstance(nodes, list):
                        place = int(m.group("n")) if m.group("n") else None
                        calls.append(KernelCall(str(k), m.group("name"), place, tuple(map(str, nodes))))
            elif key == "postToPre":
                for k, pre in mapping.items():
                    if isinstance(pre, list):
                        post_to_pre[str(k)] = tuple(map(str, pre))
    calls.sort(key=lambda c: (c.place is None, c.place or 0, c.key))
    return Provenance(tuple(calls), post_to_pre)


def _docs(text: str):
    """The JSON objects in ``text``, one after another (the payloads are joined by newlines)."""
    dec = json.JSONDecoder()
    i = text.find("{")
    while i >= 0:
        try:
            doc, end = dec.raw_decode(text, i)
        except json.JSONDecodeError:
            i = text.find("{", i + 1)
            continue
        if isinstance(doc, dict):
            yield doc
        i = text.find("{", end)


_NODE_LINE = re.compile(r"^\s+(\w+) = ", re.M)
_FILE_LINE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')


def stack_trace_nodes(text: str | None, file_base: str) -> dict[str, tuple[str, ...]]:
    """Inductor's kernel stack traces (artifact ``inductor_provenance_tracking_kernel_stack_traces``,
    provenance level 1) of a compile of a runnable repro named ``file_base``: each kernel ->
    the repro's nodes its traces end at, in the repro's line order. Each line of a runnable's
    ``forward`` is one node (``constant_pad_nd = torch.ops.aten...``): its name is the node's."""
    out: dict[str, dict[int, str]] = {}
    for key, lines in _trace_lines(text, file_base).items():
        out.setdefault(key.rsplit(":", 1)[0], {}).update(lines)
    return {name: tuple(dict(sorted(lines.items())).values()) for name, lines in out.items()}


def stack_trace_calls(text: str | None, file_base: str) -> dict[str, tuple[str, ...]]:
    """As ``stack_trace_nodes``, each kernel call as torch keys it (its place in the wrapper
    kept: ``extern_kernels.addmm:1``, ``cpp_fused_gelu_0:2``), extern calls too: the repro's
    nodes of each, in the repro's line order."""
    return {
        key: tuple(dict(sorted(lines.items())).values())
        for key, lines in _trace_lines(text, file_base).items()
    }


def _trace_lines(text: str | None, file_base: str) -> dict[str, dict[int, str]]:
    """Each kernel call key of the stack traces -> {the repro's line: its node} (``stack_trace_nodes``)."""
    out: dict[str, dict[int, str]] = {}
    for doc in _docs(text or ""):
        for key, traces in doc.items():
            if not isinstance(traces, list) or key.endswith("CodeToPost") or key == "version":
                continue
            for trace in traces:
                if not isinstance(trace, str):
                    continue
                for m in _FILE_LINE.finditer(trace):
                    if m.group("file").rsplit("/", 1)[-1] != file_base:
                        continue
                    rest = trace[m.end() :].split("\n", 2)
                    node = _NODE_LINE.match("\n" + rest[1]) if len(rest) > 1 else None
                    if node:
                        out.setdefault(str(key), {})[int(m.group("line"))] = node.group(1)
    return out


_FRAME = re.compile(r'^ *File "(?P<file>[^"]+)", line (?P<line>\d+)', re.M)


def kernel_stacks(text: str | None) -> dict[str, tuple[tuple[str, int], ...]]:
    """Each kernel call's name -> the user lines its nodes came from: the innermost frame of
    each stack torch keeps for it (artifact ``inductor_provenance_tracking_kernel_stack_traces``,
    keys like ``cpp_fused_add_0:1``). The backward's kernels have stacks there where torch's
    node map for the backward is empty."""
    out: dict[str, list[tuple[str, int]]] = {}
    for doc in _docs(text or ""):
        for key, stacks in doc.items():
            if not isinstance(stacks, list) or not all(isinstance(x, str) for x in stacks):
                continue
            have = out.setdefault(str(key).rsplit(":", 1)[0], [])
            for frames in (_FRAME.findall(st) for st in stacks):
                if frames and (frames[-1][0], int(frames[-1][1])) not in have:
                    have.append((frames[-1][0], int(frames[-1][1])))
    return {k: tuple(v) for k, v in out.items()}


def extern_nodes(text: str | None) -> dict[str, str]:
    """Each post-grad node that runs as an extern call -> that call (``extern_kernels.addmm``:
    a library kernel Inductor calls, not one it generated), from the provenance's node map."""
    return {n: c.name for c in read_provenance(text).calls if c.extern for n in c.nodes}

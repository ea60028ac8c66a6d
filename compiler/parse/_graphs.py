"""Graphs from the readable FX code torch prints (``GraphModule.print_readable``).

torch prints every graph it logs this way (Dynamo's output graph, AOTAutograd's joint /
forward / backward graphs, pre- and post-grad graphs).  We only read the text, so the same
parser serves in-process recordings and TORCH_TRACE logs. The nodes the code itself says
come from compiler/model/_fxcode.py (``graph_nodes``, in the file form's layer: a report's
file parses them again); here each graph's nodes are given their nn.Module.
"""

from __future__ import annotations

import re

from ..model._compact import keep_file_fields
from ..model._fxcode import graph_nodes
from ..model._report import Graph, SavedTensor
from ._modules import MODULE_FIELDS, infer_modules, with_modules_from

_ITEMSIZE = {
    "f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i32": 4, "i16": 2, "i8": 1,
    "u8": 1, "u16": 2, "u32": 4, "u64": 8, "b8": 1, "c64": 8, "c128": 16, "c32": 4,
    "f8e4m3fn": 1, "f8e5m2": 1, "f8e4m3fnuz": 1, "f8e5m2fnuz": 1,
}  # fmt: skip


def parse_graph(code: str | None) -> Graph | None:
    """The graph torch printed: its nodes parsed from ``code``, each given its nn.Module
    (inferred from parameter names and neighbours: compiler/parse/_modules.py)."""
    if not code:
        return None
    return keep_file_fields(
        Graph(code=code, nodes=tuple(infer_modules(list(graph_nodes(code))))), MODULE_FIELDS
    )


def parse_graph_from(code: str | None, reference: Graph | None, forward: Graph | None = None) -> Graph | None:
    """``with_modules_from(parse_graph(code), reference, forward)`` (an AOT or post-grad graph,
    its nodes given the Dynamo graph's modules: compiler/parse/_modules.py), without inferring
    modules the Dynamo graph's then replace."""
    if not code or reference is None:
        return parse_graph(code)
    graph = with_modules_from(Graph(code=code, nodes=graph_nodes(code)), reference, forward)
    return keep_file_fields(graph, MODULE_FIELDS)


def saved_tensors(backward: Graph | None) -> tuple[SavedTensor, ...]:
    """What the forward saves for the backward: the backward graph's non-tangent inputs."""
    if backward is None:
        return ()
    out = []
    for n in backward.nodes:
        if n.op != "placeholder" or n.name.startswith("tangents"):
            continue
        out.append(SavedTensor(n.name, n.dtype, n.shape, tensor_bytes(n.dtype, n.shape)))
    return tuple(out)


def tensor_bytes(dtype: str | None, shape: str | None) -> int | None:
    if dtype not in _ITEMSIZE or shape is None:
        return None
    inner = shape.strip("[]").strip()
    numel = 1
    if inner:
        for d in inner.split(","):
            d = d.strip()
            if not d.isdigit():
                return None
            numel *= int(d)
    return numel * _ITEMSIZE[dtype]


def op_counts(graphs) -> dict[str, int]:
    total: dict[str, int] = {}
    for g in graphs:
        if g is None:
            continue
        for op, k in g.op_counts().items():
            total[op] = total.get(op, 0) + k
    return dict(sorted(total.items(), key=lambda kv: (-kv[1], kv[0])))


def shape_dims(shape: str | None) -> list[str]:
    """A node's shape as torch prints it, ``[4, 8]`` or ``[s77, 8]``, as its sizes' words."""
    return re.findall(r"[\w]+", shape or "")


def without_device_index(code: str) -> str:
    """Graph code with each device's index left out (``cuda:1`` -> ``cuda:N``): the same on every rank."""
    return re.sub(r"\b(cuda|xpu|hpu):\d+", r"\1:N", code)

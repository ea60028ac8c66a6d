"""The op census as before → after pairs: per op of Dynamo's graph (torch level: ``layer_norm``),
how many calls it had and the core-ATen ops it became in the post-grad graphs
(``var_mean 5, rsqrt 5, …``), the forward and the backward apart.

A post-grad node is traced to the Dynamo-graph node it came from by torch's own records:
Inductor's provenance (``postToPre``, from each node's ``from_node`` history) where torch
logged it (the forward graph; torch logs no map for the backward graph), else by the user
line torch stamped on both (``# File: …``, the node's ``stack_trace``, which AOTAutograd copies
from each forward node to the backward nodes that differentiate it); the table says which.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict

from compiler.types import Compile, Node

from ..base._types import Table

_SHOWN = 6  # after-ops shown per row


def op_name(n: Node) -> str:
    """``torch.ops.aten.var_mean.correction`` → ``var_mean``; ``torch.nn.functional.layer_norm``
    → ``layer_norm``; ``operator.add`` → ``add``; a method → its name."""
    t = n.target
    if t.startswith("torch.ops."):
        return t.split(".")[3]
    return t.rsplit(".", 1)[-1].strip("_") or t


def read_post_to_pre(c: Compile) -> dict[str, tuple[str, ...]]:
    """Inductor's ``postToPre`` map of the compile (the payloads of
    ``inductor_provenance_tracking_node_mappings``, kept one after another in its fuse stage)."""
    text = c.stages.fuse.provenance if c.stages.fuse else None
    out: dict[str, tuple[str, ...]] = {}
    dec, i = json.JSONDecoder(), (text or "").find("{")
    while i >= 0:
        try:
            doc, end = dec.raw_decode(text, i)
        except json.JSONDecodeError:
            end = i + 1
            doc = None
        m = doc.get("postToPre") if isinstance(doc, dict) else None
        if isinstance(m, dict):
            out.update({str(k): tuple(map(str, v)) for k, v in m.items() if isinstance(v, list)})
        i = text.find("{", end)
    return out


def _calls(nodes) -> list[Node]:
    return [n for n in nodes if n.op in ("call_function", "call_method", "call_module")]


def census_pairs(c: Compile, post_to_pre: dict[str, tuple[str, ...]]) -> Table | None:
    cap, dec = c.stages.capture, c.stages.decompose
    if cap is None or cap.graph is None or dec is None or not dec.post_grad:
        return None
    dyn = {n.name: n for n in _calls(cap.graph.nodes)}
    by_line: dict[str, set[str]] = defaultdict(set)
    for n in dyn.values():
        if n.source:
            by_line[n.source].add(n.name)
    rows = []
    for rg in dec.post_grad:
        mapped = rg.role != "backward" and any(n.name in post_to_pre for n in rg.graph.nodes)
        before: dict[str, set[str]] = defaultdict(set)
        after: dict[str, Counter] = defaultdict(Counter)
        for n in _calls(rg.graph.nodes):
            pre = post_to_pre.get(n.name, ()) if mapped else tuple(by_line.get(n.source or "", ()))
            ops = sorted({op_name(dyn[p]) for p in pre if p in dyn})
            key = " / ".join(ops) or "(no torch-level op)"
            before[key].update(p for p in pre if p in dyn)
            after[key][op_name(n)] += 1
        how = "provenance" if mapped else "source line"
        for key in sorted(after, key=lambda k: (-sum(after[k].values()), k)):
            ops = sorted(after[key].items(), key=lambda kv: (-kv[1], kv[0]))
            shown = ", ".join(f"{op} {k}" for op, k in ops[:_SHOWN]) + (" …" if len(ops) > _SHOWN else "")
            rows.append((rg.role, f"{key} {len(before[key])}" if before[key] else key, shown, how))
    return Table(
        "op census: each torch-level op of Dynamo's graph → the core ATen ops it became",
        ("role", "before", "after", "traced by"),
        tuple(rows),
    )

"""The nn.Module each node of a parsed graph belongs to: from torch's ``nn_module_stack``
where the recording heard it, else from the parameters a node reads and, for AOTAutograd's
and Inductor's graphs, from the Dynamo graph's runs of the same source line
(compiler/parse/_graphs.py parses the graphs)."""

from __future__ import annotations

import functools
import json
import os
import re

from ..model._compact import keep_file_fields
from ..model._fxcode import replace_node
from ..model._report import Graph, Node

# torch's module source in nn_module_stack: L['self'].transformer.h[0]._modules['ln_1']
_ROOT = re.compile(r"""^[LG]\[['"][^'"]+['"]\]""")
# an item's key holds no bracket: a run of "[" without its "]" is then passed once, not once
# for every "[" in it (quadratic)
_ITEM = re.compile(r"""(?:\._modules)?\[['"]?([^'"\[\]]+)['"]?\]""")


def module_path(source: str) -> str | None:
    """A module source as torch writes it in ``nn_module_stack`` (``L['self'].transformer.h[0]``)
    as a path (``transformer.h.0``): the root, the compiled function's argument, left out, as
    Dynamo's parameter names leave it out; None for the root itself."""
    return _ITEM.sub(r".\1", _ROOT.sub("", source)).strip(".") or None


def with_module_stacks(graph: Graph | None, payload: str | None) -> Graph | None:
    """Dynamo's graph with each call node's module from torch's own metadata (the recording's
    ``nn_module_stack`` event: node -> its module stack, outermost first): the innermost module
    running when the node was traced, the module that computed it (GPT-2's logits: ``lm_head``,
    though the weight it reads is ``transformer.wte``'s, tied); a node of the root's own code
    has none. Without the event (a TORCH_TRACE log), the modules inferred from parameters stay."""
    if graph is None or not payload:
        return graph
    try:
        stacks = json.loads(payload)
    except ValueError:
        return graph
    if not isinstance(stacks, dict):
        return graph
    nodes = []
    for n in graph.nodes:
        stack = stacks.get(n.name)
        if isinstance(stack, list) and n.op.startswith("call"):
            n = replace_node(n, module=module_path(str(stack[-1])) if stack else None, module_inferred=False)
        nodes.append(n)
    return keep_file_fields(Graph(code=graph.code, nodes=tuple(nodes)), MODULE_FIELDS, made_from=graph)


# the node fields this module sets (with_module_stacks, with_modules_from, infer_modules)
MODULE_FIELDS = frozenset({"module", "module_inferred"})


def infer_modules(nodes: list[Node]) -> list[Node]:
    """Give call nodes the nn.Module path of the parameters they read; nodes that read none
    get the common parent of the nearest known paths before and after them (inferred)."""
    by_name = {n.name: n for n in nodes}
    direct: list[str | None] = []
    for n in nodes:
        if n.op in ("call_function", "call_method", "call_module") and n.module is None:
            mods = {
                by_name[a].module
                for a in n.args
                if a in by_name and by_name[a].op in ("placeholder", "get_attr")
            }
            mods.discard(None)
            direct.append(_common(sorted(mods)) if mods else (n.target if n.op == "call_module" else None))
        else:
            direct.append(n.module)
    # the nearest known path before each node (placeholders' aside) and after it, in one pass each
    before: list[str | None] = []
    last = None
    for n, d in zip(nodes, direct):
        before.append(last)
        if d and n.op != "placeholder":
            last = d
    after: list[str | None] = [None] * len(nodes)
    last = None
    for i in range(len(nodes) - 1, -1, -1):
        after[i] = last
        if direct[i]:
            last = direct[i]
    out = []
    for i, n in enumerate(nodes):
        mod, inferred = direct[i], False
        if mod is None and n.op in ("call_function", "call_method"):
            cands = [m for m in (before[i], after[i]) if m]
            mod = _common(cands) if len(cands) == 2 else None
            inferred = mod is not None
        out.append(replace_node(n, module=mod or None, module_inferred=inferred))
    return out


def _common(paths: list[str]) -> str | None:
    """The longest dotted prefix the module paths share, or None."""
    if not paths:
        return None
    if len(paths) == 1:
        return paths[0] or None
    return ".".join(os.path.commonprefix([p.split(".") for p in paths])) or None


def with_modules_from(
    graph: Graph | None, reference: Graph | None, forward: Graph | None = None
) -> Graph | None:
    """Give nodes of an AOT / post-grad graph nn.Module paths from the Dynamo graph.

    AOTAutograd traces the Dynamo graph node by node, keeping each node's user source line
    (the ``# File: …`` comments torch prints). So the graph falls into runs of consecutive
    nodes of one source line, in the Dynamo graph's order: the k-th run of a line here is
    the k-th run of that line there, and takes its module (a block repeated per layer gets
    each layer's own path). Placeholders take the Dynamo graph's inputs in order (parameters
    are lifted inputs); a backward graph's saved tensors take the ``forward`` graph's nodes
    of the same name, and its runs (in reverse order) the module of that line whose path
    best matches the saved tensors they read. Nodes still without a path get one from their
    neighbours (``module_inferred``)."""
    if graph is None or reference is None:
        return graph
    ref_ph = [n for n in reference.nodes if n.op == "placeholder"]
    ph = [n for n in graph.nodes if n.op == "placeholder" and not n.name.startswith("tangents")]
    ph_mod: dict[str, str | None] = {}
    if forward is not None:
        ph_mod = {n.name: n.module for n in forward.nodes if n.module}
    elif ph and len(ph) == len(ref_ph):
        ph_mod = {p.name: r.module for p, r in zip(ph, ref_ph)}
    by_line = _run_modules(reference)
    seen: dict[str, int] = {}
    mods: dict[str, str | None] = dict(ph_mod)
    # a joint graph's backward part starts at the first node that reads a tangent
    backward = forward is not None
    for source, run in _runs(list(graph.nodes)):
        backward = backward or any(a.startswith("tangents") for n in run for a in n.args)
        cands = by_line.get(source, []) if source else []
        if not cands:
            continue
        if not backward:
            k = seen[source] = seen.get(source, -1) + 1
            mod = cands[k] if k < len(cands) else _common(sorted(set(filter(None, cands))))
        else:
            read = [m for n in run for a in n.args if (m := mods.get(a))]
            mod = _best_match(cands, read)
        for n in run:
            mods[n.name] = mod
    nodes = []
    for n in graph.nodes:
        if n.op == "placeholder":
            n = replace_node(n, module=ph_mod.get(n.name, n.module), module_inferred=False)
        elif n.op != "output":
            n = replace_node(
                n, module=mods.get(n.name) if n.name not in ph_mod else None, module_inferred=False
            )
        nodes.append(n)
    return Graph(code=graph.code, nodes=tuple(infer_modules(nodes)))


def _runs(nodes: list[Node]) -> list[tuple[str | None, list[Node]]]:
    """Consecutive op nodes of one user source line."""
    runs: list[tuple[str | None, list[Node]]] = []
    for n in nodes:
        if n.op in ("placeholder", "output"):
            continue
        if runs and runs[-1][0] == n.source:
            runs[-1][1].append(n)
        else:
            runs.append((n.source, [n]))
    return runs


def _run_modules(reference: Graph) -> dict[str, list[str | None]]:
    """Per source line, the module of each of its runs in the Dynamo graph, in order: the
    common path of the parameters the run reads, else of what its nodes were inferred."""
    out: dict[str, list[str | None]] = {}
    for source, run in _runs(list(reference.nodes)):
        if source is None:
            continue
        direct = sorted({n.module for n in run if n.module and not n.module_inferred})
        mod = _common(direct) if direct else _common(sorted({n.module for n in run if n.module}))
        out.setdefault(source, []).append(mod)
    return out


def _best_match(cands: list[str | None], read: list[str]) -> str | None:
    """The candidate path sharing the longest dotted prefix with a path the run reads (the
    first in sorted order among equals); without such evidence, the common parent of the
    candidates."""
    index = _candidate_index(tuple(cands))  # a source line's runs have the same candidates
    if index is None:
        return None
    uniq, first = index
    if read:  # a run reads the same few modules' tensors many times
        hits = [(len(p), first[p]) for p in _prefix_set(frozenset(read)) if p and p in first]
        if hits:
            top = max(n for n, _c in hits)
            return min(c for n, c in hits if n == top)
    return _common(list(uniq))


@functools.lru_cache(maxsize=1 << 12)
def _candidate_index(cands: tuple[str | None, ...]) -> tuple[tuple[str, ...], dict[str, str]] | None:
    """The distinct candidates, sorted, and each dotted prefix of theirs -> the first of them
    it is a prefix of."""
    uniq = tuple(sorted(set(filter(None, cands))))
    if not uniq:
        return None
    first: dict[str, str] = {}
    for c in uniq:
        for p in _prefixes(c):
            first.setdefault(p, c)
    return uniq, first


@functools.lru_cache(maxsize=1 << 14)  # the same layers' paths, run after run
def _prefixes(path: str) -> tuple[str, ...]:
    """A module path's dotted prefixes, itself first: ``a.b.c``, ``a.b``, ``a``."""
    parts = path.split(".")
    return tuple(".".join(parts[:i]) for i in range(len(parts), 0, -1))


@functools.lru_cache(maxsize=1 << 12)
def _prefix_set(paths: frozenset[str]) -> frozenset[str]:
    """Every dotted prefix of the paths."""
    return frozenset(p for path in paths for p in _prefixes(path))

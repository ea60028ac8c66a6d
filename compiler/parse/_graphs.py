"""Parse the readable FX code torch prints (``GraphModule.print_readable``) into nodes.

torch prints every graph it logs this way (Dynamo's output graph, AOTAutograd's joint /
forward / backward graphs, pre- and post-grad graphs).  We only read the text, so the same
parser serves in-process recordings and TORCH_TRACE logs.
"""

from __future__ import annotations

import functools
import json
import os
import re

from ..model._report import Graph, Node, SavedTensor

# `name: "f32[4, 8][8, 1]cpu" = rhs;  a = b = None`  (annotation optional)
_ASSIGN = re.compile(r'^\s+(?P<name>\w+)(?::\s*"(?P<ann>[^"]*)")?\s*=\s*(?P<rhs>.+?)\s*$')
# an input declared in the body (the joint graph takes `primals, tangents` and unpacks them)
_INPUT_ANN = re.compile(r'^\s+(?P<name>\w+): "(?P<ann>[^"]*)"\s*(?:#.*)?$')
# signature parameter: `L_x_: "f32[4, 8][8, 1]cpu",  # PlainAOTInput(idx=0)`
_PARAM = re.compile(r'(?P<name>\w+)\s*:\s*"(?P<ann>[^"]*)"')
_SOURCE = re.compile(r"^\s+# File: (?P<file>.+?):(?P<line>\d+) in (?P<fn>[^,]+), code: (?P<code>.*)$")
# "f32[4, 8][8, 1]cpu"  /  "Sym(s77)"  /  "f32[][]cuda:0"
_ANN = re.compile(r"^(?P<dtype>[a-z]+\d*\w*)\[(?P<shape>[^\]]*)\](?:\[(?P<stride>[^\]]*)\])?(?P<dev>.*)$")
_CALL = re.compile(r"^(?P<target>[\w.]+)\((?P<args>.*)\)$")
_NAME = re.compile(r"\b([A-Za-z_]\w*)\b")
_BINOPS = {
    "@": "operator.matmul",
    "+": "operator.add",
    "-": "operator.sub",
    "*": "operator.mul",
    "/": "operator.truediv",
    "//": "operator.floordiv",
    "**": "operator.pow",
    "%": "operator.mod",
    ">": "operator.gt",
    "<": "operator.lt",
    ">=": "operator.ge",
    "<=": "operator.le",
    "==": "operator.eq",
    "!=": "operator.ne",
    "&": "operator.and_",
    "|": "operator.or_",
}
_BINOP = re.compile(r"^(?P<a>[\w.]+) (?P<op>@|\+|-|\*\*|\*|//|/|%|>=|<=|>|<|==|!=|&|\|) (?P<b>[\w.\-]+)$")
_ITEMSIZE = {
    "f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i32": 4, "i16": 2, "i8": 1,
    "u8": 1, "u16": 2, "u32": 4, "u64": 8, "b8": 1, "c64": 8, "c128": 16, "c32": 4,
    "f8e4m3fn": 1, "f8e5m2": 1, "f8e4m3fnuz": 1, "f8e5m2fnuz": 1,
}  # fmt: skip
# Dynamo's names for L['self']._modules['fc1']._parameters['weight'] (and older spellings)
_PARAM_PATH = re.compile(r"modules_(.+?)_(?=modules_|parameters_|buffers_)")
_ATTR_PATH = re.compile(r"^l__self___(.+)_(weight|bias)$")


def parse_graph(code: str | None) -> Graph | None:
    if not code:
        return None
    nodes: list[Node] = []
    known: set[str] = set()
    alias: dict[str, str] = {}  # Dynamo's `l_x_ = L_x_`: the lower-case name is used after
    source = fn_code = None
    in_sig = False
    sig_done = False
    ret_lines: list[str] | None = None
    for raw in code.splitlines():
        stripped = raw.strip()
        if not sig_done and stripped.startswith("def forward("):
            rest = stripped[len("def forward(") :]
            for m in _PARAM.finditer(rest):
                nodes.append(_placeholder(m.group("name"), m.group("ann")))
                known.add(m.group("name"))
            in_sig = not rest.rstrip().endswith("):")
            sig_done = not in_sig
            continue
        if in_sig:
            if stripped.startswith("):"):
                in_sig, sig_done = False, True
                continue
            m = _PARAM.match(stripped)
            if m:
                nodes.append(_placeholder(m.group("name"), m.group("ann")))
                known.add(m.group("name"))
            elif stripped and not stripped.startswith("#") and stripped.rstrip(",") not in ("self", ""):
                # joint graph takes `primals, tangents` without annotations
                pass
            continue
        if not sig_done:
            continue
        if stripped.startswith("class ") and nodes:
            break  # a nested submodule (cond branches...): the outer graph is done
        sm = _SOURCE.match(raw)
        if sm:
            source = f"{sm.group('file')}:{sm.group('line')}"
            fn_code = sm.group("code")
            continue
        if ret_lines is not None:  # inside a multi-line `return (` ... `)`
            if stripped.startswith((")", "]")):
                nodes.append(_output(" ".join(ret_lines), known, alias))
                ret_lines = None
            else:
                ret_lines.append(stripped.split("#", 1)[0])  # drop `# PlainAOTOutput(idx=0)`
            continue
        if stripped.startswith("return"):
            rest = stripped[len("return") :].strip()
            if rest.endswith(("(", "[")):  # AOT graphs put one output per line (`return (`,
                # the joint graph's `return pytree.tree_unflatten([`)
                ret_lines = []
                continue
            nodes.append(_output(rest, known, alias))
            continue
        im = _INPUT_ANN.match(raw)
        if im and im.group("name") not in known:  # joint graph: `primals_1: "f32[4, 8]..."  # ...Input`
            nodes.append(_placeholder(im.group("name"), im.group("ann")))
            known.add(im.group("name"))
            continue
        am = _ASSIGN.match(raw)
        if not am or stripped.startswith("#"):
            continue
        rhs = am.group("rhs").split(";  ")[0].strip()
        name = am.group("name")
        if rhs.endswith("= None") or name in ("_", "self"):
            continue
        if rhs in known and not am.group("ann"):
            alias[name] = alias.get(rhs, rhs)
            known.add(name)
            continue
        node = _call_node(name, rhs, am.group("ann"), known, source, fn_code)
        if node is not None:
            if alias and any(a in alias for a in node.args):
                node = _replace(node, args=tuple(dict.fromkeys(alias.get(a, a) for a in node.args)))
            nodes.append(node)
            known.add(name)
    return Graph(code=code, nodes=tuple(_infer_modules(nodes)))


# torch's module source in nn_module_stack: L['self'].transformer.h[0]._modules['ln_1']
_ROOT = re.compile(r"""^[LG]\[['"][^'"]+['"]\]""")
_ITEM = re.compile(r"""(?:\._modules)?\[['"]?([^'"\]]+)['"]?\]""")


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
            n = _replace(n, module=module_path(str(stack[-1])) if stack else None, module_inferred=False)
        nodes.append(n)
    return Graph(code=graph.code, nodes=tuple(nodes))


def _output(text: str, known: set[str], alias: dict[str, str]) -> Node:
    rets = [alias.get(a, a) for a in _NAME.findall(text) if a in known]
    return Node(name="output", op="output", target="output", args=tuple(rets))


@functools.lru_cache(maxsize=4096)  # a graph's nodes share a few dozen annotations
def _split_ann(ann: str | None) -> tuple[str | None, str | None, str | None, str | None]:
    if not ann:
        return None, None, None, None
    m = _ANN.match(ann.strip())
    if not m:
        return ann, None, None, None  # e.g. "Sym(s77)"
    return (
        m.group("dtype"),
        f"[{m.group('shape')}]",
        (f"[{m.group('stride')}]" if m.group("stride") is not None else None),
        (m.group("dev") or None),
    )


def _placeholder(name: str, ann: str) -> Node:
    dtype, shape, stride, dev = _split_ann(ann)
    return Node(
        name=name, op="placeholder", target=name, dtype=dtype, shape=shape, stride=stride,
        device=dev, module=_module_of_name(name),
    )  # fmt: skip


def _call_node(name, rhs, ann, known, source, code) -> Node | None:
    dtype, shape, stride, dev = _split_ann(ann)
    common = dict(dtype=dtype, shape=shape, stride=stride, device=dev, source=source, code=code)
    bm = _BINOP.match(rhs)
    if bm:
        args = tuple(a for a in (bm.group("a"), bm.group("b")) if a in known)
        return Node(name, "call_function", _BINOPS[bm.group("op")], args, **common)
    cm = _CALL.match(rhs)
    if cm:
        target = cm.group("target")
        args = tuple(dict.fromkeys(a for a in _NAME.findall(cm.group("args")) if a in known))
        head = target.split(".")[0]
        if head in known and "." in target:  # x.sin() -> call_method sin on x
            return Node(name, "call_method", target.split(".", 1)[1], (head, *args), **common)
        if head == "self":
            return Node(name, "call_module", target[len("self.") :], args, **common)
        return Node(name, "call_function", target, args, **common)
    if rhs.startswith("self.") and re.fullmatch(r"self\.[\w.]+", rhs):
        return Node(name, "get_attr", rhs[len("self.") :], (), **common, module=_module_of_name(rhs))
    if re.fullmatch(r"\w+\[\d+\]", rhs):  # getitem
        base = rhs.split("[")[0]
        return Node(name, "call_function", "operator.getitem", (base,) if base in known else (), **common)
    if re.fullmatch(r"\w+", rhs):  # alias `l_x_ = L_x_`: not a node of its own
        return None
    args = tuple(dict.fromkeys(a for a in _NAME.findall(rhs) if a in known))
    return Node(name, "call_function", rhs[:60], args, **common)


def _module_of_name(name: str) -> str | None:
    parts = _PARAM_PATH.findall(name)
    if parts:
        return ".".join(parts)
    m = _ATTR_PATH.match(name)
    if m:
        return m.group(1).replace("_", ".")
    return None


def _infer_modules(nodes: list[Node]) -> list[Node]:
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
        out.append(_replace(n, module=mod or None, module_inferred=inferred))
    return out


def _common(paths: list[str]) -> str | None:
    """The longest dotted prefix the module paths share, or None."""
    if not paths:
        return None
    if len(paths) == 1:
        return paths[0] or None
    return ".".join(os.path.commonprefix([p.split(".") for p in paths])) or None


def _replace(n: Node, **kw) -> Node:
    """``dataclasses.replace`` for a Node, without its per-call field checks (a training
    step's graphs have ~10,000 nodes, each given its module twice); ``n`` itself where
    nothing changes."""
    old = n.__dict__
    if all(old[k] == v for k, v in kw.items()):
        return n
    new = object.__new__(Node)
    new.__dict__.update(old)
    new.__dict__.update(kw)
    return new


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
            n = _replace(n, module=ph_mod.get(n.name, n.module), module_inferred=False)
        elif n.op != "output":
            n = _replace(n, module=mods.get(n.name) if n.name not in ph_mod else None, module_inferred=False)
        nodes.append(n)
    return Graph(code=graph.code, nodes=tuple(_infer_modules(nodes)))


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
    """The candidate path sharing the longest prefix with the paths a run reads; without
    such evidence, the common parent of the candidates."""
    uniq = sorted(set(filter(None, cands)))
    if not uniq:
        return None
    if read:
        paths = sorted(set(read))  # a run reads the same few modules' tensors many times

        def score(c: str) -> int:
            return max(len(_common([c, r]) or "") for r in paths)

        best = max(uniq, key=score)
        if score(best) > 0:
            return best
    return _common(uniq)


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


def census(graphs) -> dict[str, int]:
    total: dict[str, int] = {}
    for g in graphs:
        if g is None:
            continue
        for op, k in g.op_census().items():
            total[op] = total.get(op, 0) + k
    return dict(sorted(total.items(), key=lambda kv: (-kv[1], kv[0])))

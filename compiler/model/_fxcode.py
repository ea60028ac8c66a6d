"""The nodes written in the readable FX code torch prints (``GraphModule.print_readable``):
what a graph's code says of each node (name, op, target, args, dtype, shape, stride, device,
source line), nothing more. It sits here, in the layer of the report's file form, because
the file form stores a graph's nodes as what differs from these and parses its code again
when a report is read (compiler/model/_compact.py, compiler/model/_resolve.py); the parse
layer builds on it (compiler/parse/_graphs.py: ``parse_graph`` gives the nodes their
modules, compiler/parse/_seqnr.py their seq_nr)."""

from __future__ import annotations

import dataclasses
import functools
import re

from ._stagetypes import Node

# `name: "f32[4, 8][8, 1]cpu" = rhs;  a = b = None`  (annotation optional); rhs: the rest
# without its trailing blanks (or its last blank where it is all blanks), greedy: a lazy
# `.+?\s*$` tried the end at every character of a ~100-character line
_ASSIGN = re.compile(r'^\s+(?P<name>\w+)(?::\s*"(?P<ann>[^"]*)")?\s*=\s*(?P<rhs>.*\S|[^\S\n])\s*$')
# an input declared in the body (the joint graph takes `primals, tangents` and unpacks them)
_INPUT_ANN = re.compile(r'^\s+(?P<name>\w+): "(?P<ann>[^"]*)"\s*(?:#.*)?$')
# signature parameter: `L_x_: "f32[4, 8][8, 1]cpu",  # PlainAOTInput(idx=0)`; a name starts a
# word (else each of a long word's letters starts a scan to its end: quadratic)
_PARAM = re.compile(r'(?<!\w)(?P<name>\w+)\s*:\s*"(?P<ann>[^"]*)"')
# the function, a code object's name, holds no blank (else each ":N in " of a crafted line
# starts a scan to the next comma: quadratic)
_SOURCE = re.compile(r"^\s+# File: (?P<file>.+?):(?P<line>\d+) in (?P<fn>[^,\s]+), code: (?P<code>.*)$")
# "f32[4, 8][8, 1]cpu"  /  "Sym(s77)"  /  "f32[][]cuda:0"; the dtype is a letter, then word
# characters (``[a-z]+\d*\w*``, the same words, split a long one every way: quadratic)
_ANN = re.compile(r"^(?P<dtype>[a-z]\w*)\[(?P<shape>[^\]]*)\](?:\[(?P<stride>[^\]]*)\])?(?P<dev>.*)$")
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
# Dynamo's names for L['self']._modules['fc1']._parameters['weight'] (and older spellings)
_PARAM_PATH = re.compile(r"modules_(.+?)_(?=modules_|parameters_|buffers_)")
_ATTR_PATH = re.compile(r"^l__self___(.+)_(weight|bias)$")


@functools.lru_cache(maxsize=32)
def graph_nodes(code: str) -> tuple[Node, ...]:
    """The nodes written in ``code``, each with only what its lines say (name, op, target,
    args, dtype, shape, stride, device, source line): no module, no seq_nr. The report's file
    form stores a graph's nodes as what differs from these (compiler/model/_compact.py), so
    the last graphs parsed are remembered: the graphs made here work out what their file form
    stores while their code's parse is at hand (``keep_file_fields``), so writing the report
    parses nothing again."""
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
        sm = _SOURCE.match(raw) if stripped.startswith("# File: ") else None
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
        am = _ASSIGN.match(raw)  # never a line _INPUT_ANN matches: `=` or a comment follows the annotation
        if not am:
            im = _INPUT_ANN.match(raw) if ': "' in raw else None
            if im and im.group("name") not in known:  # joint graph: `primals_1: "f32[4, 8]..."  # ...Input`
                nodes.append(_placeholder(im.group("name"), im.group("ann")))
                known.add(im.group("name"))
            continue
        if stripped.startswith("#"):
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
                node = replace_node(node, args=tuple(dict.fromkeys(alias.get(a, a) for a in node.args)))
            nodes.append(node)
            known.add(name)
    return tuple(nodes)


def _output(text: str, known: set[str], alias: dict[str, str]) -> Node:
    rets = [alias.get(a, a) for a in _NAME.findall(text) if a in known]
    return _node("output", "output", "output", tuple(rets), None, None, None, None, None, None)


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
    return _node(name, "placeholder", name, (), dtype, shape, stride, dev, None, None, module_of_name(name))


def _call_node(name, rhs, ann, known, source, code) -> Node | None:
    dtype, shape, stride, dev = _split_ann(ann)
    common = (dtype, shape, stride, dev, source, code)
    bm = None if rhs.endswith(")") else _BINOP.match(rhs)  # `a * b`: its operands hold no ")"
    if bm:
        args = tuple(a for a in (bm.group("a"), bm.group("b")) if a in known)
        return _node(name, "call_function", _BINOPS[bm.group("op")], args, *common)
    cm = _CALL.match(rhs)
    if cm:
        target = cm.group("target")
        args = tuple(dict.fromkeys(a for a in _NAME.findall(cm.group("args")) if a in known))
        head = target.split(".")[0]
        if head in known and "." in target:  # x.sin() -> call_method sin on x
            return _node(name, "call_method", target.split(".", 1)[1], (head, *args), *common)
        if head == "self":
            return _node(name, "call_module", target[len("self.") :], args, *common)
        return _node(name, "call_function", target, args, *common)
    if rhs.startswith("self.") and re.fullmatch(r"self\.[\w.]+", rhs):
        return _node(name, "get_attr", rhs[len("self.") :], (), *common, module_of_name(rhs))
    if re.fullmatch(r"\w+\[\d+\]", rhs):  # getitem
        base = rhs.split("[")[0]
        return _node(name, "call_function", "operator.getitem", (base,) if base in known else (), *common)
    if re.fullmatch(r"\w+", rhs):  # alias `l_x_ = L_x_`: not a node of its own
        return None
    args = tuple(dict.fromkeys(a for a in _NAME.findall(rhs) if a in known))
    return _node(name, "call_function", rhs[:60], args, *common)


def _node(name, op, target, args, dtype, shape, stride, device, source, code, module=None) -> Node:
    """``Node(...)`` without the frozen dataclass's per-field ``object.__setattr__`` (a training
    step's graphs have ~30,000 nodes); the other fields at their defaults."""
    n = object.__new__(Node)
    d = n.__dict__
    d.update(_NODE_DEFAULTS)
    d.update(
        name=name, op=op, target=target, args=args, dtype=dtype, shape=shape, stride=stride, device=device,
        source=source, code=code, module=module,
    )  # fmt: skip
    return n


_NODE_DEFAULTS = {f.name: f.default for f in dataclasses.fields(Node) if f.default is not dataclasses.MISSING}


def module_of_name(name: str) -> str | None:
    parts = _PARAM_PATH.findall(name)
    if parts:
        return ".".join(parts)
    m = _ATTR_PATH.match(name)
    if m:
        return m.group(1).replace("_", ".")
    return None


def replace_node(n: Node, **kw) -> Node:
    """``dataclasses.replace`` for a Node, without its per-call field checks (a training
    step's graphs have ~10,000 nodes, each given its module twice); ``n`` itself where
    nothing changes."""
    old = n.__dict__
    for k, v in kw.items():
        if old[k] != v:
            break
    else:
        return n
    new = object.__new__(Node)
    new.__dict__.update(old)
    new.__dict__.update(kw)
    return new

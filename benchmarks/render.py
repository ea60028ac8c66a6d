"""How long the Graphviz view takes and how big its SVG is, first view and one module expanded.

    .venv/bin/python benchmarks/render.py

Graphs: synthetic GPT-2-like post-grad graphs built here (module paths like
``transformer.h.3.attn.c_attn``, parameters as module-less placeholders the way AOTAutograd
names them; the 10k one adds a backward pass) and the real GPT-2 graphs of the H100 trace
fixture.  Target (not asserted anywhere): first view <= 2 s and <= 5 MB.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import compiler  # noqa: E402
from compiler import Graph, Node  # noqa: E402
from explorer._graphviz import render_graph  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ACT = "[8, 1024, 768]"


class _Builder:
    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.seen: Counter[str] = Counter()

    def add(self, base: str, target: str, args, module: str | None, op="call_function", shape=ACT) -> str:
        name = base if not self.seen[base] else f"{base}_{self.seen[base]}"
        self.seen[base] += 1
        self.nodes.append(
            Node(
                name,
                op,
                name if op == "placeholder" else f"torch.ops.aten.{target}",
                tuple(args),
                "f32",
                shape,
                source="modeling_gpt2.py:273" if module else None,
                module=module,
            )
        )
        return name

    def param(self) -> str:
        return self.add("primals", "", (), None, op="placeholder", shape="[768]")

    def chain(self, x: str, module: str, targets: list[str], *extra: str) -> str:
        for k, t in enumerate(targets):
            x = self.add(t.split(".")[0], t, (x, *extra) if k == 0 else (x,), module)
        return x


LN = ["var_mean.correction", "getitem", "add.Tensor", "rsqrt.default", "sub.Tensor", "mul.Tensor"]
LN += ["mul.Tensor", "add.Tensor", "view.default"]
LINEAR = ["view.default", "addmm.default", "view.default", "clone.default"]
GELU = ["mul.Tensor", "pow.Tensor_Scalar", "mul.Tensor", "add.Tensor", "mul.Tensor", "tanh.default"]
GELU += ["add.Tensor", "mul.Tensor"]
ATTN = ["split.Tensor", "getitem", "view.default", "permute.default", "getitem", "view.default"]
ATTN += ["permute.default", "getitem", "view.default", "permute.default"]
ATTN += ["_scaled_dot_product_efficient_attention.default", "getitem", "permute.default", "view.default"]


def gpt2_like(layers: int, backward: bool = False) -> Graph:
    b = _Builder()
    ids = b.add("primals", "", (), None, op="placeholder", shape="[8, 1024]")
    x = b.add("embedding", "embedding.default", (b.param(), ids), "transformer.wte")
    pos = b.add("embedding", "embedding.default", (b.param(),), "transformer.wpe")
    x = b.add("add", "add.Tensor", (x, pos), "transformer")
    for i in range(layers):
        h = f"transformer.h.{i}"
        y = b.chain(x, f"{h}.ln_1", LN, b.param(), b.param())
        y = b.chain(y, f"{h}.attn.c_attn", LINEAR, b.param(), b.param())
        y = b.chain(y, f"{h}.attn", ATTN)
        y = b.chain(y, f"{h}.attn.c_proj", LINEAR, b.param(), b.param())
        x = b.add("add", "add.Tensor", (x, y), h)
        y = b.chain(x, f"{h}.ln_2", LN, b.param(), b.param())
        y = b.chain(y, f"{h}.mlp.c_fc", LINEAR, b.param(), b.param())
        y = b.chain(y, f"{h}.mlp.act", GELU)
        y = b.chain(y, f"{h}.mlp.c_proj", LINEAR, b.param(), b.param())
        x = b.add("add", "add.Tensor", (x, y), h)
    x = b.chain(x, "transformer.ln_f", LN, b.param(), b.param())
    out = b.add("mm", "mm.default", (x, b.param()), "lm_head")
    if backward:  # two gradient ops per forward op, same module, walking back
        grad = b.add("tangents", "", (), None, op="placeholder")
        for n in [n for n in b.nodes if n.op == "call_function"][::-1]:
            grad = b.add("mul", "mul.Tensor", (grad, n.name), n.module)
            grad = b.add("sum", "sum.dim_IntList", (grad,), n.module)
        out = grad
    b.add("output", "", (out,), None, op="output", shape=None)
    nodes = [Node(n.name, "output", "output", n.args) if n.op == "output" else n for n in b.nodes]
    return Graph("", tuple(nodes))


def measure(label: str, graph: Graph) -> None:
    t = time.perf_counter()
    first = render_graph(graph)
    s = time.perf_counter() - t
    print(f"{label:34} {first.nodes:6} {first.shown:6} {s:8.2f} {len(first.svg):11,}", end="")
    if not first.groups:
        print(f"  {'(not collapsed)':>28}")
        return
    path, count = max(first.groups, key=lambda g: g[1])
    t = time.perf_counter()
    exp = render_graph(graph, expand=(path,))
    s = time.perf_counter() - t
    print(f"  {path + f' ({count})':28} {exp.shown:6} {s:6.2f} {len(exp.svg):11,}")


def main() -> None:
    print(f"{'graph':34} {'nodes':>6} {'boxes':>6} {'seconds':>8} {'SVG bytes':>11}  ", end="")
    print(f"{'expand one module (nodes)':28} {'boxes':>6} {'sec':>6} {'SVG bytes':>11}")
    render_graph(gpt2_like(1))  # load the Graphviz plugins once
    for label, graph in [
        ("synthetic GPT-2, 7 layers", gpt2_like(7)),
        ("synthetic GPT-2, 28 layers", gpt2_like(28)),
        ("synthetic GPT-2, 54 layers fw+bw", gpt2_like(54, backward=True)),
        ("synthetic GPT-2, 140 layers", gpt2_like(140)),
    ]:
        measure(label, graph)
    trace = compiler.load_trace(ROOT / "tests/fixtures/traces/h100-torch211-gpt2.log.gz")
    st = trace.compiles[0].stages
    for label, graph in [
        ("GPT-2 fixture: capture", st.capture.graph),
        ("GPT-2 fixture: aot inference", st.autograd.inference),
        ("GPT-2 fixture: post-grad", st.decompose.post_grad[0].graph),
    ]:
        measure(label, graph)
        t = time.perf_counter()
        flat = render_graph(graph, threshold=10**9)
        s = time.perf_counter() - t
        print(f"{'  same, never collapsed':34} {flat.nodes:6} {flat.shown:6} {s:8.2f} {len(flat.svg):11,}")


def _code_of(graph: Graph) -> str:
    """Readable FX code like torch prints it: a source comment and a line per node."""
    lines = ["class GraphModule(torch.nn.Module):", "    def forward(self, x):"]
    for n in graph.nodes:
        lines.append(
            f"        # File: /models/gpt2.py:{100 + len(lines) % 300} in forward, code: {n.name} = ..."
        )
        lines.append(
            f'        {n.name}: "f32{n.shape or "[]"}[1, 1]cuda:0" = {n.target}({", ".join(n.args)})'
        )
    return "\n".join(lines)


def explorer_first_view(label: str, graph: Graph) -> None:
    """What the notebook explorer sends when it first opens a compile's capture stage:
    summary, breaks and recompiles tabs, and the capture view (graph, code, node table)."""
    import dataclasses

    from compiler._report import Capture, Compile, Report, Stages
    from explorer._widgets import Explorer

    g = dataclasses.replace(graph, code=_code_of(graph))
    cap = Capture(graph=g, guards="\n".join(f"| +- TENSOR_MATCH: guard {i}" for i in range(2000)))
    c = Compile(
        id="0/0", frame=0, name="forward", filename="gpt2.py", line=1, status="ok", stages=Stages(capture=cap)
    )
    report = Report(torch_version="2.x", device="cuda", compiles=(c,))
    t = time.perf_counter()
    app = Explorer(report)
    s = time.perf_counter() - t
    sent = sum(
        len(getattr(x, "value", "") or "") for x in _leaves(app) if isinstance(getattr(x, "value", None), str)
    )
    print(f"{label:34} {len(graph.nodes):6} {s:8.2f} s {sent:13,} bytes of HTML")


def _leaves(widget):
    kids = getattr(widget, "children", None)
    if not kids:
        yield widget
        return
    for k in kids:
        yield from _leaves(k)


if __name__ == "__main__":
    main()
    print()
    print(f"{'explorer, first view of a compile':34} {'nodes':>6} {'time':>10} {'sent to the browser':>20}")
    for n_layers, bw in ((7, False), (28, False), (54, True)):
        graph = gpt2_like(n_layers, backward=bw)
        explorer_first_view(f"synthetic GPT-2 ({len(graph.nodes)} nodes)", graph)

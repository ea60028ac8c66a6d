"""Where a benchmark's kernel time went, on the user's lines (``compiler.analysis.kernel_costs``).

Each profiled kernel is joined to the report: a Triton or C++ kernel by its name within its
graph (the profiler's "Torch-Compiled Region: <compile id>"), an extern kernel (cuBLAS, cuDNN,
an ATen op) by the op that launched it and its place among that op's calls in the graph,
matched in order to Inductor's provenance (``extern_kernels.mm:2``, ``:4``…). The kernel's
post-grad nodes come from the provenance (or, without it, torch's comment above the kernel);
a node's source line and module come from the graphs, a post-grad node without a module
taking its pre-grad node's. A kernel launched outside every region (autograd's engine runs a
compiled backward there) is its graph's Triton kernel where its name says one; an ATen op's
kernel there is a library kernel by its name or op, as eager's are. Torch-free: a saved
report answers as well as a live one.

A benchmark recorded before launches were kept (no ``Benchmark.launches``) joins its
per-kernel rows instead: an extern row then stands for every extern call of its op at once.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..model._benchtypes import Benchmark, Launch
from ..model._report import Report
from ..model._stagetypes import Kernel, Node
from ..parse._kernelnames import cpp_kernel_of_event, is_attention_kernel, is_library_kernel, is_reduction_op
from ..parse._provenance import KernelCall, Provenance, op_base, read_provenance
from ..parse._tritonsrc import read_triton_source
from ._backend import has_graph, inductor_ran

NO_LINE = "an input or a copy"  # a kernel placed in its graph whose nodes carry no source line
# the aten op the profiler names under an extern kernel's call, by the op the graph calls
_INNER_OPS = {
    "_efficient_attention_forward": "_scaled_dot_product_efficient_attention",
    "_flash_attention_forward": "_scaled_dot_product_flash_attention",
    "_cudnn_attention_forward": "_scaled_dot_product_cudnn_attention",
    "_efficient_attention_backward": "_scaled_dot_product_efficient_attention_backward",
    "_flash_attention_backward": "_scaled_dot_product_flash_attention_backward",
}
_MATMUL = {"mm", "addmm", "bmm", "baddbmm", "matmul", "linear", "addmv", "mv", "_int_mm", "_scaled_mm"}
_CONV = {"convolution", "_convolution", "cudnn_convolution", "conv2d", "conv1d", "conv3d"}


@dataclass(frozen=True)
class KernelCost:
    """One kernel of the compiled (or eager) run, joined to the model's lines."""

    name: str  # as profiled
    kind: str  # triton | cpp | extern | eager
    family: str  # matmul | convolution | attention | pointwise | reduction | template | other
    ms: float  # per call of the benchmarked function
    share: float  # of the run's summed kernel time
    launches: float  # per call
    compile_id: str | None = None
    kernel: str | None = None  # the report's kernel (Kernel.name)
    call: str | None = None  # provenance's key of the wrapper call ("extern_kernels.mm:2")
    nodes: tuple[str, ...] = ()  # post-grad nodes it computes
    lines: tuple[str, ...] = ()  # "file.py:34" of those nodes
    code: tuple[str, ...] = ()  # those lines' code
    modules: tuple[str, ...] = ()  # their nn.Module paths ("" the model itself)
    # a vendor library's kernel (cuBLAS, cuDNN, FlashAttention), by its name or its op wherever
    # it ran: compile does not touch it
    library: bool = False
    dtype: str | None = None  # of its output node, where known
    bytes: float | None = None  # moved per launch, where known
    flops: float | None = None  # per launch, where known
    unplaced: str = ""  # where no line is known, why (the line table's row for it)
    op: str | None = None  # the CPU op that launched it ("aten::bmm"), where profiled


def kernel_costs(report: Report, bench: Benchmark) -> tuple[KernelCost, ...]:
    """Each kernel of ``bench``'s compiled run joined to ``report``'s nodes and lines."""
    calls = max(bench.profiled_calls, 1)
    joiner = _Joiner(report)
    if bench.launch_rows:
        rows = [joiner.launch(r, calls) for r in bench.launch_rows]
    else:
        rows = [
            joiner.row(k.name, k.kind, k.compile_id, k.kernel, k.total_ms, k.calls, calls)
            for k in bench.kernel_rows
        ]
    return _with_shares(rows)


def eager_costs(bench: Benchmark) -> tuple[KernelCost, ...]:
    """The eager run's kernels by module (``Benchmark.eager_launches``)."""
    calls = max(bench.profiled_calls, 1)
    rows = [
        KernelCost(
            name=r.name,
            kind="eager",
            family=_family_of_op(op_base(r.op or r.name), r.name),
            ms=r.total_ms / calls,
            share=0.0,
            launches=r.calls / calls,
            modules=(r.module,) if r.module is not None else (),
            library=_library(r.name, r.op),
            op=r.op,
        )
        for r in bench.eager_launch_rows
    ]
    return _with_shares(rows)


def _with_shares(rows: list[KernelCost]) -> tuple[KernelCost, ...]:
    total = sum(r.ms for r in rows) or 1.0
    out = [dataclasses.replace(r, share=r.ms / total) for r in rows]
    return tuple(sorted(out, key=lambda r: (-r.ms, r.name)))


class _Joiner:
    def __init__(self, report: Report):
        self.report = report
        self.compiles = {c.id: c for c in report.compiles}
        self.backward = _has_backward(report)
        self.prov: dict[str, Provenance] = {}
        self.nodes: dict[str, dict[str, Node]] = {}
        self.pre: dict[str, dict[str, Node]] = {}
        self.generated = {k.name: k.language for k in report.kernels if k.language in ("triton", "cpp")}
        for c in report.compiles:
            fuse, dec, cap = c.stages.fuse, c.stages.decompose, c.stages.capture
            self.prov[c.id] = read_provenance(fuse.provenance if fuse else None)
            nodes: dict[str, Node] = {}
            for rg in dec.post_grad if dec else ():  # forward, then backward
                for n in rg.graph.nodes:
                    # the backward's input of a saved activation (a placeholder named as the
                    # forward's node) never hides the node that computes it
                    if n.name not in nodes or nodes[n.name].op == "placeholder":
                        nodes[n.name] = n
            self.nodes[c.id] = nodes
            self.pre[c.id] = {n.name: n for n in (cap.graph.nodes if cap and cap.graph else ())}

    def launch(self, r: Launch, calls: int) -> KernelCost:
        kernel = None
        name = cpp_kernel_of_event(r.name) or r.name
        kind = r.kind
        if kind == "eager" and name in self.generated:
            # a compiled graph's kernel launched outside its "Torch-Compiled Region": autograd's
            # engine runs the backward graph; it is that graph's kernel, found by its name
            kind = self.generated[name]
        if kind in ("triton", "cpp"):
            kernel = name
        return self.row(r.name, kind, r.compile_id, kernel, r.total_ms, r.calls, calls, r.op, r.op_index)

    def row(
        self, name, kind, compile_id, kernel, total_ms, launches, calls, op=None, op_index=None
    ) -> KernelCost:
        ids = [i.strip() for i in (compile_id or "").split(",") if i.strip()] or list(self.compiles)
        if kernel is not None and not any(self._kernel_call(i, kernel) for i in ids):
            # a graph's kernel run inside another's region (a backward that autograd's engine
            # runs while a later graph's frame calls loss.backward()): its own graph, by name
            ids = list(self.compiles)
        call, nodes, cid = None, [], None
        for i in ids:
            if kernel is not None:
                kc = self._kernel_call(i, kernel)
                if kc is None:
                    continue
            else:
                kc = self._extern_call(i, op or name, op_index)
                if kc is None:
                    continue
            cid = i if cid is None else f"{cid}, {i}"
            for k in kc:
                call = k.key if call is None else f"{call}, {k.key}"
                nodes += [(i, n) for n in k.nodes]
        found = [self._node(i, n) for i, n in nodes]
        found = [(i, n) for i, n in found if n is not None]
        lines = _unique(n.source for _, n in found if n.source)
        code = _unique(n.code for _, n in found if n.code)
        modules = _unique(self._module(i, n) for i, n in found)
        out_node = next((n for _, n in found if n.dtype), None)
        fam = _family(kind, name, op, [n.target for _, n in found])
        work = self._work(kernel, cid or compile_id, [n for _, n in found])
        return KernelCost(
            name=name,
            kind=kind,
            family=fam,
            ms=total_ms / calls,
            share=0.0,
            launches=launches / calls,
            compile_id=cid or compile_id,
            kernel=kernel,
            call=call,
            nodes=tuple(n.name for _, n in found),
            lines=lines,
            code=code,
            modules=tuple(m for m in modules if m is not None),
            # a library kernel by its name or op wherever it ran, as eager's are judged: a
            # compiled backward's cuBLAS call that autograd's engine runs outside every region
            # ("eager" here) is no generated kernel
            library=kind in ("extern", "eager") and _library(name, op),
            dtype=out_node.dtype if out_node else None,
            bytes=work[0],
            flops=work[1],
            unplaced="" if lines else self._unplaced(kind, cid, compile_id, found),
            op=op,
        )

    def _unplaced(self, kind: str, cid: str | None, compile_id: str | None, found) -> str:
        """Why a kernel has no line: what torch's records leave out."""
        if found:
            return NO_LINE
        if compile_id is None and kind == "eager":
            if not self.backward:  # no backward words for a program without one
                return "outside the compiled graphs (eager code)"
            return "outside the compiled graphs (eager code, or autograd's engine running a backward)"
        ids = [i.strip() for i in (compile_id or "").split(",") if i.strip()]
        graphs = [self.compiles[i] for i in ids if i in self.compiles and has_graph(self.compiles[i])]
        if cid is None and graphs and not any(inductor_ran(c) for c in graphs):
            return (
                f"run inside [{compile_id}], a graph no Inductor compile made (a backend such as aot_eager "
                "runs its ATen ops as they are): torch logs no kernel-to-line map for it"
            )
        if cid is None and ids and not any(i in self.compiles for i in ids):
            return f"run inside [{compile_id}], a compile this report does not hold"
        if cid is None and ids and not any(self.report.kernels_of(i) for i in ids):
            if not self.backward:  # no backward words for a program without one
                return f"run inside [{compile_id}], a graph with no kernels of its own, which torch's provenance does not place"
            return (
                f"run inside [{compile_id}], a graph with no kernels of its own: a backward that "
                "autograd's engine ran there, which torch's provenance does not place"
            )
        return "a kernel whose nodes torch's provenance did not log"

    def _work(
        self, kernel: str | None, cid: str | None, found: list[Node]
    ) -> tuple[float | None, float | None]:
        """Bytes and FLOPs per launch: Inductor's own counts for its kernels (written with
        ``benchmark_kernel=True``), the operands' shapes for one extern matmul."""
        if kernel is not None:
            k = next(
                (k for i in (cid or "").split(", ") for k in self.report.kernels_of(i) if k.name == kernel),
                None,
            )
            t = read_triton_source(k.source) if k is not None and k.language == "triton" else None
            if t is None or t.num_gb is None:
                return None, None
            return t.num_gb * 1e9, float(t.flops) if t.flops else None
        mms = [n for n in found if op_base(n.target) in ("mm", "addmm", "bmm", "baddbmm")]
        if not mms or cid is None or ", " in cid:
            return None, None
        # one launch per matmul: a row of several (an older per-kernel row) averages them
        work = [matmul_work(n, self.nodes[cid]) for n in mms]
        if any(b is None or f is None for b, f in work):
            return None, None
        return sum(b for b, _ in work) / len(work), sum(f for _, f in work) / len(work)

    def _kernel_call(self, cid: str, kernel: str) -> list[KernelCall] | None:
        if cid not in self.prov:
            return None
        calls = [k for k in self.prov[cid].calls if k.name == kernel]
        if calls:
            return calls
        k = next((k for k in self.report.kernels_of(cid) if k.name == kernel), None)
        return [KernelCall(kernel, kernel, None, k.nodes)] if isinstance(k, Kernel) else None

    def _extern_call(self, cid: str, op: str, index: int | None) -> list[KernelCall] | None:
        if cid not in self.prov:
            return None
        base = op_base(op)
        calls = [k for k in self.prov[cid].calls if k.extern and k.op == base]
        if not calls and base in _INNER_OPS:  # SDPA's kernel, under the op the graph calls
            calls = [k for k in self.prov[cid].calls if k.extern and k.op == _INNER_OPS[base]]
        if not calls and index is None and is_library_kernel(op):
            # an older per-kernel row names the library kernel, not its op: every library call
            calls = [k for k in self.prov[cid].calls if k.extern and _family_of_op(k.op, "") != "pointwise"]
        if not calls:
            return None
        if index is None:
            return calls  # a per-kernel row of an older benchmark: every call of that op
        return [calls[index - 1]] if index <= len(calls) else None

    def _node(self, cid: str, name: str) -> tuple[str, Node | None]:
        return cid, self.nodes[cid].get(name) or self.pre[cid].get(name)

    def _module(self, cid: str, n: Node) -> str | None:
        if n.module is not None:
            return n.module
        for pre in self.prov[cid].post_to_pre.get(n.name, ()):
            p = self.pre[cid].get(pre)
            if p is not None:
                return p.module or ""
        return "" if n.source else None


def _has_backward(report: Report) -> bool:
    """Does the report hold a backward graph: a compile's AOTAutograd backward, or Compiled
    Autograd's graph?"""
    return any(
        c.compiled_autograd is not None
        or (c.stages.autograd is not None and c.stages.autograd.backward is not None)
        for c in report.compiles
    )


def _unique(items) -> tuple:
    out: list = []
    for x in items:
        if x not in out:
            out.append(x)
    return tuple(out)


def _library(name: str, op: str | None) -> bool:
    return is_library_kernel(name) or op_base(op or "") in _MATMUL | _CONV


def _family_of_op(base: str, name: str) -> str:
    if base in _MATMUL:
        return "matmul"
    if base in _CONV:
        return "convolution"
    if "attention" in base or is_attention_kernel(name):
        return "attention"
    if is_reduction_op(base):
        return "reduction"
    return "pointwise" if base else "other"


def _family(kind: str, name: str, op: str | None, targets: list[str]) -> str:
    if kind == "triton":
        for prefix, fam in (("triton_tem_", "template"), ("triton_poi_", "pointwise")):
            if name.startswith(prefix):
                return fam
        return "reduction" if name.startswith(("triton_per_", "triton_red_")) else "other"
    if kind == "extern" or (kind == "eager" and op):  # an ATen op's kernel, in a region or not
        bases = [op_base(t) for t in targets] if op is None else [op_base(op)]
        fams = [_family_of_op(b, name) for b in bases] or [_family_of_op("", name)]
        return next((f for f in fams if f != "pointwise"), fams[0])
    fams = {_family_of_op(op_base(t), "") for t in targets}
    for fam in ("matmul", "convolution", "attention", "reduction", "pointwise"):
        if fam in fams:
            return fam
    return "other"


_ITEMSIZE = {
    "f64": 8,
    "f32": 4,
    "tf32": 4,
    "bf16": 2,
    "f16": 2,
    "i64": 8,
    "i32": 4,
    "i8": 1,
    "u8": 1,
    "f8e4m3fn": 1,
}


def _dims(shape: str | None) -> list[int] | None:
    if not shape:
        return None
    try:
        return [int(d) for d in shape.strip("[]").split(",") if d.strip()]
    except ValueError:  # a symbolic size
        return None


def matmul_work(n: Node, nodes: dict[str, Node]) -> tuple[float | None, float | None]:
    """(bytes, FLOPs) of one mm / addmm / bmm / baddbmm node from its operands' shapes:
    2·M·N·K FLOPs (times the batch), every operand read once and the result written once."""
    base = op_base(n.target)
    operands = [nodes.get(a) for a in n.args]
    if base in ("addmm", "baddbmm"):
        operands = operands[1:]
    out = _dims(n.shape)
    first = _dims(operands[0].shape) if operands and operands[0] is not None else None
    size = _ITEMSIZE.get(n.dtype or "")
    if not out or not first or size is None or len(out) < 2:
        return None, None
    batch = out[0] if len(out) == 3 else 1
    m, nn, k = out[-2], out[-1], first[-1]
    flops = 2.0 * batch * m * nn * k
    moved = size * batch * (m * k + k * nn + m * nn)
    return float(moved), flops

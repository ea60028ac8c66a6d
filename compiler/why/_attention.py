"""Attention that the compiled graph runs another way than eager: eager's profile shows a fused
SDPA kernel (flash, mem-efficient, cuDNN: the ATen op that launched it), while the compiled
graph has no fused attention op and its post-grad nodes of the ``scaled_dot_product_attention``
call are SDPA's math decomposition (matmuls and a softmax the graph computes itself). An HF
encoder that builds an all-true mask while Dynamo traces it, where eager passes none, is one
way there. The compiled side's time is that of the kernels computing those nodes: the
generated kernels whose nodes are the call's (a backward's softmax and dropout backward
too: their nodes carry the call's line), and the extern calls of an op (``aten::bmm``) every
post-grad node of which in the graph is the call's: in the graph's region, or outside every
region where the compile's backward calls that op (autograd's engine runs a compiled backward
outside the "Torch-Compiled Region", so the profile places its extern kernels in no graph). Where the decomposition upcasts
bf16/fp16 inputs to fp32 (the math backend's default), the evidence says so. Where Dynamo's graph
passes a mask, the advice is about the mask (no code fix: see ``MASK_ADVICE``). Torch-free."""

from __future__ import annotations

from ..model._benchtypes import Benchmark
from ..model._report import Report
from ..model._stagetypes import Node
from ..model._verdicttypes import Cause
from ..parse._provenance import op_base
from ._gputime import KernelCost

# the ATen ops that launch a fused attention kernel, by the backend's name
FUSED = (
    ("_cudnn_attention", "cuDNN"),
    ("_flash_attention", "flash"),
    ("_efficient_attention", "mem-efficient"),
)
SDPA_CALL = "scaled_dot_product_attention("  # the user's line that made a node
LOW = ("bf16", "f16")
# no code fix: keeping math SDPA in bf16 (torch.backends.cuda.allow_fp16_bf16_reduction_math_sdp)
# did not help BERT-base on an H100 (23.4 ms against 23.2 ms, notebooks/data/check_bert_amp.py);
# there torch refused every fused kernel for the mask ("All fused kernels require the last dimension
# of the input to have stride 1 ... Attn_mask.stride(-1): 0": an expanded all-true mask)
MASK_ADVICE = (
    "a fused SDPA kernel needs the mask's last dimension contiguous (stride 1); an expanded mask "
    "(stride 0, as transformers' all-true mask is) sends SDPA to its math path: pass no mask where "
    "none is needed, or a contiguous one"
)


def backend(op: str | None) -> str | None:
    """The fused attention backend an ATen op runs ("aten::_cudnn_attention_forward": cuDNN)."""
    return next((name for key, name in FUSED if op and key in op), None)


def attention(report: Report, bench: Benchmark, costs: list[KernelCost], share) -> tuple[Cause, set] | None:
    """The cause, and the ids of ``costs`` it takes (their time is the cause's, no longer the
    library's or the generated kernels'); None where eager ran no fused attention or the
    compiled graphs still call one."""
    calls = max(bench.profiled_calls, 1)
    eager: dict[tuple[str, str], float] = {}
    for r in bench.eager_launch_rows:
        if (name := backend(r.op)) is not None:
            eager[(name, r.op or "")] = eager.get((name, r.op or ""), 0.0) + r.total_ms / calls
    if not eager:
        return None
    ids = set(bench.compile_ids) or {c.id for c in report.compiles}
    graphs = {c.id: _post_grad(c) for c in report.compiles if c.id in ids}
    if any(backend(n.target) or "_scaled_dot_product_" in n.target for g in graphs.values() for n in g):
        return None
    mine = {cid: {n.name: n for n in g if n.code and SDPA_CALL in n.code} for cid, g in graphs.items()}
    # a generated kernel's nodes may be named as Dynamo's graph names them
    pre = {c.id: _captured(c) for c in report.compiles if c.id in ids}
    if not any(mine.values()):
        return None
    taken = {
        id(k)
        for k in costs
        if k.compile_id in mine and set(k.nodes) & (set(mine[k.compile_id]) | pre[k.compile_id])
    }
    extern_ms, extern_n, ops = 0.0, 0.0, []
    backward = {c.id: _backward_externs(c) for c in report.compiles if c.id in ids}
    for k in costs:
        op = _extern_op(k)
        # run outside every region: autograd's engine running the backward graphs that call it
        cids = [k.compile_id] if k.kind == "extern" else [i for i, b in backward.items() if op in b]
        if op is None or not cids or any(i not in mine for i in cids):
            continue
        same = [(i, n) for i in cids for n in graphs[i] if n.target.split(".")[-2:-1] == [op]]
        if same and all(n.name in mine[i] for i, n in same):
            taken.add(id(k))
            extern_ms += k.ms
            extern_n += 0.0 if k.name.startswith("Memset") else k.launches  # cuBLAS's workspace memsets
            ops.append(op)
    if not taken:
        return None
    taken_costs = [k for k in costs if id(k) in taken]
    ms = sum(k.ms for k in taken_costs)
    gen = [k for k in taken_costs if k.kind in ("triton", "cpp")]
    nodes = [n for g in mine.values() for n in g.values()]
    mm = [n for n in nodes if n.target.split(".")[-2:-1] == ["bmm"] and n.dtype]
    mm_dtype = mm[0].dtype if mm and len({n.dtype for n in mm}) == 1 else None
    upcast = _upcasts(nodes, graphs)
    e_ms = sum(eager.values())
    (e_name, e_op), _ = max(eager.items(), key=lambda kv: kv[1])
    what = f"{len(mm)} {mm_dtype + ' ' if mm_dtype else ''}bmm" if mm else "matmuls"
    # the title groups a census's rows; the first evidence, with the figures, is the headline's
    title = "attention: SDPA's math decomposition where eager runs a fused kernel"
    ev = [
        f"compiled runs SDPA's math decomposition ({what} and a softmax) {ms:.4g} ms a call "
        f"where eager runs {e_name} attention ({e_op.removeprefix('aten::')}) {e_ms:.4g} ms"
    ]
    ev += [
        f"eager: {e_op} {v:.4g} ms a call ({name})"
        for (name, e_op), v in sorted(eager.items(), key=lambda kv: -kv[1])
    ]
    if extern_n:
        ev.append(
            f"compiled: {extern_n:.0f} {'/'.join(dict.fromkeys(ops))} calls a call, {extern_ms:.4g} ms "
            f"({_kernel_words(taken_costs)})"
        )
    if gen:
        top = max(gen, key=lambda k: k.ms)
        ev.append(
            f"compiled: {len(gen)} generated kernels, {sum(k.ms for k in gen):.4g} ms; {top.name}: {top.ms:.4g} ms"
        )
    if upcast:
        ev.append(
            f"the decomposition casts the {'/'.join(upcast)} query, key and value to fp32 (math SDPA's default)"
        )
    mask = _mask(report, ids)
    if mask:
        ev.append(mask)
    return Cause("attention", title, ms, share(ms), tuple(ev), None, MASK_ADVICE if mask else None), taken


def _post_grad(c) -> list[Node]:
    dec = c.stages.decompose
    return [n for rg in (dec.post_grad if dec else ()) for n in rg.graph.nodes]


def _captured(c) -> set[str]:
    cap = c.stages.capture
    nodes = cap.graph.nodes if cap is not None and cap.graph is not None else ()
    return {n.name for n in nodes if n.code and SDPA_CALL in n.code}


def _extern_op(k: KernelCost) -> str | None:
    """The ATen op of an extern call, as the post-grad graph's targets end ("aten::bmm": bmm):
    one in a graph's region, or one outside every region (``eager``: where a compiled backward
    calls that op, autograd's engine ran it)."""
    inside = k.kind == "extern" or (k.kind == "eager" and k.compile_id is None)
    if not inside or not k.op or not k.op.startswith("aten::"):
        return None
    return k.op.removeprefix("aten::")


def _backward_externs(c) -> set[str]:
    """The ATen ops a compile's backward calls as extern kernels (``extern_kernels.bmm``):
    autograd's engine runs the backward outside every "Torch-Compiled Region", so the profile
    places its extern kernels in no graph."""
    gen = c.stages.codegen
    outputs = [o for o in (gen.output_code if gen else ()) if o.role == "backward"]
    return {op_base(x) for o in outputs for x in o.extern_calls}


def _kernel_words(costs: list[KernelCost]) -> str:
    lib = [k for k in costs if k.kind == "extern"]
    names = list(dict.fromkeys(k.name for k in lib))
    return (
        f"{len(names)} library kernel{'s' * (len(names) != 1)}: {names[0][:60]}"
        if names
        else "no kernel named"
    )


def _upcasts(nodes: list[Node], graphs: dict) -> list[str]:
    """The low precisions the call's nodes cast up to fp32 (a convert_element_type to f32 of
    a bf16/fp16 node)."""
    by_name = {n.name: n for g in graphs.values() for n in g}
    out = []
    for n in nodes:
        if "convert_element_type" in n.target and n.dtype == "f32" and n.args:
            src = by_name.get(n.args[0])
            if src is not None and src.dtype in LOW and src.dtype not in out:
                out.append(src.dtype)
    return out


def _mask(report: Report, ids: set) -> str | None:
    """Where Dynamo's graph gives the SDPA call a mask: its ``attn_mask`` argument's line."""
    for c in report.compiles:
        cap = c.stages.capture
        if c.id not in ids or cap is None or cap.graph is None:
            continue
        nodes = {n.name: n for n in cap.graph.nodes}
        for n in cap.graph.nodes:
            if "scaled_dot_product_attention" in n.target and len(n.args) > 3:
                m = nodes.get(n.args[3])
                if m is not None:
                    at = f" (made at {m.source})" if m.source else ""
                    dims = f" {m.dtype}{m.shape}" if m.dtype and m.shape else ""
                    return (
                        f"Dynamo's graph passes an attention mask{dims}{at} to scaled_dot_product_attention"
                    )
    return None

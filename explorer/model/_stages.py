"""The stage views of one compile (part of the view model in ``model/_view.py``): which graphs,
tables and code each of the five stages shows; and the compile's own facts beside them
(``compile_blocks``: stage times, caches, torch's traceback and metrics)."""

from __future__ import annotations

import dataclasses
import json

from compiler import Report
from compiler.analysis import without_local_scope
from compiler.types import STAGES, Compile, Graph

from ..base._phasenames import names_said, phase_label, shown_phases
from ..base._types import Block, CodeBlock, GraphBlock, LinesBlock, StageView, Table
from ._autotune import autotune_blocks
from ._censuspairs import census_pairs, read_post_to_pre
from ._export import export_run_blocks
from ._guards import guard_tables
from ._kernels import kernel_blocks
from ._kerneltable import costliest, extern_nodes_of, extern_table, kernels_table, stack_lines
from ._pipelines import autograd_blocks, flex_blocks
from ._sideeffects import side_effects_table
from ._speed import compile_rows, key_blocks
from ._summary import no_kernels_note, secs, where, where_source

KERNEL_COLORS = (
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
)  # fmt: skip


NO_BACKWARD = (
    "no backward: AOTAutograd traced an inference graph (no input needed a gradient, or the"
    " call ran under torch.no_grad / inference_mode)"
)
TABLE_ROWS = 1000  # node-table rows shown; the graph and its code hold the rest


def _nodes_table(title: str, g: Graph) -> Table:
    nodes = [n for n in g.nodes if n.op != "output"]
    if len(nodes) > TABLE_ROWS:
        title = f"{title} (first {TABLE_ROWS} of {len(nodes)})"
    rows = tuple(
        (n.name, n.op, n.target, _meta(n), where_source(n.source), n.module or "") for n in nodes[:TABLE_ROWS]
    )
    return Table(title, ("node", "op", "target", "dtype/shape", "source", "module"), rows)


def _meta(n) -> str:
    """A node's tensor as torch's graph code annotates it: ``f32[4, 8][8, 1]cuda:0``."""
    stride = n.stride or ""
    return f"{n.dtype or ''}{n.shape or ''}{stride}{n.device or ''}"


def _census_table(before: dict[str, int], after: dict[str, int]) -> Table:
    rows = [(op, str(k), "") for op, k in before.items()] + [(op, "", str(k)) for op, k in after.items()]
    return Table(
        "op totals: Dynamo graph (torch level) vs post-grad graphs (core ATen)",
        ("op", "before", "after"),
        tuple(rows),
    )


# the fuse stage without Inductor's IR before and after fusion: how to get it
NO_FUSION_IR = (
    "Inductor's IR before and after fusion was not recorded: compiler.recording(fusion_ir=True), "
    "`pt2-explorer record --fusion-ir` or `%%compile --fusion-ir` keep it (it costs 5-15% of the "
    "compile's time); TORCH_TRACE logs do not carry it"
)
# ... and without its fusion decisions
NO_FUSION_LOG = (
    "Inductor's fusion decisions were not recorded: compiler.recording(fusion_logs=True), "
    "`pt2-explorer record --fusion-log` or `%%compile --fusion-log` keep them (about 8% of a "
    "training step's compile); TORCH_TRACE logs do not carry them"
)


def stage_view(report: Report, c: Compile, stage: str) -> StageView:
    """The stage's view; each of its graphs opens on the compile's most expensive kernel."""
    sv = _stage_view(report, c, stage)
    if not report.kernels_of(c.id) or not any(isinstance(b, GraphBlock) for b in sv.blocks):
        return sv
    return dataclasses.replace(sv, blocks=tuple(_focused(report, c, b) for b in sv.blocks))


def _focused(report: Report, c: Compile, b: Block) -> Block:
    if not isinstance(b, GraphBlock):
        return b
    role = next((r for r in ("backward", "inference", "forward") if r in b.title), None)
    role = "forward" if b.title.startswith("Dynamo") else role  # the joint graph: either
    focus, why = costliest(report, c, b.graph, role)
    return dataclasses.replace(b, focus=focus, focus_why=why)


def _stage_view(report: Report, c: Compile, stage: str) -> StageView:
    st = getattr(c.stages, stage)
    if st is None:
        why = "did not run"
        if c.status != "ok" and c.failed_stage == stage:
            why = f"failed here: {c.error}"
        elif c.status != "ok" and c.failed_stage:
            why = f"not reached: the compile failed in {c.failed_stage}"
        elif c.cache.get("fx_graph") == "hit" and stage in ("fuse", "autograd"):
            why = "skipped: Inductor's FX graph cache hit"
        elif stage != "capture" and captured_nothing(c):
            why = "Dynamo captured no operations in this frame: nothing to compile"
        elif stage != "capture" and c.stages.capture is not None and c.stages.autograd is None:
            why = "not run by this backend (Inductor runs autograd→codegen)"
        elif stage != "autograd" and c.stages.autograd is not None and _no_inductor(c):
            why = "not run by this backend (AOTAutograd ran; Inductor runs decompose→codegen)"
        return StageView(stage, (), note=why)
    blocks: list[Block] = []
    if stage == "capture":
        blocks += autograd_blocks(c)
        blocks += export_run_blocks(report, c)
        blocks += flex_blocks(report, c)
        if st.graph:
            blocks += [
                GraphBlock("Dynamo graph", st.graph),
                CodeBlock("Dynamo graph (code)", "python", st.graph.code),
            ]
            blocks.append(_nodes_table("nodes", st.graph))
        if st.guards:
            grouped = guard_tables(report, c)  # their title says torch's count
            counted = f" ({st.guard_count} guards torch counted)" if st.guard_count and not grouped else ""
            blocks += grouped
            blocks.append(CodeBlock(f"guards as torch prints them{counted}", "text", st.guards))
        if st.symbols:
            blocks.append(_symbols_table(st))
        if st.side_effects:
            blocks.append(side_effects_table(st.side_effects))
        blocks += _texts(
            ("shape guards", "\n".join(st.shape_guards)),
            ("why Dynamo restarted the analysis", "\n".join(st.restarts)),
        )
    elif stage == "autograd":
        origins = _origins(c)
        for name in ("joint", "forward", "backward", "inference"):
            g = getattr(st, name)
            if g is not None:
                blocks += [
                    GraphBlock(f"{name} graph", g, origins=origins, backward=name == "backward"),
                    CodeBlock(f"{name} graph (code)", "python", g.code),
                ]
        if st.saved_tensors:
            rows = tuple((s.name, s.dtype or "", s.shape or "", _bytes(s.bytes)) for s in st.saved_tensors)
            total = sum(s.bytes or 0 for s in st.saved_tensors)
            blocks.append(
                Table(f"saved for backward ({_bytes(total)})", ("tensor", "dtype", "shape", "bytes"), rows)
            )
        blocks += _texts(("forward metadata (AOTAutograd's ViewAndMutationMeta)", st.fw_metadata))
        if st.inference is not None and st.backward is None and st.joint is None:
            return StageView(stage, tuple(blocks), note=NO_BACKWARD)
    elif stage == "decompose":
        pairs = census_pairs(c, read_post_to_pre(c))
        blocks += [pairs] if pairs else []
        blocks.append(_census_table(st.ops_before, st.ops_after))
        for rg in st.post_grad:
            blocks += [
                GraphBlock(
                    f"post-grad graph ({rg.role})",
                    rg.graph,
                    origins=_origins(c),
                    backward=rg.role == "backward",
                ),
                CodeBlock(f"post-grad ({rg.role}, code)", "python", rg.graph.code),
            ]
        if st.pre_grad_before:
            blocks.append(CodeBlock("pre-grad graph", "python", st.pre_grad_before.code))
        if st.pre_grad_after:
            blocks.append(
                CodeBlock("pre-grad graph after the pre-grad passes", "python", st.pre_grad_after.code)
            )
        for rg in st.post_grad_before:
            blocks.append(
                CodeBlock(f"post-grad ({rg.role}) before the post-grad passes", "python", rg.graph.code)
            )
    elif stage == "fuse":
        blocks += autotune_blocks(c)
        # one colour per kernel; one coloured graph per role (forward / backward kernels name
        # the nodes of different graphs)
        by_role: dict[str, dict[str, str]] = {}
        kernel_of: dict[str, dict[str, str]] = {}
        rows = []
        for i, k in enumerate(k for k in report.kernels_of(c.id) if k.nodes):
            color = KERNEL_COLORS[i % len(KERNEL_COLORS)]
            rows.append((k.role, k.name, ", ".join(k.nodes), color))
            for n in k.nodes:
                by_role.setdefault(k.role, {}).setdefault(n, color)
                kernel_of.setdefault(k.role, {}).setdefault(n, k.name)
        if rows:
            blocks.append(
                Table(
                    "kernels and the graph nodes fused into them",
                    ("role", "kernel", "nodes", "colour"),
                    tuple(rows),
                    kinds=("", "code", "nodes", "colour"),
                )
            )
        for n, call in extern_nodes_of(c).items():  # the forward's: torch maps the backward's none
            for role in (r for r in by_role if r != "backward"):
                kernel_of.setdefault(role, {}).setdefault(n, call)
        for role, colors in by_role.items():
            target = fuse_graph(c, set(colors))
            if target is not None:
                blocks.append(
                    GraphBlock(
                        f"{role} graph coloured by kernel",
                        target,
                        colors,
                        kernels=kernel_of[role],
                        backward=role == "backward",
                    )
                )
        for i, ir in enumerate(st.ir_pre_fusion):
            blocks.append(CodeBlock(f"IR before fusion #{i + 1}", "text", ir))
        for i, ir in enumerate(st.ir_post_fusion):
            blocks.append(CodeBlock(f"IR after fusion #{i + 1}", "text", ir))
        if st.kernel_nodes:
            rows = tuple((k.kernel, ", ".join(k.nodes), ", ".join(k.aten_ops)) for k in st.kernel_nodes)
            blocks.append(Table("torch's kernel comments", ("kernel", "nodes", "ATen ops"), rows))
        blocks += _texts(("fusion log", "\n".join(st.fusion_log)), ("provenance", st.provenance))
        missing = [NO_FUSION_IR] if not st.ir_pre_fusion and not st.ir_post_fusion else []
        missing += [NO_FUSION_LOG] if not st.fusion_log else []
        if missing:
            return StageView(stage, tuple(blocks), note="; ".join(missing))
    elif stage == "codegen":
        blocks += flex_blocks(report, c) + autotune_blocks(c, report)
        blocks += [t for t in (kernels_table(report, c, _kernel_lines(report, c)), extern_table(c)) if t]
        for k in report.kernels_of(c.id):
            blocks += kernel_blocks(k)
        for oc in st.output_code:
            blocks.append(CodeBlock(f"{oc.role} wrapper module", "python", oc.code))
        files = tuple((f"{oc.role} wrapper module", oc.path) for oc in st.output_code if oc.path)
        names = (("kernels it defines", ", ".join(st.kernel_names)),) if st.kernel_names else ()
        if files or names:
            blocks.append(Table("output code", ("", ""), files + names))
        blocks += _texts(
            ("fx_graph_runnable: the graph Inductor got, as a script", st.fx_graph_runnable),
            ("fx_graph_runnable of the backward graph", st.fx_graph_runnable_backward),
        )
        if not report.kernels_of(c.id):
            return StageView(stage, tuple(blocks), note=no_kernels_note(c))
    return StageView(stage, tuple(blocks))


def _symbols_table(st) -> Table:
    """The sizes this compile made symbols (dynamic dimensions) and the user line of each."""
    rows = tuple(
        (
            s.symbol,
            without_local_scope(s.source) or "?",
            s.vr or "",
            s.val or "",
            where(s.user_stack[-1].filename, s.user_stack[-1].line) if s.user_stack else "",
        )
        for s in st.symbols
    )
    return Table("dynamic dimensions", ("symbol", "dimension", "range", "seen", "created at"), rows)


def _texts(*titled: tuple[str, str | None]) -> list[Block]:
    """A text block for each (title, text) that holds something."""
    return [CodeBlock(title, "text", text) for title, text in titled if text]


def compile_blocks(c: Compile, report=None) -> tuple[Block, ...]:
    """The compile's own facts, beside its stages: each stage's time, the caches it used,
    whether it installed a cache entry; torch's traceback of a failure; its compilation metrics."""
    times = ", ".join(
        f"{s} {secs(st.time_s)}"
        for s in STAGES
        if (st := getattr(c.stages, s)) is not None and st.time_s is not None
    )
    rows = [
        ("compile time", secs(c.compile_time_s)),
        ("stage times", _stage_sum(c, times)),
        ("caches", ", ".join(f"{k} {v}" for k, v in c.cache.items()) or _no_cache(c)),
        ("cache entry", "installed" if c.cache_entry else "none: later calls do not run this compile's code"),
        *compile_rows(c, report),  # report: whether a fill-in may be offered
    ]
    blocks: list[Block] = [Table("compile", ("", ""), tuple(rows))]
    blocks += _texts(("torch's traceback", c.traceback))
    blocks += key_blocks(c)
    said = names_said(c)
    if c.phases:  # as a tree: each phase's children under it (--view time draws them)
        lines = [
            f"{'  ' * p.depth}{phase_label(p.name, said)}: {secs(p.duration_s)}" for p in shown_phases(c)
        ]
        named = {p.name for p in c.phases}
        other = sorted(((n, t) for n, t in c.phase_times_s.items() if n not in named), key=lambda kv: -kv[1])
        if other:  # torch's totals of phases that have no span of their own
            lines += ["(torch's totals of phases without a span)"]
            lines += [f"{phase_label(n, said)}: {secs(t)}" for n, t in other]
        blocks.append(CodeBlock("time per phase (each phase's parts under it)", "text", "\n".join(lines)))
    elif c.phase_times_s:
        lines = (
            f"{phase_label(name, said)}: {secs(t)}"
            for name, t in sorted(c.phase_times_s.items(), key=lambda kv: -kv[1])
        )
        blocks.append(CodeBlock("time per phase", "text", "\n".join(lines)))
    if c.metrics:
        lines = tuple(f"{k}: {json.dumps(v, default=str)}" for k, v in sorted(c.metrics.items()))
        blocks.append(LinesBlock("compilation metrics", lines))  # compiles share most of them
    return tuple(blocks)


def _stage_sum(c: Compile, times: str) -> str:
    """The stages' times and what they add up to, said as a part of the compile's time (the
    rest ran between and around the stages: guards, bytecode, Dynamo's restarts)."""
    if not times:
        return "-"
    total = sum(
        st.time_s for s in STAGES if (st := getattr(c.stages, s)) is not None and st.time_s is not None
    )
    whole = f" of the compile's {secs(c.compile_time_s)}" if c.compile_time_s else ""
    return f"{times} ({secs(total)} in these stages{whole})"


def _no_cache(c: Compile) -> str:
    if c.config is not None and "fx_graph_cache" in c.config.set_by_recording:
        return "off: the recording turned them off (--fresh / caches=False)"
    return "-"


def _kernel_lines(report: Report, c: Compile, most: int = 3) -> dict[str, str]:
    """Each kernel -> the source lines of the graph nodes fused into it (``where``'s style),
    else of torch's stacks for it (``stack_lines``)."""
    out = {}
    stacks = stack_lines(c)
    for k in report.kernels_of(c.id):
        g = fuse_graph(c, set(k.nodes)) if k.nodes else None
        by_name = {n.name: n for n in g.nodes} if g else {}
        lines = list(
            dict.fromkeys(
                where_source(by_name[n].source) for n in k.nodes if n in by_name and by_name[n].source
            )
        )
        if not lines:  # no nodes (the backward's): the lines of torch's stacks for the kernel
            lines = list(dict.fromkeys(where(f, n) for f, n in stacks.get(k.name, ())))
        if lines:
            out[k.name] = ", ".join(lines[:most]) + (f", … ({len(lines)} lines)" if len(lines) > most else "")
    return out


def _origins(c: Compile) -> dict[str, str]:
    """Each source line of Dynamo's graph -> the ops it made there (``layer_norm``), for the
    later graphs whose nodes of that line are what those ops decomposed into."""
    out: dict[str, list[str]] = {}
    graph = c.stages.capture.graph if c.stages.capture else None
    for n in graph.nodes if graph else ():
        if n.source and n.op.startswith("call"):
            op = n.target.rsplit(".", 1)[-1].rstrip("_").lower()
            if op not in out.setdefault(n.source, []):
                out[n.source].append(op)
    return {src: " ".join(ops) for src, ops in out.items()}


def captured_nothing(c: Compile) -> bool:
    """Dynamo's graph of an ok compile has no call (torch logs no graph then, or one of only
    inputs and outputs): e.g. a resume function that only returns. Nothing went to the backend."""
    cap = c.stages.capture
    if c.status != "ok" or cap is None or c.stages.autograd is not None:
        return False
    return cap.graph is None or not any(n.op.startswith("call") for n in cap.graph.nodes)


def _no_inductor(c: Compile) -> bool:
    """AOTAutograd ran and nothing of Inductor's did (``aot_eager``)."""
    s = c.stages
    return c.status == "ok" and s.decompose is None and s.fuse is None and s.codegen is None


def fuse_graph(c: Compile, names: set[str]) -> Graph | None:
    """The graph whose node names the kernel mapping uses: torch's kernel comments name
    Dynamo-graph nodes (GPU), Inductor's provenance names post-grad nodes (CPU)."""
    cands = []
    if c.stages.capture and c.stages.capture.graph:
        cands.append(c.stages.capture.graph)
    if c.stages.decompose:
        cands += [rg.graph for rg in c.stages.decompose.post_grad]
    if not cands:
        return None
    return max(cands, key=lambda g: len(names & {n.name for n in g.nodes}))


def _bytes(n: int | None) -> str:
    if n is None:
        return "?"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)

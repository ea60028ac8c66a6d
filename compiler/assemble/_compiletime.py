"""Every second of a compile placed: torch's timed phases (``Compile.phases``, its
chromium events) as a tree, each phase's own time (its children's left out) put under the
head of the innermost phase that has one; what no phase names is "unplaced". Summed over a
program: the heads, the largest costs with the code that paid them, and the code compiled
several times with the same graph (a transformer's blocks compiled one by one)."""

from __future__ import annotations

from collections import defaultdict

from ..model._phasenames import phase_name
from ..model._report import Compile, Report
from ..model._timetypes import HEADS, CompileTime, Cost, ProgramTime, Repeats, TimeRow

# torch's phase names (dynamo_timed's, torch 2.5-2.14) -> the head their own time goes under
PHASE_HEAD = {
    **dict.fromkeys(
        (
            "bytecode_tracing",
            "build_guards",
            "insert_deferred_runtime_asserts",
            "gc",
            "fullgraph_capture",
            "precompile_build_guards",
            "invoke_subgraph_trace",
            "invoke_subgraph_reuse_lookup",
            "invoke_subgraph_reuse_hash_fn",
            "invoke_subgraph_reuse_stamp_out",
            "compiler_collective",
            "guard_collective",
        ),
        "dynamo",
    ),
    **dict.fromkeys(
        (
            "backend_compile",  # Dynamo hands its graph to the backend: AOTAutograd's entry
            "create_aot_dispatcher_function",
            "aot_collect_metadata",
            "aot_trace_joint_graph",
            "min_cut_rematerialization_partition",
        ),
        "aot",
    ),
    **dict.fromkeys(
        (
            "_recursive_pre_grad_passes",
            "_recursive_joint_graph_passes",
            "_recursive_post_grad_passes",
            "additional_fake_tensor_prop",
            "convert_conv_weights_to_channels_last",
            "debug_insert_nops",
        ),
        "passes",
    ),
    "GraphLowering.run": "lowering",
    **dict.fromkeys(
        ("Scheduler.__init__", "Scheduler.fused_nodes", "Scheduler.create_combo_kernel_nodes"), "fusion"
    ),
    **dict.fromkeys(
        (
            "compile_fx.<locals>.fw_compiler_base",  # Inductor's entry for the forward
            "compile_fx.<locals>.bw_compiler",
            "inductor_compile",
            "fx_codegen_and_compile",
            "GraphLowering.compile_to_fn",
            "GraphLowering.compile_to_module",
            "code_gen",
            "GraphLowering.codegen",
            "GraphLowering.codegen_subgraph",
            "Scheduler.codegen",
            "generate_kernel_code_from_nodes",
            "PythonWrapperCodegen.generate",
            "CppWrapperCpu.generate",
            "CppWrapperGpu.generate",
            "PyCodeCache.load_by_key_path",
            "aoti_serialize_constants",
        ),
        "codegen",
    ),
    **dict.fromkeys(
        (
            "compile_file",
            "async_compile.precompile",
            "CachingAutotuner.slow_precompile_config",
            "StaticAutotunerFuture.warm_precompile",
            "reload_kernel_in_parent",
            "AotCodeCompiler.compile",
            "aoti_compile_fatbin",
            "aoti_precompile_header",
        ),
        "kernels",
    ),
    **dict.fromkeys(
        (
            "CachingAutotuner.benchmark_all_configs",
            "CachingAutotuner.coordinate_descent_tuning",
            "CachingAutotuner.combo_sequential_autotune",
            "benchmark_fused_nodes",
            "benchmark_codegened_module",
            "collective_compute_do_bench",
            "CUTLASSGemmTemplate.maybe_fetch_ops",
            "CUTLASSGemmTemplate.maybe_append_choice",
            "cutlass_utils.gen_ops",
        ),
        "autotune",
    ),
    **dict.fromkeys(
        (
            "inductor_codecache_torch_key",
            "CacheBase.get_system.triton_key",
            "AOTAutogradCache.inductor_load",
            "TritonBundler.collect",
            "TritonBundler.read_and_emit",
            "TritonBundler.load_cached_static_autotuners",
            "remote_fx_graph_cache_get",
            "remote_fx_graph_cache_put",
            "CompiledArtifact.load",
            "CompiledArtifact.save",
            "precompile_load_guards",
            "after_deserialization",
            "inductor_import",
        ),
        "cache",
    ),
    "async_compile.wait": "workers",
}

# the spans that are a compile's wall time: the frame's compile, and its backward's Inductor
# compile (torch's entire_frame_compile_time_s + the backward's inductor_compile_time_s)
_FRAME, _BACKWARD, _BACKWARD_ROOT = "entire_frame_compile", "entire_backward_compile", "inductor_compile"


def phase_head(name: str) -> str | None:
    """The head a phase's own time goes under; None for a phase that only encloses others
    (``dynamo``, ``entire_frame_compile``): its own time is unplaced."""
    if name in PHASE_HEAD:
        return PHASE_HEAD[name]
    said = phase_name(name)
    if said is not None and (said.attempt is not None or said.hook is not None):
        return "dynamo"  # an attempt's own time: Dynamo's output graph, its code transform
    if said is not None and said.pass_name is not None:
        return "passes"
    if name.endswith("_template_autotuning") or name.endswith("_template_precompiling"):
        return "autotune"  # select_algorithm's GEMM/conv templates (max-autotune)
    if name.startswith("pgo.") or name.startswith("fx.bucketing."):
        return "cache" if name.startswith("pgo.") else "passes"
    return None


def _tree(phases) -> list[tuple[object, float, float, list]]:
    """(span, start, end, children) for the spans at depth 0, each with its children nested."""
    roots: list = []
    stack: list = []
    for p in phases:  # in the waterfall's order: by start, the enclosing one first
        node = (p, p.start_s, p.start_s + p.duration_s, [])
        while stack and stack[-1][0].depth >= p.depth:
            stack.pop()
        (stack[-1][3] if stack else roots).append(node)
        stack.append(node)
    return roots


def _place(node, head, out: dict[tuple[str, str], list[float]]) -> None:
    """Put the node's own time under its head (or its enclosing phase's), its children's under theirs."""
    p, start, end, kids = node
    own = phase_head(p.name) or head  # a phase no head names: its enclosing phase's head
    self_s = max(0.0, (end - start) - sum(k[2] - k[1] for k in kids))
    key = (own or "unplaced", p.name)
    acc = out.setdefault(key, [0.0, 0])
    acc[0] += self_s
    acc[1] += 1
    for k in kids:
        _place(k, own, out)


def _walls(roots) -> tuple[list, list]:
    """The compile's wall-time spans (see _FRAME), and the spans outside them."""
    walls, outside = [], []

    def visit(node, in_backward: bool):
        p = node[0]
        if p.name == _FRAME or (in_backward and p.name == _BACKWARD_ROOT):
            walls.append(node)
            return
        if not node[3] and p.depth == 0:
            outside.append(node)
        for k in node[3]:
            visit(k, in_backward or p.name == _BACKWARD)

    for r in roots:
        visit(r, False)
    return walls, outside


def compile_time(c: Compile) -> CompileTime:
    """One compile's wall time under the heads (``compiler.types.CompileTime``): each phase's
    own time under its head, what no phase names under "unplaced"; autotuning torch timed at
    the first call, outside the compile, apart (``after_s``)."""
    walls, outside = _walls(_tree(c.phases))
    placed: dict[tuple[str, str], list[float]] = {}
    for w in walls:
        _place(w, None, placed)
    heads = dict.fromkeys(HEADS, 0.0)
    for (head, _), (s, _n) in placed.items():
        heads[head] += s
    heads = {k: round(v, 6) for k, v in heads.items()}
    rows = sorted(
        (TimeRow(head, name, round(s, 6), n) for (head, name), (s, n) in placed.items() if s > 0),
        key=lambda r: -r.seconds,
    )
    after = sum(n[2] - n[1] for n in outside if phase_head(n[0].name) == "autotune")
    hits = tuple(sorted({x.kind for x in c.caches if x.state == "hit"}))
    saved = [x.time_saved_s for x in c.caches if x.state == "hit" and x.time_saved_s is not None]
    return CompileTime(
        compile_id=c.id,
        wall_s=round(sum(w[2] - w[1] for w in walls), 6),
        heads=heads,
        rows=tuple(rows),
        after_s=round(after, 6),
        saved_s=round(sum(saved), 6) if saved else None,
        hits=hits,
    )


def _where(c: Compile) -> str | None:
    if c.filename is None:
        return None
    base = c.filename.replace("\\", "/").rsplit("/", 1)[-1]
    return f"{base}:{c.line}" if c.line is not None else base


def _graph_size(c: Compile) -> int | None:
    g = c.stages.capture.graph if c.stages.capture else None
    return len(g.nodes) if g is not None else None


def program_time(report: Report, top: int = 10) -> ProgramTime:
    """The program's compile time under the heads (the sum of its compiles'), its ``top``
    largest costs, each a phase summed over the compiles of one code object with where that
    code is, and the code compiled more than once with the same graph."""
    times = tuple(compile_time(c) for c in report.compiles if c.phases)
    by_id = {c.id: c for c in report.compiles}
    heads = dict.fromkeys(HEADS, 0.0)
    costs: dict[tuple, list] = defaultdict(lambda: [0.0, set()])
    for t in times:
        c = by_id[t.compile_id]
        for k, v in t.heads.items():
            heads[k] += v
        code = (c.name, _where(c))
        for r in t.rows:
            cost = costs[(r.head, r.phase, code)]
            cost[0] += r.seconds
            cost[1].add(c.id)
    ranked = sorted(
        (
            Cost(h, p, round(s, 6), code[1], code[0], len(ids))
            for (h, p, code), (s, ids) in costs.items()
            if s > 0
        ),
        key=lambda x: -x.seconds,
    )
    groups: dict[tuple, list[CompileTime]] = defaultdict(list)
    for t in times:
        c = by_id[t.compile_id]
        groups[(c.name, _where(c), _graph_size(c))].append(t)
    repeats = tuple(
        Repeats(name, where, tuple(t.compile_id for t in ts), round(sum(t.wall_s for t in ts), 6))
        for (name, where, size), ts in groups.items()
        if len(ts) > 1 and size is not None
    )
    return ProgramTime(
        wall_s=round(sum(t.wall_s for t in times), 6),
        heads={k: round(v, 6) for k, v in heads.items()},
        compiles=times,
        top=tuple(ranked[:top]),
        repeats=repeats,
    )

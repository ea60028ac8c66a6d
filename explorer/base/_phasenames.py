"""torch's timed phases (its chromium events) in words, torch's own name beside them:
``tracing the bytecode (bytecode_tracing)``. A phase this table does not know is shown as torch
names it. Used wherever a phase is shown: the compile's "time per phase", the compile-time
view (text, page, chart). What a name says beyond this table (an attempt, a hook, a pass) the
build read into ``Compile.phase_names``."""

from __future__ import annotations

# torch's name -> what the compiler was doing
WORDS = {
    "dynamo": "Dynamo, the whole frame",
    "entire_frame_compile": "compiling the frame",
    "bytecode_tracing": "tracing the bytecode",
    "build_guards": "building the guards",
    "backend_compile": "the backend compiling Dynamo's graph",
    "create_aot_dispatcher_function": "AOTAutograd",
    "aot_collect_metadata": "collecting the inputs' and outputs' metadata",
    "aot_trace_joint_graph": "tracing the joint forward and backward graph",
    "min_cut_rematerialization_partition": "splitting the joint graph into forward and backward",
    "_recursive_joint_graph_passes": "joint-graph passes",
    "_recursive_pre_grad_passes": "pre-grad passes",
    "_recursive_post_grad_passes": "post-grad passes",
    "compile_fx.<locals>.fw_compiler_base": "Inductor compiling the forward",
    "compile_fx.<locals>.bw_compiler": "Inductor compiling the backward",
    "entire_backward_compile": "compiling the backward (at the first .backward())",
    "inductor_compile": "Inductor",
    "fx_codegen_and_compile": "lowering and generating code",
    "additional_fake_tensor_prop": "propagating fake tensors again",
    "GraphLowering.run": "lowering to Inductor's IR",
    "GraphLowering.compile_to_fn": "generating and loading the code",
    "GraphLowering.codegen": "generating the code",
    "Scheduler.__init__": "fusing (the scheduler's decisions)",
    "Scheduler.fused_nodes": "fusing nodes",
    "Scheduler.codegen": "generating the kernels",
    "PythonWrapperCodegen.generate": "generating the Python wrapper",
    "code_gen": "generating the code",
    "compile_file": "compiling C++",
    "PyCodeCache.load_by_key_path": "loading the generated module",
    "async_compile.wait": "waiting for the kernels' compiles",
    "insert_deferred_runtime_asserts": "inserting runtime asserts",
    "gc": "garbage collection",
}


def words(name: str, said: dict) -> str | None:
    """What torch's phase ``name`` is, in words; None where this table does not know it.
    ``said``: what the compile's phase names say, by name (``names_said``)."""
    if name in WORDS:
        return WORDS[name]
    p = said.get(name)
    if p is None:
        return None
    if p.attempt is not None:
        return (
            "first attempt" if p.attempt == 0 else f"attempt {p.attempt + 1} (Dynamo restarted the analysis)"
        )
    if p.hook is not None:
        return f"bytecode hook {p.hook + 1} (a tool reading the code Dynamo made)"
    if p.pass_group and p.pass_name:
        return f"{p.pass_group.replace('_', '-')} pass {p.pass_name}"
    return None


def names_said(*compiles) -> dict:
    """What the phase names of ``compiles`` say (``Compile.phase_names``), by name."""
    return {p.name: p for c in compiles for p in c.phase_names}


def phase_label(name: str, said: dict) -> str:
    """``tracing the bytecode (bytecode_tracing)``; a phase not known: torch's name alone.
    ``said``: what the compile's phase names say (``names_said``)."""
    known = words(name, said)
    return f"{known} ({name})" if known else name


MIN_SHARE = 0.01  # phases shorter than this share of their compile are left out where phases are listed


def phase_span(c) -> float:
    """The span of a compile's phases, first begun to last ended (the waterfall's width)."""
    return max((p.start_s + p.duration_s for p in c.phases), default=0.0)


def shown_phases(c) -> list:
    """A compile's phases worth a row: at least MIN_SHARE of its span (all of them at depth 0):
    the compile-time view's waterfall and the compile's "time per phase" tree."""
    total = phase_span(c)
    return [p for p in c.phases if p.depth == 0 or p.duration_s >= MIN_SHARE * total]

"""torch's timed phases (its chromium events) in words, torch's own name beside them:
``tracing the bytecode (bytecode_tracing)``. A phase this table does not know is shown as torch
names it. Used wherever a phase is shown: the compile's "time per phase", the compile-time
view (text, page, chart)."""

from __future__ import annotations

from compiler.analysis import phase_attempt, phase_pass

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


def words(name: str) -> str | None:
    """What torch's phase ``name`` is, in words; None where this table does not know it."""
    if name in WORDS:
        return WORDS[name]
    if (n := phase_attempt(name)) is not None:
        return "first attempt" if n == 0 else f"attempt {n + 1} (Dynamo restarted the analysis)"
    if p := phase_pass(name):
        return f"{p[0].replace('_', '-')} pass {p[1]}"
    return None


def phase_label(name: str) -> str:
    """``tracing the bytecode (bytecode_tracing)``; a phase not known: torch's name alone."""
    said = words(name)
    return f"{said} ({name})" if said else name

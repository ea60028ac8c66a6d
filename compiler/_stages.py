"""The ONE table from PyTorch's event names to our five stages.

Keys are structured-trace event names; artifacts are ``artifact:<name>``; records from
Inductor's artifact loggers (not in the structured trace) are ``log:<artifact>``.
Value: (stage or None for report-wide events, slot name used by the builder).
Names differ between torch versions: anything not here is kept raw in
``Report.unknown_events`` (see IGNORED for what we drop on purpose).
"""

from __future__ import annotations

import re

EVENTS: dict[str, tuple[str | None, str]] = {
    # capture: TorchDynamo
    "dynamo_start": ("capture", "start"),
    "dynamo_output_graph": ("capture", "graph"),
    "dynamo_cpp_guards_str": ("capture", "guards"),
    "dynamo_guards": ("capture", "guards_json"),
    "artifact:dynamo_graph_break_reason": ("capture", "graph_break"),
    "artifact:recompile_reasons": ("capture", "recompile_reasons"),
    "create_symbol": ("capture", "symbol"),
    "symbolic_shape_specialization": ("capture", "specialization"),
    "guard_added_fast": ("capture", "shape_guard"),
    "guard_added": ("capture", "shape_guard"),
    # autograd: AOTAutograd
    "aot_joint_graph": ("autograd", "joint"),
    "aot_forward_graph": ("autograd", "forward"),
    "aot_backward_graph": ("autograd", "backward"),
    "aot_inference_graph": ("autograd", "inference"),
    "artifact:aot_forward_graph_fw_metadata": ("autograd", "fw_metadata"),
    # decompose: pre-/post-grad FX passes over the decomposed graph
    "artifact:before_pre_grad_graph": ("decompose", "pre_grad_before"),
    "artifact:after_pre_grad_graph": ("decompose", "pre_grad_after"),
    "artifact:before_post_grad_graph": ("decompose", "post_grad_before"),
    "artifact:inductor_post_grad_graph": ("decompose", "post_grad"),
    "inductor_post_grad_graph": ("decompose", "post_grad"),  # top-level on FX-cache hit
    # fuse: Inductor's scheduler (artifact loggers, not the structured trace)
    "log:ir_pre_fusion": ("fuse", "ir_pre_fusion"),
    "log:ir_post_fusion": ("fuse", "ir_post_fusion"),
    "log:fusion": ("fuse", "fusion_log"),
    "artifact:inductor_provenance_tracking_node_mappings": ("fuse", "provenance"),
    "artifact:inductor_provenance_tracking_kernel_stack_traces": ("fuse", "provenance"),
    # codegen: Triton / C++ kernels and the Python wrapper
    "inductor_output_code": ("codegen", "output_code"),
    "artifact:triton_kernel_info": ("codegen", "triton_kernel_info"),
    "artifact:fx_graph_runnable": ("codegen", "fx_graph_runnable"),
    # report-wide
    "artifact:fx_graph_cache_hit": (None, "cache"),
    "artifact:fx_graph_cache_miss": (None, "cache"),
    "artifact:fx_graph_cache_bypass": (None, "cache"),
    "artifact:aotautograd_cache_hit": (None, "cache"),
    "artifact:aotautograd_cache_miss": (None, "cache"),
    "artifact:aotautograd_cache_bypass": (None, "cache"),
    "artifact:dynamo_error": (None, "error_traceback"),
    "compilation_metrics": (None, "metrics"),
    "bwd_compilation_metrics": (None, "bwd_metrics"),
    "compilation_metrics_runtime": (None, "runtime_metrics"),  # e.g. cudagraphify time
    "bwd_compilation_metrics_runtime": (None, "runtime_metrics"),
    "chromium_event": (None, "timing"),
    "str": (None, "intern"),
}

# Names with a variable part: (regex over the event name, (stage, slot)).
PATTERNS: tuple[tuple[str, tuple[str | None, str]], ...] = (
    (r"^artifact:.+_ORIGINAL_BYTECODE$", ("capture", "bytecode_original")),
    (r"^artifact:.+_MODIFIED_BYTECODE$", ("capture", "bytecode_modified")),
)


def lookup(name: str) -> tuple[str | None, str] | None:
    spec = EVENTS.get(name)
    if spec is None:
        for pattern, value in PATTERNS:
            if re.match(pattern, name):
                return value
    return spec


# Events we understand and deliberately do not keep (bulky and not shown).
IGNORED = frozenset(
    {
        "describe_storage",
        "describe_tensor",
        "describe_source",
        "artifact:torch._functorch.config",
        "artifact:before_joint_graph",
        "artifact:after_joint_graph",
        "artifact:backward_prologue",
        "artifact:backward_epilogue",
        "artifact:compiled_function_forward",
        "artifact:compiled_function_backward",
        "artifact:compiled_fn_wrapper",
        "artifact:runtime_wrapper_orchestration",
        "dump_file",
        "link",
    }
)

# torch's timed phases (chromium_event names) that belong to one stage and do not nest
# inside each other; summed per compile into Compile.stage_times_s.
PHASE_STAGE = {
    "bytecode_tracing": "capture",
    "build_guards": "capture",
    "aot_collect_metadata": "autograd",
    "aot_trace_joint_graph": "autograd",
    "min_cut_rematerialization_partition": "autograd",
    "_recursive_pre_grad_passes": "decompose",
    "_recursive_joint_graph_passes": "decompose",
    "_recursive_post_grad_passes": "decompose",
    "GraphLowering.run": "fuse",  # lowering to Inductor IR
    "Scheduler.__init__": "fuse",  # fusion decisions
    "Scheduler.codegen": "codegen",
    "PythonWrapperCodegen.generate": "codegen",
    "PyCodeCache.load_by_key_path": "codegen",
    "async_compile.wait": "codegen",
}

# Phases that tell which stage was running when a compile failed (last one begun wins).
FAILURE_PHASE_STAGE = {
    **PHASE_STAGE,
    # the user's backend got Dynamo's graph; Inductor's own phases, begun later, override this
    "backend_compile": "backend",
    "create_aot_dispatcher_function": "autograd",
    "compile_fx.<locals>.fw_compiler_base": "decompose",
    "compile_fx.<locals>.bw_compiler": "decompose",
    "inductor_compile": "decompose",
    "fx_codegen_and_compile": "decompose",
    "additional_fake_tensor_prop": "decompose",
    "GraphLowering.codegen": "fuse",
    "Scheduler.fused_nodes": "fuse",
    "code_gen": "codegen",
    "compile_file": "codegen",
}


def event_name(metadata: dict) -> str | None:
    """The event's name: the one key that is not context (``artifact:<name>`` for artifacts)."""
    for key in metadata:
        if key in _CONTEXT_KEYS:
            continue
        if key == "artifact":
            art = metadata[key]
            return f"artifact:{art.get('name')}" if isinstance(art, dict) else "artifact:?"
        return key
    return None


_CONTEXT_KEYS = frozenset(
    {
        "frame_id",
        "frame_compile_id",
        "attempt",
        "has_payload",
        "compiled_autograd_id",
        "rank",
        "stack",
        "subgraph_name",
        "severity",
        "timestamp",
        "pathname",
        "thread",
    }
)

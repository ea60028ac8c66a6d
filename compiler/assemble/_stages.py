"""The ONE table from PyTorch's event names to our five stages.

Keys are structured-trace event names; artifacts are ``artifact:<name>``; records from
Inductor's artifact loggers (not in the structured trace) are ``log:<artifact>``.
Value: the stage and the handler that turns the event into facts (compiler/assemble/_collect.py);
a payload kept whole is ``keep("<field>")``, a typed field of ``Kept`` (compiler/assemble/_acc.py).
Adding an event: docs/architecture.md, "Recipe: add an event" (tests/test_event_table.py checks it).
Names differ between torch versions: anything not here is kept raw in
``Report.unknown_events`` (see IGNORED for what we drop on purpose).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from . import _autograd, _export, _speed
from . import _collect as c


class Spec(NamedTuple):
    stage: str | None  # our stage, or None for report-wide events
    handler: Callable  # per compile: handler(acc, event, ctx); else handler(ctx, event)
    per_compile: bool = True  # belongs to one compile id
    compiled: bool = True  # shows that the compile ran (not a guard failure, cache or runtime event)


def _report_wide(handler: Callable) -> Spec:
    return Spec(None, handler, per_compile=False, compiled=False)


EVENTS: dict[str, Spec] = {
    # capture: TorchDynamo
    "dynamo_start": Spec("capture", c.on_start),
    "dynamo_output_graph": Spec("capture", c.keep("graph")),
    "dynamo_cpp_guards_str": Spec("capture", c.keep("guards")),
    "artifact:dynamo_graph_break_reason": Spec("capture", c.on_graph_break),
    "artifact:recompile_reasons": Spec("capture", c.on_recompile_reasons, compiled=False),
    "bytecode": Spec("capture", c.on_bytecode),
    "artifact:dynamo_side_effects": Spec(
        "capture", c.keep("side_effects")
    ),  # the recording's bytecode hook (every frame)
    "nn_module_stack": Spec("capture", c.keep("module_stacks")),  # the recording's graph_code handler
    "create_symbol": Spec("capture", c.on_symbol),
    "symbolic_shape_specialization": Spec("capture", c.on_specialization),
    "guard_added_fast": Spec("capture", c.on_shape_guard),
    "guard_added": Spec("capture", c.on_shape_guard),
    # autograd: AOTAutograd
    "aot_joint_graph": Spec("autograd", c.keep("joint")),
    "aot_forward_graph": Spec("autograd", c.keep("forward")),
    "aot_backward_graph": Spec("autograd", c.keep("backward")),
    "aot_inference_graph": Spec("autograd", c.keep("inference")),
    "artifact:aot_forward_graph_fw_metadata": Spec("autograd", c.keep("fw_metadata")),
    "log:seq_nr": Spec("autograd", c.keep("seq_nr")),  # the joint graph's seq_nr (listen/_seqnr.py)
    # decompose: pre-/post-grad FX passes over the decomposed graph
    "artifact:before_pre_grad_graph": Spec("decompose", c.keep("pre_grad_before")),
    "inductor_pre_grad_graph": Spec("decompose", c.keep("pre_grad_before")),  # torch < 2.8's name
    "artifact:after_pre_grad_graph": Spec("decompose", c.keep("pre_grad_after")),
    "artifact:before_post_grad_graph": Spec("decompose", c.on_post_grad_before),
    "artifact:inductor_post_grad_graph": Spec("decompose", c.on_post_grad),
    "inductor_post_grad_graph": Spec("decompose", c.on_post_grad),  # top-level on FX-cache hit
    # fuse: Inductor's scheduler (artifact loggers, not the structured trace)
    "log:ir_pre_fusion": Spec("fuse", c.on_ir_pre_fusion),
    "log:ir_post_fusion": Spec("fuse", c.on_ir_post_fusion),
    "log:fusion": Spec("fuse", c.on_fusion_log),
    "autotune": Spec("fuse", c.on_autotune),  # select_algorithm's feedback hook (max-autotune)
    "artifact:inductor_provenance_tracking_node_mappings": Spec("fuse", c.on_provenance),
    "artifact:inductor_provenance_tracking_kernel_stack_traces": Spec("fuse", c.on_provenance),
    # codegen: Triton / C++ kernels and the Python wrapper
    "inductor_output_code": Spec("codegen", c.on_output_code),
    "artifact:triton_kernel_info": Spec("codegen", c.on_triton_kernel_info),
    "artifact:fx_graph_runnable": Spec("codegen", c.on_runnable),
    "graph_dump": Spec("codegen", _export.on_graph_dump),  # AOTInductor's C++ wrapper and kernels
    # report-wide, or facts about a compile that are not a stage
    **{
        f"artifact:{kind}_cache_{state}": Spec(None, c.on_cache, compiled=False)
        for kind in ("fx_graph", "aotautograd")
        for state in ("hit", "miss", "bypass")
    },
    "artifact:dynamo_error": Spec(None, c.keep("error_traceback")),
    # CUDA graphs: Inductor's cudagraphs logger (in-process), and what the recording set
    "log:cudagraphs": _report_wide(_speed.on_cudagraph_log),
    "recording_config": _report_wide(_speed.on_recording_config),
    # torch.distributed: DDP's graph split at bucket borders, Inductor's collective schedule
    "optimize_ddp_split_graph": Spec(None, c.on_distributed),
    "optimize_ddp_split_child": Spec(None, c.on_distributed),
    "artifact:inductor_collective_schedule": Spec(None, c.on_distributed),
    "compilation_metrics": Spec(None, c.on_metrics),
    "bwd_compilation_metrics": Spec(None, c.on_bwd_metrics),
    "compilation_metrics_runtime": Spec(None, c.on_runtime_metrics, compiled=False),  # cudagraphify time
    "bwd_compilation_metrics_runtime": Spec(None, c.on_runtime_metrics, compiled=False),
    # Compiled Autograd's capture of a whole backward (no frame yet; see compiler/assemble/_autograd.py)
    "compiled_autograd_graph": _report_wide(_autograd.on_capture_event),
    "artifact:compiled_autograd_graph_pre_reordering": _report_wide(_autograd.on_capture_event),
    "artifact:compiled_autograd_compile_reasons": _report_wide(_autograd.on_capture_event),
    "chromium_event": _report_wide(c.on_timing),
    "str": _report_wide(c.on_intern),
}

# Artifacts named with a variable part (the frame's code name before it): (the artifact
# name's end, spec); "artifact:forward_ORIGINAL_BYTECODE".
PATTERNS: tuple[tuple[str, Spec], ...] = (
    ("_ORIGINAL_BYTECODE", Spec("capture", c.keep("bytecode_original"))),
    ("_MODIFIED_BYTECODE", Spec("capture", c.keep("bytecode_modified"))),
)


def lookup(name: str) -> Spec | None:
    spec = EVENTS.get(name)
    if spec is None and name.startswith("artifact:"):
        for end, value in PATTERNS:
            if name.endswith(end) and len(name) > len("artifact:") + len(end):
                return value
    return spec


# Events we understand and deliberately do not keep (bulky and not shown).
IGNORED = frozenset(
    {
        "describe_storage",
        "describe_tensor",
        "describe_source",
        "dynamo_guards",  # each guard as JSON (torch logs it with guard logging on): the report keeps the guard tree (dynamo_cpp_guards_str)
        "artifact:torch._functorch.config",
        "artifact:before_joint_graph",
        "artifact:after_joint_graph",
        "artifact:backward_prologue",
        "artifact:backward_epilogue",
        "artifact:compiled_function_forward",
        "artifact:compiled_function_backward",
        "artifact:compiled_fn_wrapper",
        "artifact:runtime_wrapper_orchestration",
        "artifact:output_alias_wrapper",
        "dump_file",
        "link",
    }
)


def reads_event(name: str) -> bool:
    """Whether a build maps the event ``name`` to a handler (a report written before its row
    was added keeps such events raw: loading the log again reads them)."""
    return lookup(name) is not None

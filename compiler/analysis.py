"""What a report says when read closely: the verdict on a benchmark (why not faster), each
profiled kernel's cost and place on the roofline, why a warm start missed the cache, the
readers of Inductor's output (its kernels, Triton source and IR), of export and of
FlexAttention calls, the names torch gives things, and the fixes ``compiler.advise`` tries.
The records they return are in ``compiler.types``. The four names that run a fix
(``apply_fix``, ``settings_overridden``, ``save_outputs``, ``advice_from_runs``) import torch
(first use checks its version); the others import no torch."""

from typing import TYPE_CHECKING

from .assemble._advice import FIXES, fix_named, fixes_for
from .assemble._cgmode import mode_of as benchmark_mode
from .assemble._compiletime import compile_time, phase_head, program_time
from .assemble._costgroups import cost_groups
from .assemble._gputime import kernel_costs
from .assemble._kernelcauses import break_even
from .assemble._roofline import no_roofline, roofline
from .assemble._speed import cudagraph_share
from .assemble._stages import reads_event
from .assemble._verdict import verdict
from .bench._fill import KEEP_NAMES as RUNNABLE_PREAMBLE
from .listen._version import torch_name as _torch_name
from .model._devices import device_peak
from .model._figures import figure
from .model._skipwarn import WONT_CONVERT, fold_frame_warnings, frame_warning
from .model._speedtypes import cache_saving, fill_reason
from .parse._bytecode import bytecode_steps
from .parse._exportinfo import export_summary
from .parse._flex import flex_calls, flex_summary
from .parse._graphs import shape_dims, without_device_index
from .parse._guards import parse_guards
from .parse._names import (
    phase_attempt,
    phase_hook,
    phase_pass,
    rank_path,
    resume_of,
    without_entry,
    without_local_scope,
)
from .parse._normalize import kernel_base, normalize
from .parse._outputcode import extern_calls, split_kernels
from .parse._provenance import extern_nodes, kernel_stacks
from .parse._speed import cache_key_changes, cache_pairs, observed_sizes
from .parse._speed import short_reason as cudagraph_reason
from .parse._text import one_gap
from .parse._tritonir import ir_function, ir_source_lines, occupancy
from .parse._tritonsrc import read_triton_source

if TYPE_CHECKING:
    from .bench._advise import advice_from_runs
    from .bench._outputs import save_outputs
    from .bench._settings import apply_fix
    from .bench._settings import overridden as settings_overridden

# these import torch (the first use checks its version): name -> the module that defines it
_NEEDS_TORCH = {
    "apply_fix": "bench._settings",
    "settings_overridden": "bench._settings:overridden",
    "save_outputs": "bench._outputs",
    "advice_from_runs": "bench._advise",
}


def __getattr__(name: str):
    return _torch_name(__name__, _NEEDS_TORCH, name)


__all__ = [
    # where compile time went
    "compile_time",
    "program_time",
    "phase_head",
    # why not faster
    "verdict",
    "benchmark_mode",
    "kernel_costs",
    "cost_groups",
    "roofline",
    "no_roofline",
    "device_peak",
    "cudagraph_share",
    "break_even",
    "figure",
    # caches and CUDA graphs
    "cache_key_changes",
    "cache_pairs",
    "reads_event",
    "cache_saving",
    "fill_reason",
    "RUNNABLE_PREAMBLE",
    "cudagraph_reason",
    "observed_sizes",
    # Inductor's output, Triton
    "split_kernels",
    "kernel_stacks",
    "extern_nodes",
    "read_triton_source",
    "ir_source_lines",
    "occupancy",
    "ir_function",
    # export, FlexAttention, bytecode
    "export_summary",
    "flex_calls",
    "flex_summary",
    "bytecode_steps",
    # the names torch gives things
    "resume_of",
    "without_entry",
    "without_local_scope",
    "rank_path",
    # torch's warning on a frame it will not convert: folded into its compile's break
    "WONT_CONVERT",
    "frame_warning",
    "fold_frame_warnings",
    # torch's text, read: guards, kernel and graph names, compile phases
    "parse_guards",
    "extern_calls",
    "kernel_base",
    "normalize",
    "shape_dims",
    "without_device_index",
    "phase_attempt",
    "phase_pass",
    "phase_hook",
    "one_gap",
    # the fixes advise tries, and pt2-explorer advise's runs
    "FIXES",
    "fix_named",
    "fixes_for",
    "apply_fix",
    "settings_overridden",
    "save_outputs",
    "advice_from_runs",
]

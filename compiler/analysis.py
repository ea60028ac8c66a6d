"""What a report says when read closely: the verdict on a benchmark (why not faster), each
profiled kernel's cost and place on the roofline, why a warm start missed the cache, the
readers of Inductor's output (its kernels, Triton source and IR), of export and of
FlexAttention calls, the names torch gives things, and the fixes ``compiler.advise`` tries.
The records they return are in ``compiler.types``. None imports torch."""

from .assemble._compiletime import compile_time, program_time
from .assemble._speed import cudagraph_share
from .model._devices import device_peak
from .model._figures import figure
from .parse._bytecode import bytecode_steps
from .parse._exportinfo import export_summary
from .parse._flex import flex_calls, flex_summary
from .parse._names import resume_of, without_local_scope
from .parse._normalize import normalize
from .parse._tritonir import ir_source_lines, occupancy
from .parse._tritonsrc import read_triton_source
from .why._advice import FIXES, fix_named, fixes_for
from .why._costgroups import cost_groups
from .why._gputime import kernel_costs
from .why._roofline import roofline
from .why._verdict import verdict

__all__ = [
    # where compile time went
    "compile_time",
    "program_time",
    # why not faster
    "verdict",
    "kernel_costs",
    "cost_groups",
    "roofline",
    "device_peak",
    "cudagraph_share",
    "figure",
    # Inductor's output, Triton
    "read_triton_source",
    "ir_source_lines",
    "occupancy",
    # export, FlexAttention, bytecode
    "export_summary",
    "flex_calls",
    "flex_summary",
    "bytecode_steps",
    # the names torch gives things
    "resume_of",
    "without_local_scope",
    # torch's warning on a frame it will not convert: folded into its compile's break
    # torch's text, read: guards, kernel and graph names, compile phases
    "normalize",
    # the fixes advise tries
    "FIXES",
    "fix_named",
    "fixes_for",
]

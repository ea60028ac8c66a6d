"""What explorer/ alone reads of compiler beyond its public modules: the readers its views and
diffs still call (a guard tree's guards, an IR's function bounds, the noise two compiles differ
in, each rank's file, the WON'T CONVERT warnings a census folds), none of them an analysis a
user calls. Only explorer imports it (pyproject.toml: import-linter's protected contract
"compiler._viewer is explorer's"); its names are not part of the documented surface and may
change with explorer. None imports torch."""

from .assemble._stages import reads_event
from .model._progress import LineProgress
from .model._reasons import without_entry
from .model._skipwarn import WONT_CONVERT, fold_frame_warnings, frame_warning
from .model._timetypes import HEADS
from .model._trust import runnables as fill_runnables
from .model._trust import untrusted as fill_untrusted
from .parse._graphs import shape_dims, without_device_index
from .parse._guards import parse_guards
from .parse._names import rank_path
from .parse._normalize import kernel_base
from .parse._outputcode import split_kernels
from .parse._provenance import extern_nodes, kernel_stacks
from .parse._speed import cache_key_changes, cache_pairs
from .parse._tritonir import ir_function
from .why._costgroups import module_name
from .why._roofline import no_roofline, of_peak


def call_state():
    """The state a call made now would run under (grad mode to the RNG: compiler/listen/_callstate.py),
    for ``compiler.numerics(..., state=)``: what ``%%compile --numerics`` keeps before the cell
    runs. Imports torch."""
    from .listen._callstate import capture

    return capture()


__all__ = [
    # why not faster, caches
    "no_roofline",
    "of_peak",
    "module_name",
    "cache_key_changes",
    "cache_pairs",
    "reads_event",
    # the state a call made now runs under (%%compile --numerics)
    "call_state",
    # the compile-time heads, in order (compiler.analysis.compile_time)
    "HEADS",
    # a progress line on stderr with the time since the work began
    "LineProgress",
    # a fill's runnables, and why they are not this user's own recording's (compiler/model/_trust.py)
    "fill_runnables",
    "fill_untrusted",
    # Inductor's output, Triton
    "split_kernels",
    "kernel_stacks",
    "extern_nodes",
    "ir_function",
    # names, torch's texts
    "without_entry",
    "rank_path",
    "parse_guards",
    "kernel_base",
    "shape_dims",
    "without_device_index",
    # torch's warning on a frame it will not convert: folded into its compile's break
    "WONT_CONVERT",
    "frame_warning",
    "fold_frame_warnings",
]

"""What explorer/ alone reads of compiler beyond its public modules: the readers its views and
diffs still call (the noise two compiles differ in, each rank's file, the WON'T CONVERT warnings a census folds), none of them an analysis a
user calls. Only explorer imports it (pyproject.toml: import-linter's protected contract
"compiler._viewer is explorer's"); its names are not part of the documented surface and may
change with explorer. None imports torch at import; the four that run advise's fixes
(``apply_fix``, ``settings_overridden``, ``save_outputs``, ``advice_from_runs``) import it, and
check its version, when first used."""

from typing import TYPE_CHECKING

from .assemble._stages import reads_event
from .bench._fill import KEEP_NAMES as RUNNABLE_PREAMBLE
from .listen._version import torch_names as _torch_names
from .model._advicetypes import AdviceRun, CompileAdvice, CompileAdviceRow
from .model._atomic import write_file
from .model._progress import LineProgress
from .model._reasons import without_entry
from .model._skipwarn import WONT_CONVERT, fold_frame_warnings, frame_warning
from .model._sourcefile import read_source
from .model._speedtypes import Saving, cache_saving, fill_reason
from .model._subject import remember as remember_benchmark_subject
from .model._subject import subject_of as benchmark_subject
from .model._timetypes import HEADS
from .model._trust import runnables as fill_runnables
from .model._trust import untrusted as fill_untrusted
from .parse._graphs import shape_dims, without_device_index
from .parse._names import rank_path
from .parse._normalize import kernel_base
from .parse._outputcode import split_kernels
from .parse._provenance import extern_nodes, kernel_stacks
from .parse._speed import cache_key_changes, cache_pairs
from .parse._wrappercode import autotune_runs_as
from .read._journal import report_from_journal as load_journal
from .why._cgmode import mode_of as benchmark_mode
from .why._compilefix import CACHE_RUNS, COMPILE_FIXES, compile_fix_named, compile_fixes_for, repeated_blocks
from .why._costgroups import module_name
from .why._kernelcauses import break_even
from .why._roofline import no_roofline, of_peak

if TYPE_CHECKING:
    from .bench._advise import advice_from_runs, compile_advice_from_runs
    from .bench._outputs import save_outputs
    from .bench._settings import apply_fix
    from .bench._settings import overridden as settings_overridden

# these import torch (the first use checks its version): name -> the module that defines it
__getattr__ = _torch_names(
    __name__,
    {
        "apply_fix": "bench._settings",
        "settings_overridden": "bench._settings:overridden",
        "save_outputs": "bench._outputs",
        "advice_from_runs": "bench._advise",
        "compile_advice_from_runs": "bench._advise",
    },
)


def call_state():
    """The state a call made now would run under (grad mode to the RNG: compiler/listen/_callstate.py),
    for ``compiler.numerics(..., state=)``: what ``%%compile --numerics`` keeps before the cell
    runs. Imports torch."""
    from .listen._callstate import capture

    return capture()


__all__ = [
    # why not faster: the compile mode a benchmark ran, when a compile pays off, the roofline
    "benchmark_mode",
    "break_even",
    "no_roofline",
    "of_peak",
    "module_name",
    # caches: what a hit saved, why a compile's kernel map is not filled in, the fill's preamble
    "cache_saving",
    "Saving",
    "fill_reason",
    "RUNNABLE_PREAMBLE",
    "cache_key_changes",
    "cache_pairs",
    "reads_event",
    # the state a call made now runs under (%%compile --numerics); the call a report remembers
    "call_state",
    "benchmark_subject",
    "remember_benchmark_subject",
    # pt2-explorer advise's runs: a fix made at start-up, the outputs saved, the runs read back
    "apply_fix",
    "settings_overridden",
    "save_outputs",
    "advice_from_runs",
    "compile_advice_from_runs",
    "AdviceRun",
    # advise --compile-time: its fixes, chosen from the baseline's report, and its result
    "COMPILE_FIXES",
    "CACHE_RUNS",
    "compile_fix_named",
    "compile_fixes_for",
    "repeated_blocks",
    "CompileAdvice",
    "CompileAdviceRow",
    # files: a report's sources read (bounded, regular files only), a file written whole; a
    # killed recording's journal read back
    "read_source",
    "write_file",
    "load_journal",
    # the compile-time heads, in order (compiler.analysis.compile_time)
    "HEADS",
    # a progress line on stderr with the time since the work began
    "LineProgress",
    # a fill's runnables, and why they are not this user's own recording's (compiler/model/_trust.py)
    "fill_runnables",
    "fill_untrusted",
    # Inductor's output, Triton
    "split_kernels",
    "autotune_runs_as",
    "kernel_stacks",
    "extern_nodes",
    # names, torch's texts
    "without_entry",
    "rank_path",
    "kernel_base",
    "shape_dims",
    "without_device_index",
    # torch's warning on a frame it will not convert: folded into its compile's break
    "WONT_CONVERT",
    "frame_warning",
    "fold_frame_warnings",
]

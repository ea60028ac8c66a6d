"""PT2 Explorer's recorder: what torch.compile did, taken in-process.

with compiler.recording() as rec:
    torch.compile(model)(x)
rec.report.graph_breaks, rec.report.to_json("report.json")

``compiler`` holds the verbs (record, read, benchmark, advise) and ``Report``; the records a
report is made of are in ``compiler.types``, the analyses of a report (the verdict, kernel
costs, the roofline, cache keys, the Triton, export and FlexAttention readers) in
``compiler.analysis``. Recording needs torch; reading does not: ``compiler.load`` (saved
reports), ``compiler.load_trace`` (TORCH_TRACE logs) and ``compiler.load_modes`` (saved mode
comparisons) import no torch, so reports open where torch is not installed. The recording
names below (``record``, ``recording``, ``compare_modes``, …) import torch, and check its
version, when first used.
"""

from . import analysis as analysis
from . import types as types
from .listen._version import torch_names as _torch_names
from .model._modetypes import load_modes
from .model._options import BenchOptions, RecordOptions
from .model._relpaths import relative_paths
from .model._report import Report, ReportFormatError, load
from .read._files import TraceFormatError
from .read._trace import load_ranks, load_trace

__pt2_explorer__ = True  # explorer/ checks that `compiler` is this package, not a shadow

# these import torch (the first use checks its version): name -> the module that defines it
_lazy = _torch_names(
    __name__,
    {
        "Recording": "listen._capture",
        "record": "listen._capture",
        "recording": "listen._capture",
        "NotCompiledError": "bench._recheck",
        "would_recompile": "bench._recheck",
        "benchmark": "bench._bench",
        "fill": "bench._fill",
        "compare_modes": "bench._modes",
        "StateMutationError": "bench._state",
        "compiled_calls": "listen._calls",
        "benchmark_calls": "bench._calls",
        "advise": "bench._advise",
        "numerics": "bench._numerics",
        "numerics_calls": "bench._numcalls",
        "UnsupportedTorchVersion": "listen._version",
    },
)

# old names kept working, each use warned (DeprecationWarning): old name -> its new name
_RENAMED = {"check_recompile": "would_recompile"}


def __getattr__(name: str):
    if name in _RENAMED:  # not kept in the package: every use warns
        import warnings

        warnings.warn(f"compiler.{name} is now compiler.{_RENAMED[name]}", DeprecationWarning, stacklevel=2)
        name = _RENAMED[name]
    return _lazy(name)


__all__ = [
    # record
    "record",
    "recording",
    "Recording",
    "UnsupportedTorchVersion",
    "RecordOptions",
    # read
    "Report",
    "load",
    "load_trace",
    "load_ranks",
    "load_modes",
    "ReportFormatError",
    "TraceFormatError",
    # benchmark (each appends to report.benchmarks, a report's one openly mutable field), fill
    "benchmark",
    "fill",
    "compare_modes",
    "StateMutationError",
    "compiled_calls",
    "benchmark_calls",
    "BenchOptions",
    # recompiles
    "would_recompile",
    "NotCompiledError",
    # advise
    "advise",
    # where compiled diverges from eager
    "numerics",
    "numerics_calls",
    # a report's paths without the recording machine's
    "relative_paths",
]

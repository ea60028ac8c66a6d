"""PT2 Explorer's recorder: what torch.compile did, taken in-process.

with compiler.recording() as rec:
    torch.compile(model)(x)
rec.report.graph_breaks, rec.report.to_json("report.json")

Recording needs torch; reading does not: ``compiler.load`` (saved reports) and
``compiler.load_trace`` (TORCH_TRACE logs) import no torch, so reports open where torch is not
installed. The recording names below (``record``, ``recording``, ``compare_modes``, …) import
torch, and check its version, when first used.
"""

from .build._events import TraceFormatError
from .model._atomic import write_file
from .model._report import (
    SCHEMA_VERSION,
    STAGES,
    Accuracy,
    Autograd,
    Autotune,
    AutotuneChoice,
    BenchConfig,
    Benchmark,
    Capture,
    Codegen,
    Compile,
    CompiledAutograd,
    Decompose,
    ExportFact,
    ExportRun,
    Frame,
    Fuse,
    Graph,
    GraphBreak,
    Kernel,
    KernelTime,
    Node,
    OutputCode,
    PhaseSpan,
    RawEvent,
    Recompile,
    Report,
    ReportFormatError,
    RoleGraph,
    StackFrame,
    Timing,
    load,
)
from .parse._exportinfo import ExportSummary, InputSpec, export_summary
from .parse._flex import FlexCall, FlexMask, ModSource, flex_calls, flex_summary
from .parse._outputcode import split_kernels
from .read._ranks import load_ranks
from .read._trace import load_trace

__pt2_explorer__ = True  # explorer/ checks that `compiler` is this package, not a shadow

# name -> the module that defines it ("module:attribute" where the name differs); these
# import torch (first use checks its version)
_NEEDS_TORCH = {
    "NotCompiledError": "bench._recheck",
    "RecompileCheck": "bench._recheck",
    "benchmark_subject": "bench._bench:subject_of",
    "check_recompile": "bench._recheck:check",
    "remember_benchmark_subject": "bench._bench:remember",
    "Recording": "record._capture",
    "record": "record._capture",
    "recording": "record._capture",
    "ModeComparison": "bench._modes",
    "ModeRow": "bench._modes",
    "compare_modes": "bench._modes",
    "load_modes": "bench._modes",
    "StateMutationError": "bench._state",
    "SUPPORTED": "record._version",
    "UnsupportedTorchVersion": "record._version",
}


def __getattr__(name: str):
    module, _, attribute = _NEEDS_TORCH.get(name, "").partition(":")
    if not module:
        raise AttributeError(f"module 'compiler' has no attribute {name!r}")
    import importlib

    if module != "record._version":
        from .record._version import check

        check()
    value = getattr(importlib.import_module(f"compiler.{module}"), attribute or name)
    globals()[name] = value
    return value


__all__ = [
    "SCHEMA_VERSION",
    "STAGES",
    "SUPPORTED",
    "Accuracy",
    "Autograd",
    "Autotune",
    "AutotuneChoice",
    "BenchConfig",
    "Benchmark",
    "Capture",
    "Codegen",
    "Compile",
    "CompiledAutograd",
    "Decompose",
    "ExportFact",
    "ExportRun",
    "ExportSummary",
    "FlexCall",
    "FlexMask",
    "Frame",
    "Fuse",
    "Graph",
    "GraphBreak",
    "InputSpec",
    "Kernel",
    "KernelTime",
    "ModSource",
    "ModeComparison",
    "ModeRow",
    "Node",
    "NotCompiledError",
    "OutputCode",
    "PhaseSpan",
    "RawEvent",
    "Recompile",
    "RecompileCheck",
    "Recording",
    "Report",
    "ReportFormatError",
    "RoleGraph",
    "StackFrame",
    "StateMutationError",
    "Timing",
    "TraceFormatError",
    "UnsupportedTorchVersion",
    "benchmark_subject",
    "check_recompile",
    "compare_modes",
    "export_summary",
    "flex_calls",
    "flex_summary",
    "load",
    "load_modes",
    "load_ranks",
    "load_trace",
    "record",
    "recording",
    "remember_benchmark_subject",
    "split_kernels",
    "write_file",
]

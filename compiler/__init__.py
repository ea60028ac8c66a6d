"""PT2 Explorer's recorder: what torch.compile did, taken in-process.

with compiler.recording() as rec:
    torch.compile(model)(x)
rec.report.graph_breaks, rec.report.to_json("report.json")

Recording needs torch; reading does not: ``compiler.load`` (saved reports),
``compiler.load_trace`` (TORCH_TRACE logs) and ``compiler.load_modes`` (saved mode comparisons)
import no torch, so reports open where torch is not installed. The recording names below
(``record``, ``recording``, ``compare_modes``, …) import torch, and check its version, when
first used.
"""

from .assemble._advice import FIXES, fix_named, fixes_for
from .assemble._costgroups import CostGroup, cost_groups
from .assemble._gputime import KernelCost, kernel_costs
from .assemble._roofline import Placement, no_roofline, roofline
from .assemble._speed import cudagraph_share
from .assemble._verdict import Cause, Verdict, verdict
from .assemble._verdict import mode_of as benchmark_mode
from .model._advicetypes import Advice, AdviceRow, AdviceRun, Fix
from .model._atomic import write_file
from .model._benchtypes import Launch, Timeline
from .model._compact import use_graph_nodes as _use_graph_nodes
from .model._devices import DevicePeak, device_peak
from .model._modetypes import ModeComparison, ModeRow, load_modes
from .model._names import CompileId, rank_path, resume_of, without_entry
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
    use_benchmark,
)
from .model._sourcefile import read_source
from .model._speedtypes import CacheLookup, CompileConfig, CudaGraphRun, CudaGraphs
from .model._subject import remember as remember_benchmark_subject
from .model._subject import subject_of as benchmark_subject
from .model._tritontypes import TritonBinary
from .parse._bytecode import BytecodeStep, bytecode_steps
from .parse._exportinfo import ExportSummary, InputSpec, export_summary
from .parse._flex import FlexCall, FlexMask, ModSource, flex_calls, flex_summary
from .parse._graphs import graph_nodes as _graph_nodes
from .parse._outputcode import split_kernels
from .parse._speed import cache_key_changes
from .parse._speed import short_reason as cudagraph_reason
from .parse._tritonir import ir_source_lines, occupancy
from .parse._tritonsrc import TritonSource, read_triton_source
from .read._files import TraceFormatError
from .read._journal import report_from_journal as load_journal
from .read._trace import load_ranks, load_trace


def _benchmark(*args, **kwargs):
    """``Report.benchmark``: the report model calls up into the bench layer through this."""
    from .bench._bench import benchmark_report

    return benchmark_report(*args, **kwargs)


use_benchmark(_benchmark)
_use_graph_nodes(_graph_nodes)  # the file form stores a graph's nodes as what its code does not hold

__pt2_explorer__ = True  # explorer/ checks that `compiler` is this package, not a shadow

# name -> the module that defines it ("module:attribute" where the name differs); these
# import torch (first use checks its version)
_NEEDS_TORCH = {
    "Recording": "listen._capture",
    "record": "listen._capture",
    "recording": "listen._capture",
    "NotCompiledError": "bench._recheck",
    "RecompileCheck": "bench._recheck",
    "check_recompile": "bench._recheck:check",
    "compare_modes": "bench._modes",
    "StateMutationError": "bench._state",
    "compiled_calls": "listen._calls",
    "benchmark_calls": "bench._calls",
    "advise": "bench._advise",
    "advice_from_runs": "bench._advise",
    "apply_fix": "bench._settings",
    "settings_overridden": "bench._settings:overridden",
    "save_outputs": "bench._outputs",
    "SUPPORTED": "listen._version",
    "UnsupportedTorchVersion": "listen._version",
}


def __getattr__(name: str):
    module, _, attribute = _NEEDS_TORCH.get(name, "").partition(":")
    if not module:
        raise AttributeError(f"module 'compiler' has no attribute {name!r}")
    import importlib

    if module != "listen._version":
        from .listen._version import check

        check()
    value = getattr(importlib.import_module(f"compiler.{module}"), attribute or name)
    globals()[name] = value
    return value


__all__ = [
    "FIXES",
    "Advice",
    "AdviceRow",
    "AdviceRun",
    "Fix",
    "advice_from_runs",
    "advise",
    "apply_fix",
    "fix_named",
    "fixes_for",
    "save_outputs",
    "settings_overridden",
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
    "Cause",
    "Codegen",
    "Compile",
    "CompileId",
    "CompiledAutograd",
    "CostGroup",
    "Decompose",
    "DevicePeak",
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
    "KernelCost",
    "KernelTime",
    "Launch",
    "ModSource",
    "ModeComparison",
    "ModeRow",
    "Node",
    "NotCompiledError",
    "OutputCode",
    "PhaseSpan",
    "Placement",
    "RawEvent",
    "Recompile",
    "RecompileCheck",
    "Recording",
    "Report",
    "ReportFormatError",
    "RoleGraph",
    "StackFrame",
    "StateMutationError",
    "Timeline",
    "Timing",
    "TraceFormatError",
    "TritonBinary",
    "TritonSource",
    "UnsupportedTorchVersion",
    "Verdict",
    "benchmark_calls",
    "benchmark_mode",
    "benchmark_subject",
    "check_recompile",
    "compare_modes",
    "compiled_calls",
    "cost_groups",
    "device_peak",
    "export_summary",
    "flex_calls",
    "flex_summary",
    "ir_source_lines",
    "kernel_costs",
    "load",
    "load_journal",
    "load_modes",
    "load_ranks",
    "load_trace",
    "no_roofline",
    "occupancy",
    "rank_path",
    "read_triton_source",
    "record",
    "recording",
    "remember_benchmark_subject",
    "resume_of",
    "roofline",
    "split_kernels",
    "CacheLookup",
    "CompileConfig",
    "CudaGraphRun",
    "CudaGraphs",
    "cache_key_changes",
    "cudagraph_share",
    "cudagraph_reason",
    "verdict",
    "bytecode_steps",
    "BytecodeStep",
    "without_entry",
    "write_file",
    "read_source",
]

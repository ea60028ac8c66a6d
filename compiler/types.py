"""The records a report is made of: frozen dataclasses, read from a report
(``report.compiles[0].capture.graph``) or returned by ``compiler`` and ``compiler.analysis``,
imported from here to name them (``isinstance``, annotations). ``compiler.Report`` is the
report itself. ``RecompileCheck`` imports torch (first use checks its version); the others
import no torch."""

from typing import TYPE_CHECKING

from .listen._version import torch_names as _torch_names
from .model._advicetypes import Advice, AdviceRow, Fix
from .model._benchtypes import Launch, Timeline
from .model._devices import DevicePeak
from .model._guards import Guard
from .model._modetypes import ModeComparison, ModeRow
from .model._numericstypes import Numerics, TensorError
from .model._progresstypes import Progress  # noqa: F401 - on_progress gives one (not in __all__: the public face is capped)
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
    RoleGraph,
    SideEffect,
    StackFrame,
    Timing,
)
from .model._speedtypes import CacheLookup, CompileConfig, CudaGraphRun, CudaGraphs, Regenerated
from .model._timetypes import CompileTime, ProgramTime
from .model._tritontypes import TritonBinary
from .model._verdicttypes import Cause, Verdict
from .parse._bytecode import BytecodeStep
from .parse._exportinfo import ExportSummary, InputSpec
from .parse._flex import FlexCall, FlexMask, ModSource
from .parse._names import CompileId
from .parse._tritonsrc import TritonSource
from .why._costgroups import CostGroup
from .why._gputime import KernelCost
from .why._roofline import Placement

if TYPE_CHECKING:
    from .bench._recheck import RecompileCheck

# these import torch (the first use checks its version): name -> the module that defines it
__getattr__ = _torch_names(
    __name__,
    {"RecompileCheck": "bench._recheck"},
)


__all__ = [
    # a report's parts
    "Frame",
    "Compile",
    "CompileId",
    "Guard",
    "GraphBreak",
    "Recompile",
    "Kernel",
    "StackFrame",
    "SideEffect",
    "RawEvent",
    "STAGES",
    "CompileTime",
    "ProgramTime",
    "SCHEMA_VERSION",
    # a compile's stages
    "Capture",
    "Autograd",
    "Decompose",
    "Fuse",
    "Codegen",
    "Graph",
    "Node",
    "RoleGraph",
    "OutputCode",
    "Autotune",
    "AutotuneChoice",
    "PhaseSpan",
    "TritonBinary",
    # pipelines
    "CompiledAutograd",
    "ExportRun",
    "ExportFact",
    # speed: configs, caches, CUDA graphs
    "CompileConfig",
    "CacheLookup",
    "Regenerated",
    "CudaGraphs",
    "CudaGraphRun",
    # benchmarks, mode comparisons, recompile checks
    "Benchmark",
    "BenchConfig",
    "Timing",
    "Accuracy",
    "KernelTime",
    "Launch",
    "Timeline",
    "ModeComparison",
    "ModeRow",
    "RecompileCheck",
    # numerics: where compiled diverges from eager
    "Numerics",
    "TensorError",
    # what compiler.analysis returns
    "Verdict",
    "Cause",
    "KernelCost",
    "CostGroup",
    "Placement",
    "DevicePeak",
    "ExportSummary",
    "InputSpec",
    "FlexCall",
    "FlexMask",
    "ModSource",
    "TritonSource",
    "BytecodeStep",
    # advise
    "Advice",
    "AdviceRow",
    "Fix",
]

"""PT2 Explorer's recorder: what torch.compile did, taken in-process. Needs torch only.

with compiler.recording() as rec:
    torch.compile(model)(x)
rec.report.graph_breaks, rec.report.to_json("report.json")
"""

from ._version import SUPPORTED, UnsupportedTorchVersion
from ._version import check as _check

_check()
__pt2_explorer__ = True  # explorer/ checks that `compiler` is this package, not a shadow

from ._capture import Recording, record, recording  # noqa: E402
from ._events import TraceFormatError  # noqa: E402
from ._modes import ModeComparison, ModeRow, compare_modes, load_modes  # noqa: E402
from ._ranks import load_ranks  # noqa: E402
from ._report import (  # noqa: E402
    SCHEMA_VERSION,
    STAGES,
    Accuracy,
    Autograd,
    BenchConfig,
    Benchmark,
    Capture,
    Codegen,
    Compile,
    CompiledAutograd,
    Decompose,
    Frame,
    Fuse,
    Graph,
    GraphBreak,
    Kernel,
    KernelTime,
    Node,
    PhaseSpan,
    Recompile,
    Report,
    ReportFormatError,
    Timing,
    load,
)
from ._state import StateMutationError  # noqa: E402
from ._trace import load_trace  # noqa: E402

__all__ = [
    "SCHEMA_VERSION",
    "STAGES",
    "SUPPORTED",
    "Accuracy",
    "Autograd",
    "BenchConfig",
    "Benchmark",
    "Capture",
    "Codegen",
    "Compile",
    "CompiledAutograd",
    "Decompose",
    "Frame",
    "Fuse",
    "Graph",
    "GraphBreak",
    "Kernel",
    "KernelTime",
    "ModeComparison",
    "ModeRow",
    "Node",
    "PhaseSpan",
    "Recompile",
    "Recording",
    "Report",
    "ReportFormatError",
    "StateMutationError",
    "Timing",
    "TraceFormatError",
    "UnsupportedTorchVersion",
    "compare_modes",
    "load",
    "load_modes",
    "load_ranks",
    "load_trace",
    "record",
    "recording",
]

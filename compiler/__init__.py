"""PT2 Explorer's recorder: what torch.compile did, taken in-process. Needs torch only.

with compiler.recording() as rec:
    torch.compile(model)(x)
rec.report.graph_breaks, rec.report.to_json("report.json")
"""

from ._version import SUPPORTED, UnsupportedTorchVersion
from ._version import check as _check

_check()

from ._capture import Recording, record, recording  # noqa: E402
from ._events import TraceFormatError  # noqa: E402
from ._report import (  # noqa: E402
    SCHEMA_VERSION,
    STAGES,
    Autograd,
    Capture,
    Codegen,
    Compile,
    Decompose,
    Frame,
    Fuse,
    Graph,
    GraphBreak,
    Kernel,
    Node,
    Recompile,
    Report,
    load,
)
from ._trace import load_trace  # noqa: E402

__all__ = [
    "SCHEMA_VERSION",
    "STAGES",
    "SUPPORTED",
    "Autograd",
    "Capture",
    "Codegen",
    "Compile",
    "Decompose",
    "Frame",
    "Fuse",
    "Graph",
    "GraphBreak",
    "Kernel",
    "Node",
    "Recompile",
    "Recording",
    "Report",
    "TraceFormatError",
    "UnsupportedTorchVersion",
    "load",
    "load_trace",
    "record",
    "recording",
]

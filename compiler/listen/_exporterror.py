"""A torch.export that failed inside a recording: what it was deciding and the user's line."""

from __future__ import annotations

import traceback

from ..model._pipelinetypes import ExportFact
from ..model._stagetypes import StackFrame
from . import _torch


def error_fact(exc: BaseException) -> ExportFact | None:
    """A data-dependent error that ended a torch.export.export call inside the recording:
    torch's expression (the exception's ``cond``) and the last user line of its traceback.
    None where the exception is another, or did not come from torch.export."""
    expr = _torch.data_dependent_condition(exc)
    if expr is None:
        return None
    frames = [
        StackFrame(f.filename, f.lineno or 0, f.name, f.line) for f in traceback.extract_tb(exc.__traceback__)
    ]
    if not any("/torch/export/" in f.filename.replace("\\", "/") for f in frames):
        return None
    user = [f for f in frames if f.kind == "user" and not f.filename.startswith("<")]
    top = user[-1] if user else None
    where = f"{top.filename.rsplit('/', 1)[-1]}:{top.line}" if top else None
    return ExportFact("data-dependent error", expr, where, top.code if top else None, "export failed here")

"""The report of a recording's journal (compiler/listen/_journal.py writes it, in the
TORCH_TRACE log format): what a program that died had compiled. Torch-free: the process
that rebuilds it never imported torch."""

from __future__ import annotations

import dataclasses
import os
import warnings

from ..assemble import _build
from ..model._report import Report
from ._files import TraceTruncatedError
from ._trace import load_trace

CUT = "the event being written when the process died was cut off"


def report_from_journal(path: str | os.PathLike[str], *, torch_version: str | None = None) -> Report:
    """The report of the events in a journal (``source`` "in-process", as the recording's
    own would say). ``error`` names where the journal was cut, if it was: the event being
    written when the process died is left out (``CUT``). An empty journal (no compile happened) gives an
    empty report. Raises TraceFormatError for a journal that is not one."""
    path = os.fspath(path)
    empty = _build.build([], torch_version=torch_version or "unknown")
    if os.path.getsize(path) == 0:
        return empty
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the cut is in the report's error
            report = load_trace(path)
    except TraceTruncatedError:  # cut in its first event: nothing complete
        return dataclasses.replace(empty, error=CUT)
    return dataclasses.replace(
        report,
        source="in-process",
        torch_version=torch_version or report.torch_version,
        error=CUT if report.error else None,
    )

"""torch's warning on a frame it will not convert. Where a backend fails with an exception
torch allows to fall back (a data-dependent output, a dynamic output shape: fake tensors'
exceptions), Dynamo logs the frame's whole traceback as a ``dynamo_graph_break_reason``
artifact, headed ``WON'T CONVERT <function> <file> line <first line>``
(``torch._dynamo.exc.unimplemented_with_warning``), then raises the graph break that says
why (GB0219 "Backend compiler exception", with its registry id), logged as a break of the
same compile. The warning is that break's frame and exception told again: it is folded into
the break of its compile; one with no break beside it stays, as one type (``WONT_CONVERT``)
at the frame's own file and line. Torch-free."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

WONT_CONVERT = "WON'T CONVERT"
# torch's header: f"WON'T CONVERT {code.co_name} {code.co_filename} line {code.co_firstlineno}"
_HEADER = re.compile(r"^WON'T CONVERT (?P<name>\S+) (?P<file>.+) line (?P<line>\d+)\s*$")

T = TypeVar("T")


def frame_warning(text: str | None) -> tuple[str, str, int] | None:
    """(function, file, first line) of a warning's header; None for any other text."""
    m = _HEADER.match((text or "").splitlines()[0] if text else "")
    return (m.group("name"), m.group("file"), int(m.group("line"))) if m else None


def is_frame_warning(type_: str | None) -> bool:
    return bool(type_) and (type_ == WONT_CONVERT or frame_warning(type_) is not None)


def fold_frame_warnings(
    breaks: Iterable[T], type_of: Callable[[T], Any], ids_of: Callable[[T], Any]
) -> list[T]:
    """``breaks`` without the warnings whose compiles each have a break of their own."""
    breaks = list(breaks)
    told = {c for b in breaks if not is_frame_warning(type_of(b)) for c in ids_of(b)}
    return [b for b in breaks if not (is_frame_warning(type_of(b)) and set(ids_of(b)) <= told)]


def with_folded_warnings(report: Any) -> Any:
    """A report's JSON form with its warnings folded (reports written before they were): a
    warning told again by its compile's break is left out; one alone has the one type and
    its frame's file and line. ``report`` itself is left as it was."""
    if not isinstance(report, dict):
        return report
    out = report
    breaks = report.get("graph_breaks")
    if isinstance(breaks, list) and any(isinstance(b, dict) and _warned(b) for b in breaks):
        kept = fold_frame_warnings(breaks, lambda b: b.get("type") if isinstance(b, dict) else None, _ids)
        out = {
            **report,
            "graph_breaks": [_alone(b) if isinstance(b, dict) and _warned(b) else b for b in kept],
        }
    return out


def _warned(b: dict) -> bool:
    t = b.get("type")
    return isinstance(t, str) and frame_warning(t) is not None


def _ids(b: Any) -> tuple:
    if not isinstance(b, dict):
        return ()
    ids = b.get("compile_ids")
    return (
        tuple(x for x in ids if isinstance(x, str))
        if isinstance(ids, list) and ids
        else (b.get("compile_id"),)
    )


def _alone(b: dict) -> dict:
    _name, file, line = frame_warning(b["type"]) or ("", None, None)
    return {**b, "type": WONT_CONVERT, "filename": b.get("filename") or file, "line": b.get("line") or line}

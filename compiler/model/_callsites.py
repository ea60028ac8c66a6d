"""Where a break and a frame sit in the program, from torch's own structured records: the breaks
torch makes on purpose inside its own files, the frames of this package that a stack must not
hold, and the line that called a compiled frame. Torch-free: the build uses it on a recording,
the loader on an older report's JSON form (``UPGRADES``).

- **torch's own break**: torch calls ``torch._dynamo.graph_break()`` itself (the optimizer's
  ``_use_grad`` wrapper, torch/optim/optimizer.py, breaks there on purpose so AOTAutograd sees
  the step under no_grad). torch's registry ids of a user-inserted break (GB0025
  ``graph_break()``, GB4297 ``skip_frame()``, GB4636 ``step_unsupported()``) with the break's
  innermost stack frame in torch's own files: no line of the program's is the break.
- **this package's frames**: ``compiled_calls`` (compiler/listen/_calls.py) wraps each compiled
  callable to see its calls, so torch's stacks of a recorded program hold its ``call`` frame
  between the program's line and the compiled function: left out, the stack is the program's.
- **the caller of a frame**: torch's stack at a frame's start (``dynamo_start``) names the
  lines of frames Dynamo ran by their compiled code (a resumed frame's function at the break
  before, not at the call), and leaves out the resume functions that called it. torch's break
  stacks are the calls it traced: where one holds the frame's function, its caller there is
  the line that made the call."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

from ._paths import frame_kind, is_user_file

# torch's graph-break registry ids of a break the code asked for (torch/_dynamo/graph_break_registry.json)
INSERTED_BREAKS = frozenset({"GB0025", "GB4297", "GB4636"})
# their types, for a log written before torch gave breaks ids
_INSERTED_TYPES = frozenset(
    {
        "Call to `torch._dynamo.graph_break()`",
        "Call to `torch._dynamo.skip_frame()`",
        "Call to `torch._dynamo.step_unsupported()`",
    }
)

_OWN_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "")
# compiled_calls' wrapper as another machine's report names it (relative to its project)
_CALLS_FILE = "compiler/listen/_calls.py"


def is_tool_frame(filename: str | None, name: str | None = None) -> bool:
    """A frame of this package (``compiler/``) in a stack torch wrote: this install's files, or
    ``compiled_calls``' wrapper in a report from elsewhere."""
    if not filename:
        return False
    if filename.startswith(_OWN_DIR):
        return True
    calls = filename == _CALLS_FILE or filename.replace("\\", "/").endswith("/" + _CALLS_FILE)
    return calls and name in (None, "call")


def torch_inserted(gb_id: str | None, type_: str | None, innermost_file: str | None) -> bool:
    """Is a break one torch asked for in its own code: a ``graph_break()`` (or skip) call whose
    site, the stack's innermost frame, is in torch's files?"""
    asked = (gb_id in INSERTED_BREAKS) if gb_id else (type_ in _INSERTED_TYPES)
    return asked and bool(innermost_file) and frame_kind(innermost_file) == "torch"


# ---- the code Dynamo makes after a graph break ---------------------------------------

_RESUME = re.compile(r"^torch_dynamo_resume_in_(?P<fn>.+)_at_(?P<line>\d+)$")


def resume_of(name: str | None) -> tuple[str, int] | None:
    """``torch_dynamo_resume_in_forward_at_18`` -> ``("forward", 18)``: the function a resume
    function continues and the line it resumes after; None for any other name."""
    m = _RESUME.match(name or "")
    return (m["fn"], int(m["line"])) if m else None


def function_of(name: str | None) -> str | None:
    """The function a frame runs: a resume function's, the one it continues."""
    resumed = resume_of(name)
    return resumed[0] if resumed else name


def callers_in_stacks(stacks: Iterable[Iterable[tuple[str, int, str]]]) -> dict[tuple[str, str], str]:
    """(file, function) -> ``file:line`` that called it, as the first of torch's break
    ``stacks`` (frames of ``(file, line, function)``, outermost first) that holds the function
    with a caller shows it: the innermost frame before it that is not torch's, nor this
    package's, nor the function's own (a resumed frame is called by the code it continues).
    A resume function's name stands for its function. One pass over the stacks."""
    out: dict[tuple[str, str], str] = {}
    for stack in stacks:
        caller: tuple[str, str, str] | None = None  # (file, function, "file:line")
        for f, line, n in stack:
            key = (f, function_of(n) or "")
            if caller is not None and key not in out and (caller[0], caller[1]) != key:
                out[key] = caller[2]
            if is_user_file(f) and not is_tool_frame(f, n):
                caller = (f, key[1], f"{f}:{line}")
    return out


# ---- an older report's form ------------------------------------------------------------


def with_torch_breaks(report: Any) -> Any:
    """A report's JSON form as this version builds it, for one written before (its breaks have
    no ``torch_own``): no frame of this package in a break's stack; each break marked
    ``torch_own`` where torch asked for it; each frame's ``called_from`` from the break stacks
    where they hold its function (none where it was this package's line). ``report`` itself
    is left as it was."""
    if not isinstance(report, dict):
        return report
    breaks = report.get("graph_breaks")
    breaks = breaks if isinstance(breaks, list) else []
    frames = report.get("frames")
    frames = frames if isinstance(frames, list) else []
    if not any(isinstance(b, dict) and "torch_own" not in b for b in breaks) and not any(
        isinstance(f, dict) and _tool_caller(f) for f in frames
    ):
        return report
    breaks = [_current(b) if isinstance(b, dict) and "torch_own" not in b else b for b in breaks]
    callers = callers_in_stacks(_triples(b.get("user_stack")) for b in breaks if isinstance(b, dict))
    out = dict(report)
    if isinstance(report.get("graph_breaks"), list):
        out["graph_breaks"] = breaks
    if isinstance(report.get("frames"), list):
        out["frames"] = [_recalled(f, callers) if isinstance(f, dict) else f for f in frames]
    return out


def _current(b: dict) -> dict:
    stack = b.get("user_stack")
    if isinstance(stack, list):
        stack = [f for f in stack if not (isinstance(f, dict) and _tool(f))]
    last = stack[-1] if isinstance(stack, list) and stack else None
    inner = last.get("filename") if isinstance(last, dict) else None
    out = {**b, "torch_own": torch_inserted(_s(b.get("gb_id")), _s(b.get("type")), _s(inner))}
    if isinstance(stack, list):  # a break written without a stack keeps none (the schema's default)
        out["user_stack"] = stack
    return out


def _tool(f: dict) -> bool:
    return is_tool_frame(_s(f.get("filename")), _s(f.get("name")))


def _tool_caller(f: dict) -> bool:
    called = _s(f.get("called_from"))
    return bool(called) and is_tool_frame(called.rpartition(":")[0])


def _recalled(f: dict, callers: dict[tuple[str, str], str]) -> dict:
    file, fn = _s(f.get("filename")), function_of(_s(f.get("name")))
    found = callers.get((file, fn)) if file and fn else None
    if found is None and not _tool_caller(f):
        return f
    return {**f, "called_from": found}  # this package's line is no caller of the program's


def _triples(stack: Any) -> list[tuple[str, int, str]]:
    if not isinstance(stack, list):
        return []
    return [
        (f["filename"], f.get("line") if isinstance(f.get("line"), int) else 0, _s(f.get("name")) or "")
        for f in stack
        if isinstance(f, dict) and isinstance(f.get("filename"), str)
    ]


def _s(value: Any) -> str | None:
    return value if isinstance(value, str) else None

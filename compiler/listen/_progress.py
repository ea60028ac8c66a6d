"""Progress while torch compiles, read from torch's own events as they arrive (no polling):
the recording's listeners hand each event of its compiles to one ``ProgressTracker``, which
calls ``on_progress(Progress)`` when what it would say changes, and ``on_stage(compile_id,
stage)`` when a compile reaches a further stage.

Where each fact comes from (torch 2.11-2.14):
  * the frame and its ``file:line``: ``dynamo_start``'s stack, whose last entry is the frame
    Dynamo compiles (``co_name``, ``co_firstlineno``; its file name interned by a ``str`` event);
    where that is a library's, the innermost line of the program's own before it;
  * the graph's size: the FX nodes of the graph module Dynamo's ``graph_code`` logger logs
    (compiler/listen/_listeners.py: ModuleStackHandler), before Dynamo hands it to the backend;
  * the stage and phase: torch's timed phases (``chromium_event`` begin/end, ``dynamo_timed``),
    the stage by compiler/assemble/_phases.py's table, and the artifacts of each stage;
  * autotuning: the phase ``<op>_template_autotuning`` Inductor opens while it benchmarks an
    op's template choices;
  * the kernels: ``inductor_output_code`` (the wrapper module, logged before it is loaded)
    names them all, in the order the module defines them; loading it starts each kernel's
    compile, and ``async_compile`` logs its source on the ``kernel_code`` artifact logger then
    (``_torch.KERNEL_CODE_LOGGER``): the n-th record is the n-th kernel. With compile workers,
    ``async_compile.wait`` is the wait; C++ kernels compile in threads of this process, each
    in a ``compile_file`` phase, whose ends count the kernels done.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable
from typing import Any

from ..assemble._events import Event
from ..assemble._phases import PHASE_STAGE
from ..assemble._stages import lookup
from ..model._callsites import is_tool_frame
from ..model._paths import frame_kind
from ..model._progresstypes import Progress
from ..model._report import STAGES
from ..parse._names import is_torch_id
from ..parse._outputcode import split_kernels

# events whose stage is not where the compile is when they arrive: Inductor logs its runnable
# repro (a codegen fact of the report) as it begins, before its passes and lowering
NOT_PROGRESS = frozenset({"artifact:fx_graph_runnable"})
AUTOTUNE_SUFFIX = "_template_autotuning"  # select_algorithm: f"{name}_template_autotuning"
WAIT_PHASE = "async_compile.wait"
FILE_PHASE = "compile_file"  # cpp_builder: one C++ compile
# its compile's end (or its backward's); once its phases are closed too, it has ended
END_EVENTS = ("compilation_metrics", "bwd_compilation_metrics")
# Triton's autotuning of a kernel at its first call, after the compile (GPU): its phase names
# the compile and the kernel (triton_heuristics: CachingAutotuner)
RUNTIME_AUTOTUNE = ("CachingAutotuner.benchmark_all_configs", "CachingAutotuner.coordinate_descent_tuning")
LOADED = (WAIT_PHASE, "PyCodeCache.load_by_key_path")  # once either ends, the kernels are compiled


def stage_of(ev: Event) -> str | None:
    """The stage an event shows the compile has reached (timed phases included)."""
    if ev.name in NOT_PROGRESS:
        return None
    if ev.name == "chromium_event":
        try:
            name = json.loads(ev.payload or "{}").get("name")
        except (json.JSONDecodeError, AttributeError):
            return None
        return PHASE_STAGE.get(name)
    spec = lookup(ev.name)
    return spec[0] if spec else None


class ProgressTracker:
    def __init__(
        self,
        on_progress: Callable[[Progress], None] | None,
        on_stage: Callable[[str, str], None] | None = None,
    ):
        self.on_progress = on_progress
        self.on_stage = on_stage
        self.lock = threading.RLock()
        self.strings: dict[int, str] = {}
        self.now: dict[str, Progress] = {}  # by compile id
        self.phases: dict[str, list[str]] = {}  # phases open, innermost last
        self.names: dict[str, list[str]] = {}  # each compile's kernels, in the order they compile
        self.waiting_on: str | None = None  # the compile waiting on compile workers
        self.ended: set[str] = set()  # compiles whose compilation_metrics came

    # ---- what the listeners hand over --------------------------------------------------------

    def event(self, ev: Event) -> None:
        """A structured-trace event of the recording's compiles (``str`` ones too)."""
        try:
            with self.lock:
                self._event(ev)
        except Exception:  # a progress display must never break the user's compile
            self.on_progress = self.on_stage = None

    def foreign(self, ev: Event) -> None:
        """A structured-trace event of no compile of the recording's: a ``compile_file`` phase
        ending in one of Inductor's compile threads while a compile waits on them."""
        try:
            with self.lock:
                cid = self.waiting_on
                if cid is None or ev.name != "chromium_event":
                    return
                name, ph, _args = _chromium(ev)
                if name == FILE_PHASE and ph == "E" and cid in self.now:
                    p = self.now[cid]
                    done = min((p.kernels_done or 0) + 1, p.kernels or 0)
                    self._set(cid, kernels_done=done)
        except Exception:
            self.on_progress = self.on_stage = None

    def graph(self, cid: str | None, nodes: int) -> None:
        """Dynamo's graph for compile ``cid`` has ``nodes`` FX nodes."""
        if cid is None:
            return
        try:
            with self.lock:
                self._set(cid, graph_nodes=nodes)
        except Exception:
            self.on_progress = self.on_stage = None

    def kernel(self, cid: str | None) -> None:
        """``async_compile`` began the next kernel's compile in compile ``cid``."""
        if cid is None:
            return
        try:
            with self.lock:
                p = self.now.get(cid)
                if p is None:
                    return
                names = self.names.get(cid)
                if names is None:  # a module loaded from the cache: torch logs its code after
                    self._set(cid, kernel_n=(p.kernel_n or 0) + 1)
                    return
                n = min((p.kernel_n or 0) + 1, len(names))
                self._set(cid, kernel_n=n, kernel=names[n - 1] if n else None)
        except Exception:
            self.on_progress = self.on_stage = None

    # ---- reading events ----------------------------------------------------------------------

    def _event(self, ev: Event) -> None:
        if ev.name == "str":
            body = ev.body
            if isinstance(body, list) and len(body) == 2:
                self.strings[body[1]] = body[0]
            return
        cid = ev.compile_id
        chromium = _chromium(ev) if ev.name == "chromium_event" else None
        if (
            chromium is not None
            and isinstance(chromium[2].get("compile_id"), str)
            and is_torch_id(chromium[2]["compile_id"])
        ):
            cid = chromium[2][
                "compile_id"
            ]  # a phase after the compile (runtime autotuning) names its compile
        if cid is None:
            return
        changes: dict[str, Any] = {}
        if ev.name == "dynamo_start":
            changes.update(self._frame(ev))
        elif chromium is not None:
            changes.update(self._phase(cid, *chromium))
        elif ev.name in END_EVENTS:
            self.ended.add(cid)
        elif ev.name == "inductor_output_code" and ev.payload:
            names = [k.name for k in split_kernels(ev.payload)]
            self.names[cid] = names
            changes.update(kernels=len(names), kernel_n=0, kernel=None, kernels_done=None)
        changes["ended"] = cid in self.ended and not self.phases.get(cid)
        if chromium is None:
            stage = stage_of(ev)
        else:  # the phase's stage, its payload read once
            stage = PHASE_STAGE.get(chromium[0]) if isinstance(chromium[0], str) else None
        p = self.now.get(cid)
        if stage is not None and (p is None or STAGES.index(stage) > STAGES.index(p.stage)):
            changes.update(stage=stage, stage_since=time.monotonic())
            if self.on_stage is not None:
                self.on_stage(cid, stage)
        if changes or p is None:
            self._set(cid, **changes)

    def _frame(self, ev: Event) -> dict[str, Any]:
        stack = ev.body.get("stack") if isinstance(ev.body, dict) else None
        if not isinstance(stack, list) or not stack or not isinstance(stack[-1], dict):
            return {}
        frames = [
            (self._file(f.get("filename")), f.get("line"), f.get("name"))
            for f in stack
            if isinstance(f, dict)
        ]
        filename, line, name = frames[-1]
        caller = None
        if (
            filename is None or frame_kind(filename) != "user"
        ):  # a library's frame: the program's line that led there
            for f, ln, n in reversed(frames[:-1]):
                if (
                    f is not None
                    and isinstance(ln, int)
                    and frame_kind(f) == "user"
                    and not is_tool_frame(f, n)
                ):
                    caller = f"{f}:{ln}"
                    break
        return {
            "frame": name if isinstance(name, str) else None,
            "filename": filename,
            "line": line if isinstance(line, int) else None,
            "called_from": caller,
        }

    def _file(self, filename: Any) -> str | None:
        if isinstance(filename, int):
            filename = self.strings.get(filename) or _interned(filename)
        return filename if isinstance(filename, str) else None

    def _phase(self, cid: str, name: Any, ph: Any, args: dict) -> dict[str, Any]:
        if not isinstance(name, str):
            return {}
        open_ = self.phases.setdefault(cid, [])
        if ph == "B":
            open_.append(name)
        elif ph == "E" and name in open_:
            del open_[len(open_) - 1 - open_[::-1].index(name)]
        else:
            return {}
        changes: dict[str, Any] = {"phase": open_[-1] if open_ else None}
        tuning = [n[: -len(AUTOTUNE_SUFFIX)] for n in open_ if n.endswith(AUTOTUNE_SUFFIX)]
        changes["autotuning"] = tuning[-1] if tuning else None
        if name in RUNTIME_AUTOTUNE:
            kernel = args.get("kernel_name")
            changes["autotuning"] = (kernel if isinstance(kernel, str) else name) if ph == "B" else None
        if name == WAIT_PHASE:
            changes["waiting"] = ph == "B"
            self.waiting_on = cid if ph == "B" else None
        p = self.now.get(cid)
        if ph == "E" and name in LOADED and p is not None and p.kernels:  # every kernel compiled
            changes["kernels_done"] = p.kernels
        return changes

    def _set(self, cid: str, **changes: Any) -> None:
        p = self.now.get(cid)
        if p is None:
            now = time.monotonic()
            q = Progress(compile_id=cid, stage=STAGES[0], stage_since=now, compile_since=now)
            q = dataclasses.replace(q, **changes)
        else:
            q = dataclasses.replace(p, **changes)
        self.now[cid] = q
        if q != p and self.on_progress is not None:
            self.on_progress(q)


def _chromium(ev: Event) -> tuple[Any, Any, dict]:
    try:
        data = json.loads(ev.payload or "{}")
    except (json.JSONDecodeError, TypeError):
        return None, None, {}
    if not isinstance(data, dict):
        return None, None, {}
    args = data.get("args")
    return data.get("name"), data.get("ph"), args if isinstance(args, dict) else {}


def _interned(index: int) -> str | None:
    from . import _torch

    return _torch.interned_strings().get(index)

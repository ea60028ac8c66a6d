"""What a recording listens with: the scope of compiles it sees, its handlers on torch's
loggers, Inductor's autotuning feedback, and the fusion IR snapshots (compiler/listen/_capture.py
attaches and detaches them). Each appends ``Event``s to the recording's list."""

from __future__ import annotations

import dis
import json
import logging
import threading
import warnings
from collections.abc import Callable
from typing import Any

from ..assemble._events import Event, from_record
from . import _torch, _torchfusion
from ._progress import ProgressTracker


class Scope:
    """Which compiles a recording sees: those started in the thread that entered it, and
    every later event of those compiles in any thread (autograd may run a backward, and
    so compile it lazily, in a thread of its own). Compile ids are unique per process, so
    another thread's compiles are told apart by theirs."""

    def __init__(self, thread: int):
        self.thread = thread
        self.ids: set[str] = set()

    def accepts(self, thread: int | None, cid: str | None) -> bool:
        if cid is not None and cid in self.ids:
            return True
        if thread != self.thread:
            return False
        if cid is not None:
            self.ids.add(cid)
        return True


class TraceHandler(logging.Handler):
    def __init__(self, sink: list[Event], scope: Scope, progress: ProgressTracker | None = None):
        super().__init__(level=logging.DEBUG)
        self.sink = sink
        self.scope = scope
        self.progress = progress

    def emit(self, record: logging.LogRecord) -> None:
        meta = getattr(record, "metadata", None)
        if not isinstance(meta, dict):
            return
        ev = from_record(dict(meta), getattr(record, "payload", None))
        if ev is None:
            return
        # an interned file name is the process's, whichever thread interned it first
        if ev.name == "str" or self.scope.accepts(record.thread, ev.compile_id):
            self.sink.append(ev)
            if self.progress is not None:
                self.progress.event(ev)
        elif self.progress is not None and ev.compile_id is None:  # Inductor's compile threads
            self.progress.foreign(ev)

    def handleError(self, record: logging.LogRecord) -> None:  # never disturb the user's run
        pass


def compile_event(name: str) -> Event:
    """An event named ``name`` for the compile running in this thread (none outside one)."""
    cid = _torch.current_compile_id()
    meta: dict[str, Any] = {name: {}}
    if cid is not None:
        meta["frame_id"], meta["frame_compile_id"] = cid
        ca = _torch.current_compiled_autograd_id()
        if ca is not None:  # Dynamo compiling Compiled Autograd's graph: "!0/3/0"
            meta["compiled_autograd_id"] = ca
    return Event(name, meta)


class ArtifactHandler(logging.Handler):
    """Records one Inductor artifact logger's messages under ``log:<artifact>``."""

    def __init__(self, sink: list[Event], scope: Scope, artifact: str):
        super().__init__(level=logging.DEBUG)
        self.sink = sink
        self.scope = scope
        self.name_ = f"log:{artifact}"

    def emit(self, record: logging.LogRecord) -> None:
        ev = compile_event(self.name_)
        if self.scope.accepts(record.thread, ev.compile_id):
            ev.payload = record.getMessage()
            self.sink.append(ev)

    def handleError(self, record: logging.LogRecord) -> None:
        pass


class KernelCodeHandler(logging.Handler):
    """Hears ``async_compile``'s ``kernel_code`` logger (``_torch.KERNEL_CODE_LOGGER``): one
    record as each kernel's compile begins, which the progress counts (no event is kept)."""

    def __init__(self, scope: Scope, progress: ProgressTracker):
        super().__init__(level=logging.DEBUG)
        self.scope = scope
        self.progress = progress

    def emit(self, record: logging.LogRecord) -> None:
        cid = compile_event("kernel_code").compile_id
        if cid is not None and self.scope.accepts(record.thread, cid):
            self.progress.kernel(cid)

    def handleError(self, record: logging.LogRecord) -> None:
        pass


class ModuleStackHandler(logging.Handler):
    """Hears Dynamo's graph-code logger (``_torch.GRAPH_CODE_LOGGER``) and records one
    ``nn_module_stack`` event per Dynamo graph: each node's module stack, read from the graph
    module torch logs (never formatted), which its printed code does not carry."""

    def __init__(self, sink: list[Event], scope: Scope, progress: ProgressTracker | None = None):
        super().__init__(level=logging.DEBUG)
        self.sink = sink
        self.scope = scope
        self.progress = progress

    def emit(self, record: logging.LogRecord) -> None:
        try:
            ev = compile_event("nn_module_stack")
            if not self.scope.accepts(record.thread, ev.compile_id):
                return
            gm = _torch.logged_graph_module(record)
            if gm is not None:
                ev.payload = json.dumps(_torch.module_stacks(gm))
                self.sink.append(ev)
                if self.progress is not None:
                    self.progress.graph(ev.compile_id, _torch.graph_nodes(gm))
        except Exception:  # never disturb the user's compile
            pass

    def handleError(self, record: logging.LogRecord) -> None:
        pass


class AutotuneFeedback:
    """Receives Inductor's autotuning results (``select_algorithm.add_feedback_saver``): one
    ``autotune`` event per benchmarked op, in the compile that benchmarked it."""

    def __init__(self, sink: list[Event], scope: Scope):
        self.sink = sink
        self.scope = scope

    def __call__(self, timings, name, input_nodes, choices, profiled=None, precompile_times=None) -> None:
        try:
            ev = compile_event("autotune")
            if self.scope.accepts(threading.get_ident(), ev.compile_id):
                ev.payload = json.dumps(_torch.autotune_choices(timings, name, input_nodes, precompile_times))
                self.sink.append(ev)
        except Exception:  # never disturb the user's compile
            pass


class FusionIR:
    """Inductor's IR before and after fusion, as ``log:ir_pre_fusion`` / ``log:ir_post_fusion``
    events: the scheduler's pass hook before fusion snapshots each compile's nodes (a shallow
    copy each) and its scheduler; Inductor's own formatter renders them at ``render()``, when
    the report is built, outside the compile. A snapshot keeps its compile's lowered graph in
    memory (~1.5 MB per BERT layer): past MAX_PENDING of them, the oldest is rendered during
    the next compile instead."""

    MAX_PENDING = 8

    def __init__(self, sink: list[Event], scope: Scope):
        self.sink = sink
        self.scope = scope
        self.pending: list[tuple[list[Event], Any]] = []
        self.passes: list[Any] = []
        self.lock = threading.Lock()

    def hook(self, prior: Any) -> Any:
        def look(nodes: list) -> None:
            events = [compile_event(f"log:{artifact}") for artifact in _torch.FUSION_ARTIFACTS]
            if self.scope.accepts(threading.get_ident(), events[0].compile_id):
                with self.lock:
                    self.pending.append((events, _torchfusion.fusion_snapshot(nodes)))
                    self.sink.extend(events)
                    while len(self.pending) > self.MAX_PENDING:
                        self._render(*self.pending.pop(0))

        hook = _torchfusion.snapshot_pass(look, prior)
        self.passes.append(hook)
        return hook

    def stop(self) -> None:
        """No more snapshots (a hook left in torch's config by an overlapping recording
        passes the nodes on untouched)."""
        for hook in self.passes:
            hook.look = None
        self.passes = []

    def render(self) -> None:
        with self.lock:
            pending, self.pending = self.pending, []
            for events, snapshot in pending:
                self._render(events, snapshot)

    def _render(self, events: list[Event], snapshot: Any) -> None:
        for artifact, ev in zip(_torch.FUSION_ARTIFACTS, events):
            try:
                ev.payload = _torchfusion.render_fusion_ir(artifact, snapshot)
            except Exception as e:  # a torch change we do not know: say so where the IR goes
                ev.payload = f"{_torch.FUSION_HEADERS[artifact]}(not rendered: {type(e).__name__}: {e})"
            # None: never reached (the compile failed while fusing); the report leaves it out


class BytecodeHook:
    """Receives Dynamo's bytecode hook (``_torch.add_bytecode_hook``): one ``bytecode`` event
    per compiled frame, resume functions included, in the compile that made it. Its payload
    holds the ``dis`` listing of the frame's code and of the code Dynamo made to run instead
    (``dis.Bytecode(code).dis()``, the text torch logs as ``<name>_ORIGINAL_BYTECODE``), and
    each as Python where ``decompile`` (depyf's, when installed) manages it."""

    def __init__(self, sink: list[Event], scope: Scope, decompiler: tuple[Callable, str] | None):
        self.sink = sink
        self.scope = scope
        self.decompile, self.decompiler = decompiler if decompiler is not None else (None, None)

    def __call__(self, code: Any, new_code: Any) -> None:
        try:
            ev = compile_event("bytecode")
            if not self.scope.accepts(threading.get_ident(), ev.compile_id):
                return
            ev.metadata["bytecode"] = {
                "name": code.co_name,
                "filename": code.co_filename,
                "line": code.co_firstlineno,
                "decompiler": self.decompiler,
            }
            facts: dict[str, Any] = {}
            for key, c in (("original", code), ("modified", new_code)):
                facts[key] = dis.Bytecode(c).dis()
                if self.decompile is not None:
                    try:
                        facts[f"{key}_source"] = self.decompile(c)
                    except Exception as e:  # depyf does not know every instruction
                        msg = str(e)
                        facts[f"{key}_error"] = (
                            msg if msg.startswith(type(e).__name__) else f"{type(e).__name__}: {msg}"
                        )
            ev.payload = json.dumps(facts)
            self.sink.append(ev)
        except Exception:  # never disturb the user's compile
            pass


def decompiler() -> tuple[Callable, str] | None:
    """depyf's ``decompile(code) -> str`` and its version where depyf is installed (the
    ``bytecode`` extra), else None. Imported before the recording attaches anything: depyf
    imports torch._dynamo, and warns about torch versions it compares as strings."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import depyf
    except ImportError:
        return None
    return depyf.decompile, f"depyf {getattr(depyf, '__version__', '?')}"

"""Record torch.compile in-process through its supported logging hooks.

Hooks torch offers for it:
  * a handler on the structured-trace logger (``torch.__trace``), the same stream
    ``TORCH_TRACE`` writes to files: torch builds a record only while it has handlers;
  * a handler on Inductor's ``fusion`` artifact logger (fusion decisions), which is not part
    of the structured trace;
  * Inductor's scheduler pass hook before fusion (config), where each compile's nodes and
    scheduler are snapshotted; the IR text before and after fusion is rendered from them when
    the report is built, after the compile;
  * Inductor's autotuning feedback saver;
  * a handler on Dynamo's ``graph_code`` artifact logger, which reads each node's module stack
    off the graph module it logs (the printed graph does not carry it);
  * Dynamo's bytecode hook: each frame's code and the code Dynamo runs in its place (and, with
    depyf installed, both as Python).
Nothing is patched; everything is detached on exit, whatever ends the block. The listeners
are rows of one table (compiler/listen/_table.py: ``LISTENERS``); the fusion hook is config.
"""

from __future__ import annotations

import dataclasses
import inspect
import threading
import weakref
from collections.abc import Callable
from typing import Any

import torch

from ..assemble import _build, _draft
from ..assemble._events import Event
from ..model._gcpause import gc_paused
from ..model._options import RecordOptions
from ..model._report import Report
from ..model._subject import remember
from ..model._trust import marked
from . import _torch, _torchfusion
from ._callstate import capture, modules_in
from ._exporterror import error_fact
from ._journal import Journal, JournaledEvents
from ._listeners import FusionIR, Scope, decompiler
from ._loggers import listened  # noqa: F401 - the tests read it
from ._progress import ProgressTracker
from ._table import Ears, attach
from ._tritonir import TritonCapture, with_binaries


class Recording:
    """Context manager: ``with compiler.recording() as rec: ...`` then ``rec.report``.

    Records every compile started inside the block by the thread that entered it (and
    their backward graphs, compiled lazily wherever autograd runs them), whatever backend or
    mode the user chose; compiles of other threads are not this recording's. Exceptions
    (including KeyboardInterrupt) pass through unchanged; the partial report is still
    available on ``rec.report``. Recordings may overlap, in one thread or several, and end
    in any order: torch's loggers are restored when the last one ends. Config the user sets
    inside the block is the user's: only values still as the recording set them are undone.
    With ``journal`` (a path), every event is also appended to that file as it arrives (see
    ``recording``).
    """

    def __init__(self, **options: Any):
        o = RecordOptions.of(options, "compiler.Recording")  # the keywords: compiler/model/_options.py
        self.journal = o.journal
        self.fusion_ir = o.fusion_ir
        self.triton_ir = o.triton_ir
        self._triton: TritonCapture | None = None
        self.fusion_logs = o.fusion_logs
        self.provenance = o.provenance
        self.on_stage = o.on_stage
        self.on_progress = o.on_progress
        self.caches = o.caches
        self.events: list[Event] = []
        self._report: Report | None = None
        self._ended: tuple[str | None, dict[int, str]] | None = None  # (error, interned strings) at exit
        self._report_lock = threading.Lock()
        self._undo: list[Callable[[], Any]] = []  # what undoes each listener attached (_table.py)
        self._fusion: FusionIR | None = None
        self._config: list[tuple[Any, str, Any, Any]] = []  # (patch, dotted name, our value, module)
        self._journal: Journal | None = None
        self._active = False

    def __enter__(self) -> Recording:
        if self._active:
            raise RuntimeError("this recording is already active; use a new compiler.recording()")
        # the slow part first (importing Inductor takes ~1 s): Ctrl-C here leaves nothing attached
        wanted = _wanted_config(caches=self.caches, provenance=self.provenance)
        if self.triton_ir:  # Triton's listener hears only in-process compiles (_tritonir.py)
            wanted.append((_torch.inductor_config(), _torch.INDUCTOR_COMPILE_THREADS, 1))
        decompile = decompiler()
        self.events = []
        self._export_error = None  # a data-dependent error that ended a torch.export call
        self._report, self._ended = None, None
        scope = Scope(threading.get_ident())
        try:
            if self.journal is not None:
                self._journal = Journal(self.journal)
                self._journal.write_strings(_torch.interned_strings())
                self.events = JournaledEvents(self._journal)
            if self.fusion_ir:
                self._fusion = FusionIR(self.events, scope)
                wanted += _fusion_config(self._fusion, caches=self.caches)
            self._active = True
            before = {
                name: _get(module, name) for module, name in _watched() + [(m, n) for m, n, _v in wanted]
            }
            for module, name, value in wanted:
                patch = module.patch({name: value})
                patch.__enter__()
                self._config.append((patch, name, value, module))
            self.events.append(_recording_config(self._config, before))
            progress = (
                ProgressTracker(self.on_progress, self.on_stage)
                if self.on_progress or self.on_stage
                else None
            )
            ears = Ears(self.events, scope, progress, decompile, self._undo)
            attach(ears, lambda option: bool(getattr(self, option)))
            if self.triton_ir:  # no events: Kernel.binaries, joined to the report once built
                self._triton = TritonCapture()
                self._triton.attach()
        except BaseException:
            self._detach()
            self._active = False
            self.events = []  # a recording that never started holds nothing (not even its config event)
            raise
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        try:
            self._detach()
        finally:
            self._active = False
            error = None
            self._export_error = None
            if exc_type is not None:
                error = f"{exc_type.__name__}: {exc}" if str(exc) else exc_type.__name__
                self._export_error = error_fact(exc)
            self._ended = (error, _torch.interned_strings())
        return False

    @property
    def report(self) -> Report | None:
        """The block's report once it has ended (None before). Built from the recorded events
        at the first access, not on leaving the block: the block pays only for collecting
        them. Where the block ended with an exception, a report that could not be built
        says so in its ``error`` rather than raising."""
        if self._active or self._ended is None:
            return None
        with self._report_lock:
            if self._report is None:
                with gc_paused():
                    self._report = self._build(*self._ended)
            return self._report

    def _detach(self) -> None:
        """Undo what __enter__ did, whatever part of it ran; safe to call twice."""
        if self._triton is not None:
            self._triton.detach()
        while self._undo:
            self._undo.pop()()
        if self._fusion is not None:
            self._fusion.stop()
        if self._journal is not None:
            self._journal.close()
            self._journal = None
        while self._config:
            patch, name, value, module = self._config.pop()
            if _get(module, name) == value:
                patch.__exit__(None, None, None)
                # the value before ours may be the fusion hook of a recording that ended while
                # ours wrapped it: undo that one's patch now too
                while (stale := _stale_patch(_get(module, name))) is not None:
                    stale.__exit__(None, None, None)
            elif isinstance(value, _torchfusion.snapshot_pass_class()):
                # another recording's hook wraps ours (it passes the nodes on, ours now does
                # nothing): whoever restores ours as the value undoes this patch then
                _stale_hooks[value] = patch
            # else: a value the user changed inside the block is theirs: leave it

    def _build(self, error: str | None, interned: dict[int, str]) -> Report:
        try:
            if self._fusion is not None:
                self._fusion.render()
                self._fusion = None
            report = _build.build(
                list(self.events), torch_version=torch.__version__, interned=interned, error=error
            )
            if self._triton is not None:
                report = with_binaries(report, self._triton.binaries(load=torch.cuda.is_available()))
            if self._export_error is not None:
                report = dataclasses.replace(
                    report, exports=_draft.with_error(report.exports, self._export_error)
                )
            return marked(report)  # its runnables this user's own: compiler.fill runs them unasked
        except Exception as build_error:  # a bug of ours must not replace the user's error
            if error is None:
                raise
            return Report(
                torch_version=torch.__version__,
                device="cpu",
                error=f"{error} (report incomplete: {type(build_error).__name__}: {build_error})",
            )


# fusion hook -> the config patch that set it, for a hook still in torch's config after its
# recording ended (a recording that started later wraps it; see Recording._detach); an entry
# goes with its hook
_stale_hooks: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def _stale_patch(value: Any) -> Any:
    """The patch that set ``value``, a fusion hook whose recording ended, taken out; else None."""
    if not isinstance(value, _torchfusion.snapshot_pass_class()):
        return None
    return _stale_hooks.pop(value, None)


def _wanted_config(*, caches: bool, provenance: bool) -> list[tuple[Any, str, Any]]:
    """Config for the recorded block, set through torch's own config.patch: compile caches
    off unless asked (a cache hit skips the stages we show: no AOT graphs, no fusion IR),
    and Inductor's provenance tracking on (which kernel came from which graph nodes).
    Neither changes what the compiled code computes. torch keeps these per thread."""
    inductor = _torch.inductor_config()
    functorch = _torch.functorch_config()
    out: list[tuple[Any, str, Any]] = []
    if not caches:
        out.append((inductor, _torch.INDUCTOR_FX_GRAPH_CACHE, False))
        if hasattr(functorch, _torch.FUNCTORCH_AUTOGRAD_CACHE):
            out.append((functorch, _torch.FUNCTORCH_AUTOGRAD_CACHE, False))
    live = caches and _torch.caches_on(inductor)
    if provenance and not live and hasattr(inductor.trace, "provenance_tracking_level"):
        # the user's own level where they chose one, else the basic one: the same kernel to
        # post-grad node mapping without "normal"'s per-pass node history (see _torch). Not
        # with the caches on: the level is part of the FX-graph cache key, which must be
        # the one torch computes without us (where the user turned the cache off, no key)
        level = inductor.trace.provenance_tracking_level or _torch.PROVENANCE_BASIC
        out.append((inductor, _torch.INDUCTOR_PROVENANCE, level))
    return out


def _fusion_config(fusion: FusionIR, *, caches: bool) -> list[tuple[Any, str, Any]]:
    """Inductor's scheduler pass hook before fusion set to ``fusion``'s snapshot, calling the
    pass configured before it. A plain callable configured before makes torch bypass its
    FX-graph cache; wrapped in our pass it would not, so the cache is turned off instead."""
    inductor = _torch.inductor_config()
    if not hasattr(inductor, _torch.FUSION_PASS):  # not in this torch: no IR before / after fusion
        return []
    prior = _get(inductor, _torch.FUSION_PASS)
    out: list[tuple[Any, str, Any]] = [(inductor, _torch.FUSION_PASS, fusion.hook(prior))]
    if caches and not _torchfusion.is_cache_safe_pass(prior):
        out.append((inductor, _torch.INDUCTOR_FX_GRAPH_CACHE, False))
    return out


def _recording_config(config: list[tuple[Any, str, Any, Any]], before: dict[str, Any]) -> Event:
    """An event naming the config the recording set and the value before it (the report tells
    them from the user's options)."""
    body = {name: {"before": repr(value)} for name, value in before.items()}
    for _p, name, value, _m in config:
        body[name]["ours"] = repr(value)
    return Event("recording_config", {"recording_config": body})


def _watched() -> list[tuple[Any, str]]:
    """The config a recording may set, named in its event with the value it found, whether it
    set it or not: a value a recording set back is then told from one the user set."""
    inductor = _torch.inductor_config()
    out = [(inductor, _torch.INDUCTOR_FX_GRAPH_CACHE)]
    if hasattr(inductor.trace, "provenance_tracking_level"):
        out.append((inductor, _torch.INDUCTOR_PROVENANCE))
    return out


def _get(module: Any, dotted: str) -> Any:
    obj = module
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def recording(**options: Any) -> Recording:
    """Record every torch.compile that happens inside a ``with`` block.

    ``caches=True`` (default) keeps Inductor's FX-graph and AOTAutograd caches as the user has
    them, with the cache key torch computes without us: a warm start records at the speed of
    the user's warm run. A hit shows up as ``Compile.caches`` (and ``Compile.from_cache``); the
    stages it skipped, and Inductor's kernel-to-node map (its provenance level is part of the
    key), are filled in on demand by ``compiler.fill(report)`` (a cold compile of each compile's
    runnable repro in a fresh process). ``caches=False`` turns both caches off inside the
    block, so every stage really runs and is recorded (``pt2-explorer record --fresh``);
    outputs are unchanged either way.
    ``on_stage(compile_id, stage)`` is called as each compile reaches a stage (for progress
    displays); ``on_progress(progress)`` with a ``compiler.types.Progress`` each time what it
    would say changes: the frame and its ``file:line``, the stage and torch's timed phase, the
    graph's FX nodes, the op being autotuned, the kernel being compiled (n of N) and the wait on
    compile workers, read from torch's events as they arrive (compiler/listen/_progress.py). An
    exception either raises is swallowed and stops further calls. Both are called in the
    thread that compiles, inside the compile: keep them quick.

    What it costs (benchmarks/README.md, H100): torch builds every trace payload while a
    handler listens, as under TORCH_TRACE, and the block costs about what TORCH_TRACE does.
    ``provenance=False`` leaves out the CPU kernel-to-node map.

    ``fusion_logs=True``: Inductor's fusion decisions (its fusion loggers at debug level: each
    pair of nodes it tried, fused or why not), on ``Fuse.fusion_log``. Off by default: Inductor
    formats every scheduler node it considers, about 8% of a GPT-2 training step's compile on
    the H100 (benchmarks/README.md, ``overhead_inproc.py``).

    ``fusion_ir=True``: Inductor's IR before and after fusion (the text its ``ir_pre_fusion``
    / ``ir_post_fusion`` loggers carry), snapshotted during the compile and rendered with
    Inductor's own formatter at the first ``rec.report``. Off by default: the rendering
    (sympy printing of every dependency, an FX module per loop body) costs 5-15% of the
    compile's time again (benchmarks/README.md, ``overhead.py``).

    ``journal`` (a path): every event is also appended to that file as it arrives, in the
    TORCH_TRACE log format, each with one write to the operating system; where the process
    dies before the report is built (a signal, ``os._exit``, a crash in native code),
    ``compiler.load_trace(journal)`` rebuilds it, less the IR before and after fusion. The
    file is the caller's: never truncated or removed. The writes cost little (0.04 s for the
    1,017 events of examples/tiny_model.py's 23 s recorded run on CPU). ``pt2-explorer
    record`` keeps one beside its report while the program runs.

    ``triton_ir=True`` (GPU, Triton >= 3.4): every Inductor Triton kernel's TTIR, TTGIR, LLIR,
    PTX (and SASS where nvdisasm is present), registers, spills, shared memory and the chosen
    config, on ``Kernel.binaries``. It compiles kernels in this process, one at a time
    (``compile_threads=1``): a compile with many kernels takes longer (benchmarks/README.md).

    >>> with recording() as rec:
    ...     torch.compile(fn)(x)
    >>> rec.report.graph_breaks
    """
    RecordOptions.of(options, "compiler.recording")
    return Recording(**options)


# help() and editors show the options (declared once, in compiler/model/_options.py)
Recording.__init__.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD), *RecordOptions.parameters()]
)
recording.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    RecordOptions.parameters(), return_annotation=Recording
)


def record(fn, *args, compile_kwargs: dict[str, Any] | None = None, **kwargs) -> tuple[Any, Report]:
    """Compile ``fn`` with ``torch.compile(**compile_kwargs)``, call it once on the given
    arguments, and return ``(result, report)``. Exceptions from the call propagate; use
    ``recording()`` directly to keep the partial report of a failing call.

    The report remembers ``fn``, the compiled callable and the arguments (not saved to JSON),
    so ``compiler.benchmark(report)`` times them with no second compile."""
    compiled = torch.compile(fn, **(compile_kwargs or {}))
    state = capture(modules_in(fn))  # the caller's grad mode, autocast, ...: a benchmark's calls run in it
    with recording() as rec:
        result = compiled(*args, **kwargs)
    assert rec.report is not None
    remember(rec.report, fn, compiled, args, kwargs, compile_kwargs, state=state)
    return result, rec.report

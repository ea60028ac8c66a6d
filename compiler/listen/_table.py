"""The ONE table of what a recording listens with: ``LISTENERS``, each row a way of hearing
torch in-process, the recording option that turns it on, and the events it makes (rows of
compiler/assemble/_stages.py: EVENTS). compiler/listen/_capture.py attaches every row whose
option is on, in order, and undoes what each attached, in reverse, whatever ends the block.

The structured trace (the first row) carries most events: a new one torch logs there needs
no row here. An event torch does not put in the structured trace (an artifact logger's
records, a hook's calls) is a row: a logger of Inductor's is ``_artifacts(_torch.<NAMES>)``,
its records ``log:<artifact>`` events; anything else gets its listener in
compiler/listen/_listeners.py and its attach function here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..assemble._events import Event
from . import _torch
from ._listeners import (
    ArtifactHandler,
    AutotuneFeedback,
    BytecodeHook,
    KernelCodeHandler,
    ModuleStackHandler,
    Scope,
    TraceHandler,
)
from ._loggers import listen_on, unlisten
from ._progress import ProgressTracker
from ._seqnr import SeqNrHandler


@dataclass
class Ears:
    """What a row's attach function gets: where events go, which compiles are the recording's,
    and ``undo``, where it puts what undoes each thing it attached, as soon as it is attached."""

    sink: list[Event]
    scope: Scope
    progress: ProgressTracker | None  # where a display listens (compiler/listen/_progress.py)
    decompiler: tuple[Callable, str] | None  # depyf's, found before anything is attached
    undo: list[Callable[[], Any]]


@dataclass(frozen=True)
class Listener:
    name: str
    events: tuple[str, ...]  # what it makes ("*": every structured-trace event)
    attach: Callable[[Ears], None] | None  # None: set as config (see its row)
    option: str | None = None  # the recording option that turns it on (None: every recording)


def _trace(ears: Ears) -> None:
    handler = TraceHandler(ears.sink, ears.scope, ears.progress)
    log = _torch.trace_logger()
    ears.undo.append(lambda: log.removeHandler(handler))  # first: removing one never added is no harm
    log.addHandler(handler)


def _on_logger(ears: Ears, names: tuple[tuple[str, str], ...], handler: Callable[[str], Any]) -> None:
    """``handler(artifact)`` listening on each of torch's artifact loggers ``names`` that this
    torch registers."""
    for module, artifact in names:
        log = _torch.artifact_logger(module, artifact)
        if log is None:  # not registered in this torch version
            continue
        h = handler(artifact)
        listen_on(log, h)
        ears.undo.append(lambda log=log, h=h: unlisten(log, h))


def _artifacts(names: tuple[tuple[str, str], ...]) -> Callable[[Ears], None]:
    """Each record of Inductor's artifact loggers ``names`` as a ``log:<artifact>`` event."""

    def attach(ears: Ears) -> None:
        _on_logger(ears, names, lambda artifact: ArtifactHandler(ears.sink, ears.scope, artifact))

    return attach


def _seq_nr(ears: Ears) -> None:
    seq = SeqNrHandler(ears.sink, ears.scope)  # one for both loggers: a joint graph's lines span them
    _on_logger(ears, _torch.SEQ_NR_LOGGERS, lambda _artifact: seq)


def _module_stacks(ears: Ears) -> None:
    _on_logger(
        ears,
        (_torch.GRAPH_CODE_LOGGER,),
        lambda _artifact: ModuleStackHandler(ears.sink, ears.scope, ears.progress),
    )


def _kernel_code(ears: Ears) -> None:
    if ears.progress is not None:
        progress = ears.progress
        _on_logger(
            ears, (_torch.KERNEL_CODE_LOGGER,), lambda _artifact: KernelCodeHandler(ears.scope, progress)
        )


def _autotune(ears: Ears) -> None:
    feedback = AutotuneFeedback(ears.sink, ears.scope)
    if _torch.add_autotune_feedback(feedback):
        ears.undo.append(lambda: _torch.remove_autotune_feedback(feedback))


def _bytecode(ears: Ears) -> None:
    handle = _torch.add_bytecode_hook(BytecodeHook(ears.sink, ears.scope, ears.decompiler))
    if handle is not None:
        ears.undo.append(handle.remove)


LISTENERS: tuple[Listener, ...] = (
    Listener("structured trace", ("*",), _trace),  # torch.__trace: what TORCH_TRACE writes
    Listener("fusion decisions", ("log:fusion",), _artifacts(_torch.FUSION_LOGGERS), option="fusion_logs"),
    Listener("CUDA graphs", ("log:cudagraphs",), _artifacts(_torch.CUDAGRAPH_LOGGERS)),
    Listener("seq_nr", ("log:seq_nr",), _seq_nr),
    Listener("module stacks", ("nn_module_stack",), _module_stacks),
    Listener("autotuning", ("autotune",), _autotune),
    Listener("bytecode", ("bytecode",), _bytecode),
    # each kernel's compile beginning, for a progress display only (no event is kept)
    Listener("kernel compiles", (), _kernel_code, option="on_progress"),
    # Inductor's scheduler pass hook before fusion is config: compiler/listen/_capture.py sets
    # it (_fusion_config) with the recording's other config, and its FusionIR renders the IR
    Listener("fusion IR", ("log:ir_pre_fusion", "log:ir_post_fusion"), None, option="fusion_ir"),
)


def attach(ears: Ears, on: Callable[[str], bool]) -> None:
    """Every row whose option is on (``on(option)``: the recording's argument of that name),
    attached in order; running ``ears.undo`` backwards undoes them, as far as it got."""
    for row in LISTENERS:
        if row.attach is not None and (row.option is None or on(row.option)):
            row.attach(ears)

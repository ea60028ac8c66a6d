"""Records of pipelines beside torch.compile's own (Compiled Autograd's captured backward),
and of where a compile's time went (torch's timed phases as a waterfall).

Kept apart from the stage records (_stagetypes) so each pipeline adds its own record; a
Compile refers to it by a field (``Compile.compiled_autograd``)."""

from __future__ import annotations

from dataclasses import dataclass

from ._stagetypes import Graph


@dataclass(frozen=True)
class CompiledAutograd:
    """One backward graph Compiled Autograd captured at run time (torch's
    ``compiled_autograd_graph``), which Dynamo then compiled like any frame."""

    id: str  # torch's compiled-autograd id, "!0" ("1:!0" after a torch._dynamo.reset())
    number: int  # 1 for the recording's first capture, 2 for the next...
    graph: Graph | None = None  # the captured backward, hooks included, as Dynamo received it
    graph_pre_reordering: Graph | None = None  # before torch moved hooks and AccumulateGrad
    # autograd's nodes in the order they run, as torch names them ("SumBackward0",
    # "CompiledFunctionBackward0", "torch::autograd::AccumulateGrad")
    autograd_nodes: tuple[str, ...] = ()
    hooks: tuple[str, ...] = ()  # each hook the graph calls, by torch's hook_type ("tensor_pre_hook")
    # forward graphs torch.compile made whose AOT backward this graph inlines
    # (CompiledFunctionBackward nodes)
    compiled_backwards: int = 0
    called_from: str | None = None  # "train.py:12": the user line that ran the backward
    # the earlier capture from the same call site that this one replaced: Compiled Autograd's
    # cache missed (the autograd graph, its sizes or its hooks changed), so it captured again
    recaptured_from: str | None = None
    reasons: tuple[str, ...] = ()  # torch's compile reasons (artifact compiled_autograd_compile_reasons)

    @property
    def label(self) -> str:
        """How every view names it: "compiled autograd: backward #1 (!0)"."""
        return f"compiled autograd: backward #{self.number} ({self.id})"


@dataclass(frozen=True)
class PhaseSpan:
    """One of torch's timed phases of a compile (a chromium_event begin/end pair), placed in
    time: the waterfall of where compile time goes."""

    name: str  # torch's name: "entire_frame_compile", "bytecode_tracing", "Scheduler.codegen"
    start_s: float  # from the compile's first phase
    duration_s: float
    depth: int  # 0 for a phase no other phase of the compile encloses

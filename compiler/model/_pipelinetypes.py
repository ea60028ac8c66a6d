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


@dataclass(frozen=True)
class PhaseName:
    """What the name of one of torch's timed phases says, read when the report is built
    (compiler/model/_phasenames.py): the attempt of Dynamo's analysis (``compile_attempt_1``),
    a bytecode hook (``bytecode_hooks_0``), an Inductor pass
    (``pass.post_grad_passes.reinplace``). A name that says none of these has none."""

    name: str  # torch's name, as in Compile.phase_times_s and PhaseSpan.name
    attempt: int | None = None  # compile_attempt_N: Dynamo's analysis restarted N times
    hook: int | None = None  # bytecode_hooks_N: the bytecode hook of that index
    pass_group: str | None = None  # pass.<group>_passes.<name>: "pre_grad", "post_grad", "joint_graph"
    pass_name: str | None = None  # the pass: "reinplace"


@dataclass(frozen=True)
class ExportFact:
    """One thing torch.export assumed about the inputs, or one failure draft_export found,
    from torch's structured trace, with the user line it came from."""

    # assumptions: "dim" (create_symbol), "guard" (guard_added), "specialization",
    # "unbacked" (create_unbacked_symbol); failures: "data-dependent"
    # (propagate_real_tensors_provenance), "missing fake kernel", "mismatched fake kernel"
    kind: str
    expr: str  # "s77 > 4", "zuf0 > 2.0", the symbol, or the op
    where: str | None = None  # "model.py:12": the user line
    code: str | None = None  # that line's code, as torch logged it
    detail: str | None = None  # a dim's range and source, the value assumed, the reason
    count: int = 1  # how often torch logged it (draft_export's "encountered N times")


@dataclass(frozen=True)
class ExportRun:
    """One torch.export.export / draft_export call seen in the trace: what it assumed and
    (draft_export) the failures it found."""

    number: int  # 1 for the recording's first export
    draft: bool = False  # draft_export (torch logged its dtrace events)
    assumptions: tuple[ExportFact, ...] = ()
    failures: tuple[ExportFact, ...] = ()
    compile_id: str | None = None  # the AOTInductor compile that followed ("aoti/0")

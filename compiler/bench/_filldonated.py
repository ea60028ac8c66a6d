"""The donated buffers of a backward runnable: the saved tensors Inductor may write in place.

AOTAutograd hands Inductor a backward with the indices of its donated buffers (the saved
tensors no input, user output or gradient of the step aliases: intermediates of the forward
only the backward reads) in the tracing context's metadata, and Inductor may then reuse one as
a kernel's output (``in_out_ptr0``: GELU's backward writes over the saved activation). A
runnable repro has neither, so its backward, compiled alone, writes a new buffer: other
kernel code than the cached one.

Here the indices are found as AOTAutograd finds them (its own
``collect_fw_donated_buffer_idxs``), from the forward's runnable and the backward's, traced
over fake inputs: the forward's outputs are the user's, then the saved tensors, then the saved
sizes; the backward's inputs the saved sizes, the saved tensors, then the tangents. They are
given to Inductor as AOTAutograd gives them: ``fw_metadata.bw_donated_idxs`` of a tracing
context around the backward's compile.
"""

from __future__ import annotations

import contextlib
import types
from collections.abc import Iterator
from typing import Any


def donated_idxs(fw: Any, bw: Any, bw_names: list[str]) -> list[int]:
    """The inputs of the backward graph module ``bw`` AOTAutograd would donate, its forward
    graph module ``fw`` (each traced with ``meta["val"]`` on its nodes), ``bw_names`` the
    names the backward's runnable gives its inputs (``tangents_1``)."""
    import torch
    from torch._functorch._aot_autograd.graph_compile import collect_fw_donated_buffer_idxs
    from torch._functorch._aot_autograd.utils import contain_metadata_mutation_ops

    if not torch._functorch.config.donated_buffer:
        return []
    if contain_metadata_mutation_ops(fw) or contain_metadata_mutation_ops(bw):
        return []  # as AOTAutograd: the traced values may not be the final ones

    def vals(nodes: Any) -> list[Any]:
        return [n.meta.get("val") if isinstance(n, torch.fx.Node) else None for n in nodes]

    fw_ins = vals(fw.graph.find_nodes(op="placeholder"))
    fw_outs = vals(next(reversed(fw.graph.find_nodes(op="output"))).args[0])
    bw_ins = vals(bw.graph.find_nodes(op="placeholder"))
    bw_outs = vals(next(reversed(bw.graph.find_nodes(op="output"))).args[0])
    symints = sum(1 for v in bw_ins if isinstance(v, torch.SymInt | int))
    tensors = sum(1 for name in bw_names[symints:] if not name.startswith("tangents"))
    if symints + tensors > len(fw_outs):
        return []  # not this forward's backward
    saved = fw_outs[len(fw_outs) - symints - tensors : len(fw_outs) - symints]
    users = fw_outs[: len(fw_outs) - symints - tensors]
    donated = collect_fw_donated_buffer_idxs(fw_ins, users, [], saved)
    # a gradient that is (a view of) a saved tensor: its storage is the backward's input's
    from torch.multiprocessing.reductions import StorageWeakRef

    outs = {StorageWeakRef(t.untyped_storage()) for t in bw_outs if isinstance(t, torch.Tensor)}
    return [symints + i for i in donated if StorageWeakRef(bw_ins[symints + i].untyped_storage()) not in outs]


@contextlib.contextmanager
def donated_context(bw: Any, fw: Any | None, bw_names: list[str]) -> Iterator[None]:
    """A tracing context that tells Inductor the donated buffers of the backward ``bw``, its
    forward ``fw``, as AOTAutograd's does (none where ``fw`` is None)."""
    import torch

    if fw is None:
        with torch.no_grad():
            yield
        return
    meta = types.SimpleNamespace(
        bw_donated_idxs=donated_idxs(fw, bw, bw_names),
        static_input_indices=[],
        num_mutated_inp_runtime_indices=0,
    )
    context = torch._guards.TracingContext(None)
    context.fw_metadata = meta
    with torch._guards.tracing(context), torch.no_grad():
        yield

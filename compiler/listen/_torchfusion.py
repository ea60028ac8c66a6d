"""Inside Inductor's scheduler: the IR before and after fusion, which torch logs only through
its artifact loggers, taken in-process. A scheduler pass (``_torch.FUSION_PASS``) snapshots the
nodes as fusion starts; the text the ``ir_pre_fusion`` / ``ir_post_fusion`` loggers would carry
is rendered from the snapshot later, off the compile's path (compiler/listen/_listeners.py).
Torch's names it uses are in compiler/listen/_torch.py; tests/test_torch_internals.py checks
both against the installed torch. Imports of torch are lazy."""

from __future__ import annotations

import functools
from typing import Any

from ._torch import FUSION_HEADERS, SCHEDULER_DONE


def scheduler_pass_base() -> type:
    """The class torch's FX-graph cache wants a scheduler pass to be (its uuid keys the
    cache): CustomSchedulerPass where torch has it (2.13 does, 2.11 not), else CustomGraphPass."""
    from torch._inductor import custom_graph_pass

    return getattr(custom_graph_pass, "CustomSchedulerPass", None) or custom_graph_pass.CustomGraphPass


@functools.cache
def snapshot_pass_class() -> type:
    base = scheduler_pass_base()

    class SnapshotPass(base):
        """Calls ``look(nodes)`` (while set), then the pass that was configured before, if any.
        It changes no node, so it leaves the FX-graph cache key as the earlier pass makes it
        (``uuid``), and pickles (torch hashes the config) as that pass alone."""

        def __init__(self, look: Any, prior: Any):
            self.look = look
            self.prior = prior

        def __call__(self, nodes: list) -> list:
            look = self.look
            if look is not None:
                try:
                    look(nodes)
                except Exception:  # never disturb the user's compile
                    pass
            return self.prior(nodes) if self.prior is not None else nodes

        def uuid(self) -> Any:
            prior = self.prior
            return prior.uuid() if isinstance(prior, base) else None

        def __reduce__(self):
            return (snapshot_pass, (None, self.prior))

    return SnapshotPass


def snapshot_pass(look: Any, prior: Any) -> Any:
    """A scheduler pass for the ``FUSION_PASS`` hook calling ``look(nodes)`` then ``prior``."""
    return snapshot_pass_class()(look, prior)


def is_cache_safe_pass(value: Any) -> bool:
    """Whether torch's FX-graph cache accepts this scheduler pass value (None or a
    pass of the class it wants; it bypasses the cache for a plain callable)."""
    return value is None or isinstance(value, scheduler_pass_base())


def fusion_snapshot(nodes: list) -> tuple[Any, list, Any]:
    """What renders later into the IR before and after fusion, taken in the hook: the graph
    being lowered, a shallow copy of each node (fusion reassigns a node's loop body, sizes
    and dependencies, never changes them in place) and the scheduler, whose node list at the
    end of its construction is what the logger prints after fusion. Between the logger and
    the hook, Inductor groups foreach ops into one node at the end of the list: the logger's
    list is those members back in place, by the position (``min_order``) each got in it."""
    import copy

    from torch._inductor.scheduler import ForeachKernelSchedulerNode
    from torch._inductor.virtualized import V

    flat: list = []
    for node in nodes:
        flat.extend(node.snodes if isinstance(node, ForeachKernelSchedulerNode) else [node])
    if len(flat) != len(nodes):
        flat.sort(key=lambda n: n.min_order)
    return V.graph, [copy.copy(n) for n in flat], (nodes[0].scheduler if nodes else None)


def render_fusion_ir(artifact: str, snapshot: tuple[Any, list, Any]) -> str | None:
    """The text Inductor's ``artifact`` logger would have carried (its header included); None
    after fusion where the scheduler never got to log it (the compile failed while fusing)."""
    from torch._inductor.debug import DebugFormatter
    from torch._inductor.virtualized import V

    graph, before, scheduler = snapshot
    if artifact == "ir_pre_fusion":
        nodes = before
    elif scheduler is None:
        nodes = []
    elif hasattr(scheduler, SCHEDULER_DONE):
        nodes = scheduler.nodes
    else:
        return None
    with V.set_graph_handler(graph):
        return FUSION_HEADERS[artifact] + DebugFormatter._write_ir(nodes)

"""Which backend ran a benchmark's graphs, from torch's records of their compiles: Inductor,
or one that runs the captured graph with eager kernels (``backend="aot_eager"``,
``backend="eager"``). Such a backend fuses nothing and generates no kernel: the compiled call
runs ATen's own kernels, one op at a time, as eager does, behind Dynamo's guards and (with
AOTAutograd) its runtime wrappers. That is a cause of its own (``Cause.key == "backend"``,
compiler/why/_kernelcauses.py ``backend_cause``), never an eager fallback: every frame did
run its compiled code. Torch-free."""

from __future__ import annotations

from dataclasses import dataclass

from ..model._benchtypes import Benchmark
from ..model._report import Compile, Report


@dataclass(frozen=True)
class OtherBackend:
    """A benchmark whose graphs no Inductor compile ran."""

    name: str | None  # as the user named it ("aot_eager"); None where only a callable was given
    aot: bool  # AOTAutograd traced the graphs (aot_eager) or not (eager: Dynamo's graph as it is)
    compile_ids: tuple[str, ...]  # the compiles with a graph, none of them Inductor's


def inductor_ran(c: Compile) -> bool:
    """torch's records of ``c`` show Inductor: its config read from Inductor's own records
    (the runnable repro, the FX-graph cache key), a stage after AOTAutograd (post-grad graphs,
    fusion, output code), or an FX-graph cache lookup (a warm hit skips the stages)."""
    s = c.stages
    return (
        (c.config is not None and c.config.backend == "inductor")
        or any(x is not None for x in (s.decompose, s.fuse, s.codegen))
        or any(x.kind == "fx_graph" for x in c.caches)
    )


def has_graph(c: Compile) -> bool:
    """Dynamo handed ``c``'s graph to the backend: a captured graph with an op, or AOTAutograd's."""
    g = c.stages.capture.graph if c.stages.capture else None
    ops = g is not None and any(n.op.startswith("call") for n in g.nodes)
    return ops or c.stages.autograd is not None


def other_backend(report: Report, bench: Benchmark) -> OtherBackend | None:
    """The backend of ``bench``'s compiles (its own, else the report's) where no compile with a
    graph ran Inductor; None where one did, or where no compile had a graph."""
    own = set(bench.compile_ids)
    name = bench.config.backend if bench.config.backend not in (None, "inductor") else None
    return backend_of([c for c in report.compiles if not own or c.id in own], name)


def backend_of(compiles: list[Compile], name: str | None = None) -> OtherBackend | None:
    """``other_backend`` of these compiles, the backend named ``name`` where it is known."""
    mine = [c for c in compiles if c.status == "ok" and has_graph(c)]
    if not mine or any(inductor_ran(c) for c in mine):
        return None
    aot = any(c.stages.autograd is not None for c in mine)
    return OtherBackend(name, aot, tuple(c.id for c in mine))

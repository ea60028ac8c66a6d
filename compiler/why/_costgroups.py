"""A benchmark's kernel time grouped (``compiler.cost_groups``): by the user's line, by
nn.Module (beside eager's time for the same module) or by op family, from the kernels joined
to the report (``compiler.kernel_costs``, compiler/why/_gputime.py). Torch-free."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..model._benchtypes import Benchmark
from ._gputime import NO_LINE, KernelCost, eager_costs


@dataclass(frozen=True)
class CostGroup:
    """Kernel time summed by one key: a line, a module or an op family."""

    key: str
    ms: float
    share: float
    kernels: int
    eager_ms: float | None = None  # eager's kernel time for the same module (modules only)


def cost_groups(
    costs: Iterable[KernelCost], by: str, bench: Benchmark | None = None
) -> tuple[CostGroup, ...]:
    """Kernel time summed ``by`` "line", "module" (beside eager's, given the benchmark) or
    "family" (matmul, pointwise, reduction…)."""
    if by == "line":
        return by_line(costs)
    if by == "module":
        return by_module(costs, bench)
    if by == "family":
        return by_family(costs)
    raise ValueError(f"cost_groups: by must be 'line', 'module' or 'family', not {by!r}")


def by_line(costs: Iterable[KernelCost]) -> tuple[CostGroup, ...]:
    return _group(costs, lambda c: ", ".join(c.lines) or f"(no line: {c.unplaced or NO_LINE})")


def by_family(costs: Iterable[KernelCost]) -> tuple[CostGroup, ...]:
    return _group(costs, lambda c: c.family)


def by_module(costs: Iterable[KernelCost], bench: Benchmark | None = None) -> tuple[CostGroup, ...]:
    """Kernel time per nn.Module, named from the benchmarked model down (``module_name``),
    beside eager's for the same module where the benchmark profiled eager by module."""
    root = bench.name if bench is not None else ""
    eager: dict[str, float] = {}
    for c in eager_costs(bench) if bench is not None else ():
        for m in c.modules:
            name = module_name(m, root)
            eager[name] = eager.get(name, 0.0) + c.ms
    groups = _group(costs, lambda c: ", ".join(module_name(m, root) for m in c.modules) or "(no module)")
    if not eager:
        return groups
    return tuple(CostGroup(g.key, g.ms, g.share, g.kernels, eager.get(g.key)) for g in groups)


def module_name(path: str, root: str) -> str:
    """An nn.Module's path (``""`` the model itself, ``"up"``) named from the model the
    benchmark called (``Routed``, ``Routed.up``); ``(model)`` where the model's name is not
    known."""
    top = root or "(model)"
    return f"{top}.{path}" if path else top


def _group(costs: Iterable[KernelCost], key) -> tuple[CostGroup, ...]:
    acc: dict[str, list[float]] = {}
    for c in costs:
        a = acc.setdefault(key(c), [0.0, 0.0, 0])
        a[0] += c.ms
        a[1] += c.share
        a[2] += 1
    out = [CostGroup(k, ms, share, int(n)) for k, (ms, share, n) in acc.items()]
    return tuple(sorted(out, key=lambda g: (-g.ms, g.key)))

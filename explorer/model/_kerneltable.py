"""A compile's kernels in one table, the most expensive first: by measured time where a
benchmark profiled them (``Benchmark.kernels``), else by size (lines of source, graph nodes
fused); and the extern calls its wrapper makes (``extern_kernels.addmm``: library kernels such
as cuBLAS / MKL matmuls, which Inductor calls instead of generating)."""

from __future__ import annotations

from collections import Counter

from compiler import Report
from compiler._viewer import extern_nodes, kernel_stacks
from compiler.types import Compile, Graph, Kernel

from ..base._types import Table


def kernel_times(report: Report, compile_id: str) -> dict[str, float]:
    """Milliseconds per call of each of the compile's kernels, from its latest benchmark's profile."""
    out: dict[str, float] = {}
    for b in report.benchmarks:
        for kt in b.kernel_rows:
            if kt.kernel and kt.compile_id in (None, compile_id):
                out[kt.kernel] = kt.per_call_ms
    return out


def _size(k: Kernel) -> tuple[int, int]:
    return len(k.source.splitlines()), len(k.nodes)


def expensive_first(kernels, times: dict[str, float]) -> list[Kernel]:
    """The kernels, the slowest first where measured (``times``), else the largest (lines of
    source, then nodes fused)."""
    return sorted(kernels, key=lambda k: (-times.get(k.name, -1.0), [-n for n in _size(k)], k.name))


def costliest(report: Report, c: Compile, graph: Graph, role: str | None) -> tuple[tuple[str, ...], str]:
    """The nodes of ``graph`` (of ``role``; None: both, the joint graph) where the compile's
    most expensive kernel of that role is: the kernel's own nodes in the graph it names
    (post-grad on CPU, Dynamo's on GPU), else the nodes of its nodes' source lines; and why
    (``cpp_fused_…_0: the largest kernel shown here (181 lines)``). Empty without such a kernel."""
    times = kernel_times(report, c.id)
    for k in expensive_first(report.kernels_of(c.id), times):
        if role is not None and k.role != role:
            continue
        home = _home(c, k)
        if home is None:
            continue
        names = {n.name for n in graph.nodes}
        if home.code == graph.code or 2 * len(names & set(k.nodes)) >= len(k.nodes):
            # the graph it names, or one its nodes kept their names through (joint, forward)
            mine = tuple(n for n in k.nodes if n in names)
        else:
            lines = {n.source for n in home.nodes if n.name in k.nodes and n.source}
            mine = tuple(n.name for n in graph.nodes if n.source in lines and n.op != "placeholder")
        if mine:
            cost = f"{times[k.name]:.4g} ms per call" if k.name in times else f"{_size(k)[0]} lines"
            return (
                mine,
                f"{k.name}: the {'slowest' if k.name in times else 'largest'} kernel shown here ({cost})",
            )
    return (), ""


def _home(c: Compile, k: Kernel) -> Graph | None:
    """The graph whose nodes ``k`` names: its role's post-grad graph, else Dynamo's."""
    names = set(k.nodes)
    graphs = (
        [rg.graph for rg in c.stages.decompose.post_grad if rg.role == k.role] if c.stages.decompose else []
    )
    if c.stages.capture and c.stages.capture.graph:
        graphs.append(c.stages.capture.graph)
    for g in graphs:
        if names and names <= {n.name for n in g.nodes}:
            return g
    return None


def stack_lines(c: Compile) -> dict[str, tuple[tuple[str, int], ...]]:
    """Each kernel -> the user lines of torch's stacks for it (``compiler.kernel_stacks``), those
    of this compile's own graph: torch files a lazily compiled backward's stacks in a table of
    the process keyed by kernel name and never emptied there, so a kernel named as one an earlier
    compile made also carries that compile's lines (another program's, in one process). A
    kernel none of whose lines is a line of Dynamo's graph keeps them all."""
    stacks = kernel_stacks(c.stages.fuse.provenance if c.stages.fuse else None)
    cap = c.stages.capture.graph if c.stages.capture else None
    own = {n.source for n in cap.nodes if n.source} if cap is not None else set()
    if not own:
        return stacks
    out = {}
    for name, lines in stacks.items():
        mine = tuple(fl for fl in lines if f"{fl[0]}:{fl[1]}" in own)
        out[name] = mine or lines
    return out


def extern_nodes_of(c: Compile) -> dict[str, str]:
    """Each post-grad node that runs as an extern call -> the call (``compiler.extern_nodes``)."""
    return extern_nodes(c.stages.fuse.provenance if c.stages.fuse else None)


def no_nodes_why(c: Compile, k: Kernel) -> str:
    """Why kernel ``k`` has no nodes, short (its table's title says more, ``_unmapped``)."""
    fuse = c.stages.fuse
    return "torch maps none" if fuse and fuse.provenance else "no provenance"


def _unmapped(c: Compile, kernels) -> str:
    """What the kernel table's title says of its kernels without nodes."""
    bare = [k for k in kernels if not k.nodes]
    if not bare:
        return ""
    fuse = c.stages.fuse
    if not (fuse and fuse.provenance):
        return f"; {len(bare)} without nodes: no provenance recorded (a cache hit skips Inductor's, torch < 2.9 logs none)"
    if all(k.role == "backward" for k in bare):
        return (
            "; torch's provenance maps no backward kernel to its nodes (its node map for the backward"
            " is empty): their lines are those of torch's stacks for each"
        )
    return f"; {len(bare)} without nodes: torch's provenance does not name them"


def kernels_table(report: Report, c: Compile, lines: dict[str, str] | None = None) -> Table | None:
    """``lines``: each kernel's source lines (the user's code its fused nodes came from)."""
    kernels = report.kernels_of(c.id)
    if not kernels:
        return None
    times = kernel_times(report, c.id)
    ordered = expensive_first(kernels, times)
    rows = tuple(
        (
            k.role,
            k.name,
            k.language,
            str(_size(k)[0]),
            str(_size(k)[1]) if k.nodes else no_nodes_why(c, k),
            (lines or {}).get(k.name, ""),
        )
        + (
            (f"{times[k.name]:.4g}" if k.name in times else "",) if times else ()
        )  # as the Benchmark tab says it
        for k in ordered
    )
    by = "time per call (the benchmark's profile)" if times else "size"
    columns = ("role", "kernel", "language", "lines", "nodes fused", "from") + (
        ("ms per call",) if times else ()
    )
    return Table(
        f"kernels ({len(kernels)}, the largest {by} first{_unmapped(c, kernels)})",
        columns,
        rows,
        kinds=("", "kernel", "", "", "", "lines"),
    )


def extern_table(c: Compile) -> Table | None:
    """The extern calls in the compile's wrapper modules, per role, with how many calls each."""
    cg = c.stages.codegen
    rows = []
    for oc in cg.output_code if cg else ():
        for call, n in Counter(oc.extern_calls).most_common():
            rows.append((oc.role, call, str(n)))
    if not rows:
        return None
    return Table(
        "extern calls (library kernels the wrapper calls, not generated)",
        ("role", "call", "calls"),
        tuple(rows),
        kinds=("", "kernel", ""),  # a call selects the nodes that run as it in the fuse graph
    )

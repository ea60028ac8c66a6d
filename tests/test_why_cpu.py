"""The CPU path of "why isn't compiled faster": C++ kernels and ATen calls timed by the profiler,
joined to the user's lines, and three verdicts whose cause is known by construction (Python
between two graphs, an fp32 GEMM, a call too small for its overhead). The GPU cases are in
tests/test_gpu_why.py."""

from __future__ import annotations

import contextlib
import io
import os

import pytest
import torch
from torch import nn

import compiler
import compiler._viewer
import explorer
from compiler.listen import _torch
from tests._verdicts import steady


@torch._dynamo.disable
def host_work() -> int:
    total = 0
    for i in range(30000):  # Python the compiled code cannot take over
        total += i * i
    return total


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(32, 32)
        self.b = nn.Linear(32, 32)

    def forward(self, x):
        y = self.a(x)  # LINE_A
        host_work()
        return self.b(y)  # LINE_B


def _line(tag: str) -> str:
    lines = open(__file__).read().splitlines()
    return f"{__file__}:{next(i + 1 for i, ln in enumerate(lines) if ln.endswith('# ' + tag))}"


@pytest.fixture(autouse=True)
def one_thread():
    """One intra-op thread while timing: on a machine shared with other jobs, OpenMP's
    barriers make a 16x32x32 addmm take milliseconds, and the causes built into these cases
    must not depend on that."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _bench(fn, *args, **kw):
    with contextlib.redirect_stdout(io.StringIO()):
        with compiler.recording(**kw) as rec:
            compiled = torch.compile(fn)
            compiled(*args)
        compiler._viewer.remember_benchmark_subject(rec.report, fn, compiled, args, {})
        b = compiler.benchmark(rec.report, reps=5, warmup=1, progress=False)
    return rec.report, b


def test_graph_break_in_the_hot_loop_joined_to_lines():
    torch.manual_seed(0)
    threads = _torch.inductor_config().compile_threads
    r, b = _bench(Net(), torch.randn(16, 32), triton_ir=True)
    # triton_ir on a CPU run: no Triton, nothing captured, compile parallelism given back
    assert _torch.inductor_config().compile_threads == threads
    assert all(k.binaries == () for k in r.kernels)
    assert [c.id for c in r.compiles] == ["0/0", "1/0"]
    t = b.timeline
    assert (t.graphs, t.launches) == (2.0, 2.0)  # two graphs a call, one addmm in each
    costs = compiler.analysis.kernel_costs(r, b)
    # each graph's addmm: its provenance call, its node's line and module
    assert sorted((c.compile_id, c.name, c.call, c.lines, c.modules, c.library) for c in costs) == [
        ("0/0", "aten::addmm", "extern_kernels.addmm:1", (_line("LINE_A"),), ("a",), True),
        ("1/0", "aten::addmm", "extern_kernels.addmm:1", (_line("LINE_B"),), ("b",), True),
    ]
    # the profile's kernel time, whole: the joined rows sum to the timeline's kernel time
    assert sum(c.ms for c in costs) == pytest.approx(t.kernel_ms)
    # eager, profiled by module: each Linear's ATen call under its own path
    eager = {(r_.module, r_.op) for r_ in b.eager_launches}
    assert {("a", "aten::linear"), ("b", "aten::linear")} <= eager
    # modules named from the model down, in the why view's table as in the groups
    groups = compiler.analysis.cost_groups(costs, "module", b)
    assert sorted(g.key for g in groups) == ["Net.a", "Net.b"]
    assert all(g.eager_ms is not None for g in groups)
    v = _verdict(r, b)
    breaks = next(c for c in v.causes if c.key == "breaks")
    assert v.main == "breaks" and breaks.title == "graph breaks: 1 site"
    assert breaks.evidence[0].startswith("2 graphs a call: Python runs between them (")
    (site,) = r.graph_breaks
    assert breaks.evidence[1] == f"{os.path.basename(site.filename)}:{site.line}: {site.type} ({site.gb_id})"
    assert sum(c.ms for c in v.causes if c.ms is not None) == pytest.approx(b.compiled.median_ms)


def _verdict(r, b):
    """The verdict; where this shared machine's timings carry no cause (no clear winner: the
    medians within the spread, a wait for a core), it says so and names none, and the same
    medians timed steadily are judged instead."""
    v = compiler.analysis.verdict(r, b)
    if v.unread is not None:
        assert v.main is None and v.headline.startswith(f"no clear winner ({b.speedup_words}, as timed): ")
        assert "OMP_NUM_THREADS=N" in v.headline  # the remedy, on a CPU
        v = compiler.analysis.verdict(r, steady(b))
    return v


def _gemm(x, w):
    return x @ w


def _tiny(x):
    return torch.relu(x * 2 + 1)  # TINY


def test_verdict_gemm_bound_and_overhead_bound_on_cpu():
    torch.manual_seed(0)
    r, b = _bench(_gemm, torch.randn(768, 768), torch.randn(768, 768))
    v = _verdict(r, b)
    (mm,) = compiler.analysis.kernel_costs(r, b)
    assert (mm.name, mm.kind, mm.library, mm.family, mm.call) == (
        "aten::mm",
        "extern",
        True,
        "matmul",
        "extern_kernels.mm:1",
    )
    assert v.main == "library" and "library kernels it does not change" in v.headline
    assert not any("TF32" in e for c in v.causes for e in c.evidence)  # a CPU run has no TF32
    # nor CUDA's matmul settings in the view, though the benchmark recorded the precision
    text = explorer.text(r, "why")
    assert b.matmul_precision is not None and "matmul settings" not in text and "allow_tf32" not in text
    assert compiler.analysis.roofline(compiler.analysis.kernel_costs(r, b), b) == ()
    r, b = _bench(_tiny, torch.randn(8))
    (k,) = r.kernels
    (cost,) = compiler.analysis.kernel_costs(r, b)  # the C++ kernel, timed by the profiler, on its line
    assert (cost.kind, cost.kernel, cost.lines) == ("cpp", k.name, (_line("TINY"),))
    assert cost.nodes and set(cost.nodes) <= {
        n.name for rg in r.compiles[0].stages.decompose.post_grad for n in rg.graph.nodes
    }
    v = _verdict(r, b)
    launch = next(c for c in v.causes if c.key == "launch")
    assert v.main == "launch" and launch.title == "host overhead around the kernels"
    assert v.headline.split(": ", 1)[1].startswith("host overhead: ")
    assert launch.share > 0.5


def test_cpp_kernels_the_profile_did_not_see_are_not_host_overhead():
    """A compiled callable passed as a closure (as the census times a step): the benchmark
    profiles it as it is, and Inductor's C++ kernels are invisible to the profiler. Their time
    inside the compiled graph is its own part, never host overhead."""
    from tests._torch_trace import RawTrace

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 64), nn.GELU(), nn.LayerNorm(64)).eval()
    x = torch.randn(32, 64)
    with RawTrace() as raw, compiler.recording() as rec:
        compiled = torch.compile(model)
        with torch.no_grad():
            compiled(x)
    # torch's own record: the compile's output code holds C++ kernels
    (code,) = [p for m, p in raw.records if "inductor_output_code" in m]
    assert "cpp_fused" in code

    def eager():
        with torch.no_grad():
            return model(x)

    def step():
        with torch.no_grad():
            return compiled(x)

    b = compiler.benchmark(rec.report, eager, compiled=step, reps=5, warmup=1, progress=False)
    assert b.profile_note.startswith("the compiled callable was passed without its torch.compile options")
    assert not [k for k in b.launch_rows if k.kind == "cpp"] and b.timeline.graph_host_ms > 0
    v = compiler.analysis.verdict(rec.report, b)
    # the C++ part is the graph's own host time of the profiled call, scaled as the host's
    # parts are to the median's time with no profiled kernel running; the rest is host overhead
    t = b.timeline
    idle = max(b.compiled.median_ms - sum(k.ms for k in compiler.analysis.kernel_costs(rec.report, b)), 0.0)
    want = idle * t.graph_host_ms / (t.guard_ms + t.outside_ms + t.graph_host_ms)
    cpp = next((c for c in v.causes if c.key == "cpp-unprofiled"), None)
    if want == 0:  # a machine so busy that the profiled kernels outlast the median: no host part
        assert cpp is None and v.missing[0].startswith("the profiled calls' kernels took ")
        return
    assert cpp.title == "generated C++ kernels, not profiled" and cpp.ms == pytest.approx(want)
    assert cpp.evidence == (
        f"{cpp.ms:.4g} ms a call inside the compiled graphs, outside every profiled op: their C++ kernels "
        "run there (and the graphs' wrappers), invisible to the profiler",
        b.profile_note,
    )
    launch = next((c.ms for c in v.causes if c.key == "launch"), 0.0)
    guards = next((c.ms for c in v.causes if c.key == "guards"), 0.0)
    assert launch + guards + cpp.ms == pytest.approx(idle)
    parts = [c for c in v.causes if c.share is not None]
    assert sum(c.ms for c in parts) == pytest.approx(max(b.compiled.median_ms, b.timeline.kernel_ms))

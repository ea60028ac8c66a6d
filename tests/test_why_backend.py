"""The verdict tells a backend that runs the graph with eager kernels (``aot_eager``, ``eager``)
from an eager fallback: every frame of such a backend ran its compiled code, and nothing was
fused. Each program's facts are checked against torch's own structured trace of its compiles,
read here directly (tests/_torch_trace.py): which compiles made a graph, whether AOTAutograd
traced it, that no Inductor stage ran, and which frame failed."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
import torch
from torch import nn

import compiler
from tests._torch_trace import REGISTRY, RawTrace, read_log

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BACKEND = "backend {}: no fused kernels, eager kernels run the graph"
AOT = "{}: AOTAutograd traced the graphs and no Inductor stage ran (no fusion, no output code)"
DYNAMO = "{}: Dynamo's graph went to the backend as captured: no AOTAutograd, no Inductor stage ran"
FOR_CHECKING = (
    "a backend that runs the graph with eager kernels is for checking the capture, not for speed: "
    "at best it matches eager, and its guards and wrappers cost host time"
)
INDUCTOR = 'torch.compile(model)  # backend="inductor", the default: fused, generated kernels'
# torch's events of an Inductor compile: none may appear where the verdict says none ran
INDUCTOR_EVENTS = frozenset(
    (
        "inductor_output_code",
        "inductor_post_grad_graph",
        "fx_graph_cache_miss",
        "fx_graph_cache_hit",
    )
)


def _cid(meta: dict) -> str:
    return f"{meta['frame_id']}/{meta['frame_compile_id']}"


def _events(records) -> dict[str, set[str]]:
    """compile id -> the names of torch's events (artifacts by their name) logged for it."""
    out: dict[str, set[str]] = {}
    for meta, _payload in records:
        if "frame_id" not in meta or meta.get("frame_id") is None:
            continue
        names = {k for k in meta if k not in ("frame_id", "frame_compile_id", "attempt", "has_payload")}
        if isinstance(meta.get("artifact"), dict):
            names.add(meta["artifact"]["name"])
        out.setdefault(_cid(meta), set()).update(names)
    return out


def _failed(records) -> dict[str, str]:
    """compile id -> torch's fail_type, of each compile whose compilation_metrics say it failed."""
    return {
        _cid(m): m["compilation_metrics"].get("fail_type")
        for m, _p in records
        if "compilation_metrics" in m and m["compilation_metrics"].get("fail_type")
    }


def _graphs(events: dict[str, set[str]]) -> list[str]:
    """The compiles torch logged a Dynamo graph for, in order."""
    return sorted((c for c, names in events.items() if "dynamo_output_graph" in names), key=_order)


def _order(cid: str) -> tuple[int, int]:
    a, b = cid.split("/")
    return int(a), int(b)


def _cause(v, key):
    return next(c for c in v.causes if c.key == key)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(32, 64), nn.Linear(64, 8)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


def _named(key: str, v) -> str | None:
    """The cause the verdict names: ``key``, unless this shared machine's timings carry none (no
    clear winner: the medians within the spread, a profile longer than the median, a wait for a
    core), where it names none and says so."""
    if v.unread is not None:
        assert v.headline.startswith("no clear winner (")
        return None
    return key


def _bench(model, compiled, x, **options):
    """Eager against ``compiled`` on ``x``, recorded with torch's own trace beside: the
    report, its benchmark's verdict and torch's records."""
    torch.manual_seed(0)
    with RawTrace() as raw, compiler.recording() as rec:
        with torch.no_grad():
            compiled(x)
    with torch.no_grad():  # as it was called: outside, grad mode on, torch would compile another graph
        b = compiler.benchmark(
            rec.report,
            model,
            x,
            compiled=compiled,
            reps=5,
            warmup=1,
            progress=False,
            mutates=False,
            **options,
        )
    return rec.report, b, compiler.analysis.verdict(rec.report, b), raw.records


def test_backend_eager_is_its_own_cause_named_or_not():
    """backend="eager": Dynamo's graph runs as captured. Named where the benchmark is told the
    options it was compiled with; "a backend other than Inductor" where it is not."""
    torch._dynamo.reset()
    model = MLP().eval()
    compiled = torch.compile(model, backend="eager")
    x = torch.randn(16, 32)
    r, b, v, records = _bench(model, compiled, x, compile_options={"backend": "eager"})
    events = _events(records)
    (graph,) = _graphs(events)
    assert not _failed(records)
    assert not any(n.startswith("aot_") for n in events[graph]) and not INDUCTOR_EVENTS & events[graph]
    assert (b.config.backend, b.profile_note) == (
        "eager",
        "backend 'eager': no Inductor kernels; the ATen ops the compiled code calls",
    )
    assert b.timeline.graphs == 0 and b.timeline.regions == 1  # one frame entered a call, no Inductor graph
    assert (
        v.main == _named("backend", v) and [c.key for c in v.causes if c.key in ("fallback", "breaks")] == []
    )
    assert not any(c.key.startswith("generated") for c in v.causes)
    cause = _cause(v, "backend")
    assert cause.title == BACKEND.format("eager")
    assert cause.evidence[0] == DYNAMO.format(f"[{graph}]")
    assert cause.evidence[2] == FOR_CHECKING and cause.fix == INDUCTOR
    if v.unread is None:  # named whatever its share: where a larger part follows, the headline says why
        head = f"{b.speedup_words}: {cause.title}: {cause.share:.0%} of the compiled call"
        larger = any(c.share is not None and c.share > cause.share for c in v.causes)
        assert v.headline.startswith(head) and (v.headline == head) != larger
        assert not larger or v.headline[len(head) :].startswith(" (named before ")
    # the same compiled model, its options untold: the backend is what torch's records say
    with torch.no_grad():
        untold = compiler.benchmark(r, model, x, compiled=compiled, reps=5, warmup=1, progress=False)
    other = compiler.analysis.verdict(r, untold)
    assert untold.config.backend is None and other.main == _named("backend", other)
    assert (
        _cause(other, "backend").title
        == "a backend other than Inductor: no fused kernels, eager kernels run the graph"
    )


class Checked(nn.Module):
    """A `.item()` check inside the loop over blocks: Dynamo gives up on the frame."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(16, 16) for _ in range(3))

    def forward(self, x):
        for blk in self.blocks:
            x = torch.relu(blk(x))
            if x.abs().max().item() > 1e6:
                x = x / 2
        return x


@torch._dynamo.disable
def _route(x):
    return x.flip(0)


class Routed(Checked):
    """A `torch._dynamo.disable`d call inside the loop: Dynamo gives up on the frame too."""

    def forward(self, x):
        for blk in self.blocks:
            x = _route(torch.relu(blk(x)))
        return x


FIXES = {
    Checked: ("torch._dynamo.config.capture_scalar_outputs = True", None),
    Routed: (None, "remove @torch._dynamo.disable, or mark the function @torch._dynamo.nonstrict_trace"),
}


@pytest.mark.parametrize("cls", [Checked, Routed])
def test_a_failed_frame_under_aot_eager_is_an_eager_fallback(cls):
    """Under aot_eager, a frame whose compile failed runs eagerly: an eager fallback, named as
    such with the failed compile, and no backend cause (torch compiled no graph to run)."""
    torch._dynamo.reset()
    model = cls().eval()
    compiled = torch.compile(model, backend="aot_eager")
    r, b, v, records = _bench(model, compiled, torch.randn(4, 16), compile_options={"backend": "aot_eager"})
    (bad,) = _failed(records)
    assert _graphs(_events(records)) == []  # the nn.Linear blocks run inside the skipped frame
    assert b.timeline.regions == 0
    assert [c.key for c in v.causes if c.key in ("fallback", "backend", "breaks")] == ["fallback"]
    assert v.main == _named("fallback", v)
    (frame,) = r.frames
    fb = _cause(v, "fallback")
    # the reason: the registered type and id of the break torch logged for the failed compile
    (gb,) = {
        m.group(1).upper()
        for meta, p in records
        if meta.get("artifact", {}).get("name") == "dynamo_graph_break_reason" and _cid(meta) == bad
        for m in [re.search(r"/gb/(gb\d{4})\.html", p or "")]
        if m
    }
    (gb_type,) = {e["Gb_type"] for e in REGISTRY[gb]}
    assert fb.title == f"eager fallback: {gb_type} ({gb}) in forward"
    calls = b.profiled_calls
    assert (
        fb.evidence[0]
        == f"no compiled code ran: {calls} of {calls} profiled calls ran eagerly (no compiled graph)"
    )
    assert fb.evidence[1].startswith(
        f"forward (test_why_backend.py:{frame.line}): [{bad}] failed in capture: {gb_type} ({gb}): "
    )
    assert fb.evidence[1].endswith(": every call of it runs eagerly")
    assert (fb.fix, fb.advice) == FIXES[cls]


TRAIN = """\
import torch
from torch import nn

torch.manual_seed(0)
torch.set_num_threads(1)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 8))
opt = torch.optim.SGD(model.parameters(), lr=0.01)


@torch.compile(backend="aot_eager")
def train_step(x, y):
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss


for i in range(3):
    x, y = torch.randn(16, 32), torch.randint(0, 8, (16,))
    print(f"step {i}: loss {train_step(x, y).item():.4f}")
"""


@pytest.mark.child
def test_record_bench_of_an_aot_eager_training_step_names_the_backend(tmp_path):
    """`record --bench` of a training step compiled with aot_eager: every frame ran compiled
    (torch's trace of the same run: no compile failed, AOTAutograd's graphs, no Inductor), so
    the verdict names the backend, never an eager fallback."""
    (tmp_path / "train.py").write_text(TRAIN)
    env = {**os.environ, "PYTHONPATH": ROOT, "TORCH_TRACE": str(tmp_path / "trace")}
    done = subprocess.run(
        [sys.executable, "-m", "explorer", "record", "--bench", "--json", "r.json", "train.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (log,) = (tmp_path / "trace").iterdir()
    records = read_log(str(log))
    events = _events(records)
    r = compiler.load(tmp_path / "r.json")
    (b,) = r.benchmarks
    assert not _failed(records) and all(c.status == "ok" for c in r.compiles)
    graphs = [g for g in _graphs(events) if g in b.compile_ids]
    # the step's own graph has a forward and a backward; the optimizer's an inference graph
    assert {"aot_forward_graph", "aot_backward_graph"} <= events[graphs[0]]
    assert all(events[g] & {"aot_forward_graph", "aot_inference_graph"} for g in graphs)
    assert not any(INDUCTOR_EVENTS & names for names in events.values())
    assert b.state == "restored" and b.config.backend == "aot_eager"
    assert b.timeline.graphs == 0 and b.timeline.regions >= len(graphs)
    v = compiler.analysis.verdict(r, b)
    assert v.main == _named("backend", v) and "fallback" not in [c.key for c in v.causes]
    assert not any(c.key.startswith("generated") for c in v.causes)
    cause = _cause(v, "backend")
    assert cause.title == BACKEND.format("aot_eager")
    assert cause.evidence[0] == AOT.format(", ".join(f"[{g}]" for g in graphs))
    costs = compiler.analysis.kernel_costs(r, b)
    n = sum(k.launches for k in costs if not k.library)
    # a kernel run inside an aot_eager graph has no line, and the line table says why
    placed = {k.compile_id: k.unplaced for k in costs if k.compile_id in graphs}
    assert (
        placed
        == {
            g: f"run inside [{g}], a graph no Inductor compile made (a backend such as aot_eager runs its "
            "ATen ops as they are): torch logs no kernel-to-line map for it"
            for g in placed
        }
        and placed
    )
    assert cause.evidence[1] == (
        f"{n:.0f} kernels a call, each an ATen op as eager runs it ({cause.ms:.4g} ms a call), none generated"
    )
    # the breaks (backward, the optimizer) are named too: Python between the frames entered
    breaks = _cause(v, "breaks")
    assert breaks.evidence[0].startswith(f"{b.timeline.regions:.0f} compiled frames entered a call: ")
    why = [x for x in done.stdout.splitlines() if x.startswith("why ")]
    assert why == [f"why train_step: {v.headline}; fix: {INDUCTOR}"]
    assert v.headline.startswith(f"{b.speedup_words}: {BACKEND.format('aot_eager')}: ")


class StepCounter(nn.Module):
    """Counts its calls in a Python attribute it reads: every call compiles again."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.steps = 0

    def forward(self, x):
        self.steps += 1
        return self.lin(x) * self.steps


def test_recompiling_past_the_limit_while_timed_is_an_eager_fallback():
    """A frame that compiles again on every call fills torch's recompile limit during the timed
    calls and then runs eagerly: a fallback (not the backend), with the compiles while timing."""
    torch._dynamo.reset()
    model = StepCounter()
    compiled = torch.compile(model, backend="aot_eager")
    x = torch.randn(4, 8)
    with compiler.recording() as rec:
        compiled(x)
        compiled(x)
    with RawTrace() as raw:
        b = compiler.benchmark(
            rec.report, lambda: model(x), compiled=lambda: compiled(x), compile_options={"backend": "aot_eager"},
            mutates=True, reps=5, warmup=1, progress=False,
        )  # fmt: skip
    # torch's own records: the frame compiled up to its recompile limit of entries
    metrics = {_cid(m): m["compilation_metrics"] for m, _p in raw.records if "compilation_metrics" in m}
    limit = torch._dynamo.config.recompile_limit
    assert sorted(metrics, key=_order)[-1] == f"0/{limit}"  # the attempt past the last entry
    assert "recompile_limit" in (metrics[f"0/{limit}"].get("fail_reason") or "") + str(
        metrics[f"0/{limit}"].get("fail_type")
    ), metrics[f"0/{limit}"]
    timed = [x.split("]")[0][1:] for x in b.compiles_while_timing]
    assert b.timeline.regions == 0 and timed and set(timed) <= set(metrics)
    v = compiler.analysis.verdict(rec.report, b)
    # the benchmark compiled anew: the headline says so first, with torch's reason, and names no
    # cause; the fallback is still listed, with the compiles that filled the limit
    first = b.compiles_while_timing[0].strip().splitlines()[0][:200]
    assert v.main is None and v.headline.startswith(
        f"the benchmark compiled anew: {len(b.compiles_while_timing)} compiles while it ran, the first {first}"
    )
    fb = _cause(v, "fallback")
    assert fb.title == "eager fallback: no compiled code ran for <lambda>"
    calls = b.profiled_calls
    assert (
        fb.evidence[0]
        == f"no compiled code ran: {calls} of {calls} profiled calls ran eagerly (no compiled graph)"
    )
    first = b.compiles_while_timing[0].strip().splitlines()[0][:200]
    assert fb.evidence[1] == (
        f"{len(b.compiles_while_timing)} compiles during the timed calls ({first}): a frame that compiles "
        "again on every call runs eagerly once it holds torch's recompile limit of entries"
    )

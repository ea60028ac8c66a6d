"""The benchmark replays the call as the program made it: every call it makes, in both arms,
runs under the program's grad mode, inference mode and autocast (and the rest of the state
Dynamo guards on), and a compile torch makes during the benchmark is found and said.

The probe: a forward pre-hook on the compiled module (torch's OptimizedModule: it runs in
Python at every compiled call) and one on the eager module that logs only when Dynamo is not
tracing it (``torch.compiler.is_compiling()``), so every call of either arm logs the state it
ran under. Torch's compiles during the benchmark are counted from torch's own structured trace
(``dynamo_start`` events on the ``torch.__trace`` logger), read here, not from our report.
"""

from __future__ import annotations

import contextlib
import logging

import pytest
import torch

import compiler
from compiler.listen import _callstate

pytestmark = pytest.mark.slow


def _state() -> tuple:
    return (
        torch.is_grad_enabled(),
        torch.is_inference_mode_enabled(),
        torch.is_autocast_enabled("cpu"),
        torch.get_autocast_dtype("cpu") if torch.is_autocast_enabled("cpu") else None,
    )


class _Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.l1 = torch.nn.Linear(32, 32)
        self.l2 = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.l2(torch.relu(self.l1(x)))


class _DynamoStarts(logging.Handler):
    """torch's structured trace, read directly: one ``dynamo_start`` per frame compile."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.starts = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "dynamo_start" in (getattr(record, "metadata", None) or {}):
            self.starts += 1


@contextlib.contextmanager
def _torch_trace():
    log = logging.getLogger("torch.__trace")
    h = _DynamoStarts()
    log.addHandler(h)
    try:
        yield h
    finally:
        log.removeHandler(h)


def _probed():
    torch._dynamo.reset()
    torch.manual_seed(0)
    m = _Net().eval()
    seen: list[tuple[str, tuple]] = []
    m.register_forward_pre_hook(
        lambda _m, _a: None if torch.compiler.is_compiling() else seen.append(("eager", _state()))
    )
    return m, seen


CONTEXTS = {
    "no_grad": (torch.no_grad, (False, False, False, None), "torch.no_grad(), model.eval()"),
    "inference_mode": (
        torch.inference_mode,
        (False, True, False, None),
        "torch.inference_mode(), model.eval()",
    ),
    "autocast_bf16": (
        lambda: torch.autocast("cpu", dtype=torch.bfloat16),
        (True, False, True, torch.bfloat16),
        'torch.autocast("cpu", dtype=torch.bfloat16), model.eval()',
    ),
}


@pytest.mark.parametrize("name", list(CONTEXTS))
def test_every_benchmark_call_runs_in_the_programs_state(name):
    """As ``record --bench`` runs it: the program's calls inside its context, the benchmark
    after the context has ended. Every call of the benchmark has the program's state, and torch
    compiles nothing during it."""
    context, expected, words = CONTEXTS[name]
    m, seen = _probed()
    x = torch.randn(8, 32)
    with compiler.compiled_calls() as calls, compiler.recording() as rec:
        c = torch.compile(m)
        c.register_forward_pre_hook(lambda _m, _a: seen.append(("compiled", _state())))
        with context():
            for _ in range(3):
                c(x)
    program = list(seen)
    assert program == [("compiled", expected)] * 3  # what the program ran (the probe itself)
    seen.clear()
    assert _state() == (True, False, False, None)  # the benchmark starts outside the context
    with _torch_trace() as trace:
        notes = compiler.benchmark_calls(rec.report, calls.called, progress=False, reps=6)
    assert notes == []
    (bench,) = rec.report.benchmarks
    arms = {arm for arm, _ in seen}
    assert arms == {"eager", "compiled"}
    assert len(seen) >= 2 * (6 + 3)  # timed calls and warm-up of both arms, and more
    assert {s for _, s in seen} == {expected}, {s for _, s in seen}
    # torch's own count: the CPU profile's second compile of each of the program's graphs (C++
    # kernel profiling on), and nothing else
    assert trace.starts == len(rec.report.compiles)
    assert bench.compiles_while_timing == ()
    assert bench.context == words
    assert _state() == (True, False, False, None)  # and the program's state is as it was


def test_a_benchmark_that_makes_torch_compile_anew_says_so_with_torchs_reason():
    """A callable benchmarked outside the state its compile was made in (``compiler.benchmark``
    with a function: the state the benchmark finds): torch compiles again at the accuracy call,
    and the benchmark says so with the guard that failed."""
    m, _ = _probed()
    x = torch.randn(8, 32)
    c = torch.compile(m)
    with compiler.recording() as rec, torch.no_grad():
        c(x)
    with _torch_trace() as trace:
        bench = compiler.benchmark(rec.report, m, x, compiled=c, reps=4, profile=False, progress=False)
    # the probe's hook is a frame of its own: torch compiled both frames again, grad mode on here
    assert trace.starts == len(rec.report.compiles) == 2
    assert bench.compiles_while_timing == (
        "[0/1] 0/0: GLOBAL_STATE changed: grad_mode",
        "[1/1] 1/0: GLOBAL_STATE changed: grad_mode",
    )
    assert bench.context == "model.eval()"


def test_a_call_changed_since_is_not_timed():
    """The last call's arguments, written in place or resized after the call, or an iterator:
    not what the call got, so the benchmark notes it and times nothing."""
    torch._dynamo.reset()

    def f(x, it=None):
        return torch.relu(x) + 1

    def g(x):
        return x * 2

    x, y = torch.randn(4, 4), torch.randn(4, 4)
    with compiler.compiled_calls() as calls, compiler.recording(caches=False) as rec:
        cf = torch.compile(f, backend="eager")
        cg = torch.compile(g, backend="eager")
        cf(x, it=iter([1, 2]))
        cg(y)
    x.add_(1)
    notes = compiler.benchmark_calls(rec.report, calls.called, progress=False, reps=3)
    assert notes == [
        "f: not benchmarked: its last call's arguments changed since: argument 1 was written in place "
        "since the call (its version counter moved); it= is an iterator: a second call would not get what the call got",
    ]
    assert [b.name for b in rec.report.benchmarks] == ["g"]
    y.resize_(2, 2)
    notes = compiler.benchmark_calls(rec.report, calls.called[1:], progress=False, reps=3)
    assert notes == [
        "g: not benchmarked: its last call's arguments changed since: argument 1 was resized "
        "since the call ([4, 4] then, [2, 2] now)"
    ]


def test_what_the_function_prints_while_benchmarked_is_kept_out(capfd):
    """A ``print`` inside the compiled function: the program's calls print, the benchmark's
    calls are counted and kept out of stdout and stderr."""
    torch._dynamo.reset()

    def f(x):
        print("hello from f")
        return torch.relu(x)

    x = torch.randn(4)
    with compiler.compiled_calls() as calls, compiler.recording(caches=False) as rec:
        torch.compile(f, backend="eager")(x)
    assert capfd.readouterr().out == "hello from f\n"
    assert compiler.benchmark_calls(rec.report, calls.called, progress=False, reps=5) == []
    out = capfd.readouterr()
    assert (out.out, out.err) == ("", "")
    (bench,) = rec.report.benchmarks
    assert bench.printed_lines >= 2 * 5 and bench.printed_lines == bench.printed_lines // 1


def test_replaying_puts_back_what_it_changed():
    """The state's context: grad, inference mode, autocast, default dtype, matmul precision,
    deterministic algorithms, threads and a module's flag, each as at the call inside, as
    before after."""
    m = _Net()
    with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16):
        torch.set_default_dtype(torch.float64)
        torch.set_float32_matmul_precision("high")
        m.l1.training = False
        try:
            state = _callstate.capture(_callstate.modules_in(m))
        finally:
            torch.set_default_dtype(torch.float32)
            torch.set_float32_matmul_precision("highest")
            m.l1.training = True
    before = _callstate.capture(_callstate.modules_in(m))
    assert _callstate.differences(state)  # outside: it differs
    with _callstate.replaying(state):
        assert _callstate.differences(state) == []
        assert torch.is_inference_mode_enabled() and torch.get_autocast_dtype("cpu") == torch.bfloat16
        assert (torch.get_default_dtype(), m.training, m.l1.training) == (torch.float64, True, False)
    assert _callstate.differences(before) == []
    assert state.words() == (
        'torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16), '
        "torch.set_default_dtype(torch.float64), 1 of 3 modules in eval mode"
    )

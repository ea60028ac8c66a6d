"""Benchmarks on CPU: methodology units, state safety, accuracy findings, errors and Ctrl-C,
chart data, the profiler mapping on one real C++ compile."""

from __future__ import annotations

import math

import pytest
import torch

import compiler
from compiler.bench import _timing
from compiler.bench._timing import Timer, block_size, block_sizes, break_even, schedule, timing
from compiler.model._benchtypes import timing_notes


def _aot(fn, *args, **kw):
    return compiler.record(fn, *args, compile_kwargs={"backend": "aot_eager"}, **kw)


def _f(x):
    return torch.relu(x) * 2


# ---- methodology units ----------------------------------------------------------------------


def test_schedule_interleaves_abba():
    assert schedule(3) == ["eager", "compiled", "compiled", "eager", "eager", "compiled"]


def test_gpu_blocks():
    # (lead-in, timed) calls: about 25 ms then 100 ms of one arm, lead-in 2..10, timed 2..50
    assert [block_size(ms) for ms in (0.01, 2.5, 5.0, 12.5, 100.0)] == [
        (10, 50),
        (10, 40),
        (5, 20),
        (2, 8),
        (2, 2),
    ]
    assert (
        block_sizes(45, 20) == [20, 20, 5] and block_sizes(40, 20) == [20, 20] and block_sizes(3, 20) == [3]
    )


def test_timing_median_quartiles():
    t = timing([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (t.median_ms, t.p25_ms, t.p75_ms, t.min_ms, t.max_ms, t.reps) == (3.0, 2.0, 4.0, 1.0, 5.0, 5)
    assert t.iqr_ms == 2.0 and t.samples_ms == (5.0, 1.0, 3.0, 2.0, 4.0)
    assert timing([1.0, 2.0, 3.0, 4.0]).median_ms == 2.5
    assert t.waited_ms is None  # not measured
    assert timing([5.0, 1.0, 3.0], [0.0, 9.0, 0.5]).waited_ms == 0.5  # the median call's wait
    assert timing([5.0, 1.0, 3.0], [0.0, 9.0]).waited_ms is None  # not every call's (interrupted)


def test_each_cpu_call_says_how_long_it_waited_for_a_core(monkeypatch):
    """The threads' wait for a core (Linux's schedstat run delay), read before and after each
    timed call, outside the timed region: the call's own wait."""
    clock = {"ms": 100.0}
    monkeypatch.setattr(_timing, "waited_ms", lambda: clock["ms"])

    def arm(wait):
        def call():
            clock["ms"] += wait

        return call

    timer = Timer({"eager": arm(0.25), "compiled": arm(12.0)}, cuda=False, show=lambda *a, **k: None)
    timer.run(reps=3, warmup=1, label="x")
    assert timer.waits == {"eager": [0.25] * 3, "compiled": [12.0] * 3}
    monkeypatch.setattr(_timing, "waited_ms", lambda: None)  # no schedstat: none said
    timer = Timer({"eager": arm(1.0), "compiled": arm(1.0)}, cuda=False, show=lambda *a, **k: None)
    timer.run(reps=2, warmup=0, label="x")
    assert timer.waits == {"eager": [], "compiled": []} and len(timer.samples["eager"]) == 2


def test_break_even():
    assert break_even(10.0, 3.0, 1.0) == 5000.0  # 10 s / 2 ms saved per call
    assert break_even(10.0, 1.0, 1.0) is None  # never
    assert break_even(10.0, 1.0, 2.0) is None
    assert break_even(None, 3.0, 1.0) is None


def test_timing_notes_flag_an_unstable_arm_and_no_clear_winner():
    steady = timing([10.0, 10.1, 10.2, 10.3, 10.4])  # IQR 0.2 on 10.2: 2%
    # eager BERT bf16 on the H100 (benchmarks/README.md): launch-bound, two speeds
    launch_bound = timing([4.2, 4.3, 4.4, 8.1, 8.3, 8.4, 8.5])  # p25 4.35, p75 8.35
    assert timing_notes(launch_bound, steady) == (
        "eager unstable: its middle half spans 49% of its median (4.35–8.35 ms); a launch-bound or "
        "synchronising call, or a busy machine: its figure moves between runs",
        "no clear winner: the medians differ by 2.1 ms, within the wider IQR (4 ms)",
    )
    assert timing_notes(steady, timing([10.1, 10.2, 10.3, 10.4, 10.5])) == (
        "no clear winner: the medians differ by 0.1 ms, within the wider IQR (0.2 ms)",
    )
    assert timing_notes(steady, timing([5.0, 5.1, 5.2])) == ()  # ×2, both tight
    assert timing_notes(steady, None) == ()


def test_benchmark_views_say_the_cautions():
    from explorer.views._bench import summary_lines

    b = compiler.types.Benchmark(
        name="f",
        device="cuda",
        device_name="GPU",
        method="m",
        warmup=1,
        eager=timing([4.2, 4.3, 4.4, 8.1, 8.3, 8.4, 8.5]),
        compiled=timing([10.0, 10.1, 10.2, 10.3, 10.4]),
        speedup=8.1 / 10.2,
    )
    assert b.timing_notes == timing_notes(b.eager, b.compiled)
    lines = summary_lines(b)
    assert lines[2:4] == [
        "caution, eager unstable: its middle half spans 49% of its median (4.35–8.35 ms); a launch-bound "
        "or synchronising call, or a busy machine: its figure moves between runs",
        "caution, no clear winner: the medians differ by 2.1 ms, within the wider IQR (4 ms)",
    ]


# ---- the benchmark ---------------------------------------------------------------------------


def test_benchmark_of_remembered_subject_and_json_round_trip(tmp_path):
    _, report = _aot(_f, torch.randn(8, 8))
    b = compiler.benchmark(report, reps=4, warmup=1, profile=False, progress=False)
    assert report.benchmarks == (b,)
    assert (b.eager.reps, b.compiled.reps, b.device, b.warmup) == (4, 4, "cpu", 1)
    assert b.speedup == b.eager.median_ms / b.compiled.median_ms
    assert b.threads == torch.get_num_threads() and "ABBA" in b.method
    assert b.accuracy.ok and b.accuracy.max_abs == 0.0 and b.accuracy.tensors == 1
    assert b.config.backend == "aot_eager" and b.state == "unchanged"
    # each arm's median wait for a core, where the kernel says (Linux's schedstat)
    assert (b.eager.waited_ms is None, b.compiled.waited_ms is None) == (_timing.waited_ms() is None,) * 2
    report.to_json(tmp_path / "r.json")
    again = compiler.load(tmp_path / "r.json")
    assert again.benchmarks == report.benchmarks and again == report


def test_no_subject_is_a_clear_error():
    with pytest.raises(ValueError, match=r"pass one, compiler.benchmark\(report, fn, \*args\)"):
        compiler.benchmark(compiler.Report(torch_version="x", device="cpu"))


def test_mutating_function_refused_and_state_untouched():
    lin = torch.nn.Linear(4, 4)
    before = lin.weight.detach().clone()

    def step(x):
        out = lin(x)
        with torch.no_grad():
            lin.weight.add_(1)
        return out

    _, report = _aot(step, torch.randn(2, 4))
    with torch.no_grad():
        lin.weight.copy_(before)
    said = []
    with pytest.raises(compiler.StateMutationError, match=r"lin\.weight.*mutates=True"):
        compiler.benchmark(
            report, progress=lambda text, final=False: said.append((text, final)), profile=False
        )
    assert torch.equal(lin.weight, before) and report.benchmarks == ()
    # its last progress line says why nothing was benchmarked, not "done"
    assert said[-1] == ("benchmark step: it changes state in place", True)


def test_optimizer_step_with_opt_in_is_restored_with_rng():
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    x = torch.randn(3, 4)

    def train(x):
        loss = torch.nn.functional.dropout(model(x), 0.5).sum()
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    params = [p.detach().clone() for p in model.parameters()]
    rng = torch.get_rng_state()
    b = compiler.benchmark(
        compiler.Report("x", "cpu"), train, x, compiled=torch.compile(train, backend="eager"), mutates=True, reps=3, warmup=1,
        profile=False, progress=False,
    )  # fmt: skip
    assert b.state == "restored"
    assert "model.weight" in b.mutated and "opt.state" in b.mutated
    assert all(torch.equal(p, q) for p, q in zip(model.parameters(), params))
    assert opt.state == {} and all(p.grad is None for p in model.parameters())
    assert torch.equal(torch.get_rng_state(), rng)
    assert b.accuracy.random


def test_random_numbers_explain_outputs_that_differ_and_fallback_random_matches_them():
    """Dropout compiled by Inductor draws its random numbers with its own kernels: the outputs
    differ from eager's, and the benchmark says why, with the setting; under that setting
    (measured here) they match."""
    from explorer.views._bench import summary_lines

    def f(x):
        return torch.nn.functional.dropout(x, 0.5, training=True) * 2

    x = torch.ones(256)
    kw = {"reps": 2, "warmup": 0, "profile": False, "progress": False}
    torch._dynamo.reset()
    b = compiler.benchmark(compiler.Report("x", "cpu"), f, x, compiled=torch.compile(f), **kw)
    a = b.accuracy
    assert a.random and not a.ok
    assert (
        f"FINDING: outputs differ beyond tolerance, as expected here: the function draws random numbers "
        "(dropout, a random init): compiled code draws them otherwise than eager (Inductor's own random "
        "kernels), so its outputs differ by design; torch._inductor.config.fallback_random = True draws "
        f"them as eager does, to compare: max abs {a.max_abs:.3g}, max rel {a.max_rel:.3g} (atol "
        f"{a.atol:g}, rtol {a.rtol:g})"
    ) in summary_lines(b)
    torch._dynamo.reset()
    with torch._inductor.config.patch(fallback_random=True):
        fixed = compiler.benchmark(compiler.Report("x", "cpu"), f, x, compiled=torch.compile(f), **kw)
    torch._dynamo.reset()
    assert fixed.accuracy.random and fixed.accuracy.ok and fixed.accuracy.max_abs == 0


def _bench(fn, *args, compiled=None, **kw):
    kw = {"reps": 2, "warmup": 0, "profile": False, "progress": False, **kw}
    return compiler.benchmark(
        compiler.Report("x", "cpu"), fn, *args, compiled=compiled or torch.compile(fn, backend="eager"), **kw
    )


class _Trainer:
    def __init__(self):
        torch.manual_seed(0)
        self.model = torch.nn.Linear(4, 2)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.5)
        self.sched = torch.optim.lr_scheduler.StepLR(self.opt, step_size=1, gamma=0.5)
        self.losses = []

    def step(self, x):
        loss = self.model(x).pow(2).sum()
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        self.sched.step()
        self.losses.append(loss.item())
        return loss.detach()


def test_bound_method_state_refused_then_restored():
    # a bound method of a plain object: its model, optimizer, scheduler and log are state
    t, x = _Trainer(), torch.randn(3, 4)
    weight, lr = t.model.weight.detach().clone(), t.opt.param_groups[0]["lr"]
    with pytest.raises(compiler.StateMutationError) as info:
        _bench(t.step, x)
    for name in ("self.losses (a list of 0 items, now 1)", "self.sched.last_epoch", "self.model.weight"):
        assert name in str(info.value)
    b = _bench(t.step, x, mutates=True, reps=3)
    assert b.state == "restored" and "self.opt.param_groups" in b.mutated
    assert torch.equal(t.model.weight, weight) and t.losses == [] and t.opt.param_groups[0]["lr"] == lr
    assert t.sched.last_epoch == 0 and t.sched.get_last_lr() == [lr]
    assert b.accuracy.ok  # same step, same state left: eager's and compiled's


def test_plain_tensor_grad_and_rebound_attribute_and_global_are_state():
    w = torch.ones(3, requires_grad=True)

    def grad_step(x):
        (x * w).sum().backward()
        return x

    with pytest.raises(compiler.StateMutationError, match=r"w\.grad"):
        _bench(grad_step, torch.ones(3))
    assert w.grad is None

    class EMA(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ema = torch.zeros(3)  # a plain attribute, not a buffer

        def forward(self, x):
            self.ema = self.ema * 0.9 + x  # rebinds, nothing changes in place
            return self.ema

    m = EMA()
    ema = m.ema
    with pytest.raises(compiler.StateMutationError, match=r"EMA\.ema"):
        _bench(m, torch.ones(3))
    assert m.ema is ema and torch.equal(ema, torch.zeros(3))

    b = _bench(_count, torch.ones(3), mutates=True)
    assert b.mutated == ("CALLS",) and CALLS == 0


CALLS = 0


def _count(x):
    global CALLS
    CALLS += 1
    return x * 2


def test_output_that_is_the_mutated_tensor_is_compared_and_so_is_the_state_left():
    w = torch.zeros(2)

    def f(x):
        w.add_(x)
        return w

    def wrong(x):  # a compiled arm that updates the state by five times as much
        w.add_(x * 5)
        return w

    b = _bench(f, torch.ones(2), compiled=wrong, mutates=True)
    assert not b.accuracy.ok and b.accuracy.max_abs == 4.0 and b.accuracy.tensors == 2
    assert (
        b.accuracy.note
        == "the state left by the compiled call differs from eager's: w (max abs 4, max rel 4)"
    )
    assert torch.equal(w, torch.zeros(2))


def test_nan_in_compiled_only_is_an_infinite_error():
    from compiler.bench._accuracy import compare

    a = compare(torch.ones(3), torch.tensor([1.0, float("nan"), 1.0]), None, None)
    assert (a.ok, a.max_abs, a.max_rel) == (False, math.inf, math.inf)
    assert a.note == "1 NaN in one output only (compiled 1, eager 0)"
    both = compare(torch.tensor([float("nan")]), torch.tensor([float("nan")]), None, None)
    assert both.ok and both.max_abs == 0.0


def test_compiled_raising_while_timing_is_a_finding():
    calls = {"n": 0}

    def flaky(x):
        calls["n"] += 1
        if calls["n"] > 4:
            raise RuntimeError("compiled arm fails late")
        return x * 2

    calls_before = dict(calls)
    b = _bench(_f, torch.ones(2), compiled=flaky, reps=10, warmup=1)
    # accuracy call n=1, warm-up n=2, timed C at n=3, 4 (E C C E ...), the 5th call raises
    assert b.error == "compiled raised RuntimeError after 2 timed calls: compiled arm fails late"
    assert b.compiled.reps == 2 and b.speedup is not None and calls_before == {"n": 0}


def test_recompiles_while_timing_are_said():
    state = {"k": 0}

    def f(x):
        state["k"] += 1  # a Python value the graph specialises on: a new compile each call
        return x * state["k"]

    b = _bench(f, torch.ones(2), compiled=torch.compile(f, backend="eager", dynamic=False), mutates=True)
    assert len(b.compiles_while_timing) >= 2
    assert b.compiles_while_timing[0].startswith("[0/")
    (note,) = [n for n in b.timing_notes if n.startswith("compiled while timing")]
    assert f"{len(b.compiles_while_timing)} compiles during the warm-up and timed calls" in note


def test_bad_reps_and_snapshot_out_of_memory_are_clear(monkeypatch):
    with pytest.raises(ValueError, match="reps must be at least 1 .timed calls per arm., not 0"):
        _bench(_f, torch.ones(2), reps=0)
    from compiler.bench import _state

    def oom(self, name, t):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(_state.Snapshot, "_tensor", oom)
    with pytest.raises(
        MemoryError, match=r"not enough memory to snapshot the state .* function was not called"
    ):
        _bench(_f, torch.ones(2))


def test_outputs_that_differ_are_a_finding():
    def wrong_backend(gm, example_inputs):
        def run(*args):
            return tuple(o + 0.25 for o in gm(*args))

        return run

    x = torch.ones(3)
    b = compiler.benchmark(
        compiler.Report("x", "cpu"),
        _f,
        x,
        compiled=torch.compile(_f, backend=wrong_backend),
        reps=2,
        warmup=0,
        profile=False,
        progress=False,
    )
    assert not b.accuracy.ok
    assert b.accuracy.max_abs == 0.25 and b.accuracy.max_rel == 0.125


def test_tolerances_follow_dtype_and_autocast():
    from compiler.bench._accuracy import compare

    e = torch.tensor([1.0, 2.0])  # fp32 out, e.g. a residual add after bf16 matmuls under autocast
    c = e + torch.tensor([0.0, 0.01])
    strict, loose = compare(e, c, None, None), compare(e, c, None, None, low_precision=True)
    assert (strict.ok, strict.atol, strict.rtol) == (False, 1e-3, 1e-3)
    assert (loose.ok, loose.atol, loose.rtol) == (True, 5e-2, 5e-2)
    assert compare(e.bfloat16(), c.bfloat16(), None, None).atol == 5e-2  # a bf16 output


def test_exception_in_eager_propagates_unchanged():
    err = RuntimeError("boom in eager")

    def bad(x):
        raise err

    r = compiler.Report("x", "cpu")
    with pytest.raises(RuntimeError) as info:
        compiler.benchmark(r, bad, torch.ones(1), compiled=lambda x: x, progress=False)
    assert info.value is err and r.benchmarks == ()


def test_compiled_raising_is_recorded_not_raised():
    def bad_compiled(x):
        raise ValueError("only compiled fails")

    b = compiler.benchmark(
        compiler.Report("x", "cpu"), _f, torch.ones(2), compiled=bad_compiled, progress=False
    )
    assert b.error == "compiled raised ValueError: only compiled fails" and b.compiled is None


def test_keyboard_interrupt_keeps_partial_result_and_restores_state():
    w = torch.zeros(3)
    calls = {"n": 0}

    def step(x):
        calls["n"] += 1
        if calls["n"] == 9:
            raise KeyboardInterrupt
        w.add_(1)
        return x + w

    r = compiler.Report("x", "cpu")
    with pytest.raises(KeyboardInterrupt):
        compiler.benchmark(
            r,
            step,
            torch.ones(3),
            compiled=step,
            mutates=True,
            reps=50,
            warmup=1,
            profile=False,
            progress=False,
        )
    (b,) = r.benchmarks
    # the counter is state too: restored after the state check and after the accuracy call
    # (each sees n = 1), and at the end
    assert b.interrupted and torch.equal(w, torch.zeros(3)) and calls == {"n": 0}
    # then warm-up n = 1, 2, timed E C C E E C C: n = 3 .. 9, the 9th raising
    assert (b.eager.reps, b.compiled.reps) == (3, 3)
    assert b.mutated == ("calls['n']", "w")


# ---- charts and views --------------------------------------------------------------------------


def test_chart_and_table_data_equal_the_benchmark():
    pytest.importorskip("plotly")
    from explorer.lower import _charts
    from explorer.views import _bench as _benchview

    _, report = _aot(_f, torch.randn(8, 8))
    b = compiler.benchmark(report, reps=3, warmup=0, profile=False, progress=False)
    (bar,) = _charts.timing_figure(b).data
    assert list(bar.x) == ["eager", "compiled"]
    assert list(bar.y) == [b.eager.median_ms, b.compiled.median_ms]
    assert list(bar.error_y.array) == [
        b.eager.p75_ms - b.eager.median_ms,
        b.compiled.p75_ms - b.compiled.median_ms,
    ]
    t = _benchview.timing_table(b)
    assert t.rows[0][:2] == ("eager", f"{b.eager.median_ms:.4g}")
    page = __import__("explorer").html(report)
    assert page.count("plotly.js v") == 1 and 'id="tab-bench"' in page
    assert "Benchmark (1)" in page


def test_modes_on_cpu_skip_cuda_graphs_and_chart_names_each_bar():
    pytest.importorskip("plotly")
    from explorer.lower import _charts

    cmp = compiler.compare_modes(
        _f, torch.randn(4), backend="aot_eager", reps=2, warmup=0, profile=False, progress=False
    )
    assert [r.label for r in cmp.rows] == ["default", "reduce-overhead"]
    assert cmp.rows[1].skipped == "CUDA graphs need a CUDA device; the inputs are on CPU"
    fig = _charts.modes_figure(cmp)
    assert [list(t.x) for t in fig.data] == [["default"], ["default"]]
    assert fig.data[1].customdata[0][0] == "default"
    assert fig.data[1].y[0] == cmp.rows[0].benchmark.compiled.median_ms


# ---- the profiler mapping on a real C++ compile ----------------------------------------------


@pytest.mark.slow
def test_profiled_cpp_kernels_match_report_kernels():
    def g(x, w):
        y = torch.relu(x @ w) * 2
        torch._dynamo.graph_break()  # a second graph, whose kernel has the first one's name
        return torch.relu(y) * 2

    _, report = compiler.record(g, torch.randn(32, 32), torch.randn(32, 32))
    (c0, c1) = report.compiles
    assert "cpp_fused_mul_relu_0" in {k.name for k in report.kernels_of(c0.id)} & {
        k.name for k in report.kernels_of(c1.id)
    }
    b = compiler.benchmark(report, reps=3, warmup=1, progress=False)
    cpp = [k for k in b.kernels if k.kind == "cpp"]
    for c in (c0, c1):  # each profiled kernel maps to its own graph's compile
        assert {k.kernel for k in cpp if k.compile_id == c.id} == {k.name for k in report.kernels_of(c.id)}
    assert all(k.name == f"graph_{k.name.split('_')[1]}_{k.kernel}" for k in cpp)
    assert [k.name for k in b.kernels if k.kind == "extern"] == ["aten::mm"]
    assert abs(sum(k.share for k in b.kernels) - 1) < 1e-9
    assert "matched to the report's kernels by frame and kernel name" in b.profile_note

    # a compiled callable of unknown options whose kernels this report does not hold: it is
    # profiled as it is, not through a compile that would time other code
    def h(x):
        return torch.tanh(x) * 3

    other = compiler.benchmark(report, h, torch.randn(8), compiled=torch.compile(h, backend="aot_eager"), reps=2,
                             progress=False)  # fmt: skip
    assert [k.kind for k in other.kernels] == ["extern"] * len(other.kernels) and other.kernels
    assert other.profile_note.startswith("the compiled callable was passed without its torch.compile options")


# ---- notebook wiring ----------------------------------------------------------------------------


def test_compile_magic_bench_and_explorer_button():
    ip = pytest.importorskip("IPython.testing.globalipapp").get_ipython()
    ip.run_line_magic("load_ext", "explorer")
    ip.run_cell("import torch\nx = torch.linspace(-1, 1, 16)")
    ip.run_cell_magic("compile", "--backend eager --bench --reps 3", "y = x.sin() * 2")
    report = ip.user_ns.pop("_pt2_report")
    (b,) = report.benchmarks
    assert (b.name, b.compiled.reps, b.accuracy.ok) == ("cell", 3, True)
    from explorer.pages._widgets import Explorer

    app = Explorer(report)
    assert not app.bench_button.disabled
    assert app.tabs.get_title(app._bench_tab) == "Benchmark (1)"
    app.run_benchmark(reps=2, warmup=0, profile=False)
    assert len(report.benchmarks) == 2 and app.tabs.get_title(app._bench_tab) == "Benchmark (2)"
    bare = Explorer(compiler.Report("x", "cpu"))
    assert bare.bench_button.disabled and "compiler.benchmark(report, fn, *args)" in bare.bench_button.tooltip
    for n in ("x", "y"):
        ip.user_ns.pop(n, None)


def test_benchmark_button_shows_its_label_and_offers_the_mutating_benchmark():
    """The Benchmark button keeps its whole label beside a long status (it does not shrink in
    its row); on a step that changes state it is refused, with a button that benchmarks it
    anyway, the state snapshotted and restored."""
    from explorer.pages._widgets import ANYWAY, Explorer

    w = torch.zeros(4)

    def step(x):
        w.add_(x)  # changes state in place: refused without mutates=True
        return w * 2

    _, report = compiler.record(step, torch.ones(4), compile_kwargs={"backend": "eager"})
    app = Explorer(report)
    assert (app.bench_button.description, app.bench_button.layout.flex) == ("Benchmark", "0 0 auto")
    app.run_benchmark(reps=2, warmup=0, profile=False)
    assert not report.benchmarks and "changes state in place" in app.bench_status.value
    button, anyway, status = app.bench_row.children
    assert (anyway.description, anyway.layout.flex, status) == (ANYWAY, "0 0 auto", app.bench_status)
    before = w.clone()
    anyway.click()
    (b,) = report.benchmarks
    assert b.state == "restored" and torch.equal(w, before)
    assert app.bench_row.children == (button, app.bench_status)


def test_timing_notes_say_an_arm_that_waited_for_a_core():
    t = timing([12.0, 11.9, 12.1], [16.0, 8.0, 16.0])
    calm = timing([12.0, 11.9, 12.1], [1.0, 0.0, 1.1])  # under a tenth of the call: nothing said
    assert timing_notes(calm, t, cpu=True)[:1] == (
        "compiled waited for a core: its median call's threads waited 16 ms for one, against 12 ms a "
        "call (other processes held the cores its parallel regions needed): its time is the machine's "
        "load; on a shared CPU, fewer threads than free cores (OMP_NUM_THREADS=N, or "
        "torch.set_num_threads(N)) or the process pinned to cores (taskset -c 0-3 python …) steadies it",
    )
    assert not [n for n in timing_notes(calm, calm, cpu=True) if "waited" in n]


def test_timing_notes_say_two_speeds_and_stalls_with_the_remedy_on_cpu():
    """A CPU arm whose calls ran at two speeds (threads taking turns on a shared machine), and
    one with a few calls stalled: each said, with the remedy (fewer threads, or pinned) on CPU
    only; ten samples or fewer, or one steady speed, say nothing of the kind."""
    steady = timing([1.0 + 0.001 * i for i in range(40)])
    two = timing([1.0 + 0.01 * (i % 3) for i in range(30)] + [2.0 + 0.01 * (i % 3) for i in range(20)])
    assert timing_notes(two, steady, cpu=True)[0] == (
        "eager bimodal: its calls ran at two speeds, 30 of 50 near 1.01 ms and 20 near 2.01 ms: the "
        "median falls between them or on one side by chance; on a shared CPU, fewer threads than free "
        "cores (OMP_NUM_THREADS=N, or torch.set_num_threads(N)) or the process pinned to cores "
        "(taskset -c 0-3 python …) steadies it"
    )
    stalled = timing([2.0 + 0.002 * i for i in range(47)] + [7.0, 10.0, 12.0])
    assert timing_notes(steady, stalled, cpu=False) == (
        "compiled stalled: 3 of 50 calls took over 3× the median (up to 12 ms against 2.049 ms): threads "
        "that waited for a core",
    )
    assert timing_notes(steady, timing([1.0 + 0.001 * i for i in range(40)]), cpu=True) == (
        "no clear winner: the medians differ by 0 ms, within the wider IQR (0.0195 ms)",
    )
    assert timing_notes(timing([1.0, 1.0, 3.0, 3.0, 1.0]), None, cpu=True)[0].startswith("eager unstable")

"""The answer on the user's call, on the GPU: inference programs that call their compiled model
under ``torch.no_grad()`` (and bf16 autocast), run through ``pt2-explorer record --bench`` and
``advise`` as a user runs them, each figure held against an independent timing of the same
call in the program's own context (``triton.testing.do_bench``, here in the test).

Run on a CUDA machine with transformers: ``python -m pytest -m gpu tests/test_bench_replay_gpu.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import torch

import compiler

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU with Triton"),
]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The independent timing, in the program's own process and context (a user timing their model
# with do_bench): eager over compiled, each arm the median of do_bench's medians over 8 rounds in
# ABBA order (one arm timed after the other would time the host's drift). It runs twice: right
# after the program's calls, and again from an atexit handler, which runs after record --bench's
# benchmark (that one runs when the program's code has returned, before the interpreter exits).
# A host-bound call's time follows the host's speed, which moves between phases of a shared
# machine (GPT-2's compiled call: 2.1 ms in one minute, 3.6 ms of host launch work the next), so
# our figure is held against the two timings that bracket it in time.
DO_BENCH = """
import statistics


def do_bench_speedup(model, compiled, ids, context, label="do_bench"):
    from triton.testing import do_bench

    out = {"eager": [], "compiled": []}
    calls = {"eager": lambda: model(ids), "compiled": lambda: compiled(ids)}
    with context():
        for i in range(8):
            for arm in ("eager", "compiled") if i % 2 == 0 else ("compiled", "eager"):
                out[arm].append(do_bench(calls[arm], warmup=25, rep=80, return_mode="median"))
    e, c = statistics.median(out["eager"]), statistics.median(out["compiled"])
    print(f"{label}: eager {e:.4f} ms, compiled {c:.4f} ms, speedup {e / c:.4f}", flush=True)
"""

# The user's programs: build(), the context the program calls its model in, and the calls.
BERT_TINY = """
import sys
import torch
from transformers import BertConfig, BertModel


def build():
    torch.manual_seed(0)
    cfg = BertConfig(hidden_size=128, num_hidden_layers=2, num_attention_heads=2, intermediate_size=512)
    model = BertModel(cfg).eval().cuda()
    return model, torch.randint(0, cfg.vocab_size, (1, 8), device="cuda")


def context():
    return torch.no_grad()


if __name__ == "__main__":
    model, ids = build()
    compiled = torch.compile(model, mode=sys.argv[1])
    with context():
        for _ in range(20):
            out = compiled(ids)
    torch.cuda.synchronize()
    print("last hidden state", tuple(out.last_hidden_state.shape))
    if "--do-bench" in sys.argv:
        do_bench_speedup(model, compiled, ids, context)
        import atexit

        atexit.register(do_bench_speedup, model, compiled, ids, context, "do_bench after")
"""

GPT2_AMP = """
import contextlib
import sys
import torch
from transformers import GPT2Config, GPT2LMHeadModel


def build():
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(n_layer=6)).eval().cuda()
    return model, torch.randint(0, 50257, (8, 512), device="cuda")


def context():
    stack = contextlib.ExitStack()
    stack.enter_context(torch.no_grad())
    stack.enter_context(torch.autocast("cuda", dtype=torch.bfloat16))
    return stack


if __name__ == "__main__":
    model, ids = build()
    compiled = torch.compile(model, mode=sys.argv[1])
    with context():
        for _ in range(5):
            out = compiled(ids)
    torch.cuda.synchronize()
    print("logits", tuple(out.logits.shape))
    if "--do-bench" in sys.argv:
        do_bench_speedup(model, compiled, ids, context)
        import atexit

        atexit.register(do_bench_speedup, model, compiled, ids, context, "do_bench after")
"""


def _program(tmp_path, text: str):
    path = tmp_path / "prog.py"
    head, main = text.split('if __name__ == "__main__":')
    path.write_text(textwrap.dedent(head) + DO_BENCH + '\n\nif __name__ == "__main__":' + main)
    return path


def _cli(*args: str, timeout: int = 560) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": ROOT, "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "explorer", *args], capture_output=True, text=True, env=env, timeout=timeout
    )


def _recorded(tmp_path, mode: str, text: str):
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = _program(tmp_path, text)
    done = _cli("record", "--bench", "--json", str(tmp_path / "r.json"), str(path), mode, "--do-bench")
    assert done.returncode == 0, done.stderr[-3000:]
    report = compiler.load(str(tmp_path / "r.json"))
    (bench,) = report.benchmarks
    before, after = (
        [x for x in done.stdout.splitlines() if x.startswith(f"{label}: ")]
        for label in ("do_bench", "do_bench after")
    )
    assert len(before) == len(after) == 1, done.stdout[-2000:]
    print(
        f"{before[0]}; record --bench: eager {bench.eager.median_ms:.4f} ms, compiled "
        f"{bench.compiled.median_ms:.4f} ms, speedup {bench.speedup:.4f}; {after[0]}"
    )
    return done, report, bench, (float(before[0].rsplit(" ", 1)[1]), float(after[0].rsplit(" ", 1)[1]))


def _bracketed(ours: float, theirs: tuple[float, float], within: float = 0.15) -> bool:
    """Our speedup within 15% of the independent timings made before and after it."""
    return min(theirs) * (1 - within) <= ours <= max(theirs) * (1 + within)


def test_bert_tiny_reduce_overhead_under_no_grad_is_timed_as_called(tmp_path):
    done, report, bench, theirs = _recorded(tmp_path, "reduce-overhead", BERT_TINY)
    assert bench.compiles_while_timing == ()  # torch ran what the program ran
    assert bench.context == "torch.no_grad(), model.eval()"
    assert bench.config.mode == "reduce-overhead"
    ids = {c.id for c in report.compiles}
    assert set(bench.compile_ids) <= ids
    assert bench.speedup > 1 and min(theirs) > 1
    assert _bracketed(bench.speedup, theirs), (bench.speedup, theirs)


def test_gpt2_under_no_grad_and_bf16_autocast_is_timed_as_called(tmp_path):
    """Three runs, each its own process (record --bench, do_bench in the program before and
    after it): the compiled call is host-bound (3.6 ms of host launch work for 3.9 ms on the
    GPU, measured on an H200 host), and its time moves by tens of percent between phases of a
    shared host (2.1 to 3.9 ms), so each run's figure is held against the do_bench timings
    that bracket it, and two runs of three must be."""
    held = []
    for i in range(3):
        done, report, bench, theirs = _recorded(tmp_path / str(i), "default", GPT2_AMP)
        assert bench.compiles_while_timing == ()
        assert bench.context == 'torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16), model.eval()'
        held.append(_bracketed(bench.speedup, theirs))
        why = [line for line in done.stdout.splitlines() if line.startswith("why ")]
        assert why, done.stdout[-2000:]
        assert not any("TF32" in line or "fp32" in line for line in why), why
    assert sum(held) >= 2, held


def test_advise_ranks_reduce_overhead_first_on_a_launch_bound_no_grad_program(tmp_path):
    path = _program(tmp_path, BERT_TINY)
    out = tmp_path / "advise"
    done = _cli("advise", "--out", str(out), "--reps", "100", str(path), "default")
    assert done.returncode == 0, done.stderr[-3000:]
    base = compiler.load(str(out / "baseline" / "report.json")).benchmarks[0]
    fix = compiler.load(str(out / "reduce-overhead" / "report.json")).benchmarks[0]
    assert base.compiles_while_timing == () and fix.compiles_while_timing == ()
    print(f"advise: baseline x{base.speedup:.2f}, reduce-overhead x{fix.speedup:.2f}")
    assert fix.speedup > base.speedup and fix.speedup > 1
    table = (out / "advice.txt").read_text()
    print(table)
    rows = [line for line in table.splitlines() if "reduce-overhead" in line or "baseline" in line]
    assert rows and "reduce-overhead" in rows[0], table


def test_every_call_of_the_benchmark_has_the_programs_state_on_cuda():
    """The probe of tests/test_bench_replay.py on the GPU: bf16 autocast and no_grad."""
    torch._dynamo.reset()
    m = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.GELU(), torch.nn.Linear(64, 8)).cuda().eval()
    seen: list[tuple] = []

    def state() -> tuple:
        return (torch.is_grad_enabled(), torch.is_autocast_enabled("cuda"), torch.get_autocast_dtype("cuda"))

    m.register_forward_pre_hook(
        lambda _m, _a: None if torch.compiler.is_compiling() else seen.append(state())
    )
    x = torch.randn(32, 64, device="cuda")
    with compiler.compiled_calls() as calls, compiler.recording() as rec:
        c = torch.compile(m)
        c.register_forward_pre_hook(lambda _m, _a: seen.append(state()))
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            for _ in range(3):
                c(x)
    seen.clear()
    assert compiler.benchmark_calls(rec.report, calls.called, progress=False, reps=20) == []
    (bench,) = rec.report.benchmarks
    assert len(seen) > 40 and set(seen) == {(False, True, torch.bfloat16)}
    assert bench.compiles_while_timing == ()

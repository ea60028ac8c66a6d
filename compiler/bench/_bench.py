"""Eager against compiled, measured honestly (``compiler.benchmark``); docs/benchmark.md.

Every call the benchmark makes, in both arms, runs under the state the recorded call ran under
(grad and inference mode, autocast, the default dtype, precision and determinism flags, the
modules' training flags: compiler/listen/_callstate.py), its random-number generators seeded as at
that call; and under a recording, so that a compile torch makes during the benchmark (a guard
that fails: the benchmark would time a graph the program did not run) is found and said
(``Benchmark.compiles_while_timing``). What the function prints during the benchmark's calls is
kept out of the program's output (``Benchmark.printed_lines``).

The run: snapshot what the function can reach (compiler/bench/_state.py), one eager and one compiled
call compared for accuracy, timing (compiler/bench/_timing.py: ABBA-interleaved, L2 flushed on GPU),
peak memory per arm (GPU), a profile of the compiled kernels (compiler/bench/_profilerun.py), then the
state restored. Compile time per stage comes from torch's own compilation metrics in the
report; break-even = compile time / time saved per call.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import io
import platform
from typing import Any

import torch

from ..listen._callstate import capture, modules_in, replaying
from ..model._benchtypes import BenchConfig, Benchmark
from ..model._options import BenchOptions
from ..model._report import Report
from ..model._subject import subject_of
from . import _profile
from ._accuracy import compare, frozen, tensors, with_state
from ._profilerun import profiled
from ._reach import roots
from ._state import Snapshot, StateMutationError
from ._timing import Timer, break_even, method, progress_line, timing

# ---- the benchmark ----------------------------------------------------------------------------


def _device(args: tuple, kwargs: dict, snap: Snapshot) -> str:
    for t in [*tensors(args), *tensors(kwargs), *(v[1] for v in snap.tensors.values())]:
        if isinstance(t, torch.Tensor) and t.is_cuda:
            return "cuda"
    return "cpu"


def _device_name(device: str) -> str:
    if device == "cuda":
        return torch.cuda.get_device_name()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _sync(cuda: bool) -> None:
    if cuda:
        torch.cuda.synchronize()


def benchmark(report: Report, fn=None, *args, **kwargs) -> Benchmark:
    """Time eager against compiled on the same inputs, check their outputs agree, profile the
    compiled kernels; append the result to ``report.benchmarks`` (the one field of a report
    that is openly mutable) and return it.

    With no ``fn``, benchmarks what the report remembers (``compiler.record`` and
    ``%%compile`` remember their function, compiled callable and arguments; ``record --bench``
    each compiled function's last call); the compiled callable is reused, never compiled twice.
    Every call it makes, in both arms, runs under the state the remembered call ran under:
    grad and inference mode, autocast (each device type's switch, dtype and cache), the default
    dtype, the float32 matmul precision and the cuDNN and reduced-precision flags, deterministic
    algorithms, the thread count, the modules' ``training`` flags, and the random-number state
    at the call (``compiler.record`` keeps its caller's; ``%%compile`` and a given ``fn`` run
    under the state the benchmark finds). A compile torch makes during the benchmark is said in
    ``Benchmark.compiles_while_timing``. ``mutates=True`` allows a function that changes
    tensors in place (optimizer steps, ``w.add_``): they are snapshotted and restored. The
    keywords named in ``BenchOptions`` (``reps``, ``warmup``, ``profile``, ``mutates``,
    ``compiled``, ``compile_options``, ``name``, ``progress``, ``atol``, ``rtol``:
    compiler/model/_options.py) are
    the benchmark's; other keyword arguments go to ``fn``, and one named like an option must be
    bound with ``functools.partial``. Methodology: docs/benchmark.md.
    """
    options, fn_kwargs = BenchOptions.split(kwargs)
    return benchmark_report(report, fn, args, fn_kwargs, **options.keywords())


# help() and editors show the benchmark's options (declared once, in compiler/model/_options.py)
benchmark.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [
        inspect.Parameter("report", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Report),
        inspect.Parameter("fn", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None),
        inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
        *BenchOptions.parameters(),
        inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD),
    ],
    return_annotation=Benchmark,
)


def benchmark_report(
    report: Report, fn, args: tuple, kwargs: dict, *, config: BenchConfig | None = None, **options: Any
) -> Benchmark:
    """``benchmark`` with the function's own keywords apart from the options (``BenchOptions``',
    compiler/model/_options.py)."""
    o = BenchOptions.of(options, "compiler.benchmark")
    compiled = o.compiled
    subject = subject_of(report)
    compile_kwargs: dict = {}
    if fn is None:
        if subject is None:
            raise ValueError(
                "this report remembers no function to benchmark: pass one, "
                "compiler.benchmark(report, fn, *args) (fn is called eagerly and compiled), "
                "or make the report with compiler.record(fn, *args) or %%compile"
            )
        fn, args, kwargs = subject.eager, subject.args, subject.kwargs
        compiled = compiled or subject.compiled
        compile_kwargs = subject.compile_kwargs
    elif compiled is None and subject is not None and subject.eager is fn:
        compiled, compile_kwargs = subject.compiled, subject.compile_kwargs
    if o.compiled is not None and o.compile_options is not None:  # what the caller says it was made with
        compile_kwargs = dict(o.compile_options)
    show = progress_line(o.progress)
    state = subject.state if subject is not None and compiled is subject.compiled else None
    if state is None:  # the state the benchmark is made in
        state = capture(modules_in(fn, *args, *kwargs.values()))
    run = _Run(report, fn, args, kwargs, compiled, compile_kwargs, show, o.atol, o.rtol)
    run.state = state
    # the compile options of the compiled callable are known: it is the one the report
    # remembers with them, or the benchmark compiles fn itself
    run.known_options = compiled is None or (subject is not None and compiled is subject.compiled)
    return run.go(o.reps, o.warmup, o.profile, o.mutates, o.name, config)


class _Run:
    def __init__(self, report, fn, args, kwargs, compiled, compile_kwargs, show, atol, rtol):
        self.report, self.fn, self.args, self.kwargs = report, fn, tuple(args), dict(kwargs)
        self.compiled, self.compile_kwargs, self.show = compiled, compile_kwargs, show
        self.atol, self.rtol = atol, rtol
        self.samples: dict[str, list[float]] = {"eager": [], "compiled": []}
        self.waits: dict[str, list[float]] = {"eager": [], "compiled": []}
        self.compile_report: Report | None = None
        self.fields: dict[str, Any] = {}
        self.state = None  # the CallState every call runs under (benchmark_report sets it)
        self.bench: Benchmark | None = None
        self.proof: contextlib.ExitStack | None = None

    def eager_call(self):
        return self.fn(*self.args, **self.kwargs)

    def compiled_call(self):
        return self.compiled(*self.args, **self.kwargs)

    def go(self, reps, warmup, profile, mutates, name, config) -> Benchmark:
        if reps is not None and reps < 1:
            raise ValueError(f"reps must be at least 1 (timed calls per arm), not {reps}")
        # the program's random-number state, put back at the end whatever the calls drew
        cuda_rng = list(range(torch.cuda.device_count())) if torch.cuda.is_initialized() else []
        printed = io.StringIO()
        with (
            torch.random.fork_rng(devices=cuda_rng),
            replaying(self.state),
            contextlib.ExitStack() as self.proof,
            contextlib.redirect_stdout(printed),
            contextlib.redirect_stderr(printed),
        ):
            self.state.seed_rng()  # as at the recorded call: a function that draws draws the same
            try:
                self._go(reps, warmup, profile, mutates, name, config)
            finally:
                self._proven()
                text = printed.getvalue()
                lines = text.count("\n") + (bool(text) and not text.endswith("\n"))
                if self.bench is not None:  # the one field a report lets change
                    self.bench = dataclasses.replace(self.bench, printed_lines=lines)
                    self.report.benchmarks = (*self.report.benchmarks, self.bench)
        assert self.bench is not None
        return self.bench

    def _go(self, reps, warmup, profile, mutates, name, config) -> Benchmark:
        snap = Snapshot(roots(self.fn, self.args, self.kwargs))  # SnapshotError: nothing run
        self.cuda = _device(self.args, self.kwargs, snap) == "cuda"
        device = "cuda" if self.cuda else "cpu"
        label = name or _name_of(self.fn)
        warmup = 3 if warmup is None else max(0, warmup)
        self.fields = dict(
            name=label,
            device=device,
            device_name=_device_name(device),
            method=method(self.cuda),
            warmup=warmup,
            config=config or _config(self.compile_kwargs),
            threads=torch.get_num_threads(),
            torch_version=torch.__version__,
            peak_gb_per_s=_profile.peak_gb_per_s(_device_name(device)) if self.cuda else None,
            matmul_precision=torch.get_float32_matmul_precision(),
            allow_tf32=torch.backends.cuda.matmul.allow_tf32 if self.cuda else None,
            context=self.state.words(),
        )
        done = "done"
        try:
            self.show(f"benchmark {label}: eager call (state check)")
            eager_out = self.eager_call()  # an exception here is the user's: it propagates
            _sync(self.cuda)
            mutated = snap.changed()
            rng_used = snap.rng_changed()
            if mutated and not mutates:
                raise StateMutationError(
                    f"benchmarking {label} would call it many times, and it changes state in place: "
                    f"{', '.join(mutated[:8])}{' …' if len(mutated) > 8 else ''}. Nothing was changed "
                    "(restored). Pass mutates=True (%%compile --bench --mutates) to benchmark it anyway: "
                    "that state is snapshotted and restored after the benchmark."
                )
            self.fields.update(state="restored" if mutated else "unchanged", mutated=tuple(mutated))
            # the outputs and the state eager left, copied before restoring (an output may be
            # the very tensor the function changes in place)
            eager_out = frozen(eager_out)
            eager_state = snap.values(mutated) if mutated else {}
            snap.restore()
            self.show(f"benchmark {label}: compiled call (accuracy)")
            if self.compiled is not None:  # from here, a compile torch makes is not the recording's
                self._watch()
            try:
                compiled_out = self._first_compiled_call()
                _sync(self.cuda)
            except (KeyboardInterrupt, StateMutationError):
                raise
            except Exception as e:
                self.fields["error"] = f"compiled raised {type(e).__name__}: {e}"
                self._compile_fields()
                return self._finish()
            autocast = getattr(self.fields.get("config"), "autocast", None)
            low = autocast in ("bfloat16", "float16")
            accuracy = compare(eager_out, compiled_out, self.atol, self.rtol, low_precision=low)
            if eager_state:
                accuracy = with_state(
                    accuracy, eager_state, snap.values(list(eager_state)), self.atol, self.rtol, low
                )
            if rng_used:  # said by the views (Accuracy.random), with the setting that draws as eager
                accuracy = dataclasses.replace(accuracy, random=True)
            self.fields["accuracy"] = accuracy
            del eager_out, compiled_out
            snap.restore()
            self._compile_fields()
            if not self._measure(reps, warmup, label):
                return self._finish()
            if self.cuda:
                self._peak_memory()
            if profile:
                self.show(f"benchmark {label}: profiling the compiled kernels")
                self._profile()
        except KeyboardInterrupt:
            self.fields["interrupted"] = True
            self._finish()
            raise
        except StateMutationError:  # nothing benchmarked: the caller may go on with mutates=True
            done = "it changes state in place"
            raise
        finally:
            snap.restore()
            self.show(f"benchmark {label}: {done}", final=True)
        return self._finish()

    def _first_compiled_call(self):
        if self.compiled is not None:
            return self.compiled_call()
        from ..listen._capture import recording

        self.compiled = torch.compile(self.fn, **self.compile_kwargs)
        with recording(fusion_logs=False, caches=False) as rec:  # its cold compile time, every stage
            out = self.compiled_call()
        self.compile_report = rec.report
        self._watch()  # its own first compile is the benchmark's; any after it is not
        return out

    def _watch(self) -> None:
        """Record from here to the benchmark's end: every compile torch makes in that span."""
        from ..listen._capture import recording

        self.watch = self.proof.enter_context(recording(fusion_logs=False, provenance=False, caches=True))

    def _proven(self) -> None:
        """Say each compile torch made while the benchmark called the compiled callable (not
        the profiling compile of C++ kernels, the benchmark's own), with torch's reason: a
        guard that failed there (the state, a size) makes the benchmark time another graph."""
        watch = getattr(self, "watch", None)
        if watch is None:
            return
        self.proof.close()  # the recording ends: its report is built
        r = watch.report
        own = set(getattr(self, "prof_ids", {}))
        made = [c for c in (r.compiles if r is not None else ()) if c.id not in own]
        if not made:
            return
        why = {x.compile_id: "; ".join(x.reasons) for x in r.recompiles}
        lines = tuple(f"[{c.id}] {why.get(c.id) or c.status}" for c in made)
        self.fields["compiles_while_timing"] = lines
        if self.bench is not None:
            self.bench = dataclasses.replace(self.bench, compiles_while_timing=lines)

    def _compile_fields(self) -> None:
        source = self.compile_report or self.report
        ok = [c for c in source.compiles if c.status == "ok"]
        subject = subject_of(self.report)
        if self.compile_report is None and subject is not None and subject.compile_ids is not None:
            if self.compiled is subject.compiled:  # the program's compiles of this callable only
                ok = [c for c in ok if c.id in subject.compile_ids]
        if not ok:
            return
        stages: dict[str, float] = {}
        for c in ok:
            for k, v in c.stage_times_s.items():
                stages[k] = stages.get(k, 0.0) + v
        times = [c.compile_time_s for c in ok if c.compile_time_s is not None]
        self.fields["compile_time_s"] = sum(times) if times else None
        self.fields["stage_times_s"] = stages
        self.fields["compile_ids"] = tuple(c.id for c in ok)
        config = self.fields.get("config")
        modes = {c.config.mode for c in ok if c.config is not None and c.config.mode}
        if config is not None and config.mode in (None, "default") and len(modes) == 1:
            # the compiled callable came without its torch.compile arguments: its mode is the
            # one torch's records of its compiles say
            self.fields["config"] = dataclasses.replace(config, mode=modes.pop())

    def _measure(self, reps: int | None, warmup: int, label: str) -> bool:
        """Warm up and time both arms; False when the compiled arm raised (a finding)."""
        compiled_fn = self.compiled

        def compiled_call():
            try:
                return compiled_fn(*self.args, **self.kwargs)
            except Exception as e:
                raise _CompiledRaised(e) from e

        timer = Timer({"eager": self.eager_call, "compiled": compiled_call}, self.cuda, self.show)
        self.samples, self.waits = timer.samples, timer.waits  # kept on KeyboardInterrupt
        try:
            timer.run(reps, warmup, label)
        except _CompiledRaised as e:
            n = len(timer.samples["compiled"])
            err = e.__cause__
            self.fields["error"] = f"compiled raised {type(err).__name__} after {n} timed calls: {err}"
            return False
        finally:
            self.fields["method"] += timer.note
        return True

    def _peak_memory(self) -> None:
        for arm, call in (("eager", self.eager_call), ("compiled", self.compiled_call)):
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            call()
            torch.cuda.synchronize()
            self.fields[f"peak_memory_{arm}"] = torch.cuda.max_memory_allocated()

    def _profile(self) -> None:
        self.fields.update(profiled(self))

    def _finish(self) -> Benchmark:
        f = dict(self.fields)
        e, c = self.samples["eager"], self.samples["compiled"]
        f["eager"] = timing(e, self.waits["eager"]) if e else None
        f["compiled"] = timing(c, self.waits["compiled"]) if c else None
        if f["eager"] and f["compiled"]:
            f["speedup"] = f["eager"].median_ms / f["compiled"].median_ms
            f["break_even_calls"] = break_even(
                f.get("compile_time_s"), f["eager"].median_ms, f["compiled"].median_ms
            )
        self.bench = Benchmark(**f)
        return self.bench


class _CompiledRaised(Exception):
    """An exception of the compiled arm while timing (``__cause__``): a finding, not an error."""


def _name_of(fn) -> str:
    if isinstance(fn, torch.nn.Module):
        return type(fn).__name__
    name = getattr(fn, "__name__", None) or type(fn).__name__
    return "cell" if name == "__pt2_cell__" else name


def _config(compile_kwargs: dict) -> BenchConfig:
    return BenchConfig(
        mode=compile_kwargs.get("mode") or "default",
        dynamic=compile_kwargs.get("dynamic"),
        autocast=None,
        backend=compile_kwargs.get("backend") if isinstance(compile_kwargs.get("backend"), str) else None,
    )

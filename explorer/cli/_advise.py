"""``pt2-explorer advise``: the program run once as it is under ``record --bench``, then once
per fix its verdict calls for (and per ``--try``), each a fresh process with the fix set at
start-up (explorer/cli/_adviserun.py), each leaving its own report; then one table of the
measured fixes, best first (``compiler._viewer.advice_from_runs``, explorer/views/_advice.py)."""

from __future__ import annotations

import argparse
import os
import signal
import sys

import compiler
from explorer.cli._adviserunner import Runner, Signalled
from explorer.cli._out import say

ADVISE_USAGE = (
    "pt2-explorer advise [--compile-time] [--out DIR] [--try NAME,...] [--only NAME,...] [--jobs N] [--reps N] "
    "[--timeout S] (SCRIPT | -m MODULE) [ARGS...]"
)
ADVISE_VALUED = ("--out", "--try", "--only", "--jobs", "--reps", "--timeout")  # options that take a value
# a fix's run whose eager arm disagrees with the baseline's (the host ran at another speed) is
# run again this many times at most; still disagreeing, its row is marked and not ranked
REMEASURE = 2


def advise_options(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Run the program as `record --bench` does, then again with each fix its verdict calls for "
        "(a torch setting made at start-up), each in a fresh process with its own report; print the "
        "measured fixes, best first (docs/advise.md)."
    )
    p.add_argument(
        "--out", metavar="DIR", help="where the runs' reports go (default: a new advise-<name>/ here)"
    )
    p.add_argument(
        "--try",
        dest="tries",
        type=_fix_names,
        default=(),
        metavar="NAME,...",
        help="also try these fixes, called for or not: "
        + ", ".join(_names())
        + "; with --compile-time: "
        + ", ".join(_compile_names()),
    )
    p.add_argument(
        "--only",
        type=_fix_names,
        default=(),
        metavar="NAME,...",
        help="try only these of the fixes (called for, or forced by --try); regional stands for regional:PATH",
    )
    p.add_argument(
        "--compile-time",
        action="store_true",
        help='the fixes for compile time instead (docs/advise.md, "Compile time"): regional compilation of a '
        "repeated block, dynamic=True where the program recompiled, max-autotune off or on, one compile thread, "
        "warm caches and torch's portable cache artifacts; each run with an empty cache directory of its own, "
        "then again with it warm; ranked by compile time saved, beside each run's steady-state speed",
    )
    p.add_argument(
        "--jobs",
        type=at_least_one,
        default=1,
        metavar="N",
        help="fix runs at once (default 1; parallel runs share the CPUs and GPU and disturb each other's timings)",
    )
    p.add_argument(
        "--timeout",
        type=_seconds,
        metavar="S",
        help="stop a run that has not ended within S seconds (SIGTERM, then SIGKILL 10 s later); default: none",
    )
    p.add_argument(
        "--reps",
        type=at_least_one,
        metavar="N",
        help=compiler.BenchOptions.help()["reps"],  # the API's and %%compile's, declared once
    )


def _names() -> list[str]:
    import compiler  # torch-free

    return list(compiler.analysis.FIXES)


def _compile_names() -> list[str]:
    from compiler._viewer import COMPILE_FIXES  # torch-free

    return [f"{n}[:PATH]" if n == "regional" else n for n in COMPILE_FIXES]


def _fix_names(text: str) -> tuple[str, ...]:
    """Names of advise's fixes, or of --compile-time's (advise checks which, once it knows)."""
    import compiler
    from compiler._viewer import compile_fix_named

    names = tuple(n.strip() for n in text.split(",") if n.strip())
    for n in names:
        try:
            compiler.analysis.fix_named(n)
        except ValueError as e:
            try:
                compile_fix_named(n)
            except ValueError:
                raise argparse.ArgumentTypeError(
                    f"{e}; with --compile-time: {', '.join(_compile_names())}"
                ) from None
    return names


def _named_for(compile_time: bool, names: tuple[str, ...], option: str) -> str | None:
    """The first of ``names`` that is not a fix of the mode advise runs in, in words; None: all are."""
    import compiler
    from compiler._viewer import compile_fix_named

    for n in names:
        try:
            (compile_fix_named if compile_time else compiler.analysis.fix_named)(n)
        except ValueError as e:
            return f"pt2-explorer: error: {option}: {e}"
    return None


def at_least_one(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"a whole number of at least 1, not {text!r}")
    return n


def _seconds(text: str) -> float:
    try:
        n = float(text)
    except ValueError:
        n = 0.0
    if not 0 < n < float("inf"):
        raise argparse.ArgumentTypeError(f"a number of seconds above 0, not {text!r}")
    return n


def advise(ns) -> int:
    """``ns``: ``advise_options``' options, with the program: ``script`` or ``module``, ``args``."""
    if ns.script is not None and not os.path.isfile(ns.script):
        say(f"pt2-explorer: can't open file {ns.script!r}: no such file")
        return 2
    import compiler

    compile_time = getattr(ns, "compile_time", False)
    for option, names in (("--try", ns.tries), ("--only", getattr(ns, "only", ()))):
        if (wrong := _named_for(compile_time, names, option)) is not None:
            say(wrong)
            return 2
    script, module = ns.script, ns.module
    name = os.path.basename(script) if script else f"-m {module}"
    out = _out_dir(ns.out, os.path.splitext(os.path.basename(script))[0] if script else module)
    if out is None:
        return 2
    program = ["--", script, *ns.args] if script else ["-m", module, *ns.args]
    runner = Runner(out, program, ns.reps, ns.jobs, getattr(ns, "timeout", None))
    if compile_time:
        most = 1 + 2 * len(_compile_names())
        said = "once per compile-time fix with empty caches and again warm"
    else:
        most = 1 + len({*compiler.analysis.FIXES, *ns.tries})
        said = "once per fix its verdict calls for"
    say(
        f"pt2-explorer: advise: runs {name} once as it is, then {said} (at most {most} runs in all): "
        "whatever the program does (files it writes, messages it sends) happens each time"
    )
    saved = runner.own_signals()
    try:
        if compile_time:
            from explorer.cli._advisecompile import advise_compile

            return advise_compile(compiler, runner, name, ns.tries, ns.only, out)
        return _advise(compiler, runner, name, ns.tries, out, getattr(ns, "only", ()))
    except (KeyboardInterrupt, Signalled) as e:
        signum = e.signum if isinstance(e, Signalled) else signal.SIGINT
        runner.stop()
        say(
            f"pt2-explorer: advise: {signal.Signals(signum).name}: the runs ended; the runs so far are in {out}"
        )
        sys.stdout.flush()
        sys.stderr.flush()
        signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signum})
        os.kill(os.getpid(), signum)  # dies of it, as the signal asks
        return 128 + signum
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


def _advise(compiler, runner: Runner, name: str, tries: tuple[str, ...], out: str, only=()) -> int:
    from compiler._viewer import AdviceRun, advice_from_runs  # imports torch

    base = runner.run(None)
    if base.error or base.report is None:
        say(
            f"pt2-explorer: advise: the program as it is {base.error or 'left no report'}; nothing to compare "
            f"(its output: {os.path.join(out, 'baseline', 'stderr.txt')})"
        )
        rc = runner.codes.get("baseline") or 1
        return 128 - rc if rc < 0 else rc  # died of a signal: as a shell says it
    report = compiler.load(base.report)
    if not report.benchmarks:
        say(
            "pt2-explorer: advise: the program's run benchmarked no compiled function; nothing to compare "
            f"(its report: {base.report})"
        )
        return 1
    fixes = compiler.analysis.fixes_for(report, tries)
    if only:
        fixes = tuple(f for f in fixes if f.name in only)
    cuda = any(b.device == "cuda" for b in report.benchmarks)
    todo = [f for f in fixes if cuda or not f.cuda_only]
    skipped = [
        AdviceRun(f, None, error="skipped: it needs a CUDA device; the program ran on CPU")
        for f in fixes
        if f not in todo
    ]
    if runner.jobs > 1 and len(todo) > 1:
        say(
            f"pt2-explorer: advise: warning: --jobs {runner.jobs}: the runs share the CPUs (and GPU) at once, "
            "which disturbs each other's timings; for figures to quote, --jobs 1"
        )
    runner.total = len(todo)
    if not runner.tty:
        say(f"pt2-explorer: advise: fixes to try: {', '.join(f.name for f in todo) or 'none'}")
    runs = runner.run_all(todo)
    advice = advice_from_runs(name, [base, *runs, *skipped], out=out)
    for attempt in range(REMEASURE):  # a fix's run timed at another speed than the baseline's
        drifted = {r.fix for r in advice.rows if (r.unranked or "").startswith("its eager arm")}
        if not drifted:
            break
        say(
            f"pt2-explorer: advise: {', '.join(sorted(drifted))}: its eager arm was timed at another speed "
            f"than the baseline's; measuring again ({attempt + 1} of {REMEASURE})"
        )
        runner.total += len(drifted)
        runs = [runner.run(f) if f.name in drifted else run for f, run in zip(todo, runs, strict=True)]
        advice = advice_from_runs(name, [base, *runs, *skipped], out=out)
    if not fixes:
        notes = "no fix called for: no verdict names a fix advise knows (--try NAME forces one)"
        advice = _with_note(advice, notes)
    from explorer.lower._terminal import UNWRAPPED, echo, terminal
    from explorer.views._advice import advice_text

    text = advice_text(advice)
    width = terminal().width
    echo(advice_text(advice, width) if width < UNWRAPPED else text)  # a terminal: the table fits it
    with open(os.path.join(out, "advice.txt"), "w", encoding="utf-8") as f:
        f.write(text)
    print(f"advice: {os.path.join(out, 'advice.txt')}")
    return 0


def _with_note(advice, note: str):
    import dataclasses

    return dataclasses.replace(advice, notes=(*advice.notes, note))


def _out_dir(given: str | None, stem: str) -> str | None:
    """The directory of the runs: ``--out`` where it is new or empty (never over anything of
    the user's), else a new ``advise-<stem>`` (``-2``, ``-3`` … where that is taken) here."""
    if given is not None:
        if not given:
            say("pt2-explorer: error: --out: an empty path; give a directory")
            return None
        try:
            if os.path.lexists(given) and not (os.path.isdir(given) and not os.listdir(given)):
                say(
                    f"pt2-explorer: error: --out {given}: exists and is not an empty directory; give a new one"
                )
                return None
            os.makedirs(given, exist_ok=True)
            if not os.access(given, os.W_OK | os.X_OK):
                raise PermissionError(13, "Permission denied", given)
        except OSError as e:  # a file on the way, no right to write there: one line
            say(
                f"pt2-explorer: error: --out {given}: cannot make it a directory of the runs: {e.strerror or e}"
            )
            return None
        return given
    base = f"advise-{stem.replace(os.sep, '_')}"
    for i in range(1, 1000):
        path = base if i == 1 else f"{base}-{i}"
        try:
            os.mkdir(path)
            return path
        except FileExistsError:
            continue
        except OSError as e:  # this directory cannot be written
            say(f"pt2-explorer: error: cannot make {path} here: {e.strerror or e}; give --out DIR")
            return None
    say(f"pt2-explorer: error: {base}-1 … -999 all exist; give --out DIR")
    return None

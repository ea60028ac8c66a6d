"""``pt2-explorer record``: its options (before SCRIPT; what follows is the script's), and the
run: the program under the recording (in a supervised child where it can fork), then the report
written and printed."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

import compiler
from explorer.cli._live import LiveLine
from explorer.cli._out import say, shown, write_all
from explorer.run import _program, _supervise

RECORD_USAGE = (
    "pt2-explorer record [--json OUT] [--html OUT] [--baseline R.json] [-q] [--bench] "
    + " ".join(f"[{flag}]" for (flag,), _ in compiler.RecordOptions.flags())  # the recording's own
    + " (SCRIPT | -m MODULE) [ARGS...]"
)
# record's options that take a value (the next argument is theirs, not SCRIPT)
RECORD_VALUED = ("--json", "--html", "--baseline")


def record_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", metavar="OUT", help="write the report JSON here")
    p.add_argument("--html", metavar="OUT", help="write the static HTML report here")
    p.add_argument(
        "--baseline",
        metavar="R.json",
        help="the last run's report: the live line gives each stage's time in it beside the time so far "
        "(default: the report already at --json, read before it is replaced)",
    )
    for flag, kwargs in compiler.RecordOptions.flags():  # declared once, with %%compile's and the API's
        p.add_argument(*flag, **kwargs)
    p.add_argument(
        "--bench",
        action="store_true",
        help="after the program, benchmark each compiled function on its last call against eager "
        "(a training step's state restored around each call); the report's Benchmark and Why tabs",
    )
    p.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no summary: one line on stderr naming the files written",
    )


def split_record(
    argv: list[str], valued: tuple[str, ...] = RECORD_VALUED
) -> tuple[list[str], str | None, str | None, list[str]]:
    """``record``'s own options (``check``'s, ``advise``'s: ``valued`` names those that take a value), then
    SCRIPT or ``-m MODULE``; what follows is the script's, untouched (as with python, torchrun
    and py-spy)."""
    ours: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in valued and i + 1 < len(argv):
            ours += argv[i : i + 2]
            i += 2
        elif a == "-m" and i + 1 < len(argv):
            return ours, None, argv[i + 1], argv[i + 2 :]
        elif a.startswith("-m") and len(a) > 2:  # python's -mMODULE
            return ours, None, a[2:], argv[i + 1 :]
        elif a == "--" and i + 1 < len(argv):
            return ours, argv[i + 1], None, argv[i + 2 :]
        elif a.startswith("-"):
            ours.append(a)  # argparse names an unknown option
            i += 1
        else:
            return ours, a, None, argv[i + 1 :]
    return ours, None, None, []


def record(ns, check=None, *, after=None, reps: int | None = None, profile: bool = True) -> int:
    """Run the program under the recording, write and print its report. ``check`` (``pt2-explorer
    check``): called with the report once it is left; False (a rule broken) makes the exit
    status 1 where the program's was 0. A program that failed keeps its own exit status.
    For ``advise``'s runs (with ``--bench``): ``after(called)`` is called in the program's
    process once the program ended as it should, before the benchmarks, with the compiled
    calls it made; ``reps``: the benchmarks' timed calls per arm; ``profile``: whether they
    profile the compiled kernels (on a CPU, a compile of their own)."""
    import compiler
    from compiler._viewer import rank_path

    if ns.script is not None and not os.path.isfile(ns.script):
        print(f"pt2-explorer: can't open file {ns.script!r}: no such file", file=sys.stderr)
        return 2
    title = ns.script or ns.module
    rank, world_size = _program.torchrun_rank()
    if rank is not None:  # under torchrun: one report per rank, its rank in the file name
        title = f"{title} (rank {rank} of {world_size})"
        ns.json = ns.json and rank_path(ns.json, rank)
        ns.html = ns.html and rank_path(ns.html, rank)
    last_run, bad = _last_run(ns)
    if bad is not None:  # --baseline names no report: said before anything runs
        say(f"pt2-explorer: error: --baseline {bad}")
        return 2
    # absolute before the program runs: its os.chdir moves nothing of ours; said as given
    ns.given = {}
    for opt in ("json", "html"):
        if getattr(ns, opt):
            ns.given[os.path.abspath(getattr(ns, opt))] = getattr(ns, opt)
            setattr(ns, opt, os.path.abspath(getattr(ns, opt)))

    written: list[str] = []  # the outputs written so far: a Ctrl-C says which were not

    def leave(report) -> bool:  # write and print the report; False where a write failed
        return leave_report(report, ns, title, rank, world_size, written, check)

    # the program runs in a child: where it dies before writing its report, this process
    # builds the report from the recording's journal (explorer/run/_supervise.py)
    sup = _supervise.Supervisor.beside(ns.json or ns.html) if _supervise.available() else None
    try:
        if sup is not None and sup.fork():
            return sup.finish(leave)
    except OSError:  # no fork to be had: the program runs in this process
        sup = None
    try:
        compiler.recording  # noqa: B018 - imports torch and checks its version
    except Exception as e:  # UnsupportedTorchVersion, no or broken torch install
        print(f"pt2-explorer: {e}", file=sys.stderr)
        return 2
    _program.warn_shadowing(os.path.dirname(os.path.abspath(ns.script)) if ns.script else os.getcwd())
    live = LiveLine(quiet=ns.quiet, last_run=last_run)  # the compile and its stage, on a terminal only
    rec = compiler.recording(
        journal=sup.journal if sup else None,
        on_progress=live.on_progress,
        **compiler.RecordOptions.flagged(ns),
    )
    if sup is not None:
        sup.started(sys.modules["torch"].__version__)
    pid = os.getpid()
    calls = compiler.compiled_calls() if ns.bench else contextlib.nullcontext()
    with calls:
        try:
            exit_code, interrupted, terminated, cut_short = _program.run(
                rec, ns.script, ns.module, ns.args, sup
            )
        finally:
            live.clear()
    if os.getpid() != pid:  # a forked copy of the program ended here: as python's would, no report
        _program.die_as_the_program_would(interrupted, terminated)
        return exit_code
    try:
        if cut_short:  # Ctrl-C as the recording ended, after the program: nothing more to do
            raise KeyboardInterrupt
        report = rec.report
        if report is None:  # pragma: no cover - recording always leaves a report
            print("pt2-explorer: no report was produced", file=sys.stderr)
            return exit_code or 1
        if ns.bench:
            ended = exit_code == 0 and not (interrupted or terminated)
            if after is not None and ended:  # before the benchmarks call them again
                after(calls.called)
            _bench(report, calls, ended=ended, quiet=ns.quiet, reps=reps, profile=profile)
        ok = leave(report)
        if (  # what cache hits skipped, after a program that ended by itself (no fill after an interrupt)
            ok and getattr(ns, "command", None) == "record" and ns.caches and not (interrupted or terminated)
        ):
            from explorer.cli._fill import fill_in_background

            fill_in_background(as_left(report, rank, world_size), ns.json, ns.html, title)
    except KeyboardInterrupt:  # our own work cut short: no traceback of ours, one line
        not_written = [shown(ns, out) for out in (ns.json, ns.html) if out and out not in written]
        say("pt2-explorer: interrupted" + (f": {', '.join(not_written)} not written" if not_written else ""))
        interrupted = True
        ok = False
    finally:
        if sup is not None:
            sup.done()
    _program.die_as_the_program_would(interrupted, terminated)
    # a report that could not be written fails a run that succeeded; a program that failed
    # keeps its own exit code
    return exit_code or (0 if ok else 1)


def _last_run(ns) -> tuple[dict | None, str | None]:
    """What the live line compares each stage's time with: the report ``--baseline`` names, else
    the one at ``--json`` (read before the run replaces it), only where the line is drawn
    (stderr a terminal, no ``-q``). (times, None), or (None, why) where ``--baseline`` is no
    report; the report at ``--json`` that is none gives one line and no times."""
    from explorer.cli._out import warned

    given = getattr(ns, "baseline", None)
    path = given or ns.json
    if given is None and (not path or ns.quiet or not sys.stderr.isatty() or not os.path.isfile(path)):
        return None, None
    try:
        report = warned(lambda: compiler.load(path))
    except (OSError, ValueError) as e:  # ReportFormatError, missing, unreadable, a directory
        why = (
            f"{e.filename}: {e.strerror}" if isinstance(e, OSError) and e.filename and e.strerror else str(e)
        )
        why = " ".join(why.splitlines())
        if given is not None:
            return None, why
        say(f"pt2-explorer: no last-run times: {why}")
        return None, None
    from explorer.model._progress import baseline_times

    return baseline_times(report), None


def _bench(report, calls, *, ended: bool, quiet: bool, reps: int | None = None, profile: bool = True) -> None:
    """``--bench``: each compiled function of the program on its last call, after the
    program (compiler/bench/_calls.py); one line for each that is not benchmarked."""
    import compiler

    if not ended:
        say("pt2-explorer: --bench: the program did not finish: nothing benchmarked")
        return
    if not calls.called:
        say("pt2-explorer: --bench: no compiled function was called: nothing to benchmark")
        return
    for note in compiler.benchmark_calls(
        report, calls.called, progress=not quiet, reps=reps, profile=profile
    ):
        say(f"pt2-explorer: --bench: {note}")


def as_left(report, rank: int | None, world_size: int | None):
    """The report as ``record`` writes it: stacks start at the program, as under python; under
    torchrun, its rank."""
    report = _program.without_launcher(report)
    if rank is not None:
        import dataclasses

        report = dataclasses.replace(report, rank=rank, world_size=world_size)
    return report


def leave_report(
    report,
    ns,
    title: str,
    rank: int | None,
    world_size: int | None,
    written: list[str] | None = None,
    check=None,
) -> bool:
    """Write and print the report (the program's process, or this one from the journal), then
    ``check`` it where given; False where a write failed (one error line each) or ``check``
    said no. ``written`` gets each output written, as it is."""
    from explorer.views._summary import print_summary
    from explorer.views._why import verdict_lines

    report = as_left(report, rank, world_size)
    written, ok = write_all(ns, report, title, written)
    if not ns.quiet:
        print_summary(report, title=title)
        for line in verdict_lines(report):
            print(line)
        for out in written:
            print(f"report: {shown(ns, out)}")
    elif written:  # -q: the program's own output, then one line on stderr of what we wrote
        say(f"pt2-explorer: wrote {', '.join(shown(ns, out) for out in written)}")
    if check is not None:
        sys.stdout.flush()  # the summary before the verdict, where both reach one log
        ok = check(report) and ok
    return ok

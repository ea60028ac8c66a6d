"""``pt2-explorer advise``: the program run once as it is under ``record --bench``, then once
per fix its verdict calls for (and per ``--try``), each a fresh process with the fix set at
start-up (explorer/cli/_adviserun.py), each leaving its own report; then one table of the
measured fixes, best first (``compiler.analysis.advice_from_runs``, explorer/views/_advice.py)."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import compiler
from explorer.cli._adviserun import NOTES, OUTPUTS, REPORT
from explorer.cli._out import say

ADVISE_USAGE = (
    "pt2-explorer advise [--out DIR] [--try NAME,...] [--jobs N] [--reps N] (SCRIPT | -m MODULE) [ARGS...]"
)
ADVISE_VALUED = ("--out", "--try", "--jobs", "--reps")  # options that take a value


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
        help="also try these fixes, called for or not: " + ", ".join(_names()),
    )
    p.add_argument(
        "--jobs",
        type=at_least_one,
        default=1,
        metavar="N",
        help="fix runs at once (default 1; parallel runs share the CPUs and GPU and disturb each other's timings)",
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


def _fix_names(text: str) -> tuple[str, ...]:
    import compiler

    names = tuple(n.strip() for n in text.split(",") if n.strip())
    for n in names:
        try:
            compiler.analysis.fix_named(n)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    return names


def at_least_one(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"a whole number of at least 1, not {text!r}")
    return n


def advise(ns) -> int:
    """``ns``: ``advise_options``' options, with the program: ``script`` or ``module``, ``args``."""
    if ns.script is not None and not os.path.isfile(ns.script):
        say(f"pt2-explorer: can't open file {ns.script!r}: no such file")
        return 2
    import compiler

    script, module = ns.script, ns.module
    name = os.path.basename(script) if script else f"-m {module}"
    out = _out_dir(ns.out, os.path.splitext(os.path.basename(script))[0] if script else module)
    if out is None:
        return 2
    program = ["--", script, *ns.args] if script else ["-m", module, *ns.args]
    runner = _Runner(out, program, ns.reps, ns.jobs)
    try:
        return _advise(compiler, runner, name, ns.tries, out)
    except KeyboardInterrupt:
        runner.stop()
        say(f"pt2-explorer: advise: interrupted; the runs so far are in {out}")
        return 128 + signal.SIGINT


def _advise(compiler, runner: _Runner, name: str, tries: tuple[str, ...], out: str) -> int:
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
    cuda = any(b.device == "cuda" for b in report.benchmarks)
    todo = [f for f in fixes if cuda or not f.cuda_only]
    skipped = [
        compiler.types.AdviceRun(f, None, error="skipped: it needs a CUDA device; the program ran on CPU")
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
    advice = compiler.analysis.advice_from_runs(name, [base, *runs, *skipped], out=out)
    if not fixes:
        notes = "no fix called for: no verdict names a fix advise knows (--try NAME forces one)"
        advice = _with_note(advice, notes)
    from explorer.model._summary import UNWRAPPED, echo, terminal
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
        if os.path.exists(given) and not (os.path.isdir(given) and not os.listdir(given)):
            say(f"pt2-explorer: error: --out {given}: exists and is not an empty directory; give a new one")
            return None
        os.makedirs(given, exist_ok=True)
        return given
    base = f"advise-{stem.replace(os.sep, '_')}"
    for i in range(1, 1000):
        path = base if i == 1 else f"{base}-{i}"
        try:
            os.mkdir(path)
            return path
        except FileExistsError:
            continue
    say(f"pt2-explorer: error: {base}-1 … -999 all exist; give --out DIR")
    return None


class _Runner:
    """Runs ``python -m explorer.cli._adviserun`` for the baseline and each fix, each in its own
    directory of ``out`` (the program's stdout and stderr kept there), with a progress line."""

    def __init__(self, out: str, program: list[str], reps: int | None, jobs: int) -> None:
        self.out, self.program, self.reps, self.jobs = out, program, reps, jobs
        self.total, self.done = 0, 0  # the fix runs (the baseline's run comes before them)
        self.running: dict[str, float] = {}
        self.codes: dict[str, int] = {}
        self.procs: dict[str, subprocess.Popen] = {}
        self.lock = threading.Lock()
        self.tty = sys.stderr.isatty()

    def run_all(self, fixes) -> list:
        if self.jobs == 1:
            return [self.run(f) for f in fixes]
        with ThreadPoolExecutor(self.jobs) as pool:
            return list(pool.map(self.run, fixes))

    def run(self, fix):
        import compiler

        label = fix.name if fix else "baseline"
        run_dir = os.path.join(self.out, label)
        os.makedirs(run_dir, exist_ok=True)
        cmd = [sys.executable, "-c", _BOOT, _root()]
        cmd += (["--fix", fix.name] if fix else []) + (["--reps", str(self.reps)] if self.reps else [])
        cmd += [run_dir, *self.program]
        self._progress(label, started=True)
        t0 = time.perf_counter()
        with (
            open(os.path.join(run_dir, "stdout.txt"), "wb") as so,
            open(os.path.join(run_dir, "stderr.txt"), "wb") as se,
        ):
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=so, stderr=se)
            with self.lock:
                self.procs[label] = proc
            rc = proc.wait()
        with self.lock:
            self.codes[label] = rc
        error = None if rc == 0 else f"{_how_ended(rc)}: {_last_error(os.path.join(run_dir, 'stderr.txt'))}"
        self._progress(label, started=False, seconds=time.perf_counter() - t0, error=error)
        report = os.path.join(run_dir, REPORT)
        outputs = os.path.join(run_dir, OUTPUTS)
        notes_file = os.path.join(run_dir, NOTES)
        notes = ()
        if os.path.isfile(notes_file):
            with open(notes_file, encoding="utf-8") as f:
                notes = tuple(x for x in f.read().splitlines() if x)
        return compiler.types.AdviceRun(
            fix,
            report if os.path.isfile(report) else None,
            outputs if os.path.isfile(outputs) else None,
            error=error,
            notes=notes,
        )

    def _progress(self, label: str, *, started: bool, seconds: float = 0.0, error: str | None = None) -> None:
        """In a terminal one line, rewritten; elsewhere one line per run, when it ends."""
        with self.lock:
            base = label == "baseline"
            if started:
                self.running[label] = time.perf_counter()
            else:
                self.running.pop(label, None)
                self.done += not base
            count = "" if base else f"; {self.done} of {self.total} fixes"
            if self.tty:  # cleared once nothing runs: the table follows
                now = ", ".join(self.running)
                line = f"pt2-explorer: advise: running {now}{count}" if now else ""
                sys.stderr.write("\r\x1b[2K" + line)
                sys.stderr.flush()
            elif not started:
                how = f"failed: {error}" if error else "done"
                say(f"pt2-explorer: advise: {label}: {how} ({seconds:.0f} s{count})")

    def stop(self) -> None:
        with self.lock:
            procs = [p for p in self.procs.values() if p.poll() is None]
        for p in procs:
            p.wait()  # the terminal's Ctrl-C reached them too; each ends as its program does


# the child: this package's directory first on sys.path only while explorer is imported, so the
# program's sys.path is what `python -m explorer record` gives it
_BOOT = (
    "import sys; root = sys.argv.pop(1); sys.path.insert(0, root); "
    "import explorer.cli._adviserun as run; sys.path.remove(root); sys.exit(run.main(sys.argv[1:]))"
)


def _root() -> str:
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _how_ended(rc: int) -> str:
    if rc < 0:
        try:
            return f"died of {signal.Signals(-rc).name}"
        except ValueError:
            return f"died of signal {-rc}"
    return f"exited with status {rc}"


def _last_error(stderr_path: str) -> str:
    """The last line the program wrote to stderr that is not ours (an exception's last line)."""
    try:
        with open(stderr_path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return "no stderr kept"
    for line in reversed(lines):
        if line.strip() and not line.startswith(("pt2-explorer:", "benchmark ")):
            return line.strip()[:300]
    return "nothing on stderr"

"""The runs of ``pt2-explorer advise`` (explorer/cli/_advise.py): ``python -m
explorer.cli._adviserun`` for the baseline and each fix, each in its own directory (the
program's stdout and stderr kept there) and its own process group, with a progress line.
advise owns them: SIGINT, SIGTERM and SIGHUP are passed on to the runs in progress, no run
starts after one, and ``--timeout`` stops a run that does not end."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

from compiler._viewer import AdviceRun, LineProgress
from explorer.cli._adviserun import NOTES, OUTPUTS, REPORT
from explorer.cli._out import say

# the signals advise passes on to the runs in progress (each in its own process group, so the
# terminal's Ctrl-C reaches advise alone), then dies of, once they ended
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Signalled(BaseException):
    """A signal advise received: its runs were given it; advise dies of it once they ended."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class Runner:
    """Runs ``python -m explorer.cli._adviserun`` for the baseline and each fix, each in its own
    directory of ``out`` (the program's stdout and stderr kept there), with a progress line."""

    def __init__(
        self, out: str, program: list[str], reps: int | None, jobs: int, timeout: float | None = None
    ) -> None:
        self.out, self.program, self.reps, self.jobs, self.timeout = out, program, reps, jobs, timeout
        # the runs' directory absolute for the runs (a program's os.chdir moves nothing of
        # ours); the files named as the user gave it
        self.given, self.out = out, os.path.abspath(out)
        self.signalled: int | None = None  # the first signal received: no run starts after it
        self.total, self.done = 0, 0  # the fix runs (the baseline's run comes before them)
        self.counted = "fixes"  # what total counts ("runs" for advise --compile-time)
        self.running: dict[str, float] = {}
        self.codes: dict[str, int] = {}
        self.procs: dict[str, subprocess.Popen] = {}
        self.lock = threading.RLock()  # taken by the signal handler too, in the main thread
        self.tty = sys.stderr.isatty()
        self.line = LineProgress()  # a terminal's line: what runs, n of N, the time since the start

    def run_all(self, fixes) -> list:
        if self.jobs == 1:
            return [self.run(f) for f in fixes]
        # imported here: it imports logging, which must come after explorer/run/_program.py
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(self.jobs) as pool:
            return list(pool.map(self.run, fixes))

    def run(self, fix, *, label: str | None = None, env: dict[str, str] | None = None, extra=()):
        """One run of the program under ``fix`` (None: as it is), in ``out/<label>`` (default:
        the fix's name); ``env``: its environment (default: advise's); ``extra``: more of
        ``_adviserun``'s options (``--save-artifacts FILE``)."""
        label = label or (fix.name if fix else "baseline")
        run_dir = os.path.join(self.out, label)
        os.makedirs(run_dir, exist_ok=True)
        cmd = [sys.executable, "-c", _BOOT, _root()]
        cmd += (["--fix", fix.name] if fix else []) + (["--reps", str(self.reps)] if self.reps else [])
        cmd += [*extra, run_dir, *self.program]
        self._progress(label, started=True)
        t0 = time.perf_counter()
        with (
            open(os.path.join(run_dir, "stdout.txt"), "wb") as so,
            open(os.path.join(run_dir, "stderr.txt"), "wb") as se,
        ):
            with self.lock:  # no run starts once a signal came; one that starts is given the next
                if self.signalled is not None:
                    raise Signalled(self.signalled)
                # its own process group: the terminal's Ctrl-C reaches advise, which passes it on
                proc = subprocess.Popen(
                    cmd, stdin=subprocess.DEVNULL, stdout=so, stderr=se, process_group=0, env=env
                )
                self.procs[label] = proc
            rc, late = self._wait(proc)
        with self.lock:
            self.codes[label] = 1 if late else rc  # stopped by us: a failure, not a death of its own
        error = None if rc == 0 else f"{_how_ended(rc)}: {_last_error(os.path.join(run_dir, 'stderr.txt'))}"
        if late:
            error = f"did not end within {self.timeout:g} s (--timeout): stopped"
        self._progress(label, started=False, seconds=time.perf_counter() - t0, error=error)
        report = os.path.join(self.given, label, REPORT)
        outputs = os.path.join(self.given, label, OUTPUTS)
        notes_file = os.path.join(run_dir, NOTES)
        notes = ()
        if os.path.isfile(notes_file):
            with open(notes_file, encoding="utf-8") as f:
                notes = tuple(x for x in f.read().splitlines() if x)
        return AdviceRun(
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
            count = "" if base else f"; {self.done} of {self.total} {self.counted}"
            if self.tty:  # cleared once nothing runs: the table follows
                now = ", ".join(self.running)
                if now:
                    self.line(f"pt2-explorer: advise: running {now}{count}")
                else:
                    self.line.clear()
            elif not started:
                how = f"failed: {error}" if error else "done"
                say(f"pt2-explorer: advise: {label}: {how} ({seconds:.0f} s{count})")

    def _wait(self, proc: subprocess.Popen) -> tuple[int, bool]:
        """The run's exit status, and whether --timeout stopped it (SIGTERM, then SIGKILL)."""
        try:
            return proc.wait(timeout=self.timeout), False
        except subprocess.TimeoutExpired:
            pass
        for sig, grace in ((signal.SIGTERM, 10.0), (signal.SIGKILL, None)):
            try:
                os.killpg(proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                return proc.wait(timeout=grace), True
            except subprocess.TimeoutExpired:
                continue
        return proc.wait(), True  # pragma: no cover - SIGKILL's wait has no timeout

    def own_signals(self) -> dict:
        """From now on SIGINT, SIGTERM and SIGHUP are passed on to the runs in progress (each
        time: a program that caught the first gets the second), and the first ends advise's
        own work (``Signalled``; SIGINT as KeyboardInterrupt). Returns the handlers to restore."""

        def on_signal(signum, frame):
            with self.lock:
                self._pass_on(signum)
                first = self.signalled is None
                if first:
                    self.signalled = signum
            if first:
                raise KeyboardInterrupt if signum == signal.SIGINT else Signalled(signum)

        saved = {}
        for sig in FORWARDED:
            saved[sig] = signal.getsignal(sig)
            signal.signal(sig, on_signal)
        return saved

    def _pass_on(self, signum: int) -> None:
        for p in self.procs.values():
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signum)  # the program and whatever it started
                except (ProcessLookupError, PermissionError):
                    pass

    def stop(self) -> None:
        """After a signal: every run in progress has it (our handler passed it on); wait for
        each to end as its program does. Further signals are passed on as they come."""
        with self.lock:
            if self.signalled is None:  # a KeyboardInterrupt not through our handler
                self.signalled = signal.SIGINT
                self._pass_on(signal.SIGINT)
            procs = list(self.procs.values())
        for p in procs:
            while True:
                try:
                    p.wait()
                    break
                except (KeyboardInterrupt, Signalled):  # a repeat: passed on already, keep waiting
                    continue


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

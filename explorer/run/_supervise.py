"""``pt2-explorer record`` survives the program's death: the program runs in a forked child
while this process waits for it, and where the child dies before writing its report (killed
by a signal, a crash in native code, ``os._exit``), this process builds the report from the
recording's journal (compiler/listen/_journal.py), then ends as the child did.

The child is this process forked before torch is imported, so it runs the program exactly as
``record`` did in one process: same fds (stdin, stdout, stderr), same process group (the
terminal's Ctrl-C reaches it directly), same arguments. A signal sent to this process alone
by another process (``kill PID``, ``Popen.send_signal``) is passed on to the child; one the
terminal sent to the whole foreground group (Ctrl-C, Ctrl-\\) is not, the child has it. A
signal sent to the whole group by a process (torchrun's ``killpg``) reaches the child twice:
the child's SIGTERM handler ignores the repeat, and a second SIGTERM this process receives
while the child writes its report kills the child (as the second kills at once without us).
If this process is killed (SIGKILL), the child is killed too (Linux's parent-death signal).
"""

from __future__ import annotations

import mmap
import os
import signal
import sys
import threading
from collections.abc import Callable

# the signals passed on to the child; SIGCHLD says it ended
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
# the child's progress, in shared memory: byte 0 the stage, byte 1 set once our SIGTERM
# handler turned a SIGTERM into the program's end, bytes 2.. torch's version
NOT_STARTED, RUNNING, DONE = 0, 1, 2
_CORE = {signal.SIGQUIT, signal.SIGILL, signal.SIGABRT, signal.SIGFPE, signal.SIGSEGV, signal.SIGBUS}
_CORE |= {getattr(signal, n) for n in ("SIGSYS", "SIGTRAP", "SIGXCPU", "SIGXFSZ") if hasattr(signal, n)}


def available() -> bool:
    """Fork only where it is safe and the child's output is this process's: a POSIX system
    with ``sigwaitinfo``, one thread, torch not imported yet, stdout and stderr the process's
    own (a caller that redirected them in Python, such as a test, runs the program in-process)."""
    return (
        hasattr(os, "fork")
        and hasattr(signal, "sigtimedwait")
        and "torch" not in sys.modules
        and threading.active_count() == 1
        and sys.stdout is sys.__stdout__
        and sys.stderr is sys.__stderr__
    )


class Supervisor:
    def __init__(self, journal: str):
        self.journal = journal
        self.child: int | None = None
        self._state = mmap.mmap(-1, 256)  # shared with the child across fork
        self._mask: set[int] = set()

    @classmethod
    def beside(cls, out: str | None) -> Supervisor | None:
        """A supervisor whose journal is a new file beside the report ``out`` (in the temp
        directory where there is none, or its directory cannot be written); None where no
        journal can be created (the program then runs in this process)."""
        import tempfile

        directory = os.path.dirname(os.path.abspath(out)) if out else None
        if directory is not None and not os.access(directory, os.W_OK | os.X_OK):
            directory = None  # missing or not writable: the report's writing will say so
        prefix = (os.path.basename(out) if out else "pt2-explorer") + "."
        try:
            fd, path = tempfile.mkstemp(prefix=prefix, suffix=".journal", dir=directory)
        except OSError:
            return None
        os.close(fd)
        return cls(path)

    # ---- both sides ------------------------------------------------------------------------

    def fork(self) -> bool:
        """Fork; True in this process (the supervisor), False in the child. Where the system
        cannot fork, raises OSError with nothing changed (the journal removed)."""
        _flush()
        parent = os.getpid()
        ignored = signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN
        if ignored:  # inherited: the child would be reaped unseen
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        self._mask = signal.pthread_sigmask(signal.SIG_BLOCK, {*FORWARDED, signal.SIGCHLD})
        try:
            pid = os.fork()
        except OSError:
            signal.pthread_sigmask(signal.SIG_SETMASK, self._mask)
            if ignored:
                signal.signal(signal.SIGCHLD, signal.SIG_IGN)
            _remove(self.journal)
            raise
        if pid == 0:
            if ignored:
                signal.signal(signal.SIGCHLD, signal.SIG_IGN)
            signal.pthread_sigmask(signal.SIG_SETMASK, self._mask)
            _die_with(parent)
            return False
        self.child = pid
        return True

    # ---- the child -------------------------------------------------------------------------

    def started(self, torch_version: str) -> None:
        """The program is about to run under the recording: from now on its death leaves the
        report to the supervisor."""
        data = torch_version.encode("utf-8", "replace")[: len(self._state) - 3]
        self._state[2 : 2 + len(data)] = data
        self._state[0] = RUNNING

    def terminating(self) -> None:
        """Our SIGTERM handler is ending the program (it ignores a repeat from now on)."""
        self._state[1] = 1

    def done(self) -> None:
        """The report is written (or its writing failed with its own message)."""
        self._state[0] = DONE
        _remove(self.journal)

    # ---- the supervisor --------------------------------------------------------------------

    def finish(self, leave: Callable[[object], None]) -> int:
        """Wait for the child; if it died before its report was written, build the report from
        the journal and ``leave`` it (write, print); then end as the child did: its exit
        status, or death by its signal."""
        status, sig = self._wait()
        try:
            if self._state[0] == RUNNING:
                self._rebuild(status, sig, leave)
        except OSError as e:  # the report could not be written
            msg = f"{e.filename}: {e.strerror}" if e.filename and e.strerror else str(e)
            print(f"pt2-explorer: error: {msg}", file=sys.stderr)
        finally:
            _remove(self.journal)
        if sig is None:
            return os.waitstatus_to_exitcode(status)
        return _die_by(sig)

    def _wait(self) -> tuple[int, int | None]:
        """The child's wait status, and the signal it died of (SIGTERM where a second SIGTERM
        made us kill it), or None where it exited."""
        terms = 0
        escalated = None
        waited = {*FORWARDED, signal.SIGCHLD}
        while True:
            pid, status = os.waitpid(self.child, os.WNOHANG)
            if pid:
                break
            info = signal.sigtimedwait(waited, 1.0)
            if info is None or info.si_signo == signal.SIGCHLD:
                continue
            sig = info.si_signo
            if info.si_pid in (0, self.child):  # the terminal's, to the child's group too; or the child's own
                continue
            if sig == signal.SIGTERM:
                terms += 1
                if terms > 1 and self._state[1]:  # the child is ending on the first: kill it, as without us
                    sig, escalated = signal.SIGKILL, signal.SIGTERM
            try:
                os.kill(self.child, sig)
            except ProcessLookupError:
                pass
        if os.WIFSIGNALED(status):
            return status, escalated or os.WTERMSIG(status)
        return status, None

    def _rebuild(self, status: int, sig: int | None, leave: Callable[[object], None]) -> None:
        from compiler import TraceFormatError
        from compiler._viewer import load_journal

        version = bytes(self._state[2:]).split(b"\0", 1)[0].decode("utf-8", "replace")
        try:
            report = load_journal(self.journal, torch_version=version or None)
        except (OSError, TraceFormatError) as e:
            print(
                f"pt2-explorer: error: the program died and its report could not be rebuilt: {e}",
                file=sys.stderr,
            )
            return
        import dataclasses

        if sig is not None:
            how = f"was killed by signal {sig}{_name(sig)}"
        else:
            how = f"exited with status {os.waitstatus_to_exitcode(status)} (os._exit, or an exit in native code)"
        n = len(report.compiles)
        error = (
            f"the program {how} before its report was written; the report holds the {n} "
            f"compile{'' if n == 1 else 's'} recorded until then, without the IR before and after fusion"
        )
        if report.error:
            error += f" ({report.error})"
        leave(dataclasses.replace(report, error=error))


def _name(sig: int) -> str:
    try:
        return f" ({signal.Signals(sig).name})"
    except ValueError:  # a real-time signal
        return ""


def _die_with(parent: int) -> None:
    """The child dies when the supervisor does (Linux): killing ``record`` kills the program."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # it died before the prctl
        os.kill(os.getpid(), signal.SIGKILL)


def _die_by(sig: int) -> int:
    """Die by ``sig`` as the child did (without a core file of our own: the child left its
    own where the system keeps one); 128 + sig where the signal cannot kill us."""
    _flush()
    if sig in _CORE:
        try:
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
        except (ImportError, ValueError, OSError):
            pass
    try:
        signal.signal(sig, signal.SIG_DFL)
    except (OSError, ValueError):  # SIGKILL: always the default
        pass
    os.kill(os.getpid(), sig)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
    return 128 + sig


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:  # None: python started with that fd closed
            stream.flush()


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:  # gone already, or its directory is no longer ours to write
        pass

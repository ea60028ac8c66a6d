"""``advise`` owns its runs (explorer/cli/_adviserunner.py): SIGTERM (what a CI runner sends),
SIGINT (Ctrl-C, twice where the program caught the first) and SIGHUP are passed on to the run
in progress, advise waits for it and dies of the signal, and no process of its runs remains;
``--timeout`` stops a run that does not end; no run starts a background fill-in; advise says
first that the program runs more than once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests._caches import with_user_caches

pytestmark = pytest.mark.child

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# writes its pid, then never ends by itself; CAUGHT: it catches the first Ctrl-C
SLEEPER = """\
import os, sys, time
with open("pid.txt", "w") as f:
    f.write(str(os.getpid()))
try:
    time.sleep(1000)
except KeyboardInterrupt:
    if CAUGHT:
        print("caught", flush=True)
        time.sleep(1000)
    raise
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is no process left running
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][0] != "Z"
    except OSError:
        return False


def _advise(tmp_path, caught: bool, *extra: str) -> tuple[subprocess.Popen, int]:
    (tmp_path / "prog.py").write_text(SLEEPER.replace("CAUGHT", str(caught)))
    proc = subprocess.Popen(
        [sys.executable, "-m", "explorer", "advise", *extra, "--out", "adv", "prog.py"],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=ROOT),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    for _ in range(600):
        if (tmp_path / "pid.txt").exists() and (tmp_path / "pid.txt").read_text():
            return proc, int((tmp_path / "pid.txt").read_text())
        time.sleep(0.1)
    proc.kill()
    raise AssertionError(proc.communicate())


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_to_advise_ends_its_run_and_advise_dies_of_it(tmp_path, sig):
    proc, pid = _advise(tmp_path, caught=False)
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == -sig, err
    assert not _alive(pid)
    assert "Traceback" not in err
    assert err.splitlines()[-1] == (
        f"pt2-explorer: advise: {signal.Signals(sig).name}: the runs ended; the runs so far are in adv"
    )


def test_a_second_ctrl_c_reaches_a_program_that_caught_the_first_without_our_traceback(tmp_path):
    proc, pid = _advise(tmp_path, caught=True)
    proc.send_signal(signal.SIGINT)
    stdout = tmp_path / "adv" / "baseline" / "stdout.txt"
    for _ in range(300):
        if stdout.exists() and stdout.read_text() == "caught\n":
            break
        time.sleep(0.1)
    assert _alive(pid)  # it caught the first
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGINT and not _alive(pid)
    assert "Traceback" not in err, err


def test_timeout_stops_a_run_that_does_not_end(tmp_path):
    (tmp_path / "prog.py").write_text(SLEEPER.replace("CAUGHT", "False"))
    proc = subprocess.run(
        [sys.executable, "-m", "explorer", "advise", "--timeout", "20", "--out", "adv", "prog.py"],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=ROOT),
        capture_output=True,
        text=True,
        timeout=300,
    )
    err = proc.stderr
    assert proc.returncode == 1, err
    pid_file = tmp_path / "pid.txt"  # on a loaded machine the run may be stopped before the program starts
    assert not pid_file.exists() or not _alive(int(pid_file.read_text()))
    assert "the program as it is did not end within 20 s (--timeout): stopped; nothing to compare" in err


def test_advise_says_it_runs_the_program_more_than_once_and_starts_no_fill(tmp_path):
    (tmp_path / "prog.py").write_text(
        "import torch\n@torch.compile\ndef f(x):\n    return x.sin() + 1\nf(torch.randn(4))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "explorer", "advise", "--out", "adv", "prog.py"],
        cwd=tmp_path,
        env=with_user_caches(dict(os.environ, PYTHONPATH=ROOT, TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "c"))),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.stderr.splitlines()[0] == (
        "pt2-explorer: advise: runs prog.py once as it is, then once per fix its verdict calls for (at most "
        f"{1 + len(__import__('compiler').analysis.FIXES)} runs in all): whatever the program does (files it "
        "writes, messages it sends) happens each time"
    )
    leftovers = [f for _d, _s, files in os.walk(tmp_path / "adv") for f in files if f.endswith(".fill.log")]
    assert leftovers == [] and "in the background" not in proc.stderr

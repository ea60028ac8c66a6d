"""The program ends as python ends it (explorer/run/_program.py): its namespace is cleared at
exit as python clears ``__main__``'s, after its ``atexit`` handlers and logging's shutdown.
Dynamo's caches keep the namespace alive through the program's functions, so without that a
module-level file the program never closed kept its bytes unwritten, its objects' ``__del__``
never ran. Each command that runs the program (``record``, ``check``, ``record --bench``,
``advise``, as a script and with ``-m``) leaves the program's files as plain python does."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.child

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROGRAM = """\
import atexit, logging, torch

out = open("out.txt", "w")  # never closed: python flushes it when __main__ is cleared
logs = open("log.txt", "w")  # a logging handler's stream: flushed by logging's shutdown
log = logging.getLogger("prog")
log.addHandler(logging.StreamHandler(logs))
log.setLevel(logging.INFO)


class Last:
    def __del__(self, open=open):  # run as __main__ is cleared: globals may be None by then
        with open("del.txt", "w") as f:
            f.write("del ran\\n")


keep = Last()
atexit.register(out.write, "atexit ran\\n")


@torch.compile
def f(x):
    return x.sin() + 1


f(torch.randn(4))
out.write("hello, world\\n")
log.info("logged")
print("done")
"""

FILES = ("out.txt", "log.txt", "del.txt")


def _run(cmd: list[str], cwd) -> tuple[str, dict[str, str | None]]:
    env = dict(os.environ, PYTHONPATH=ROOT)
    for name in FILES:
        if os.path.exists(os.path.join(cwd, name)):
            os.unlink(os.path.join(cwd, name))
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    files = {}
    for name in FILES:
        path = os.path.join(cwd, name)
        files[name] = open(path).read() if os.path.exists(path) else None
    return proc.stdout, files


@pytest.mark.parametrize("module", [False, True], ids=["script", "module"])
def test_the_programs_files_are_as_python_leaves_them(tmp_path, module):
    (tmp_path / "prog.py").write_text(PROGRAM)
    target = ["-m", "prog"] if module else ["prog.py"]
    stdout, python = _run([sys.executable, *target], tmp_path)
    assert stdout == "done\n"
    assert python == {"out.txt": "hello, world\natexit ran\n", "log.txt": "logged\n", "del.txt": "del ran\n"}
    tool = [sys.executable, "-m", "explorer"]
    for cmd in (
        ["record", "-q", "--json", "r.json"],
        ["check", "-q", "--max-breaks", "0"],
        ["record", "-q", "--bench", "--json", "b.json"],
    ):
        out, files = _run([*tool, *cmd, *target], tmp_path)
        assert (out, files) == (stdout, python), cmd


def test_advise_runs_leave_the_programs_files_as_python_does(tmp_path):
    (tmp_path / "prog.py").write_text(PROGRAM)
    _stdout, python = _run([sys.executable, "prog.py"], tmp_path)
    _run([sys.executable, "-m", "explorer", "advise", "--out", "adv", "prog.py"], tmp_path)
    assert open(tmp_path / "adv" / "baseline" / "stdout.txt").read() == "done\n"
    files = {name: open(tmp_path / name).read() for name in FILES}
    assert files == python


def test_the_clearing_is_registered_before_logging_so_it_runs_after_logging_shutdown():
    code = "import sys, explorer.cli; print('logging' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.stdout == "False\n", proc.stderr

"""What the CLI writes (issue 38): an output never replaces an input (the program, the `-m`
module's file, a census read) and one file is not named as two outputs, refused before any work
with exit status 2; a Ctrl-C during the tool's own ending leaves no traceback of ours, one line
naming what was not written, and the death python's Ctrl-C gives; ``write_file`` follows a
symlink only as ``open`` would, looking every name up in a directory it holds open."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import pytest

import compiler
from compiler.model._atomic import write_file
from explorer.cli import _census as census_cli
from tests.test_safe_write import _cli  # the CLI in a fresh process, this checkout's

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "tests" / "fixtures" / "traces" / "cpu-torch213-breaks.log.gz"
PROGRAM = "open('ran', 'w').close()\n"  # leaves a file where it runs: it must not have


def _files(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    ("command", "line"),
    [
        (
            ["record", "--json", "mymod.py", "-m", "mymod"],
            "--json mymod.py is the module mymod itself: refusing to overwrite it",
        ),
        (
            ["record", "--html", "pkg/__main__.py", "-m", "pkg", "arg"],
            "--html pkg/__main__.py is the module pkg itself: refusing to overwrite it",
        ),
        (
            ["record", "--json", "out.html", "--html", "./out.html", "prog.py"],
            "--json out.html and --html ./out.html are one file: refusing to write it twice",
        ),
        (
            ["record", "--json", "new/r.json", "--html", "new/../new/r.json", "prog.py"],
            "--json new/r.json and --html new/../new/r.json are one file: refusing to write it twice",
        ),
        (
            ["repro", "r.json", "--compile", "0/0", "-o", "./r.json"],
            "--out ./r.json is the report itself: refusing to overwrite it",
        ),
        (
            ["load", str(TRACE), "--json", "r2.json", "--html", "r2.json"],
            "--json r2.json and --html r2.json are one file: refusing to write it twice",
        ),
    ],
)
def test_an_output_that_is_an_input_or_another_output_is_refused_before_anything_runs(
    command, line, tmp_path
):
    (tmp_path / "mymod.py").write_text(PROGRAM)
    (tmp_path / "prog.py").write_text(PROGRAM)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text(PROGRAM)
    (tmp_path / "pkg" / "__main__.py").write_text(PROGRAM)
    compiler.load_trace(TRACE).to_json(tmp_path / "r.json")
    before = _files(tmp_path)
    proc = _cli(command, cwd=tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", f"pt2-explorer: error: {line}\n")
    assert _files(tmp_path) == before  # nothing ran, nothing was written


def test_a_module_whose_file_is_not_an_output_runs(tmp_path):
    (tmp_path / "mymod.py").write_text(PROGRAM)
    proc = _cli(["record", "-q", "--json", "r.json", "-m", "mymod"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "ran").exists() and compiler.load(tmp_path / "r.json").compiles == ()


@pytest.fixture
def censuses(tmp_path):
    """Two census directories (A, B), each with its census.json, and a models file."""
    from explorer.census._table import Census

    for name in ("A", "B"):
        (tmp_path / name).mkdir()
        Census(rows=(), path=str(tmp_path / name / "census.json")).save(str(tmp_path / name / "census.json"))
    (tmp_path / "models.py").write_text("MODELS = {}\n")
    return tmp_path


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["show", "A", "--html", "A/census.json"], "--html A/census.json is the census itself"),
        (
            ["diff", "A", "B/census.json", "--html", "B/census.json"],
            "--html B/census.json is the census itself",
        ),
        (["diff", "A", "B", "--html", "A/census.json"], "--html A/census.json is the census itself"),
        (
            ["merge", "A", "B", "--out", "C", "--html", "B/census.json"],
            "--html B/census.json is the shard census itself",
        ),
        (["merge", "A", "B", "--out", "A"], "--out A/census.json is the shard census itself"),
        (
            ["--models", "models.py", "--out", "C", "--html", "models.py"],
            "--html models.py is the models file itself",
        ),
    ],
)
def test_a_census_output_that_is_an_input_is_refused(argv, line, censuses, monkeypatch, capsys):
    monkeypatch.chdir(censuses)
    before = _files(censuses)
    assert census_cli.main(argv) == 2
    assert capsys.readouterr() == ("", f"pt2-explorer census: error: {line}: refusing to overwrite it\n")
    assert _files(censuses) == before


def test_a_census_page_named_as_the_census_it_runs_into_is_refused(censuses, monkeypatch, capsys):
    monkeypatch.chdir(censuses)
    argv = ["--models", "models.py", "--out", "C", "--html", "C/census.json"]
    assert census_cli.main(argv) == 2
    assert capsys.readouterr() == (
        "",
        "pt2-explorer census: error: --out C/census.json and --html C/census.json are one file: "
        "refusing to write it twice\n",
    )
    assert not (censuses / "C").exists()


# the program interrupts our own ending at a chosen point, deterministically: signal.raise_signal
# delivers SIGINT to this thread before it returns, as a Ctrl-C there would arrive
INTERRUPT_IN_HTML = """
import signal
import explorer.cli._out as out

build = out.save_html
def save_html(*args):  # the HTML build: where a Ctrl-C right after the program ends lands
    signal.raise_signal(signal.SIGINT)
    return build(*args)
out.save_html = save_html
print("ran")
"""
INTERRUPT_IN_TEARDOWN = """
import signal
from compiler.listen._capture import Recording

detach = Recording._detach
def _detach(self):  # the recording's teardown (its loggers' handlers removed)
    signal.raise_signal(signal.SIGINT)
    return detach(self)
Recording._detach = _detach
print("ran")
"""


def _ctrl_c_on() -> None:
    """The child as a terminal starts it: Ctrl-C's default (a shell starts a background job, a
    CI runner its steps, with SIGINT ignored, which python then keeps and never raises)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize(
    ("program", "exit", "line", "left"),
    [
        (INTERRUPT_IN_HTML, "", "r.html not written", ["prog.py", "r.json"]),
        (INTERRUPT_IN_HTML, "raise SystemExit(3)\n", "r.html not written", ["prog.py", "r.json"]),
        (INTERRUPT_IN_TEARDOWN, "", "r.json, r.html not written", ["prog.py"]),
    ],
)
def test_ctrl_c_in_the_tools_own_ending_is_one_line_and_a_death_by_sigint(
    program, exit, line, left, tmp_path
):
    (tmp_path / "prog.py").write_text(program + exit)
    proc = _cli(
        ["record", "--json", "r.json", "--html", "r.html", "prog.py"], cwd=tmp_path, preexec_fn=_ctrl_c_on
    )
    assert proc.returncode == -signal.SIGINT  # as python dies of a Ctrl-C (a shell says 130)
    assert proc.stdout == "ran\n"
    assert proc.stderr == f"pt2-explorer: interrupted: {line}\n"  # no traceback of ours
    assert sorted(os.listdir(tmp_path)) == left  # nothing half-written, no temporary file
    if "r.json" in left:
        assert compiler.load(tmp_path / "r.json").compiles == ()


def test_a_programs_own_ctrl_c_is_still_the_programs(tmp_path):
    (tmp_path / "prog.py").write_text("print('ran')\nraise KeyboardInterrupt\n")
    proc = _cli(["record", "-q", "--json", "r.json", "prog.py"], cwd=tmp_path, preexec_fn=_ctrl_c_on)
    assert proc.returncode == -signal.SIGINT
    assert proc.stderr.startswith("Traceback (most recent call last):\n")
    assert proc.stderr.endswith("KeyboardInterrupt\npt2-explorer: wrote r.json\n")


@pytest.mark.skipif(
    not Path("/proc/sys/fs/protected_symlinks").exists()
    or Path("/proc/sys/fs/protected_symlinks").read_text().strip() != "1"
    or os.geteuid() != 0,
    reason="needs fs.protected_symlinks=1 and root (to make another user's link)",
)
def test_write_file_does_not_follow_another_users_link_in_a_sticky_directory(tmp_path):
    sticky = tmp_path / "tmp"
    sticky.mkdir()
    sticky.chmod(0o1777)
    victim = tmp_path / "victim"
    victim.write_text("keep")
    link = sticky / "report.html"
    link.symlink_to(victim)
    os.lchown(link, 65534, 65534)  # nobody's link, in a sticky world-writable directory
    with pytest.raises(PermissionError) as e:
        write_file(link, "pwned")
    assert e.value.filename == str(link)
    assert victim.read_text() == "keep" and link.is_symlink()
    assert sorted(os.listdir(sticky)) == ["report.html"]


def test_write_file_refuses_a_link_to_no_file_and_replaces_the_file_a_link_names(tmp_path):
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere" / "x")
    with pytest.raises(FileNotFoundError) as e:
        write_file(tmp_path / "dangling", "x")
    assert e.value.filename == str(tmp_path / "dangling")
    assert not (tmp_path / "nowhere").exists()
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "page.html"
    target.write_text("old")
    target.chmod(0o640)
    (tmp_path / "link.html").symlink_to("real/page.html")
    inode = target.stat().st_ino
    assert write_file(tmp_path / "link.html", "new") == str(tmp_path / "link.html")
    assert target.read_text() == "new" and target.stat().st_ino != inode  # replaced whole, not rewritten
    assert (target.stat().st_mode & 0o777) == 0o640
    assert sorted(os.listdir(tmp_path / "real")) == ["page.html"]
    with pytest.raises(IsADirectoryError):
        write_file(str(tmp_path / "real") + "/", "x")
    shutil.rmtree(tmp_path / "real")

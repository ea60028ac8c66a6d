"""Every file we write goes whole or not at all (compiler/model/_atomic.py): a failed write (a
directory in the way, a read-only file, a full disk, a file size limit) is one error line,
keeps the program's exit code and leaves the old file's bytes and no temporary file. An
output that is the input is refused before anything runs."""

from __future__ import annotations

import errno
import gzip
import os
import resource
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import compiler
from compiler.model._atomic import write_file
from explorer import cli

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "tests" / "fixtures" / "traces" / "cpu-torch213-breaks.log.gz"
OLD = b"<p>the user's old page</p>\n" * 40  # what must survive a failed write, byte for byte
EXIT_7 = "import sys\nprint('ran')\nsys.exit(7)\n"


def _cli(args, cwd, preexec_fn=None, env=None):
    return subprocess.run(
        [sys.executable, "-m", "explorer", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=preexec_fn,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )


def _file_size_limit(limit: int):
    def apply():  # python ignores SIGXFSZ: a write past the limit fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def _without_root_override():
    """Root writes any file: the read-only case runs without CAP_DAC_OVERRIDE (dropped from the
    bounding set, so the exec'd python has it no more), where permissions bind root too."""
    if os.geteuid() != 0:
        return None

    def drop():
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(24, 1, 0, 0, 0) != 0:  # PR_CAPBSET_DROP, CAP_DAC_OVERRIDE
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP, CAP_DAC_OVERRIDE) failed")

    return drop


@pytest.fixture
def small_tmpfs(tmp_path):
    """A 64 KiB tmpfs, nearly full: a real full disk (needs root and a kernel that lets us mount)."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], capture_output=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (root and CAP_SYS_ADMIN needed): {proc.stderr!r}")
    (mnt / "filler").write_bytes(b"x" * 56 * 1024)  # 4 KiB left, less than the page needs
    yield mnt
    subprocess.run(["umount", str(mnt)], check=True)


@pytest.mark.parametrize("how", ["directory in the way", "read-only file", "file size limit", "full disk"])
def test_a_failed_write_keeps_the_old_file_and_the_programs_exit_code(how, tmp_path, request):
    work, preexec = tmp_path, None
    out = "old.html"
    if how == "directory in the way":
        (work / "old.html").mkdir()
        reason = os.strerror(errno.EISDIR)
    elif how == "read-only file":
        (work / "old.html").write_bytes(OLD)
        (work / "old.html").chmod(0o444)
        preexec = _without_root_override()
        reason = os.strerror(errno.EACCES)
    elif how == "file size limit":  # a portable stand-in for a full disk
        (work / "old.html").write_bytes(OLD)
        preexec = _file_size_limit(8192)  # the page is larger
        reason = os.strerror(errno.EFBIG)
    else:
        disk = request.getfixturevalue("small_tmpfs")
        (disk / "old.html").write_bytes(OLD)
        out = str(disk / "old.html")
        reason = os.strerror(errno.ENOSPC)
    (work / "prog.py").write_text(EXIT_7)
    target = Path(out) if os.path.isabs(out) else work / out
    before = sorted(os.listdir(target.parent))
    proc = _cli(["record", "-q", "--html", out, "prog.py"], cwd=work, preexec_fn=preexec)
    assert proc.returncode == 7  # the program's own, not ours
    assert proc.stdout == "ran\n"
    assert proc.stderr == f"pt2-explorer: error: cannot write {out}: {reason}\n"
    assert sorted(os.listdir(target.parent)) == before  # no temporary file left
    if target.is_file():
        assert target.read_bytes() == OLD


def test_a_failed_write_after_a_program_that_succeeded_exits_1(tmp_path, capsys):
    (tmp_path / "prog.py").write_text("print('ran')\n")
    (tmp_path / "r.json").mkdir()
    out = tmp_path / "r.json"
    html = tmp_path / "r.html"
    assert cli.main(["record", "--json", str(out), "--html", str(html), str(tmp_path / "prog.py")]) == 1
    printed = capsys.readouterr()
    assert printed.err == f"pt2-explorer: error: cannot write {out}: {os.strerror(errno.EISDIR)}\n"
    assert f"report: {html}\n" in printed.out and f"report: {out}" not in printed.out  # the other one
    assert html.read_text().startswith("<!doctype html>")


def test_report_and_load_name_the_output_they_cannot_write(tmp_path, capsys):
    report = tmp_path / "r.json"
    assert cli.main(["load", "-q", str(TRACE), "--json", str(report)]) == 0
    capsys.readouterr()
    assert cli.main(["report", str(report), "--html", str(tmp_path)]) == 1
    printed = capsys.readouterr()
    assert printed.err == f"pt2-explorer: error: cannot write {tmp_path}: {os.strerror(errno.EISDIR)}\n"
    assert "graph-break site" in printed.out  # the summary was printed
    # a directory in place of the output's directory: the file in the way is named
    (tmp_path / "file").write_text("x")
    assert cli.main(["report", str(report), "--html", str(tmp_path / "file" / "r.html")]) == 1
    assert capsys.readouterr().err == (
        f"pt2-explorer: error: cannot write {tmp_path / 'file' / 'r.html'}: "
        f"{os.strerror(errno.EEXIST)}: {tmp_path / 'file'}\n"
    )


def test_a_gzipped_report_past_the_size_limit_leaves_nothing(tmp_path):
    proc = _cli(
        ["load", "-q", str(TRACE), "--json", "new.json.gz"], cwd=tmp_path, preexec_fn=_file_size_limit(4096)
    )
    assert proc.returncode == 1
    assert proc.stderr == f"pt2-explorer: error: cannot write new.json.gz: {os.strerror(errno.EFBIG)}\n"
    assert os.listdir(tmp_path) == []  # no 0-byte .gz, no temporary file


@pytest.mark.parametrize(
    "command",
    [
        ["record", "--json", "x.py", "x.py"],
        ["record", "--html", "./sub/../x.py", "-q", "x.py"],
        ["report", "r.json", "--html", "r.json"],
        ["report", "link.json", "--html", "r.json"],  # the same file through a link
        ["load", "t.log.gz", "--json", "t.log.gz"],
    ],
)
def test_an_output_that_is_the_input_is_refused_before_anything_runs(command, tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "x.py").write_text("open('ran', 'w').close()\n")
    shutil.copy(TRACE, tmp_path / "t.log.gz")
    compiler.load_trace(TRACE).to_json(tmp_path / "r.json")
    (tmp_path / "link.json").symlink_to("r.json")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    proc = _cli(command, cwd=tmp_path)
    opt = "--json" if "--json" in command else "--html"
    out = command[command.index(opt) + 1]
    source = {"record": "script", "report": "report", "load": "trace"}[command[0]]
    assert proc.returncode == 2
    assert (
        proc.stderr == f"pt2-explorer: error: {opt} {out} is the {source} itself: refusing to overwrite it\n"
    )
    assert proc.stdout == ""
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before  # not run


def test_write_file_keeps_the_files_mode_writes_through_links_and_into_fifos(tmp_path):
    old = tmp_path / "old.txt"
    old.write_text("old")
    old.chmod(0o640)
    assert write_file(old, "new") == str(old)
    assert old.read_text() == "new" and stat.S_IMODE(old.stat().st_mode) == 0o640
    mask = os.umask(0o022)
    try:
        write_file(tmp_path / "fresh.txt", b"\x00\x01")
    finally:
        os.umask(mask)
    assert stat.S_IMODE((tmp_path / "fresh.txt").stat().st_mode) == 0o644  # as open() makes it
    (tmp_path / "link.txt").symlink_to("old.txt")
    write_file(tmp_path / "link.txt", "through")
    assert (tmp_path / "link.txt").is_symlink() and old.read_text() == "through"
    fifo = tmp_path / "pipe"  # like /dev/null or /dev/stdout: written to, never replaced
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_file(fifo, "through the pipe")
    reader.join(timeout=30)
    assert got == [b"through the pipe"] and stat.S_ISFIFO(fifo.stat().st_mode)
    assert sorted(os.listdir(tmp_path)) == ["fresh.txt", "link.txt", "old.txt", "pipe"]


def test_to_json_gz_is_a_deterministic_gzip_and_an_error_names_the_path(tmp_path):
    r = compiler.load_trace(TRACE)
    a, b = tmp_path / "a.json.gz", tmp_path / "b.json.gz"
    r.to_json(a)
    r.to_json(b)
    assert a.read_bytes() == b.read_bytes()  # no name or time in the gzip header
    assert gzip.decompress(a.read_bytes()).decode() == r.to_json()
    (tmp_path / "d.json").mkdir()
    with pytest.raises(IsADirectoryError) as e:
        r.to_json(tmp_path / "d.json")
    assert e.value.filename == str(tmp_path / "d.json")
    assert sorted(os.listdir(tmp_path)) == ["a.json.gz", "b.json.gz", "d.json"]

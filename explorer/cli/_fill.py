"""Filling in what cache hits skipped, from the command line: ``pt2-explorer report R --fill``
(in the foreground, a line per compile) and, after ``pt2-explorer record --json R``, the same
work in the background: the report is written first, then written again when the fill-in ends
(compiler/bench/_fill.py does the work).

A fill runs the report's runnable code: only a report this user's own recording marked fills
unasked (compiler/model/_trust.py); any other needs ``--trust``, which first prints the code it
will run and where it came from. The background fill gets the report from ``record`` itself
(through a pipe: nothing read back from disk), and neither writes R back unless R is still
the file that was read or written (a newer recording's, or a file the user replaced or
removed, is left as it is: one line says so)."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import subprocess
import sys
import tempfile

import compiler
from compiler._viewer import fill_reason, fill_runnables, fill_untrusted
from explorer.cli._out import saving, say


def fill_report(report, path: str, was: tuple | None, *, trust: bool = False):
    """``report`` (read from ``path``, the file ``was`` names: ``identity``) with its cache
    hits' stages filled in, written back to ``path`` while it is still that file; None where
    the fill was refused or the write failed (one line said)."""
    ids = to_fill(report)
    why = fill_untrusted(report) if ids else None
    if why is not None and not trust:
        say(
            f"pt2-explorer: error: {path}: not filled, nothing run: --fill runs the report's runnable code "
            f"and {why}; read it (pt2-explorer repro {path} --compile {ids[0]}), then add --trust to run it"
        )
        return None
    if why is not None:
        _show_what_runs(report, path, ids, why)
    filled = compiler.fill(report, progress=True, trust=trust)  # its line on stderr, with its elapsed time
    if filled is report:
        say(
            "pt2-explorer: fill-in: nothing to fill in (every compile has its kernel-to-node map, or was filled in before)"
        )
        return report
    if identity(path) != was:
        say(
            f"pt2-explorer: fill-in: {path} is no longer the file that was read (written again, replaced "
            "or removed since): not written back"
        )
        return None
    if not saving(path, lambda: filled.to_json(path)):
        return None
    say(f"pt2-explorer: fill-in: {path} updated")
    return filled


def _show_what_runs(report, path: str, ids: list[str], why: str) -> None:
    """--trust: the code the fill will run, whole, and where it came from."""
    runs = [(cid, role, code) for cid, role, code in fill_runnables(report) if cid in ids]
    say(
        f"pt2-explorer: fill-in --trust: running {len(runs)} runnable(s) from {path} ({report.source}, "
        f"torch {report.torch_version}), although {why}:"
    )
    for cid, role, code in runs:
        digest = hashlib.sha256(code.encode("utf-8", "backslashreplace")).hexdigest()[:16]
        say(f"---- compile [{cid}] {role} runnable ({len(code.splitlines())} lines, sha256 {digest}…) ----")
        say(code.rstrip("\n").encode("ascii", "backslashreplace").decode("ascii"))
    say("---- end of the code to run ----")


def to_fill(report) -> list[str]:
    """The ids of the compiles a fill-in would fill."""
    return [c.id for c in report.compiles if fill_reason(c) is not None]


def identity(path: str | None) -> tuple | None:
    """What tells the file at ``path`` from another one written there since: device, inode,
    size, change times (None where there is no file)."""
    if not path:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def fill_in_background(report, json_path: str | None, html_path: str | None, title: str = ""):
    """After ``record`` wrote ``report``: fill it in a process of its own session (it outlives
    this one, as a download would), given the report through a pipe, and say so in one line;
    where the report was not written as JSON, say the command instead. Returns the process
    started, if any."""
    ids = to_fill(report)
    if not ids:
        return None
    what = f"{len(ids)} compile{'s' * (len(ids) != 1)} ({', '.join(ids)}) loaded from the cache or without a kernel-to-node map"
    if not json_path:
        say(f"pt2-explorer: {what}: record with --json R.json, then pt2-explorer report R.json --fill")
        return None
    json_path = os.path.abspath(json_path)
    html_path = html_path and os.path.abspath(html_path)
    log = json_path + ".fill.log"
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    ident = [repr(identity(p)) for p in (json_path, html_path)]
    cmd = [sys.executable, "-m", "explorer.cli._fill", json_path, html_path or "", title, *ident]
    try:
        with new_log(log) as out:
            proc = subprocess.Popen(
                cmd, stdin=subprocess.PIPE, stdout=out, stderr=out, env=env, start_new_session=True
            )
        with proc.stdin:  # the report as this process has it: the child reads nothing back from disk
            proc.stdin.write(report.to_json().encode("utf-8", "backslashreplace"))
    except OSError as e:
        say(
            f"pt2-explorer: {what}: could not start the fill-in ({e}): pt2-explorer report {json_path} --fill"
        )
        return None
    written = " and ".join(p for p in (json_path, html_path) if p)
    say(
        f"pt2-explorer: filling in {what} in the background (pid {proc.pid}, progress in {log}): "
        f"{written} updated when it ends"
    )
    return proc


def new_log(path: str):
    """A new file at ``path``, open for writing: made under a name of its own (never through a
    link), then put in place of what ``path`` named; an existing file there is replaced as a
    whole, never truncated nor written through (another link to it keeps its bytes). Refused
    (OSError) where ``path`` is a directory or another user's file."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None and (stat.S_ISDIR(st.st_mode) or (hasattr(os, "getuid") and st.st_uid != os.getuid())):
        raise OSError(errno.EEXIST, "in the way: a directory, or another user's file", path)
    directory, base = os.path.split(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=".tmp", dir=directory or ".")  # O_EXCL: ours alone
    try:
        os.replace(tmp, path)
    except OSError:
        os.close(fd)
        os.unlink(tmp)
        raise
    return os.fdopen(fd, "w")


def _background(json_path: str, html_path: str, title: str, json_was: str, html_was: str) -> int:
    """The background fill: the report from stdin, filled, written back to ``json_path`` (and
    ``html_path``) where each is still the file ``record`` wrote (``*_was``: its identity)."""
    from explorer.cli._out import save_html

    text = sys.stdin.buffer.read().decode("utf-8", "replace")
    report = compiler.Report.from_dict(json.loads(text))
    try:
        filled = compiler.fill(report, progress=say)
    except ValueError as e:  # its mark no longer checks out (the key removed since): nothing run
        say(f"pt2-explorer: fill-in: {e}")
        return 1
    if filled is report:
        say("pt2-explorer: fill-in: nothing to fill in")
        return 0
    ok = True
    for path, was, write in (
        (json_path, json_was, lambda: filled.to_json(json_path)),
        (html_path, html_was, lambda: save_html(filled, html_path, title)),
    ):
        if not path:
            continue
        if repr(identity(path)) != was:
            say(
                f"pt2-explorer: fill-in: {path} is no longer the file record wrote (written again, replaced "
                "or removed since): not written back"
            )
            ok = False
            continue
        if saving(path, write):
            say(f"pt2-explorer: fill-in: {path} updated")
        else:
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(_background(*sys.argv[1:6]))

"""Filling in what cache hits skipped, from the command line: ``pt2-explorer report R --fill``
(in the foreground, a line per compile) and, after ``pt2-explorer record --json R``, the
same command started in the background: the report is written first, then written again
when the fill-in ends (compiler/bench/_fill.py does the work)."""

from __future__ import annotations

import os
import subprocess
import sys

import compiler
from explorer.cli._out import saving, say


def fill_report(report, path: str):
    """``report`` with its cache hits' stages filled in, written back to ``path``; None where
    the write failed (one line said)."""
    filled = compiler.fill(report, progress=True)  # its line on stderr, with its elapsed time
    if filled is report:
        say(
            "pt2-explorer: fill-in: nothing to fill in (every compile has its kernel-to-node map, or was filled in before)"
        )
        return report
    if not saving(path, lambda: filled.to_json(path)):
        return None
    say(f"pt2-explorer: fill-in: {path} updated")
    return filled


def to_fill(report) -> list[str]:
    """The ids of the compiles a fill-in would fill."""
    return [c.id for c in report.compiles if compiler.analysis.fill_reason(c) is not None]


def fill_in_background(report, json_path: str | None, html_path: str | None) -> None:
    """After ``record``: start ``pt2-explorer report JSON --fill [--html HTML]`` in its own
    session (it outlives this process, as a download would) and say so in one line; where the
    report was not written as JSON, say the command instead."""
    ids = to_fill(report)
    if not ids:
        return
    what = f"{len(ids)} compile{'s' * (len(ids) != 1)} ({', '.join(ids)}) loaded from the cache or without a kernel-to-node map"
    if not json_path:
        say(f"pt2-explorer: {what}: record with --json R.json, then pt2-explorer report R.json --fill")
        return
    log = json_path + ".fill.log"
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, "-m", "explorer", "report", json_path, "--fill"]
    if html_path:
        cmd += ["--html", html_path]
    try:
        with open(log, "w") as out:
            proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env, start_new_session=True
            )
    except OSError as e:
        say(
            f"pt2-explorer: {what}: could not start the fill-in ({e}): pt2-explorer report {json_path} --fill"
        )
        return
    written = " and ".join(p for p in (json_path, html_path) if p)
    say(
        f"pt2-explorer: filling in {what} in the background (pid {proc.pid}, progress in {log}): "
        f"{written} updated when it ends"
    )

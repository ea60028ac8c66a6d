"""Every view of every shipped report fits the terminal: ``pt2-explorer report R --view V``
(tests/_every_view.py prints them all, one process) on a pseudo-terminal 80 and 100 columns
wide has no line wider than the terminal, and every ``file.py:LINE`` the piped text (whole
lines) names is whole on one line of the terminal's text: a place never splits across lines."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from _corpus_run import env_with_root
from _every_view import MARK, runs
from rich.cells import cell_len

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
PLACE = re.compile(r"[\w.-]+\.pyi?:\d+\b")


def _env() -> dict[str, str]:
    env = env_with_root()
    env.pop("COLUMNS", None)  # the terminal's size says the width
    return env


def _views(out: str) -> dict[tuple[str, str], list[str]]:
    """(report, view) -> the lines printed for it."""
    shown: dict[tuple[str, str], list[str]] = {}
    lines: list[str] = []
    for ln in out.splitlines():
        if ln.startswith(MARK):
            rest = ln[len(MARK) :].split()
            assert rest[0] != "exit", (list(shown)[-1], rest)
            lines = shown.setdefault((rest[0], rest[1]), [])
        else:
            lines.append(ln)
    return shown


@pytest.fixture(scope="module")
def piped() -> dict[tuple[str, str], list[str]]:
    run = subprocess.run(
        [sys.executable, str(TESTS / "_every_view.py")], cwd=ROOT, env=_env(), capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return _views(run.stdout)


@pytest.mark.child  # every view of 27 reports rendered by the CLI in a process, piped and in a pty: minutes
@pytest.mark.parametrize("columns", [80, 100])
def test_every_view_of_every_shipped_report_fits(piped, columns):
    from _pty import run_in_pty

    status, raw = run_in_pty([sys.executable, str(TESTS / "_every_view.py")], columns, 40, _env())
    out = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", raw.decode()).replace("\r\n", "\n")
    assert status == 0, out[-3000:]
    shown = _views(out)
    assert set(shown) == set(piped) == set(runs())
    wide, split = [], []
    for key, lines in shown.items():
        wide += [(key, ln) for ln in lines if cell_len(ln) > columns]
        whole = Counter(p for ln in lines for p in PLACE.findall(ln))
        named = Counter(p for ln in piped[key] for p in PLACE.findall(ln))
        split += [(key, p) for p in named if p not in whole]
    assert not wide, wide[:5]
    assert not split, split[:10]

"""Progress where work takes long (``compiler/model/_progress.py``): on a terminal one line,
rewritten, with the time since the work began, kept going while a step runs long; piped,
whole lines (each step's first, then the final one). ``census show --html`` of the shipped H100
census: the census page alone (its row pages where ``--pages`` asks), and a last line saying
what was written and how large the row pages would be."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compiler._viewer import LineProgress

ROOT = Path(__file__).resolve().parent.parent


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_piped_progress_is_whole_lines_each_step_once():
    out = io.StringIO()
    line = LineProgress(out)
    line("benchmark f: eager call (state check)")
    for i in range(1, 21):
        line(f"benchmark f: rep {i}/20")
    line("benchmark f: profiling the compiled kernels")
    line("benchmark f: done", final=True)
    shown = [re.sub(r"\(\d+\.\d s\)$", "(T)", ln) for ln in out.getvalue().splitlines()]
    assert shown == [
        "benchmark f: eager call (state check) (T)",
        "benchmark f: rep 1/20 (T)",  # the same step again within 10 s: not repeated
        "benchmark f: profiling the compiled kernels (T)",
        "benchmark f: done (T)",
    ]
    assert "\r" not in out.getvalue() and "\x1b" not in out.getvalue()


def test_terminal_progress_is_one_line_its_time_kept_going():
    out = _Terminal()
    line = LineProgress(out, tick_s=0.05)
    line("pt2-explorer: advise: running max_autotune; 0 of 1 fixes")
    time.sleep(0.4)  # a long step: the line rewritten with its time, no call needed
    line.clear()
    text = out.getvalue()
    writes = text.split("\r")[1:]
    assert len(writes) >= 3, writes
    assert all(
        re.fullmatch(r"pt2-explorer: advise: running max_autotune; 0 of 1 fixes \(\d\.\d s\)\x1b\[K", w)
        for w in writes[:-1]
    ), writes
    assert writes[-1] == "\x1b[2K"  # cleared: what follows prints on that line
    assert writes[0] != writes[-2]  # the elapsed time moved
    time.sleep(0.2)
    assert out.getvalue() == text  # cleared: no more ticks
    line("step 1/2")
    line("done", final=True)
    assert re.fullmatch(
        r"\rstep 1/2 \(\d\.\d s\)\x1b\[K\rdone \(\d\.\d s\)\x1b\[K\n", out.getvalue()[len(text) :]
    )


def test_census_show_html_of_the_h100_census_writes_its_page_alone(tmp_path):
    census = ROOT / "notebooks" / "data" / "census-h100-speed.json"
    run = subprocess.run(
        [sys.executable, "-m", "explorer", "census", "show", str(census), "--html", str(tmp_path / "c.html")],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    written = sum(f.stat().st_size for f in tmp_path.rglob("*") if f.is_file())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.html"] and written <= 50e6
    reports = len(list((ROOT / "notebooks" / "data" / "census-h100-speed").glob("*.json.gz")))
    last = run.stdout.splitlines()[-2:]
    assert re.fullmatch(
        rf"census page: {re.escape(str(tmp_path / 'c.html'))} \(\d\.\d MB; \d+\.\d s\)", last[0]
    )
    assert re.fullmatch(
        rf"row pages not written: {reports} rows have a report; --pages writes each as its page beside "
        r"the census page \(about [\d,]+ MB in all\); pt2-explorer report REPORT --html OUT writes one",
        last[1],
    )
    assert run.stderr == ""  # no row page: no progress to show


def test_pages_without_html_is_a_usage_error(tmp_path):
    census = ROOT / "notebooks" / "data" / "census-cpu-torch213.json"
    run = subprocess.run(
        [sys.executable, "-m", "explorer", "census", "show", str(census), "--pages"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    )
    assert (run.returncode, run.stdout, run.stderr) == (
        2,
        "",
        "pt2-explorer census: error: --pages writes the row pages beside the census page: give --html OUT\n",
    )


TWO = """
import torch

@torch.compile(backend="eager")
def scale(x):
    return x * 2 + 1

@torch.compile(backend="eager")
def shift(x):
    return x - 3

x = torch.randn(64)
scale(x)
shift(x)
"""


@pytest.mark.slow
@pytest.mark.child
def test_record_bench_piped_says_each_step_with_n_of_n_and_its_time(tmp_path):
    """``record --bench`` piped: each benchmark's steps as whole lines, which function of how
    many, and the time since the benchmarks began; no cursor codes."""
    (tmp_path / "two.py").write_text(TWO)
    run = subprocess.run(
        [sys.executable, "-m", "explorer", "record", "--bench", "--json", "r.json", "two.py"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    shown = [
        re.sub(r"\(\d+(\.\d)? s\)$", "(T)", ln)
        for ln in run.stderr.splitlines()
        if re.match(r"\d of 2: ", ln)
    ]
    for n, name in ((1, "scale"), (2, "shift")):
        mine = [ln for ln in shown if ln.startswith(f"{n} of 2: benchmark {name}: ")]
        assert mine[:2] == [
            f"{n} of 2: benchmark {name}: eager call (state check) (T)",
            f"{n} of 2: benchmark {name}: compiled call (accuracy) (T)",
        ], shown
        assert mine[-1] == f"{n} of 2: benchmark {name}: done (T)", shown
        assert any(re.fullmatch(rf"{n} of 2: benchmark {name}: rep 1/\d+ \(T\)", ln) for ln in mine), shown
    assert "\r" not in run.stderr and "\x1b[" not in run.stderr

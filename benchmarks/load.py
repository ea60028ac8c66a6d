"""Reading TORCH_TRACE logs: `pt2-explorer load` against tlparse on the same log, side by side.

    .venv/bin/python benchmarks/load.py [--big-mb 200] [--vary] [--rounds 3] [--html]
                                        [--no-small] [--baseline DIR] [--keep DIR]

Each tool runs as a fresh process on the same file, in turn (A B A B ...) after one warm-up run
each (Python's byte-code written, the log in the page cache); per run: the process's
own CPU time (user + sys, from os.wait4: the loader is single-threaded Python, tlparse Rust),
wall time and peak RSS. Medians are printed with our/tlparse ratios. Logs:

* small: tests/fixtures/traces/h100-torch211-breaks.log.gz, unzipped (3.3 MB; a real H100
  recording: a graph break, backward, a recompile; torch 2.11);
* big: the same recording repeated to ``--big-mb`` MB, each copy's frame ids moved past the
  previous copy's (so every copy is compiles of its own, as in a long job that compiles many
  frames); with ``--vary`` each copy's names (and so its graphs, code and kernels) its own,
  as a real big log's are (benchmarks/make_big_log.py); generated under the temp directory,
  never committed.

``--html`` also times ``pt2-explorer load --html`` of the big log (not against tlparse: its
HTML is per compile, in many files). ``--baseline DIR`` adds our command run in DIR, another
checkout (``git worktree add DIR main``), on its own code: before and after, in turn, on the
same machine. Both tools write their output under the temp directory.
tlparse comes from PyPI (``pip install tlparse``); without it the tlparse column is empty.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_big_log import SMALL, make_log  # noqa: E402


def make_logs(work: Path, big_mb: float, vary: bool) -> tuple[Path, Path]:
    small = work / "small.log"
    small.write_bytes(gzip.decompress(SMALL.read_bytes()))
    big = work / f"big-{big_mb:g}mb{'-varied' if vary else ''}.log"
    make_log(big, big_mb, vary=vary)
    return small, big


# Python as installed packages run it: from byte-code (a warm-up run writes it), whatever
# PYTHONDONTWRITEBYTECODE says here
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


# (command, working directory or None): ``--baseline DIR`` runs our command in DIR, another
# checkout, on its own code (``python -m`` puts the working directory first on the path)
Arm = tuple[list[str], "str | None"]


def run(cmd: list[str], cwd: str | None = None) -> dict[str, float]:
    """One fresh process: its own CPU seconds, wall seconds, peak RSS in MB."""
    env = _ENV if cwd is None else {**_ENV, "PYTHONPATH": cwd}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
    _pid, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {err[-2000:]}")
    return {"cpu": ru.ru_utime + ru.ru_stime, "wall": wall, "rss": ru.ru_maxrss / 1024}


def ours(log: Path, out: Path, html: bool = False, name: str = "r") -> list[str]:
    cmd = [sys.executable, "-m", "explorer", "load", str(log), "--json", str(out / f"{name}.json.gz")]
    return cmd + (["--html", str(out / f"{name}.html")] if html else [])


def tlparse(log: Path, out: Path) -> list[str] | None:
    exe = shutil.which(
        "tlparse", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])
    )
    return None if exe is None else [exe, str(log), "-o", str(out / "tl"), "--overwrite", "--no-browser"]


def median(runs: list[dict[str, float]]) -> dict[str, float]:
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def compare(name: str, log: Path, work: Path, rounds: int, baseline: str | None, html: bool = False) -> None:
    arms: dict[str, Arm] = {"pt2-explorer load": (ours(log, work, html), None)}
    if baseline:
        arms["baseline"] = (ours(log, work, html, "baseline"), baseline)
    tl = tlparse(log, work)
    if tl is not None and not html:
        arms["tlparse"] = (tl, None)
    runs: dict[str, list] = {a: [] for a in arms}
    for cmd, cwd in arms.values():  # warm-up, not counted: byte-code written, the file in the page cache
        run(cmd, cwd)
    for _ in range(rounds):
        for arm, (cmd, cwd) in arms.items():
            runs[arm].append(run(cmd, cwd))
    size = log.stat().st_size / 2**20
    print(f"\n{name}: {log.name}, {size:.1f} MB, {rounds} rounds (median; CPU s of the process itself)")
    print(f"{'':20} {'CPU s':>8} {'MB/CPU s':>9} {'wall s':>8} {'peak RSS MB':>12} {'RSS / file':>11}")
    med = {arm: median(r) for arm, r in runs.items()}
    for arm, m in med.items():
        cpus = "/".join(f"{r['cpu']:.2f}" for r in runs[arm])
        print(
            f"{arm:20} {m['cpu']:8.2f} {size / m['cpu']:9.1f} {m['wall']:8.2f} {m['rss']:12.0f} "
            f"{m['rss'] / size:11.2f}   ({cpus})"
        )
    for other in ("baseline", "tlparse"):
        if other in med:
            a, b = med["pt2-explorer load"], med[other]
            print(
                f"{'ratio ours/' + other:20} {a['cpu'] / b['cpu']:8.2f} {'':9} {a['wall'] / b['wall']:8.2f} "
                f"{a['rss'] / b['rss']:12.2f}"
            )
    if html:
        pages = {a: work / f"{n}.html" for a, n in (("ours", "r"), ("baseline", "baseline"))}
        print(
            "page: "
            + ", ".join(f"{a} {p.stat().st_size / 2**20:.1f} MB" for a, p in pages.items() if p.exists())
        )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--big-mb", type=float, default=200)
    p.add_argument("--vary", action="store_true", help="every copy of the big log with names of its own")
    p.add_argument("--no-small", action="store_true", help="time the big log only")
    p.add_argument("--baseline", metavar="DIR", help="also time the checkout in DIR (before/after)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--html", action="store_true", help="also time load --html of the big log")
    p.add_argument("--keep", metavar="DIR", help="write the logs and outputs here (kept)")
    ns = p.parse_args()
    work = Path(ns.keep or tempfile.mkdtemp(prefix="pt2x-load-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        small, big = make_logs(work, ns.big_mb, ns.vary)
        if not ns.no_small:
            compare("small log", small, work, ns.rounds, ns.baseline)
        compare("big log", big, work, ns.rounds, ns.baseline)
        if ns.html:
            compare("load --html, big log", big, work, ns.rounds, ns.baseline, html=True)
        report = work / "r.json.gz"
        print(f"\nreport of the big log: {report.stat().st_size / 2**20:.1f} MB (.json.gz)")
        print(json.dumps({"python": sys.version.split()[0], "work": str(work)}))
    finally:
        if not ns.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

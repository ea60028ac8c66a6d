"""Running a census: each case in its own fresh process (``_process.py``, ``_child.py``) with a
time and a memory limit, ``jobs`` at a time (``concurrent.futures``), or as Ray tasks on a cluster
(``_ray.py``); a progress bar with an ETA (rich); resumable (a finished case's row file is kept,
and a rerun skips it).

The output directory::

    census.json            the table (rewritten as rows finish)
    settings.json          the settings its rows were run with (resuming needs the same, but
                           the limits: ``LIMITS``)
    rows/<case>.json       each finished row (what a resumed run skips; ``--retry``: unless it
                           failed)
    reports/<case>.json.gz each case's full report (the row links to it)
    logs/<case>.log        each case's own output
    traces/<case>/         torch's TORCH_TRACE log of the case (--keep-trace)
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import dataclasses
import datetime
import json
import os
import shutil
import threading
from collections import Counter

from ._cases import LIMITS, Case, Settings, loosest
from ._files import as_text, check_settings, read_json, write_json
from ._process import finished, run_one
from ._table import Census, CensusRow


def write_census(out: str, cases: list[Case], settings: Settings, title: str | None = None) -> Census:
    """``out/census.json`` of every finished case of ``cases``, in their order."""
    rows = tuple(r for r in (finished(out, c) for c in cases) if r is not None)
    versions = Counter(r.torch_version for r in rows if r.torch_version)
    census = Census(
        rows,
        settings.to_dict(),
        torch_version=versions.most_common(1)[0][0] if versions else None,
        created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        title=title,
        path=os.path.join(out, "census.json"),
    )
    census.save(census.path)
    return census


def _same_settings(out: str, settings: Settings, rerun: bool) -> Settings:
    """A census directory holds rows of one set of settings (the modes and precisions aside:
    they pick cases): resuming with others would mix them. ValueError saying so, also where its
    ``settings.json`` is damaged, or missing beside finished rows (their settings are then
    unknown); ``rerun`` starts over. The limits (``LIMITS``) may change: the settings to
    record, returned, keep the loosest of each that its rows ran under."""
    path = os.path.join(out, "settings.json")
    mine = as_text(
        {k: v for k, v in settings.to_dict().items() if k not in ("modes", "precisions")}
    )  # as the file holds it
    same = {k: v for k, v in json.loads(json.dumps(mine)).items() if k not in LIMITS}  # limits may change
    how = "use --rerun to run its cases again, or another --out"
    try:
        theirs = check_settings(read_json(path), path)
    except FileNotFoundError:
        theirs = None
        if not rerun and _has_rows(out):
            raise ValueError(
                f"{path}: missing, beside finished rows: the settings they were run with are "
                f"unknown, so {out} cannot be resumed: {how}"
            ) from None
    except (OSError, ValueError) as e:  # CensusFormatError: not JSON, not an object, a wrong type
        theirs = None
        if not rerun:
            msg = f"{e.filename}: {e.strerror}" if isinstance(e, OSError) else str(e)
            raise ValueError(f"{msg}: {out} cannot be resumed with its settings unknown: {how}") from None
    if theirs is not None and {k: v for k, v in theirs.items() if k not in LIMITS} != same and not rerun:
        diff = ", ".join(
            [f"{k} {theirs.get(k)!r} there, {v!r} now" for k, v in same.items() if theirs.get(k) != v]
            + [f"{k} {v!r} there" for k, v in theirs.items() if k not in mine]
        )
        raise ValueError(
            f"{out} holds a census run with other settings ({diff}): use another --out, or --rerun"
        )
    if rerun and theirs != mine:
        shutil.rmtree(os.path.join(out, "rows"), ignore_errors=True)
    elif theirs is not None:
        mine.update({k: loosest([theirs[k], mine[k]]) for k in LIMITS if k in theirs})
    write_json(path, mine)
    return dataclasses.replace(settings, **{k: mine[k] for k in LIMITS})


def failed(row: CensusRow, settings: Settings) -> bool:
    """A row ``--retry`` runs again: an error (a timeout, a crash, out of memory), or, with
    ``--bench``, a compile whose timing raised (no speedup)."""
    return row.status == "error" or (settings.bench and row.speedup is None)


def _has_rows(out: str) -> bool:
    try:
        return any(n.endswith(".json") for n in os.listdir(os.path.join(out, "rows")))
    except OSError:
        return False


def run_census(
    cases: list[Case],
    settings: Settings,
    out: str,
    *,
    jobs: int = 1,
    gpus: list[str] | None = None,
    ray_address: str | None = None,
    rerun: bool = False,
    retry: bool = False,
    progress: bool = True,
    title: str | None = None,
) -> Census:
    """Run every case not finished yet (all with ``rerun``; also the failed ones with
    ``retry``: ``failed``), ``jobs`` at a time or on Ray;
    returns the census, also written to ``out/census.json``. On ``--device cuda``, the jobs
    are spread over ``gpus`` (default: every GPU this process sees), each case on one of them."""
    os.makedirs(out, exist_ok=True)
    recorded = _same_settings(out, settings, rerun)  # the cases run with settings' limits
    todo = [
        c for c in cases if rerun or (row := finished(out, c)) is None or (retry and failed(row, settings))
    ]
    with _Progress(len(cases), len(cases) - len(todo), progress) as bar:
        if ray_address is not None:
            from ._ray import run_on_ray

            for case, row in run_on_ray(todo, settings, out, ray_address):
                bar.done(case, row)
                write_census(out, cases, recorded, title)
        else:
            slots = (
                GpuSlots(gpus if gpus is not None else visible_gpus(), jobs)
                if settings.device == "cuda"
                else None
            )
            with cf.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
                futures = {pool.submit(_run_case, c, settings, out, jobs, slots): c for c in todo}
                for fut in cf.as_completed(futures):
                    bar.done(futures[fut], fut.result())
                    write_census(out, cases, recorded, title)
    return write_census(out, cases, recorded, title)


def _run_case(case: Case, settings: Settings, out: str, jobs: int, slots: GpuSlots | None) -> CensusRow:
    if slots is None or not slots.gpus:
        return run_one(case, settings, out, jobs)
    with slots.take() as gpu:
        return run_one(case, settings, out, jobs, gpu=gpu, gpu_share=slots.share)


class GpuSlots:
    """The GPUs a census's jobs share: each case runs on the one with the fewest cases running
    (``CUDA_VISIBLE_DEVICES``), at most ``share`` (jobs over GPUs, rounded up) on each at once,
    each held to its share of that GPU's memory; the timed part of a case has its GPU alone
    (``_speed.device_turn``)."""

    def __init__(self, gpus: list[str], jobs: int):
        self.gpus = list(gpus)
        self.share = max(1, -(-jobs // len(self.gpus))) if self.gpus else 1
        self.running = dict.fromkeys(self.gpus, 0)
        self.lock = threading.Lock()

    @contextlib.contextmanager
    def take(self):
        with self.lock:
            gpu = min(self.gpus, key=lambda g: self.running[g])
            self.running[gpu] += 1
        try:
            yield gpu
        finally:
            with self.lock:
                self.running[gpu] -= 1


def visible_gpus() -> list[str]:
    """The GPUs this process sees, as ``CUDA_VISIBLE_DEVICES`` names them for a child (its
    own list where set, else torch's count)."""
    seen = os.environ.get("CUDA_VISIBLE_DEVICES")
    if seen is not None:
        return [g.strip() for g in seen.split(",") if g.strip()]
    try:
        import torch

        return [str(i) for i in range(torch.cuda.device_count())]
    except Exception:  # no torch here, or no driver: one device, as the case's own torch sees it
        return []


class _Progress:
    """rich's progress bar (elapsed, ETA) over the cases; silent where ``show`` is False."""

    def __init__(self, total: int, skipped: int, show: bool):
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.bar = Progress(
            TextColumn("census"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.description}", markup=False),
            disable=not show,
            transient=False,
        )
        self.task = self.bar.add_task(
            f"({skipped} done before)" if skipped else "", total=total, completed=skipped
        )

    def __enter__(self):
        self.bar.__enter__()
        return self

    def __exit__(self, *exc):
        self.bar.__exit__(*exc)

    def done(self, case: Case, row: CensusRow | None = None) -> None:
        status = f"{case.key}: {row.status}" if row is not None else case.key
        self.bar.update(self.task, advance=1, description=status)


CASE_GB = 4.0  # what one case of a census may take, for --jobs' default (a real-size model's compile)


def default_jobs(settings: Settings, gpus: list[str] | None = None) -> int:
    """Cases at a time on this machine, where ``--jobs`` is not given: one per two cores
    this process may use (a case compiles in its own threads and workers), and no more than
    its available memory holds at ``CASE_GB`` each (or the case's own ``--memory`` limit,
    where lower). On the CPU with ``--bench``, one (side by side, the cases would time each
    other). On ``--device cuda``, one per GPU (``gpus``, default: those this process sees),
    two with ``--bench`` (one timed while the other compiles); on another device, one."""
    if settings.device == "cuda":
        per_gpu = 2 if settings.bench else 1
        cap = per_gpu * max(1, len(gpus if gpus is not None else visible_gpus()))
    elif settings.bench or not settings.device.startswith("cpu"):
        return 1
    else:
        cap = None
    by_cores = max(1, len(os.sched_getaffinity(0)) // 2)
    if cap is not None:
        by_cores = min(by_cores, cap)
    per_case = min(CASE_GB, settings.memory_gb or CASE_GB)
    return max(1, min(by_cores, int(available_gb() // per_case)))


def available_gb() -> float:
    """Memory available to new processes (/proc/meminfo's MemAvailable; all of it elsewhere)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 2**20
    except (OSError, ValueError, IndexError):
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30

"""One census case in its own fresh process (``_child.py``), with a time and a memory limit:
its files in the census directory and its row (``run_one``); and the row of a case an earlier
run finished (``finished``: what resuming skips)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

from ._cases import GPU_SHARE_ENV, Case, Settings
from ._files import read_json, write_json
from ._table import CensusRow, census_from_dict, plain_row, row_from_report

DIRS = ("rows", "reports", "logs", "traces")


def _paths(out: str, case: Case) -> dict[str, str]:
    s = case.slug
    return {
        "row": os.path.join(out, "rows", s + ".json"),
        "report": os.path.join(out, "reports", s + ".json.gz"),
        "log": os.path.join(out, "logs", s + ".log"),
        "trace": os.path.join(out, "traces", s),
        "result": os.path.join(out, "logs", s + ".result.json"),
        "journal": os.path.join(out, "logs", s + ".journal"),
    }


def _threads(jobs: int) -> str:
    """Each case's share of the cores (OMP_NUM_THREADS), so that jobs do not oversubscribe."""
    return str(max(1, len(os.sched_getaffinity(0)) // max(1, jobs)))


def run_one(
    case: Case,
    settings: Settings,
    out: str,
    jobs: int = 1,
    python: str | None = None,
    gpu: str | None = None,
    gpu_share: int = 1,
) -> CensusRow:
    """Run ``case`` in a fresh process; write its row file; return the row. A hang (past
    ``settings.timeout_s``) or a crash is a row with status ``error`` saying so. ``gpu``: the
    one GPU the process sees (``CUDA_VISIBLE_DEVICES``), shared by ``gpu_share`` cases at a
    time, each held to its share of the GPU's memory (``GPU_SHARE_ENV``)."""
    out = os.path.abspath(out)
    p = _paths(out, case)
    for d in DIRS:
        os.makedirs(os.path.join(out, d), exist_ok=True)
    for stale in (p["result"], p["journal"], p["report"]):
        if os.path.exists(stale):
            os.remove(stale)
    job = {
        "case": case.__dict__,
        "settings": settings.to_dict(),
        "report": p["report"],
        "result": p["result"],
        "journal": p["journal"],
    }
    # --fresh: an empty cache dir of its own; else the user's caches, as the model's own run has them
    cache = tempfile.mkdtemp(prefix="pt2x-census-cache-") if settings.fresh else None
    env = {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "PYTHONPATH": _child_path(),
    }
    if cache is not None:
        env["TORCHINDUCTOR_CACHE_DIR"] = cache
    env.setdefault("OMP_NUM_THREADS", _threads(jobs))
    if gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = gpu
        env[GPU_SHARE_ENV] = str(gpu_share)
    if settings.keep_trace:
        shutil.rmtree(p["trace"], ignore_errors=True)
        env["TORCH_TRACE"] = p["trace"]
    error = None
    try:
        with open(p["log"], "wb") as log:
            proc = subprocess.Popen(
                [python or sys.executable, "-m", "explorer.census._child", json.dumps(job)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=out,  # not the caller's directory: a package there could shadow this one
                start_new_session=True,  # its compile workers die with it
            )
            try:
                rc = proc.wait(timeout=settings.timeout_s)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                rc = None
                error = f"timeout: no result after {settings.timeout_s:g} s"
    finally:
        if cache is not None:
            shutil.rmtree(cache, ignore_errors=True)
    result = _result(p["result"])
    if result is None and error is None:
        error = _death(rc, p["log"])
    elif result is not None and rc is None:  # it wrote its whole result, then outlived the limit exiting
        error = None
    row = row_from_report(
        case,
        _report(p),
        result,
        error,
        report=os.path.relpath(p["report"], out) if os.path.exists(p["report"]) else None,
        trace=os.path.relpath(p["trace"], out) if settings.keep_trace and os.path.isdir(p["trace"]) else None,
    )
    if os.path.exists(p["report"]) and os.path.exists(p["journal"]):
        os.remove(p["journal"])  # the report holds all of it
    write_json(p["row"], plain_row(row))
    return row


def _child_path() -> str:
    """The child's PYTHONPATH: this explorer's root first, the caller's directory (where
    ``--models`` modules are found, as in this process), then the caller's own."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    rest = os.environ.get("PYTHONPATH", "")
    return os.pathsep.join(p for p in (root, os.getcwd(), rest) if p)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def _death(rc: int | None, log: str) -> str:
    """How a process that left no result ended: its signal, or its status and last line."""
    if rc is not None and rc < 0:
        name = signal.Signals(-rc).name
        return f"crashed: killed by {name}" + (" (out of memory?)" if name == "SIGKILL" else "")
    try:
        with open(log, encoding="utf-8", errors="replace") as f:
            lines = [ln.strip() for ln in f if ln.strip()]
    except OSError:
        lines = []
    return f"crashed: exit status {rc}" + (f": {lines[-1][:300]}" if lines else "")


def _report(p: dict):
    """The case's report, or where its process died, what its journal held."""
    import compiler
    from compiler._viewer import load_journal

    if os.path.exists(p["report"]):
        return compiler.load(p["report"])
    if os.path.exists(p["journal"]) and os.path.getsize(p["journal"]):
        try:
            return load_journal(p["journal"])
        except (OSError, ValueError):
            return None
    return None


def _result(path: str) -> dict | None:
    """What the case's process wrote of itself (``_child.py``); None where it wrote nothing
    whole (it died). Its numbers reach the row through ``row_from_report``, which keeps only
    those a census file may hold."""
    try:
        data = read_json(path)
    except (OSError, ValueError):  # CensusFormatError: NaN, a cut file
        return None
    return data if isinstance(data, dict) else None


def finished(out: str, case: Case) -> CensusRow | None:
    """The case's row where an earlier run finished it (resuming skips it); None where its
    row file is missing or does not fit (the case runs again)."""
    path = _paths(out, case)["row"]
    try:
        data = read_json(path)
        return census_from_dict({"format": "pt2-explorer-census", "version": 1, "rows": [data]}, path).rows[0]
    except (OSError, ValueError):  # CensusFormatError
        return None

"""A census on a Ray cluster: each case is one Ray task with its own resources (one CPU, the
memory limit, a GPU on ``--device cuda``), which runs the case in a fresh process on its node
exactly as a local census does (``_run.run_one``) and returns the files it wrote; the driver
writes them into the census directory. Every node needs pt2-explorer (and the models'
packages) installed; Ray is the ``census-ray`` extra. ``address`` is what ``ray.init`` takes
(``auto``, ``ray://host:10001``); ``local`` starts a Ray instance on this machine.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator

from ._cases import Case, Settings


def case_files(case: dict, settings: dict) -> dict[str, bytes]:
    """The Ray task: run the case on this node; its files, by path under the census directory."""
    from ._process import run_one

    out = tempfile.mkdtemp(prefix="pt2x-census-ray-")
    try:
        run_one(Case(**case), Settings.from_dict(settings), out)
        files = {}
        for root, _dirs, names in os.walk(out):
            for name in names:
                path = os.path.join(root, name)
                with open(path, "rb") as f:
                    files[os.path.relpath(path, out)] = f.read()
        return files
    finally:
        shutil.rmtree(out, ignore_errors=True)


def _row_file(case: Case) -> str:
    return os.path.join("rows", case.slug + ".json")


def _failed_row(case: Case, e: Exception) -> bytes:
    import json

    from ._table import plain_row, row_from_report

    first = (str(e).strip().splitlines() or [""])[0]
    row = row_from_report(case, None, None, f"ray task failed: {type(e).__name__}: {first}"[:500])
    return json.dumps(plain_row(row)).encode()


def task_options(settings: Settings, cpus: float = 1) -> dict:
    """Each task's resources: what the scheduler places it by."""
    opts: dict = {"num_cpus": cpus, "max_retries": 0}
    if settings.memory_gb:
        opts["memory"] = int(settings.memory_gb * 2**30)
    if settings.device.startswith("cuda"):
        opts["num_gpus"] = 1
    return opts


def run_on_ray(todo: list[Case], settings: Settings, out: str, address: str, cpus: float = 1) -> Iterator:
    """Run the cases as Ray tasks; yields (case, row) as each finishes, its files written."""
    import ray

    from ._process import finished

    started = not ray.is_initialized()
    if started:
        try:
            ray.init(address=None if address == "local" else address, log_to_driver=False)
        except Exception as e:  # not reachable, or a local instance that did not start: one line
            first = (str(e).strip().splitlines() or [""])[0]
            raise ValueError(f"Ray at {address!r}: {type(e).__name__}: {first}") from None
    try:
        task = ray.remote(**task_options(settings, cpus))(case_files)
        pending = {task.remote(c.__dict__, settings.to_dict()): c for c in todo}
        while pending:
            (ref,), _ = ray.wait(list(pending), num_returns=1)
            case = pending.pop(ref)
            try:
                files = ray.get(ref)
            except Exception as e:  # the task or its node died: a row saying so, the census goes on
                files = {_row_file(case): _failed_row(case, e)}
            for rel, data in files.items():
                path = os.path.join(out, rel)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "wb") as f:
                    f.write(data)
            yield case, finished(out, case)
    finally:
        if started:
            ray.shutdown()

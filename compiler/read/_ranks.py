"""Every rank of a distributed job in one report (docs/distributed.md): the per-rank reports
combined, and which files of a directory are ranks' reports. ``load_ranks`` (compiler/read/_trace.py)
reads them; a rank whose log or report does not load is listed (``Report.damaged_ranks``),
not the end of the others."""

from __future__ import annotations

import dataclasses
import os
import warnings

from ..model._report import Report, load
from ..parse._names import rank_of_log, rank_of_report


def combine(reports: list[Report], *, world: int = 0, damaged: tuple[str, ...] = ()) -> Report:
    """One multi-rank report of per-rank reports (sorted by rank; a report without a rank
    takes its place in the list as its rank). ``world``: the ranks found, those that did not
    load included; ``damaged``: those, one line each (``Report.damaged_ranks``)."""
    reports = [r if r.rank is not None else dataclasses.replace(r, rank=i) for i, r in enumerate(reports)]
    reports.sort(key=lambda r: r.rank)
    n = max([len(reports), world] + [r.world_size or 0 for r in reports])
    reports = [r if r.world_size else dataclasses.replace(r, world_size=n) for r in reports]
    if damaged:  # on each rank's report alike: the top one is also one of the ranks
        reports = [dataclasses.replace(r, damaged_ranks=damaged) for r in reports]
    if len(reports) == 1:
        return reports[0]
    return dataclasses.replace(reports[0], ranks=tuple(reports))


def load_each(items: list[tuple[int | None, object]], load_one) -> tuple[list[Report], tuple[str, ...]]:
    """``load_one(item)`` for each ``(rank, item)`` of ``items``: the reports that load, and
    one line for each item that does not (``rank N: <its error>``, the error naming its
    file), each also warned. Where none loads, the first one's error is raised."""
    loaded, damaged, first = [], [], None
    warned = []
    for rank, item in items:
        try:
            loaded.append(load_one(item))
        except (OSError, ValueError) as e:  # TraceFormatError, ReportFormatError
            first = first or e
            why = f"{e.filename}: {e.strerror}" if isinstance(e, OSError) and e.filename else str(e)
            damaged.append(f"rank {rank}: {why}" if rank is not None else why)
            warned.append(f"rank {rank} not loaded: {why}" if rank is not None else f"not loaded: {why}")
    if not loaded and first is not None:
        raise first
    for line in warned:
        warnings.warn(line, stacklevel=4)
    return loaded, tuple(damaged)


def report_ranks(files: list[str], strict: bool, max_expansion: float | None) -> Report:
    """The per-rank report files ``files`` (``report_files``) as one report; a file that does
    not load is listed in ``damaged_ranks`` (``strict``: raises its error)."""

    def one(f: str) -> Report:
        report, rank = load(f, max_expansion=max_expansion), rank_of_report(f)
        return report if report.rank is not None or rank is None else with_rank(report, rank)

    if strict or len(files) == 1:
        return combine([one(f) for f in files])
    loaded, damaged = load_each([(rank_of_report(f), f) for f in files], one)
    return combine(loaded, world=len(files), damaged=damaged)


def with_rank(report: Report, rank: int) -> Report:
    return report if report.rank == rank else dataclasses.replace(report, rank=rank)


def report_files(path: str) -> list[str]:
    """The per-rank report files in a directory (``*.rankN.json[.gz]``); else every report
    JSON file there, when there are no TORCH_TRACE logs beside them."""
    names = sorted(os.listdir(path))
    ranked = [os.path.join(path, n) for n in names if rank_of_report(n) is not None]
    if ranked:
        return ranked
    if any(rank_of_log(n) is not None or n.endswith(".log") for n in names):
        return []
    return [os.path.join(path, n) for n in names if n.endswith((".json", ".json.gz"))]

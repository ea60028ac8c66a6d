"""Every rank of a distributed job in one report (docs/distributed.md): the per-rank reports
combined, and which files of a directory are ranks' reports. ``load_ranks`` (compiler/read/_trace.py)
reads them."""

from __future__ import annotations

import dataclasses
import os
import re

from ..model._names import rank_of_log, rank_of_report
from ..model._report import Report


def combine(reports: list[Report]) -> Report:
    """One multi-rank report of per-rank reports (sorted by rank; a report without a rank
    takes its place in the list as its rank)."""
    reports = [r if r.rank is not None else dataclasses.replace(r, rank=i) for i, r in enumerate(reports)]
    reports.sort(key=lambda r: r.rank)
    n = max([len(reports)] + [r.world_size or 0 for r in reports])
    reports = [r if r.world_size else dataclasses.replace(r, world_size=n) for r in reports]
    if len(reports) == 1:
        return reports[0]
    return dataclasses.replace(reports[0], ranks=tuple(reports))


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
    return [os.path.join(path, n) for n in names if re.search(r"\.json(\.gz)?$", n)]

"""Every rank of a distributed job in one report: a multi-rank TORCH_TRACE directory, or the
per-rank reports that ``pt2-explorer record`` wrote under torchrun (docs/distributed.md)."""

from __future__ import annotations

import dataclasses
import os
import re

from ..model._report import Report, load

# torch names each rank's log dedicated_log_torch_trace_rank_N_<suffix>.log (or without a suffix)
_TRACE_RANK = re.compile(r"rank_(\d+)(?:_|\.|$)")
# what `pt2-explorer record --json out/run.json` writes on rank N: out/run.rankN.json
_REPORT_RANK = re.compile(r"\.rank(\d+)\.json(?:\.gz)?$")


def load_ranks(
    path: str | os.PathLike[str], *, strict: bool = False, max_expansion: float | None = None
) -> Report:
    """All ranks under ``path`` as one report.

    ``path`` is a TORCH_TRACE directory with one log per rank (each read with
    ``load_trace(path, rank=N)``), a directory of report JSON files that ``record`` wrote
    under torchrun (``run.rank0.json``, ``run.rank1.json``, …), or one file (a log, or a
    report, possibly already multi-rank). With several ranks the result is the lowest rank's
    report, whose ``ranks`` holds every rank's report (itself included), lowest first, each
    with its ``rank`` and ``world_size`` (the number of ranks found where nothing says more).
    With one rank it is that rank's report, ``ranks`` empty. ``strict`` is ``load_trace``'s;
    ``max_expansion``: as for ``compiler.load`` and ``load_trace``, for every file read.
    """
    name = os.fspath(path)
    if os.path.isdir(name):
        reports = _report_files(name)
        if reports:
            return combine([load(f, max_expansion=max_expansion) for f in reports])
        return _trace_ranks(name, strict, max_expansion)
    if re.search(r"\.json(\.gz)?$", name):
        return load(name, max_expansion=max_expansion)
    from ._trace import load_trace

    return load_trace(name, strict=strict, max_expansion=max_expansion)


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


def _trace_ranks(path: str, strict: bool, max_expansion: float | None) -> Report:
    from ._trace import load_trace

    ranks = sorted({int(m.group(1)) for n in os.listdir(path) if (m := _TRACE_RANK.search(n))})
    if len(ranks) <= 1:
        report = load_trace(path, strict=strict, max_expansion=max_expansion)
        return report if report.rank is not None or not ranks else dataclasses.replace(report, rank=ranks[0])
    loaded = [load_trace(path, rank=r, strict=strict, max_expansion=max_expansion) for r in ranks]
    return combine([_with_rank(report, r) for report, r in zip(loaded, ranks, strict=True)])


def _with_rank(report: Report, rank: int) -> Report:
    return report if report.rank == rank else dataclasses.replace(report, rank=rank)


def _report_files(path: str) -> list[str]:
    """The per-rank report files in a directory (``*.rankN.json[.gz]``); else every report
    JSON file there, when there are no TORCH_TRACE logs beside them."""
    names = sorted(os.listdir(path))
    ranked = [os.path.join(path, n) for n in names if _REPORT_RANK.search(n)]
    if ranked:
        return ranked
    if any(_TRACE_RANK.search(n) or n.endswith(".log") for n in names):
        return []
    return [os.path.join(path, n) for n in names if re.search(r"\.json(\.gz)?$", n)]

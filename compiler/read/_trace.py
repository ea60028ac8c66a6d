"""Read TORCH_TRACE logs (``TORCH_TRACE=dir python prog.py``) into a Report."""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Iterable

from ..assemble import _build
from ..assemble._events import Event
from ..model import _limits, _schema
from ..model._gcpause import gc_paused
from ..model._report import Report, load
from ..parse._names import rank_of_log
from . import _stream
from ._files import TraceFormatError, TraceTruncatedError, rank_of, trace_files
from ._logfile import read_trace_file
from ._ranks import combine, load_each, report_files, report_ranks, with_rank


def load_trace(
    path: str | os.PathLike[str],
    *,
    rank: int | None = None,
    strict: bool = False,
    max_expansion: float | None = None,
) -> Report:
    """Read one TORCH_TRACE log file (plain or gzipped), or a directory of them (one per rank).

    A directory of several ranks' logs (``dedicated_log_torch_trace_rank_N[_suffix].log``)
    gives one multi-rank report: the lowest rank's, with every rank's in ``report.ranks``
    (``compiler.load_ranks``). ``rank`` picks one rank; only that rank's files are read.

    Every log torch wrote loads: an id torch left null (``"compiled_autograd_id": null``
    in torch 2.6-era logs) is no id, and an event whose payload is not what torch wrote (it
    does not match the MD5 torch put in ``has_payload``, an announced payload is missing, its
    bytes are not UTF-8: a hand-trimmed log, a tool that rewrote it) is kept as read, listed
    in ``report.damaged`` (``<file>:<line>: event '<name>': <why>``) and counted in one
    warning; such an event the report cannot be built from is left out (said there too).
    ``strict=True`` raises ``TraceFormatError`` for those instead.

    A file that is not a TORCH_TRACE log raises ``TraceFormatError`` whose message starts
    with ``<file>:<line>:``, naming the bad line (``<file>:`` alone for an empty file, or a
    path that is not a regular file or directory: ``/dev/zero``, a FIFO). That covers
    metadata lines that are not a glog prefix and a JSON object, ids that are not
    non-negative integers (``frame_id``, ``frame_compile_id``, ``attempt``, ``rank``,
    ``compiled_autograd_id``), bytes that are not UTF-8 in a metadata line, a line longer
    than ``MAX_LINE_BYTES`` (512 MiB), and a value the report cannot be built from or that
    gives the report a value of the wrong type (the event is named); nothing else is raised
    for a bad log (a path that cannot be opened raises OSError). The report returned fits the report schema (``compiler.load``
    reads back what ``to_json`` writes of it). A log cut off at its end (the process
    was killed or crashed, or the copy is incomplete) keeps every complete event before the
    cut: the report's ``error`` names the file and line of the cut, a compile that was still
    running shows as failed ("did not finish"), and a warning is issued. ``strict=True``
    raises ``TraceTruncatedError`` (a ``TraceFormatError``) for it instead.

    A gzipped log expands at most ``max_expansion`` × its size + 16 MiB: past that it is a
    ``TraceFormatError`` naming the line the limit was reached in (a shared file is input
    from anyone: 3 MB of gzip can hold 3 GiB). ``max_expansion`` defaults to the
    environment variable PT2_EXPLORER_MAX_EXPANSION, else 64 (``inf``: no cap); ValueError
    for a value that is not a number >= 0 (docs/report-schema.md, "Limits").
    """
    ratio = _limits.ratio(max_expansion)
    path = os.fspath(path)
    files = trace_files(path)
    by_name = {f: rank_of_log(f) for f in files}
    named = {r for r in by_name.values() if r is not None}
    if rank is None and len(named) > 1:  # every rank: one multi-rank report (report.ranks)
        return load_ranks(path, strict=strict, max_expansion=ratio)
    want = rank if rank is not None else (min(named) if named else None)
    # another rank's log is not read, so its damage cannot stop this one
    files = [f for f in files if by_name[f] is None or by_name[f] == want]
    if not files:
        raise ValueError(f"{path}: no log for rank {rank}; ranks present: {sorted(named)}")
    reading = _limits.reading.set(ratio)  # for _files.open_log, which gunzips within it
    try:
        with gc_paused():
            if len(files) == 1:  # one file: read straight into the builder
                report, found, cuts, damaged = _streamed(files[0], strict)
            else:
                report, found, cuts, damaged = _in_memory(files, rank, strict)
    except _NoRank as e:
        raise ValueError(
            f"{path}: no log for rank {rank}; ranks present: {sorted(named | e.found)}"
        ) from None
    finally:
        _limits.reading.reset(reading)
    if rank is not None and found != rank:
        raise ValueError(f"{path}: no log for rank {rank}; ranks present: {sorted(named | {found} - {None})}")
    if cuts:  # the compile that was running shows as failed ("did not finish")
        report = dataclasses.replace(report, error="; ".join(cuts))
        warnings.warn(report.error, stacklevel=2)
    if damaged:
        report = dataclasses.replace(report, damaged=tuple(damaged))
        warnings.warn(_damaged_line(damaged), stacklevel=2)
    return report


_Loaded = tuple[Report, "int | None", list[str], list[str]]  # report, rank, cuts, damaged


class _NoRank(Exception):
    """The rank asked for is in none of the files read (``found``: the ranks that are)."""

    def __init__(self, found: set[int]):
        self.found = found


def _streamed(f: str, strict: bool) -> _Loaded:
    """One log file read straight into the builder (compiler/read/_stream.py); the report is
    checked against the report schema. A value the builder cannot read, or one that gives the
    report a value of the wrong type, raises TraceFormatError naming its event; a damaged
    event (``Event.damaged``) the report cannot be built from is left out and the file read
    again without it."""
    skip: frozenset[int] = frozenset()
    source = f"torch-trace:{f}"
    while True:
        p = _stream.Pass(f, strict, skip)
        try:
            report = _build_report(p, source)
        except TraceFormatError:  # the reader's: the file itself is bad
            raise
        except _BAD as e:
            bad = p.at or _culprit(list(_stream.Pass(f, strict, skip)), source)
            if not bad.damaged:
                _refuse(bad, e)
            skip |= {bad.line}
            continue
        if not p.count:
            raise TraceFormatError(f"{f}: empty file, no TORCH_TRACE events")
        report = dataclasses.replace(report, torch_version=p.torch_version)
        rank = p.rank if p.rank is not None else rank_of_log(f)
        return report, rank, [p.cut] if p.cut else [], p.damaged


def _in_memory(files: list[str], rank: int | None, strict: bool) -> _Loaded:
    """Several log files of one rank (or of none): their events gathered by rank, then the
    lowest rank's (``rank``'s where given) built."""
    per_rank: dict[int | None, tuple[str, list, list[str]]] = {}
    for f in files:
        events: list = []
        cuts: list[str] = []
        try:
            for ev in read_trace_file(f, strict=strict):
                events.append(ev)
        except TraceTruncatedError as e:
            if strict or not events:
                raise
            cuts.append(str(e))
        if not events:
            raise TraceFormatError(f"{f}: empty file, no TORCH_TRACE events")
        r = rank_of(f, events)
        if r in per_rank:
            per_rank[r][1].extend(events)
            per_rank[r][2].extend(cuts)
        else:
            per_rank[r] = (f, events, cuts)
    if rank is not None and rank not in per_rank:
        raise _NoRank({r for r in per_rank if r is not None})
    if rank in per_rank:
        chosen = rank
    else:
        chosen = sorted(per_rank, key=lambda r: (r is not None, r or 0))[0]
    src_file, events, cuts = per_rank[chosen]
    report = _build_checked(events, f"torch-trace:{src_file}")
    damaged = [_stream.damaged_line(ev) for ev in events if ev.damaged]
    return report, chosen, cuts, damaged


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

    A rank whose log or report does not load (random bytes, an empty file, a report that is
    not one) does not stop the others: every rank that loads is in the report, ``world_size``
    counts them all, and each one that does not is a line of ``damaged_ranks`` (``"rank 2:
    <its error, naming the file>"``, on every rank's report alike) and a warning (``"rank 2
    not loaded: ..."``). Where no rank loads, the lowest one's error is raised; with
    ``strict=True``, any rank's.
    """
    name = os.fspath(path)
    if os.path.isdir(name):
        files = report_files(name)
        if files:
            return report_ranks(files, strict, max_expansion)
        return _trace_ranks(name, strict, max_expansion)
    if name.endswith((".json", ".json.gz")):
        return load(name, max_expansion=max_expansion)
    return load_trace(name, strict=strict, max_expansion=max_expansion)


def _trace_ranks(path: str, strict: bool, max_expansion: float | None) -> Report:
    ranks = sorted({r for n in os.listdir(path) if (r := rank_of_log(n)) is not None})
    if len(ranks) <= 1:
        report = load_trace(path, strict=strict, max_expansion=max_expansion)
        return report if report.rank is not None or not ranks else dataclasses.replace(report, rank=ranks[0])

    def one(r: int) -> Report:
        return with_rank(load_trace(path, rank=r, strict=strict, max_expansion=max_expansion), r)

    if strict:  # every rank, or none
        return combine([one(r) for r in ranks])
    loaded, damaged = load_each([(r, r) for r in ranks], one)
    return combine(loaded, world=len(ranks), damaged=damaged)


def _damaged_line(damaged: list[str]) -> str:
    n = len(damaged)
    return (
        f"{n} event{'s' if n > 1 else ''} whose payload is not what torch wrote, kept as read and "
        f"listed in report.damaged (strict=True refuses the log); the first: {damaged[0]}"
    )


# what a value of the wrong type or range makes the builder raise (a bug of ours on a log
# torch wrote unchanged: the TraceFormatError keeps it as its __cause__), and a report that
# does not fit the report schema
_BAD = (ArithmeticError, AssertionError, AttributeError, LookupError, RecursionError, TypeError, ValueError)
_BAD += (_schema.SchemaError,)


class _Tracked(list):
    """The events, remembering the one a pass over them is at (the builder reads them once,
    in order, then works on what it gathered)."""

    at: Event | None = None

    def __iter__(self):
        for ev in super().__iter__():
            self.at = ev
            yield ev
        self.at = None


def _build_checked(events: list[Event], source: str) -> Report:
    """The report, checked against the report schema (what load_trace returns, compiler.load
    reads back). A value the builder cannot read, or one that gives the report a value of the
    wrong type (a damaged log, an edited one whose MD5s were fixed, one of older torch without
    MD5s), raises TraceFormatError naming its event."""
    while True:
        tracked = _Tracked(events)
        try:
            return _build_report(tracked, source, _stream.version_of(events))
        except _BAD as e:
            bad = tracked.at or _culprit(events, source)
            if not bad.damaged:
                _refuse(bad, e)
            # a damaged payload the report cannot be built from: left out, the rest loads
            bad.damaged += _stream.LEFT_OUT
            events = [ev for ev in events if ev is not bad]


def _refuse(bad: Event, e: Exception):
    what = "holds a value the report cannot be built from"
    if isinstance(e, _schema.SchemaError):
        what = "gives the report a value of the wrong type"
    raise TraceFormatError(
        f"{bad.file}:{bad.line}: event {bad.name!r} {what} ({type(e).__name__}: {str(e)[:200]}): "
        "the log was edited or damaged"
    ) from e


def _build_report(events: Iterable[Event], source: str, version: str = "unknown") -> Report:
    """The report (``build`` reads the events once, in order: a list, or a Pass over a file)."""
    report = _build.build(events, torch_version=version, source=source)  # type: ignore[arg-type]
    _schema.decode(Report, report)  # checked as compiler.load checks the JSON
    return report


def _culprit(events: list[Event], source: str) -> Event:
    """The event whose arrival makes building fail, for a failure after the builder's pass
    over the events: the shortest failing prefix, by bisection (on this error path only)."""
    lo, hi = 0, len(events)  # events[:lo] builds, events[:hi] does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            _build_report(events[:mid], source)
            lo = mid
        except _BAD:
            hi = mid
    return events[hi - 1]


__all__ = ["load_trace", "TraceFormatError"]

"""The census table: one row per model and mode, made from that case's report (torch-free),
and its file form (``census.json``: docs/census.md), read back with one clear line for input
that does not fit.

Status, in the vocabulary of the public graph-break corpus: ``one graph``, ``graph break``,
``recompiles``, ``error`` (the error's first line beside it); and ``no graph`` where nothing
was compiled, ``several graphs`` where more than one graph came without a break or a
recompile (several compiled functions). A row with breaks and recompiles says ``graph break``
(its recompiles are still counted).
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field

from compiler._viewer import WONT_CONVERT, fold_frame_warnings, frame_warning
from compiler.analysis import program_time

from ._files import MAX_NUMBER, as_text, bad, check_settings, check_values, read_json
from ._paths import resolve, unsafe

FORMAT = "pt2-explorer-census"
BARELY = 1.05  # a speedup under this is "barely faster" (explorer/census/_speed.py)
VERSION = 1
STATUSES = ("one graph", "graph break", "recompiles", "error", "no graph", "several graphs")
GB_SITE = "https://meta-pytorch.github.io/compile-graph-break-site/gb/{}.html"


@dataclass(frozen=True)
class BreakSite:
    type: str  # torch's graph-break type, e.g. "Data-dependent branching"
    gb_id: str | None = None  # the graph-break registry's id, e.g. "GB0170"
    file: str | None = None
    line: int | None = None
    compiles: tuple[str, ...] = ()  # every compile torch logged this site in

    @property
    def link(self) -> str | None:
        """The registry's page of this break type."""
        return GB_SITE.format(self.gb_id.lower()) if self.gb_id else None

    @property
    def where(self) -> str:
        return f"{os.path.basename(self.file)}:{self.line}" if self.file else "?"


@dataclass(frozen=True)
class RecompileFact:
    compile_id: str
    reason: str  # torch's first reason, its first line
    guard: str | None = None  # the failing guard in the failed entry's guard tree


@dataclass(frozen=True)
class CensusRow:
    model: str
    mode: str
    status: str
    source: str = ""
    family: str | None = None
    error: str | None = None  # the error's first line (timeouts and crashes say so)
    graphs: int = 0  # graphs Dynamo captured (torch's dynamo_output_graph)
    compiles: int = 0
    breaks: tuple[BreakSite, ...] = ()
    recompiles: tuple[RecompileFact, ...] = ()
    compile_time_s: float | None = None
    # that time placed under its heads (compiler.analysis.program_time): head -> seconds, the
    # heads with any; `census diff` names the head that moved from them (a row written before
    # they were kept: from its report, where the census keeps it)
    compile_heads: dict[str, float] | None = field(default=None, hash=False)
    kernels: int = 0
    speedup: float | None = None  # eager / compiled medians, with --bench
    precision: str = "fp32"  # or amp (bf16 autocast)
    batch: int | None = None  # the batch size the case ran with (its models module's CENSUS_BATCH)
    # --bench: compiler.benchmark's medians and their spread (IQR), ms per call (eval call or
    # training step), peak memory (GPU, MiB), and the calls after which the compile pays off
    eager_ms: float | None = None
    eager_iqr_ms: float | None = None
    compiled_ms: float | None = None
    compiled_iqr_ms: float | None = None
    # CPU: how long the median call of each arm waited for a core (the benchmark's waited_ms);
    # where it is a large part of the call, its time is the machine's load (census diff)
    eager_waited_ms: float | None = None
    compiled_waited_ms: float | None = None
    peak_mb_eager: float | None = None
    peak_mb_compiled: float | None = None
    break_even_calls: float | None = None
    bench_error: str | None = None  # the compiled arm raised while timed
    # where compiled is slower or barely faster: the verdict's first cause (compiler.analysis.verdict)
    cause_key: str | None = None  # breaks | recompiles | launch | library | generated | …
    cause: str | None = None  # its title
    # its group among the slower rows, in a few words ("launch-bound", "fp32 GEMMs without TF32")
    cause_group: str | None = None
    verdict: str | None = None  # the verdict's headline
    wall_s: float | None = None
    peak_rss_mb: float | None = None
    torch_version: str | None = None
    report: str | None = None  # the case's report, relative to the census file
    trace: str | None = None  # torch's own TORCH_TRACE directory (--keep-trace)

    @property
    def key(self) -> str:
        return f"{self.model}:{self.mode}" + (f":{self.precision}" if self.precision != "fp32" else "")

    @property
    def slower(self) -> bool:
        """Compiled ran slower than eager, or barely faster (under ``BARELY``)."""
        return self.speedup is not None and self.speedup < BARELY

    @property
    def break_types(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(b.type for b in self.breaks))


def status_of(error: str | None, graphs: int, breaks: int, recompiles: int) -> str:
    if error:
        return "error"
    if breaks:
        return "graph break"
    if recompiles:
        return "recompiles"
    return {0: "no graph", 1: "one graph"}.get(graphs, "several graphs")


def row_from_report(case, rep, result: dict | None, error: str | None = None, **paths) -> CensusRow:
    """The row of ``case`` from its report ``rep`` (None where nothing was recorded) and its
    process's result (None where it died); ``error`` overrides the result's."""
    result = result or {}
    error = error or result.get("error")
    breaks = tuple(
        BreakSite(b.type, b.gb_id, b.filename, b.line, tuple(b.compile_ids or (b.compile_id,)))
        for b in (rep.graph_breaks if rep else ())
    )
    recompiles = tuple(
        RecompileFact(
            r.compile_id, (r.reasons[0].splitlines() or [""])[0] if r.reasons else "", r.failing_guard
        )
        for r in (rep.recompiles if rep else ())
    )
    compiles = rep.compiles if rep else ()
    graphs = sum(1 for c in compiles if c.stages.capture is not None and c.stages.capture.graph is not None)
    times = [c.compile_time_s for c in compiles if c.compile_time_s is not None]
    return CensusRow(
        model=case.model,
        mode=case.mode,
        status=status_of(error, graphs, len(breaks), len(recompiles)),
        source=case.source,
        family=case.family,
        error=error,
        graphs=graphs,
        compiles=len(compiles),
        breaks=breaks,
        recompiles=recompiles,
        compile_time_s=_number(round(sum(times), 3)) if times else None,
        compile_heads=heads_of(rep) if rep else None,
        kernels=len(rep.kernels) if rep else 0,
        speedup=_number(result.get("speedup")),
        precision=case.precision,
        batch=case.batch,
        **{k: _number(result.get(k)) for k in _SPEED},
        **{k: _text(result.get(k)) for k in ("bench_error", "cause_key", "cause", "cause_group", "verdict")},
        wall_s=_number(result.get("wall_s")),
        peak_rss_mb=_number(result.get("peak_rss_mb")),
        torch_version=rep.torch_version if rep else None,
        **paths,
    )


def heads_of(rep) -> dict[str, float] | None:
    """The report's compile time under its heads, each head's seconds (those with any; None
    where no compile has torch's timed phases)."""
    p = program_time(rep)
    heads = {k: round(v, 3) for k, v in p.heads.items() if round(v, 3) > 0}
    return heads if p.compiles and heads else None


_SPEED = (
    "eager_ms",
    "eager_iqr_ms",
    "compiled_ms",
    "compiled_iqr_ms",
    "eager_waited_ms",
    "compiled_waited_ms",
    "peak_mb_eager",
    "peak_mb_compiled",
    "break_even_calls",
)


def _text(v) -> str | None:
    return v if isinstance(v, str) else None


def _number(v) -> float | None:
    """``v`` where a census file may hold it (a number, >= 0, finite, at most MAX_NUMBER)."""
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= MAX_NUMBER
    return v if ok else None


@dataclass(frozen=True)
class Census:
    rows: tuple[CensusRow, ...]
    settings: dict = field(default_factory=dict)
    torch_version: str | None = None
    created: str | None = None
    title: str | None = None
    path: str | None = None  # where it was read from (rows' report paths are relative to it)
    # what reading it left out, one line each (a row's path that leads outside the census)
    problems: tuple[str, ...] = ()

    def row(self, key: str) -> CensusRow:
        return next(r for r in self.rows if r.key == key)

    @property
    def base(self) -> str:
        """The census directory: rows' ``report`` and ``trace`` are relative to it."""
        return os.path.dirname(os.path.abspath(self.path or "."))

    def report_path(self, row: CensusRow) -> str | None:
        """The row's report, where it is inside the census and reached through no link."""
        return resolve(self.base, row.report) if row.report is not None else None

    def to_dict(self) -> dict:
        """The file form (a lone surrogate, which no file can hold, written as U+FFFD)."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "title": as_text(self.title),
            "torch_version": self.torch_version,
            "created": self.created,
            "settings": as_text(self.settings),
            "rows": [plain_row(r) for r in self.rows],
        }

    def save(self, path: str) -> str:
        from compiler._viewer import write_file

        return write_file(path, json.dumps(self.to_dict(), indent=1) + "\n")


def plain_row(row: CensusRow) -> dict:
    """The row's file form: its fields that are not their defaults, as text a file can hold
    (an error message or a path given as bytes that are not UTF-8 holds lone surrogates)."""
    d = as_text(dataclasses.asdict(row))
    keep = ("model", "mode", "status", "precision")
    return {k: v for k, v in d.items() if v not in (None, (), [], 0) or k in keep}


def load_census(path: str | os.PathLike[str]) -> Census:
    """Read ``census.json`` (or the census directory holding it); no torch needed."""
    path = os.fspath(path)
    if os.path.isdir(path):
        path = os.path.join(path, "census.json")
    return census_from_dict(read_json(path), path)


def census_from_dict(data, path: str = "<census>") -> Census:
    """The census of ``data`` (a census file's JSON value); CensusFormatError naming
    ``path`` and the JSON path of the first value that does not fit."""
    check_values(data, path)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise bad(path, "$.format", f"expected {FORMAT!r}: not a census file")
    if not isinstance(data.get("version"), int) or data["version"] > VERSION:
        raise bad(path, "$.version", f"expected a version <= {VERSION}")
    rows = data.get("rows")
    if not isinstance(rows, list):
        raise bad(path, "$.rows", "expected a list")
    out = [_folded(_build(CensusRow, r, f"$.rows[{i}]", path)) for i, r in enumerate(rows)]
    problems = []
    for i, r in enumerate(out):
        for k in ("report", "trace"):
            why = unsafe(getattr(r, k)) if getattr(r, k) is not None else None
            if why:
                shown = repr(getattr(r, k))
                shown = shown if len(shown) <= 120 else shown[:117] + "..."
                problems.append(f"{path}: $.rows[{i}].{k}: {why} ({shown}): not read or copied")
                out[i] = r = dataclasses.replace(r, **{k: None})
    settings = data.get("settings")
    settings = {} if settings is None else check_settings(settings, path, "$.settings")
    meta = {k: data.get(k) for k in ("torch_version", "created", "title")}
    for k, v in meta.items():
        if v is not None and not isinstance(v, str):
            raise bad(path, f"$.{k}", "expected a string")
    return Census(tuple(out), settings, path=path, problems=tuple(problems), **meta)


def _folded(row: CensusRow) -> CensusRow:
    """A row written before torch's WON'T CONVERT warnings were folded into their compile's
    break: each told again by a break of its compiles is left out; one alone has the one
    type, at its frame's file and line."""
    if not any(frame_warning(b.type) for b in row.breaks):
        return row
    kept = fold_frame_warnings(row.breaks, lambda b: b.type, lambda b: b.compiles)
    alone = [(b, frame_warning(b.type)) for b in kept]
    breaks = tuple(
        dataclasses.replace(b, type=WONT_CONVERT, file=b.file or w[1], line=b.line or w[2]) if w else b
        for b, w in alone
    )
    return dataclasses.replace(row, breaks=breaks)


_NESTED = {"breaks": BreakSite, "recompiles": RecompileFact}
_TYPES = {"str": str, "int": int, "float": (int, float), "tuple[str, ...]": list, "dict[str, float]": dict}


def _build(cls, d, where: str, path: str):
    """``cls`` from the dict ``d``, checking each field's type (missing ones take defaults;
    numbers are counts, seconds, megabytes or ratios: >= 0)."""
    if not isinstance(d, dict):
        raise bad(path, where, "expected an object")
    kwargs = {}
    for f in dataclasses.fields(cls):
        at = f"{where}.{f.name}"
        if f.name not in d:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise bad(path, at, "missing")
            continue
        v = d[f.name]
        if f.name in _NESTED and cls is CensusRow:
            if not isinstance(v, list):
                raise bad(path, at, "expected a list")
            v = tuple(_build(_NESTED[f.name], x, f"{at}[{i}]", path) for i, x in enumerate(v))
        elif v is not None or "None" not in f.type:
            kind = _TYPES[f.type.replace(" | None", "")]
            if not isinstance(v, kind) or isinstance(v, bool):
                raise bad(path, at, f"expected {f.type.replace(' | None', '')}, got {type(v).__name__}")
            if kind is list:
                if not all(isinstance(x, str) for x in v):
                    raise bad(path, at, "expected a list of strings")
                v = tuple(v)
            elif kind is dict:
                if not all(
                    isinstance(x, (int, float)) and not isinstance(x, bool) and x >= 0 for x in v.values()
                ):
                    raise bad(path, at, "expected numbers >= 0 by name")
                v = dict(v)
            elif kind is not str and v < 0:
                raise bad(path, at, f"expected a number >= 0, got {v!r}")
        kwargs[f.name] = v
    return cls(**kwargs)

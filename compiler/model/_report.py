"""The report model: one frozen record per thing torch.compile did, JSON round-trip.

Every type here is a frozen dataclass whose fields are JSON-friendly (str, int, float,
bool, None, tuples, str-keyed dicts, other report types).  ``to_dict`` / ``from_dict``
walk the type hints, so adding a field needs no serialisation code.  The format is
documented in docs/report-schema.md; bump SCHEMA_VERSION when a field changes meaning.
"""

from __future__ import annotations

import dataclasses
import functools
import gzip
import json
import os
import stat
import warnings
import zlib
from dataclasses import dataclass, field
from typing import Any

# the benchmark records live in _benchtypes; Report.benchmarks needs Benchmark here (type hints)
from . import _limits, _schema, _surrogates
from ._atomic import write_file
from ._benchtypes import Accuracy, BenchConfig, Benchmark, KernelTime, Timing  # noqa: F401
from ._frozen import FrozenBut
from ._numericstypes import Numerics  # noqa: F401 - Report.numerics (type hints)
from ._pipelinetypes import CompiledAutograd, ExportFact, ExportRun, PhaseName, PhaseSpan  # noqa: F401
from ._speedtypes import (
    CacheLookup,
    CompileConfig,
    CudaGraphs,
    Regenerated,
)  # noqa: F401
from ._stagetypes import (  # noqa: F401 - the report's types, one import for all modules
    Autograd,
    Autotune,
    AutotuneChoice,
    Capture,
    Codegen,
    Decompose,
    Fuse,
    Graph,
    Kernel,
    KernelNodes,
    Node,
    OutputCode,
    RoleGraph,
    SavedTensor,
    SideEffect,
    Specialization,
    StackFrame,
    Stages,
    Symbol,
)
from ._upgrades import upgraded

# 4: a graph's nodes as what differs from the nodes its code holds; 3: nodes as rows in the file form; 2: the file form (compiler/model/_compact.py); 1: the full
# form; each still read
SCHEMA_VERSION = 4
READABLE_VERSIONS = (1, 2, 3, 4)
STAGES = ("capture", "autograd", "decompose", "fuse", "codegen")


@dataclass(frozen=True)
class Compile:
    id: str  # "frame/compile", e.g. "0/1"
    frame: int
    name: str | None
    filename: str | None
    line: int | None
    status: str  # ok | failed
    error: str | None = None
    failed_stage: str | None = None
    stages: Stages = field(default_factory=Stages)
    metrics: dict[str, Any] = field(default_factory=dict)  # compilation_metrics, trimmed
    phase_times_s: dict[str, float] = field(default_factory=dict)  # torch's timed phases
    stage_times_s: dict[str, float] = field(default_factory=dict)
    compile_time_s: float | None = None
    cache_entry: bool = True  # did it install code (False for a failed/limit-hit compile)
    traceback: str | None = None  # torch's traceback of a failed compile (dynamo_error)
    cache: dict[str, str] = field(
        default_factory=dict
    )  # {"fx_graph": "hit"|"miss"|"bypass", "aotautograd": ...}
    # Compiled Autograd's captured backward, where this compile is Dynamo compiling it ("!0/3/0")
    compiled_autograd: CompiledAutograd | None = None
    phases: tuple[PhaseSpan, ...] = ()  # torch's timed phases in time order: where compile time went
    phase_names: tuple[PhaseName, ...] = ()  # what its phases' names say (attempt, hook, pass), by name
    config: CompileConfig | None = None  # the mode and options it was compiled with
    caches: tuple[CacheLookup, ...] = ()  # each compile cache's answer, with key and reason
    cudagraphs: CudaGraphs | None = None  # CUDA graphs: used or skipped and why, recordings
    regenerated: Regenerated | None = None  # compiler.fill(report): what a cold recompile filled in


@dataclass(frozen=True)
class Frame:
    id: int
    name: str | None
    filename: str | None
    line: int | None
    compiles: int  # how many cache entries torch compiled for this frame
    recompile_limit_hit: bool = False
    called_from: str | None = None  # "file.py:12": the user line whose call compiled it


@dataclass(frozen=True)
class GraphBreak:
    compile_id: str  # first compile that broke here
    type: str  # e.g. "Data-dependent branching"
    reason: str
    filename: str | None
    line: int | None
    explanation: str | None = None
    hints: tuple[str, ...] = ()
    user_stack: tuple[StackFrame, ...] = ()
    count: int = 1
    compile_ids: tuple[str, ...] = ()  # every compile torch logged this site in
    gb_id: str | None = None  # torch's graph-break id, e.g. "GB0170"
    # torch asked for this break in its own code (a ``graph_break()`` call in the optimizer's
    # ``_use_grad``): the site is ``torch_site``, inside torch, reached from ``filename:line``
    torch_own: bool = False

    @property
    def torch_site(self) -> StackFrame | None:
        """torch's own line of a break torch asked for (``torch/optim/optimizer.py:79``), the
        innermost frame of its stack; None for any other break."""
        return self.user_stack[-1] if self.torch_own and self.user_stack else None

    @property
    def user_frame(self) -> StackFrame | None:
        """The innermost frame of the program's own code (``my_train.py:11``) where the site
        itself is in a library (``modeling_utils.py:4769``); None when no such frame is known."""
        return next((f for f in reversed(self.user_stack) if f.kind == "user"), None)

    @property
    def shown_stack(self) -> tuple[StackFrame, ...]:
        """From the program's outermost own frame to the break, torch's frames left out: the
        user's calls and the library frames between them and the break."""
        frames = [f for f in self.user_stack if f.kind != "torch"]
        first = next((i for i, f in enumerate(frames) if f.kind == "user"), 0)
        return tuple(frames[first:])


@dataclass(frozen=True)
class GuardFailure:
    """One cache entry's failed guard, as a recompile reason names it."""

    entry: str | None  # the compile id whose guards failed, e.g. "0/1"
    reason: str  # torch's reason text
    guard: str | None = None  # the guard line in that entry's guard tree
    user_stack: tuple[StackFrame, ...] = ()  # the user code the guard came from
    short_reason: str | None = None  # the reason's first line without the entry ("0/0: ")


@dataclass(frozen=True)
class Recompile:
    compile_id: str
    reasons: tuple[str, ...]
    failed_entry: str | None = None  # the compile id whose guards failed, e.g. "0/0"
    failing_guard: str | None = None  # the guard line in that entry's guard tree
    entry_guards: str | None = None  # the guard tree of that entry
    failures: tuple[GuardFailure, ...] = ()  # one per reason: every entry tried, newest first
    dynamic: tuple[str, ...] = ()  # symbols this recompile compiled as dynamic ("s53")
    short_reasons: tuple[str, ...] = ()  # each reason's first line, torch's padding one gap


@dataclass(frozen=True)
class RawEvent:
    """An event whose name we do not map; kept so nothing torch said is lost."""

    compile_id: str | None
    name: str
    metadata: dict[str, Any] = field(default_factory=dict)
    payload: str | None = None


@dataclass(eq=True)
class Report(FrozenBut):
    # frozen but for benchmarks and numerics (compiler.benchmark(report) and compiler.numerics add to
    # them) and _subject, what it remembers of the call it recorded (model/_subject.py): an
    # attribute, not a field, never saved
    OPEN = frozenset({"benchmarks", "numerics", "_subject"})
    torch_version: str
    device: str  # "cpu", "cuda", or "cpu+cuda"
    frames: tuple[Frame, ...] = ()
    compiles: tuple[Compile, ...] = ()
    graph_breaks: tuple[GraphBreak, ...] = ()
    recompiles: tuple[Recompile, ...] = ()
    kernels: tuple[Kernel, ...] = ()
    unknown_events: tuple[RawEvent, ...] = ()
    error: str | None = None  # exception that ended the recorded block, if any
    source: str = "in-process"  # or "torch-trace:<path>"
    schema_version: int = SCHEMA_VERSION
    benchmarks: tuple[Benchmark, ...] = ()  # openly mutable: compiler.benchmark(report) adds to it
    # where compiled diverges from eager (compiler.numerics(..., report=report) adds to it)
    numerics: tuple[Numerics, ...] = ()
    # torch.distributed (docs/distributed.md): the rank this report is of, the job's world size
    rank: int | None = None
    world_size: int | None = None
    ranks: tuple[Report, ...] = ()  # a multi-rank report: one report per rank, lowest first
    # DDP's split graphs (optimize_ddp_split_graph / _child) and Inductor's collective
    # schedules (artifact:inductor_collective_schedule), torch's events kept whole
    distributed: tuple[RawEvent, ...] = ()
    # torch.export runs: what each assumed about the inputs, draft_export's failures (compiler/assemble/_draft.py)
    exports: tuple[ExportRun, ...] = ()
    # events of a TORCH_TRACE log whose payload is not what torch wrote (an MD5 that does not
    # match, bytes that are not UTF-8), kept as read: "<file>:<line>: event '<name>': <why>"
    damaged: tuple[str, ...] = ()
    # of a multi-rank job (compiler.load_ranks): the ranks whose log or report did not load,
    # one line each, "rank <N>: <file>[:<line>]: <why>" (on every rank's report alike)
    damaged_ranks: tuple[str, ...] = ()
    # the recording's keyed hash of the compiles' runnables (compiler/model/_trust.py): what
    # ``compiler.fill`` checks before it runs one
    fill_mark: str | None = None

    # ---- convenience -------------------------------------------------------
    def compile(self, compile_id: str) -> Compile:
        for c in self.compiles:
            if c.id == compile_id:
                return c
        raise KeyError(f"no compile {compile_id!r}; have {[c.id for c in self.compiles]}")

    def kernels_of(self, compile_id: str) -> tuple[Kernel, ...]:
        return self._kernels_by_compile.get(compile_id, ())

    @functools.cached_property
    def _kernels_by_compile(self) -> dict[str | None, tuple[Kernel, ...]]:
        """The kernels of each compile, in the report's order (made once: views ask per compile)."""
        by: dict[str | None, list[Kernel]] = {}
        for k in self.kernels:
            by.setdefault(k.compile_id, []).append(k)
        return {cid: tuple(ks) for cid, ks in by.items()}

    @property
    def compile_time_s(self) -> float:
        return sum(c.compile_time_s or 0.0 for c in self.compiles)

    # ---- JSON ---------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return _to_jsonable(self)

    def to_json(self, path: str | os.PathLike[str] | None = None, *, indent: int | None = None) -> str:
        """The report's file form as JSON text (each text once, defaults left out:
        compiler/model/_compact.py; ``compiler.load`` reads it back whole); also written to ``path``
        when given, gzipped where ``path`` ends in ``.gz``, through a temporary file beside it
        (compiler/model/_atomic.py): a failed write raises OSError and leaves ``path`` untouched."""
        from . import _compact
        from ._gcpause import gc_paused

        sep = (",", ":") if indent is None else None
        with gc_paused():
            text = json.dumps(_compact.encode(self), indent=indent, separators=sep, ensure_ascii=False)
            if path is not None:  # whole or not at all: a failed write leaves the old file as it was
                gz = os.fspath(path).endswith(".gz")
                # a lone surrogate (a file name Python read with surrogateescape) is no UTF-8:
                # written as JSON's escape of it, which compiler.load reads as U+FFFD
                data = text.encode("utf-8", "backslashreplace")
                write_file(path, gzip.compress(data, compresslevel=6, mtime=0) if gz else data)
        return text

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, max_expansion: float | None = None) -> Report:
        """The report from its JSON form (``to_dict``, or the file form ``to_json`` writes),
        checked against the schema the dataclasses' type hints make (compiler/model/_schema.py): a
        value of the wrong type, a missing required key or an unknown ``schema_version``
        raises ReportFormatError naming the JSON path
        (``$.compiles[3].stages.capture.guard_count``). Unknown keys are ignored. Reports of
        schema_version 1 (the full form) load as they always did. Nothing may nest deeper
        than 100 levels, and the file form's references expand at most ``max_expansion`` ×
        the size of its ``strings`` and ``texts`` tables + 16 MiB (``compiler.load``: ×
        the size of the file's JSON; docs/report-schema.md, "Limits")."""
        return from_json(data, None, _limits.ratio(max_expansion), cls)


def from_json(
    data: Any, budget: _limits.Budget | None, ratio: float, cls: type[Report] | None = None
) -> Report:
    """``Report.from_dict``, its references built within what is left of the file's
    ``budget`` (None: a budget on the size of the tables, under ``ratio``)."""
    from . import _resolve

    version = data.get("schema_version") if isinstance(data, dict) else None
    if type(version) is not int or version not in READABLE_VERSIONS:
        raise ReportFormatError(
            f"report schema_version {version!r} is not supported (this reads {list(READABLE_VERSIONS)})"
        )
    if budget is None:
        budget = _limits.Budget(_tables_size(data), ratio)
    try:
        data = {**_resolve.decode(data, budget), "schema_version": SCHEMA_VERSION}
        data = upgraded(data)
        return _schema.decode(cls or Report, data)
    except _resolve.FileFormError as e:
        raise ReportFormatError(str(e)) from None
    except _schema.SchemaError as e:
        raise ReportFormatError(str(e)) from None


def _tables_size(data: dict) -> int:
    """Characters of the file form's ``strings`` plus pieces of its ``texts`` (a dict has no
    file size; these are most of it)."""
    strings, texts = data.get("strings"), data.get("texts")
    n = sum(len(s) for s in strings if isinstance(s, str)) if isinstance(strings, list) else 0
    return n + (sum(len(t) for t in texts if isinstance(t, list)) if isinstance(texts, list) else 0)


class ReportFormatError(ValueError):
    """A report JSON file (or dict) that does not fit the report schema. The message names
    the file and the JSON path of the first problem:
    ``r.json: $.compiles[3].stages.capture.guard_count: expected int or null, got "x"``."""


def load(path: str | os.PathLike[str], *, max_expansion: float | None = None) -> Report:
    """Read a report written by ``Report.to_json(path)`` (plain or gzipped JSON).

    Raises ReportFormatError (a ValueError) naming the file, and the JSON path of the first
    value that does not fit the schema (docs/report-schema.md); OSError where the file
    cannot be read. A shared file is input from anyone, so reading is bounded: gzip data
    expands at most ``max_expansion`` × the file's size + 16 MiB, the file form's
    references at most ``max_expansion`` × the size of its JSON + 16 MiB, nothing nests
    deeper than 100 levels; past that the file is refused with a ReportFormatError.
    ``max_expansion`` defaults to the environment variable PT2_EXPLORER_MAX_EXPANSION, else
    64 (``inf``: no cap); ValueError for a value that is not a number >= 0."""
    ratio = _limits.ratio(max_expansion)
    name = os.fspath(path)
    data, budget = read_json(name, ratio)
    if not isinstance(data, dict) or "schema_version" not in data:
        raise ReportFormatError(f"{name}: not a PT2 Explorer report (no schema_version)")
    try:
        return from_json(data, budget, ratio)
    except ReportFormatError as e:
        raise ReportFormatError(f"{name}: {e}") from None


def read_json(name: str, ratio: float) -> tuple[Any, _limits.Budget]:
    """The file's JSON value (gunzipped within the cap) and its budget (``_limits.Budget``:
    on its size on disk, what the gzip data expanded to spent)."""
    if not stat.S_ISREG(os.stat(name).st_mode) and not os.path.isdir(name):  # a directory: open says so
        raise ReportFormatError(f"{name}: not a regular file (a device, FIFO or socket is not read)")
    with open(name, "rb") as f:
        raw = f.read()
    budget = _limits.Budget(len(raw), ratio)
    try:
        if raw[:2] == b"\x1f\x8b":
            raw = budget.unzip(raw)
        data = json.loads(raw.decode("utf-8"))
        if _surrogates.may_hold(raw):  # "\ud800": JSON, but no text; read as U+FFFD, said once
            data, first, count = _surrogates.replaced(data)
            if count:
                warnings.warn(f"{name}: {_surrogates.said(count, first)}", stacklevel=3)
        return data, budget
    except _limits.Expanded as e:
        raise ReportFormatError(f"{name}: {e}") from None
    except (OSError, EOFError, zlib.error) as e:
        raise ReportFormatError(f"{name}: corrupt gzip data: {e}") from None
    except UnicodeDecodeError as e:
        raise ReportFormatError(
            f"{name}: not a report JSON file: byte 0x{raw[e.start]:02x} at offset {e.start} is not UTF-8"
        ) from None
    except json.JSONDecodeError as e:
        raise ReportFormatError(f"{name}: not a report JSON file: {e}") from None
    except (ValueError, RecursionError) as e:  # an int of 5000 digits, nesting 100k deep
        raise ReportFormatError(f"{name}: not a report JSON file: {str(e) or type(e).__name__}") from None


# ---- generic (de)serialisation over type hints -----------------------------------


def _to_jsonable(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj):
        return {f.name: _to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [_to_jsonable(x) for x in obj]
    if isinstance(obj, dict):
        return {str(k): _to_jsonable(v) for k, v in obj.items()}
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    return repr(obj)

"""Every field of the report model is shown by some view.

Two recorded reports (a CPU TORCH_TRACE log with a graph break and recompiles, an H100
recording with Triton kernels) are marked: every field reachable from ``compiler.Report`` gets
a value of its own — text a marker (``zq12q``), numbers a marker number (``112000``) — and
where a report holds no such record (no benchmark, no export, no failed compile…) one is made
and marked. Every registered view is rendered as text (for every compile) and the static
page is rendered with every tab; each marker must appear somewhere. A field reached through
another record (``Decompose.pre_grad_after``) counts as shown when something of it is.

Left as recorded: the fields other records refer to by value or that views branch on (ids,
statuses, roles, node names): each must still show its value. Set to a value whose rendering
is known: flags and numbers shown converted (bytes as MiB, a phase's depth as its indent).
"""

from __future__ import annotations

import dataclasses
import sys
import typing
from pathlib import Path

import pytest

import compiler
from explorer.pages._page import page_html
from explorer.views._registry import VIEWS, Subject

FIXTURES = Path(__file__).parent / "fixtures"

# recorded values kept: other records point at them, or views branch on them
KEYS = {
    "Compile.id",
    "Compile.frame",
    "Compile.status",
    "Frame.id",
    "GraphBreak.compile_id",
    "GraphBreak.compile_ids",
    "Recompile.compile_id",
    "Recompile.failed_entry",
    "Kernel.compile_id",
    "Kernel.role",
    "Node.name",
    "Node.op",
    "Node.args",
    "Node.grad_of",  # a node's name: the graph view's payload gives its index
    "RoleGraph.role",
    "OutputCode.role",
    "CompiledAutograd.id",
    "KernelTime.compile_id",
    "ExportRun.compile_id",
    "RawEvent.name",
}

# fields shown converted: the value set, and the text it must show as
CONVERTED = {
    "Frame.recompile_limit_hit": (True, "RECOMPILE LIMIT HIT"),
    "Compile.cache_entry": (False, "none: later calls do not run this compile's code"),
    "Node.module_inferred": (True, '"i":1'),  # the graph view's payload: the module is inferred
    "Node.backward": (True, '"b":1'),  # the graph view's payload: a backward node
    "ExportRun.draft": (True, "(draft_export)"),
    "Benchmark.interrupted": (True, "interrupted: the samples taken before Ctrl-C"),
    "Accuracy.ok": (False, "FINDING: outputs differ beyond tolerance"),
    "Accuracy.random": (True, "as expected here: the function draws random numbers"),
    "BenchConfig.dynamic": (True, "dynamic=True"),
    "PhaseSpan.depth": (7, "padding-left:7em"),
    "SavedTensor.bytes": (3 * 2**20, "3.0 MiB"),
    "Benchmark.peak_memory_eager": (5 * 2**20, "eager 5.0 MiB"),
    "Benchmark.peak_memory_compiled": (6 * 2**20, "compiled 6.0 MiB"),
    "Benchmark.allow_tf32": (True, "allow_tf32=True"),
    "TritonBinary.chosen": (True, "▶ "),
    "Regenerated.same_code": (False, "code not the cached one"),
    # in turn: a break of the user's, with its hints, then one torch asks for, said as torch's own
    # (its hint not the user's to act on: not shown)
    "GraphBreak.torch_own": ([False, True], "torch's own break (inside "),
    "TensorError.ok": (False, "no: crosses the tolerance"),
    "NumericsTrial.ok": (False, "no: still differs"),
    "StepError.ok": (False, "no: the step crosses it"),
}

# CONVERTED values given as a list are taken in turn, record by record, across the marked reports
TURNS: dict[str, int] = {}

# internal: no view shows them, on purpose
INTERNAL = {
    "Report.schema_version": "the file form's version, for the reader (compiler.load)",
    "GuardFailure.reason": "torch's whole reason; the views show its short form (GuardFailure.short_reason)",
    "Report.fill_mark": "the keyed hash a fill checks before it runs the report's code (compiler/model/_trust.py)",
    "Compile.phase_names": "what the phases' names say, read by the views in place of the names (PhaseSpan.name shows)",
    "PhaseName.name": "a phase's name, shown as PhaseSpan.name",
    "PhaseName.attempt": "read by the views to label a phase (the phase's name shows it)",
    "PhaseName.hook": "read by the views to label a phase (the phase's name shows it)",
    "PhaseName.pass_group": "read by the views to label a phase (the phase's name shows it)",
    "PhaseName.pass_name": "read by the views to label a phase (the phase's name shows it)",
    "TritonBinary.ir_bounds": "read by the views to cut each IR level to its function (the IR block's title "
    "says which lines)",
}


def _hints(cls) -> dict[str, typing.Any]:
    return typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))


def _record_type(tp):
    """The report type inside ``tp`` (``Graph | None``, ``tuple[Node, ...]``), or None."""
    if dataclasses.is_dataclass(tp):
        return tp
    return next((d for a in typing.get_args(tp) if (d := _record_type(a)) is not None), None)


def _base(tp):
    """(kind, element type): ("tuple", str), ("dict", float), ("scalar", int), …"""
    origin = typing.get_origin(tp)
    if origin is tuple:
        return "tuple", typing.get_args(tp)[0]
    if origin is dict:
        return "dict", typing.get_args(tp)[1]
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    return _base(args[0]) if origin is not None and args else ("scalar", tp)


def _all_fields() -> dict[str, typing.Any]:
    """``Class.field`` -> type hint, for every field reachable from ``compiler.Report``."""
    out, todo, seen = {}, [compiler.Report], set()
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.add(cls)
        hints = _hints(cls)
        for f in dataclasses.fields(cls):
            out[f"{cls.__name__}.{f.name}"] = hints[f.name]
            if (sub := _record_type(hints[f.name])) is not None:
                todo.append(sub)
    return out


class Marker:
    """Marks a report: each field gets a marker of its own for each path of record fields it
    is reached through (``Report>Report.compiles>Compile.stages>…``)."""

    def __init__(self, synth: dict[str, object]):
        self.synth = synth  # values for the fields of made-up records that others refer to
        self.text: dict[tuple[str, str], str] = {}
        self.number: dict[tuple[str, str], int] = {}
        self.kept: dict[str, set[str]] = {}

    def _text(self, path: str, key: str) -> str:
        return self.text.setdefault((path, key), f"zq{len(self.text) + 1}q")

    def _number(self, path: str, key: str) -> int:
        n = self.number.setdefault((path, key), 101 + len(self.number))
        assert n < 1000, "too many numeric fields for three-digit markers"
        return n * 1000

    def value(self, path: str, key: str, tp, v):
        kind, t = _base(tp)
        if (sub := _record_type(tp)) is not None:
            inner = f"{path}>{key}"
            if kind == "tuple":
                return tuple(self.mark(x, inner) for x in (v or (self.make(sub),)))
            return self.mark(v if v is not None else self.make(sub), inner)
        if kind == "tuple":
            return tuple(self.leaf(path, key, t) for _ in (v or (None,)))
        if kind == "dict":
            return {k: self.leaf(path, key, t) for k in (dict(v) or {f"zqkey{len(self.text)}": None})}
        return self.leaf(path, key, t)

    def leaf(self, path: str, key: str, t):
        if t is float:
            return float(self._number(path, key))
        if t is int:
            return self._number(path, key) + 7
        return self._text(path, key)  # str, Any

    def mark(self, obj, path: str):
        cls, hints, changes = type(obj), _hints(type(obj)), {}
        for f in dataclasses.fields(cls):
            key = f"{cls.__name__}.{f.name}"
            v = getattr(obj, f.name)
            if key in KEYS:
                self.kept.setdefault(key, set()).add(
                    str(v if not isinstance(v, tuple) else v[0] if v else "")
                )
            elif key in CONVERTED:
                value = CONVERTED[key][0]
                if isinstance(value, list):  # values taken in turn, record by record
                    n = TURNS[key] = TURNS.get(key, -1) + 1
                    value = value[n % len(value)]
                changes[f.name] = value
            elif key not in INTERNAL and key != "Report.ranks":
                changes[f.name] = self.value(path, key, hints[f.name], v)
        return dataclasses.replace(obj, **changes)

    def make(self, cls):
        """A record of ``cls`` to be marked: its required fields given (made-up records that
        others refer to get ``synth``'s values)."""
        hints, kw = _hints(cls), {}
        for f in dataclasses.fields(cls):
            key = f"{cls.__name__}.{f.name}"
            if key in self.synth:
                kw[f.name] = self.synth[key]
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                kind, t = _base(hints[f.name])
                sub = _record_type(hints[f.name])
                if sub is not None and kind != "tuple":
                    kw[f.name] = self.make(sub)
                else:
                    kw[f.name] = () if kind == "tuple" else {} if kind == "dict" else t()
        return cls(**kw)


def _marked(report: compiler.Report) -> tuple[compiler.Report, Marker]:
    first = report.compiles[0]
    m = Marker(
        {
            "Node.name": "zqnode",
            "Node.op": "call_function",
            "ExportRun.compile_id": first.id,  # the AOTInductor compile that followed it
            "KernelTime.compile_id": first.id,
            "CompiledAutograd.id": "!0",
            "RoleGraph.role": "forward",
            "RawEvent.name": "optimize_ddp_split_graph",  # a DDP split, for the ranks view
        }
    )
    # a failed compile, and a recompile that tried two cache entries: their views too
    report = dataclasses.replace(
        report,
        compiles=(dataclasses.replace(first, status="failed"), *report.compiles[1:]),
        recompiles=tuple(
            dataclasses.replace(
                r, failures=(*r.failures, m.make(_record_type(_hints(compiler.types.Recompile)["failures"])))
            )
            for r in report.recompiles
        ),
    )
    marked = m.mark(report, "Report")
    other = dataclasses.replace(
        marked, rank=m.leaf("Report>Report.ranks", "Report.rank", int)
    )  # a second rank
    return dataclasses.replace(marked, ranks=(marked, other)), m


def _rendered(report: compiler.Report) -> str:
    view = Subject(report).view
    texts = [v.text(Subject(report, compile=c.id, view=view)) for v in VIEWS for c in report.compiles]
    return "\n".join(texts) + page_html(Subject(report, view=view))


def _numbers(n: int) -> tuple[str, ...]:
    """How a marker number shows: whole, with thousands commas, in three significant digits."""
    return (str(n), f"{n:,}", f"{n:.3g}")


@pytest.fixture(scope="module")
def shown():
    out = []
    for report in (
        compiler.load_trace(FIXTURES / "traces/cpu-torch213-breaks.log.gz"),
        compiler.load(FIXTURES / "reports/h100-torch211-gpu-block.json.gz"),
    ):
        marked, m = _marked(report)
        out.append((_rendered(marked), m))
    return out


def test_every_report_field_is_shown_by_some_view(shown):
    fields = _all_fields()
    found: set[tuple[str, str]] = set()
    kept: dict[str, bool] = {}
    converted: dict[str, bool] = {}
    for text, m in shown:
        found |= {pair for pair, marker in m.text.items() if marker in text}
        found |= {pair for pair, n in m.number.items() if any(s in text for s in _numbers(n * 1000))}
        found |= {pair for pair, n in m.number.items() if any(s in text for s in _numbers(n * 1000 + 7))}
        for key, values in m.kept.items():
            kept[key] = kept.get(key, False) or any(v and v in text for v in values)
        for key, (_value, shows) in CONVERTED.items():
            converted[key] = converted.get(key, False) or shows in text
    leaves = {key for _path, key in found} | {k for k, ok in kept.items() if ok}
    leaves |= {k for k, ok in converted.items() if ok}
    records = {part for path, _key in found for part in path.split(">")}  # something of them shown
    missing = sorted(
        key
        for key, tp in fields.items()
        if key not in INTERNAL and key not in (records if _record_type(tp) is not None else leaves)
    )
    assert missing == [], f"fields of the report no view shows: {missing}"


def test_every_tab_has_its_page_html():
    """A view with a tab has its page's HTML (the widget falls back on it)."""
    assert [v.name for v in VIEWS if v.tab is not None and v.html is None] == []

"""``compiler.compare_modes``'s result, and reading it back without torch: one row per
torch.compile configuration, each with its recording and benchmark (docs/benchmark.md).
``compiler/bench/_modes.py`` runs the comparison (torch); this module only holds and reads it."""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
from dataclasses import dataclass
from typing import Any

from . import _limits, _schema
from ._atomic import write_file
from ._benchtypes import BenchConfig, Benchmark
from ._report import Report, ReportFormatError, from_json, read_json


@dataclass(frozen=True)
class ModeRow:
    """One configuration: its label, settings, recording (with the benchmark in it)."""

    label: str  # "default", "reduce-overhead · bf16", "default · dynamic"
    config: BenchConfig
    report: Report | None = None  # None when skipped or eager
    skipped: str | None = None  # why it did not run (e.g. CUDA graphs need CUDA)
    error: str | None = None  # the compile or the benchmark raised

    @property
    def benchmark(self) -> Benchmark | None:
        return self.report.benchmarks[-1] if self.report is not None and self.report.benchmarks else None


@dataclass(frozen=True)
class ModeComparison:
    rows: tuple[ModeRow, ...] = ()
    name: str = ""

    def row(self, label: str) -> ModeRow:
        for r in self.rows:
            if r.label == label:
                return r
        raise KeyError(f"no configuration {label!r}; have {[r.label for r in self.rows]}")

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "rows": [
                {
                    "label": r.label,
                    "config": r.config.__dict__,
                    "skipped": r.skipped,
                    "error": r.error,
                    "report": r.report.to_dict() if r.report is not None else None,
                }
                for r in self.rows
            ],
        }

    def save(self, path: str | os.PathLike[str]) -> str:
        """Write as JSON (gzipped when the name ends in .gz); ``compiler.load_modes`` reads it."""
        text = json.dumps(self.to_dict())
        gz = os.fspath(path).endswith(".gz")
        return write_file(path, gzip.compress(text.encode("utf-8"), mtime=0) if gz else text)


def load_modes(path: str | os.PathLike[str], *, max_expansion: float | None = None) -> ModeComparison:
    """Read a comparison ``ModeComparison.save`` wrote (plain or gzipped JSON); needs no
    torch. A file that is not one raises ReportFormatError naming the file and the JSON path
    of the first bad value; reading is bounded as ``compiler.load``'s is (``max_expansion``)."""
    ratio = _limits.ratio(max_expansion)
    name = os.fspath(path)
    data, budget = read_json(name, ratio)
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        raise ReportFormatError(f"{name}: not a saved modes comparison (no rows)")
    try:
        rows = tuple(_row(r, i, budget, ratio) for i, r in enumerate(data["rows"]))
        title = data.get("name", "")
        if not isinstance(title, str):
            raise ReportFormatError(f"$.name: expected string, got {_schema.shown(title)}")
    except ReportFormatError as e:
        raise ReportFormatError(f"{name}: {e}") from None
    return ModeComparison(rows=rows, name=title)


def _row(r: Any, i: int, budget: _limits.Budget, ratio: float) -> ModeRow:
    """Row ``i`` of a saved comparison; its report read as ``Report.from_dict`` reads one,
    within what is left of the file's ``budget`` (every row's report spends the one budget)."""
    where = f"$.rows[{i}]"
    if not isinstance(r, dict):
        raise ReportFormatError(f"{where}: expected an object (ModeRow), got {_schema.shown(r)}")
    try:
        row = _schema.decode(ModeRow, {k: v for k, v in r.items() if k != "report"})
    except _schema.SchemaError as e:
        raise ReportFormatError(where + str(e)[1:]) from None
    if not r.get("report"):
        return row
    try:
        report = from_json(r["report"], budget, ratio)
    except ReportFormatError as e:
        msg = str(e)
        raise ReportFormatError(
            f"{where}.report{msg[1:]}" if msg.startswith("$") else f"{where}.report: {msg}"
        ) from None
    return dataclasses.replace(row, report=report)

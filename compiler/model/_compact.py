"""The report's file form (schema_version 2): each text stored once, defaults left out.

``Report.to_dict`` is the whole report as JSON values; on disk (``to_json``) it is made
smaller, losslessly, and ``compiler.load`` makes it whole again (``decode``, in
compiler/model/_resolve.py) before checking it against the schema (docs/report-schema.md, "File
form"):

* ``"strings"``: texts that occur more than once, or are 64 characters or longer, are kept
  once in this list; where they were stands ``{"$s": i}``.
* ``"texts"``: a text of 1024 characters or more (graph code, guard trees, output code,
  kernel sources, fusion logs) is cut after each newline and each ``", "``; its pieces go
  into ``strings`` (each distinct piece once: the lines a guard tree, a graph or a kernel
  shares with another text are stored once) and the text is the list of its pieces'
  indices, kept once in this list; where it was stands ``{"$t": i}``:
  ``"".join(strings[j] for j in texts[i])``.
* ``"graphs"``: a graph that appears twice in the report (torch logs the same graph before
  and after a pass that changed nothing) is kept once; where it was stands ``{"$g": i}``.
* a dict of torch's (event metadata, metrics) that has one of these keys ("$s", "$t", "$g",
  "$d") itself is written
  ``{"$d": {...}}``, so it is never taken for a reference;
* a field whose value is its default (``None``, ``()``, ``False``, ``{}``, ``"forward"``...)
  is left out; ``compiler.load`` fills the default in, as for any optional key.

A file of schema_version 1 (the full form, no references) loads as it always did.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

from ._stagetypes import Graph

_LONG = 64  # a text this long is kept in the string table even when it occurs once
_SHORT = 12  # a text shorter than this stays where it is (a reference is ~10 characters)
_PIECES = 1024  # a text this long is stored as pieces


def encode(report) -> dict[str, Any]:
    """The file form of a report (a JSON-ready dict). A multi-rank report is the lowest rank's
    with every rank's in ``ranks``, itself included: that one is written once, at the top,
    and ``ranks_top_at`` says where in ``ranks`` it stands."""
    top_at = _top_in_ranks(report)
    if top_at is not None:
        report = dataclasses.replace(report, ranks=report.ranks[:top_at] + report.ranks[top_at + 1 :])
    counts: Counter[str] = Counter()
    graphs: dict[Graph, int] = {}
    _count(report, counts, graphs)
    enc = _Encoder(counts, {g for g, n in graphs.items() if n > 1})
    body = enc.value(report)
    out = {"schema_version": body.pop("schema_version", 2)}
    out["strings"] = enc.strings
    out["texts"] = enc.text_list
    out["graphs"] = enc.graph_list
    out.update(body)
    if top_at is not None:
        out["ranks_top_at"] = top_at
    return out


def _top_in_ranks(report) -> int | None:
    """Where in ``report.ranks`` the report itself stands (without its ``ranks``), if it does."""
    if not report.ranks:
        return None
    own = dataclasses.replace(report, ranks=())
    return next((i for i, r in enumerate(report.ranks) if r == own), None)


# ---- encoding -------------------------------------------------------------------------


def _count(obj: Any, counts: Counter, graphs: dict) -> None:
    if isinstance(obj, str):
        counts[obj] += 1
    elif isinstance(obj, Graph):
        n = graphs.get(obj, 0)
        graphs[obj] = n + 1
        if n == 0:
            _count(obj.code, counts, graphs)
            for node in obj.nodes:
                _count(node, counts, graphs)
    elif dataclasses.is_dataclass(obj):
        for f in dataclasses.fields(obj):
            _count(getattr(obj, f.name), counts, graphs)
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            _count(x, counts, graphs)
    elif isinstance(obj, dict):
        for x in obj.values():
            _count(x, counts, graphs)


_DEFAULTS: dict[type, list[tuple[str, Any]]] = {}


def _fields(tp: type) -> list[tuple[str, Any]]:
    """(name, default or a marker for none) per field of a dataclass."""
    got = _DEFAULTS.get(tp)
    if got is None:
        got = []
        for f in dataclasses.fields(tp):
            if f.default is not dataclasses.MISSING:
                default = f.default
            elif f.default_factory is not dataclasses.MISSING:
                default = f.default_factory()
            else:
                default = _REQUIRED
            got.append((f.name, default))
        _DEFAULTS[tp] = got
    return got


_REQUIRED = object()
_MARKS = frozenset({"$s", "$t", "$g", "$d"})  # keys that mark a reference


class _Encoder:
    def __init__(self, counts: Counter, shared_graphs: set):
        self.counts = counts
        self.shared = shared_graphs
        self.strings: list[str] = []
        self.index: dict[str, int] = {}
        self.text_list: list[list[int]] = []
        self.text_index: dict[str, int] = {}
        self.graph_list: list[Any] = []
        self.graph_index: dict[Graph, int] = {}

    def string(self, s: str) -> int:
        i = self.index.get(s)
        if i is None:
            i = self.index[s] = len(self.strings)
            self.strings.append(s)
        return i

    def text(self, s: str) -> Any:
        n = len(s)
        if n < _SHORT or (n < _LONG and self.counts[s] < 2):
            return s
        if n < _PIECES:
            return {"$s": self.string(s)}
        i = self.text_index.get(s)
        if i is None:
            i = self.text_index[s] = len(self.text_list)
            self.text_list.append([self.string(p) for p in _pieces(s)])
        return {"$t": i}

    def value(self, obj: Any) -> Any:
        if isinstance(obj, str):
            return self.text(obj)
        if obj is None or isinstance(obj, (bool, int, float)):
            return obj
        if isinstance(obj, Graph) and obj in self.shared:
            i = self.graph_index.get(obj)
            if i is None:
                i = self.graph_index[obj] = len(self.graph_list)
                self.graph_list.append(None)
                self.graph_list[i] = self.fields(obj)
            return {"$g": i}
        if dataclasses.is_dataclass(obj):
            return self.fields(obj)
        if isinstance(obj, (list, tuple)):
            return [self.value(x) for x in obj]
        if isinstance(obj, dict):
            out = {str(k): self.value(v) for k, v in obj.items()}
            return {"$d": out} if _MARKS.intersection(out) else out  # torch's own "$s" key: kept as is
        return repr(obj)

    def fields(self, obj: Any) -> dict[str, Any]:
        out = {}
        for name, default in _fields(type(obj)):
            v = getattr(obj, name)
            if default is not _REQUIRED and _same(v, default):
                continue
            out[name] = self.value(v)
        return out


def _pieces(s: str) -> list[str]:
    """``s`` cut after each newline and each ", " (the pieces join to ``s``)."""
    out: list[str] = []
    lines = s.split("\n")
    last = len(lines) - 1
    for i, line in enumerate(lines):
        parts = line.split(", ")
        out += [p + ", " for p in parts[:-1]]
        tail = parts[-1] + "\n" if i < last else parts[-1]
        if tail:
            out.append(tail)
    return out


def _same(v: Any, default: Any) -> bool:
    if type(v) is not type(default):
        return False
    return v == default

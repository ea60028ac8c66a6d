"""The report's file form (schema_version 2): each text stored once, defaults left out.

``Report.to_dict`` is the whole report as JSON values; on disk (``to_json``) it is made
smaller, losslessly, and ``compiler.load`` makes it whole again before checking it against
the schema (docs/report-schema.md, "File form"):

* ``"strings"``: texts that occur more than once, or are long (graph code, guard trees,
  output code, fusion logs), are kept once in this list; where they were stands
  ``{"$s": i}``. A kernel's source, a piece of its compile's output code, is
  ``{"$s": i, "at": [start, end]}``: ``strings[i][start:end]``.
* ``"graphs"``: a graph that appears twice in the report (torch logs the same graph before
  and after a pass that changed nothing) is kept once; where it was stands ``{"$g": i}``.
* a dict of torch's (event metadata, metrics) that has one of these keys itself is written
  ``{"$d": {...}}``, so it is never taken for a reference;
* a field whose value is its default (``None``, ``()``, ``False``, ``{}``, ``"forward"``...)
  is left out; ``compiler.load`` fills the default in, as for any optional key.

A file of schema_version 1 (the full form, no references) loads as it always did.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

from ._stagetypes import Graph, Kernel

_LONG = 64  # a text this long is kept in the string table even when it occurs once
_SHORT = 12  # a text shorter than this stays where it is (a reference is ~10 characters)


def encode(report) -> dict[str, Any]:
    """The file form of a report (a JSON-ready dict)."""
    counts: Counter[str] = Counter()
    graphs: dict[Graph, int] = {}
    _count(report, counts, graphs)
    enc = _Encoder(counts, {g for g, n in graphs.items() if n > 1})
    for c in report.compiles:
        if c.stages.codegen is not None:
            enc.output_code[c.id] = [oc.code for oc in c.stages.codegen.output_code]
    body = enc.value(report)
    out = {"schema_version": body.pop("schema_version", 2)}
    out["strings"] = enc.strings
    out["graphs"] = enc.graph_list
    out.update(body)
    return out


def decode(data: dict[str, Any]) -> dict[str, Any]:
    """The full JSON form of a file-form report (references resolved); ``data`` of the full
    form (schema_version 1, no ``strings``) comes back as it is."""
    strings = data.get("strings")
    if not isinstance(strings, list):
        return data
    graphs = data.get("graphs") if isinstance(data.get("graphs"), list) else []
    body = {k: v for k, v in data.items() if k not in ("strings", "graphs")}
    resolved_graphs: list[Any] = [None] * len(graphs)
    return _Resolver(strings, graphs, resolved_graphs).value(body)


class FileFormError(ValueError):
    """A reference that points nowhere (``{"$s": 99}`` with 10 strings)."""


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
_MARKS = frozenset({"$s", "$g", "$d"})  # keys that mark a reference


class _Encoder:
    def __init__(self, counts: Counter, shared_graphs: set):
        self.counts = counts
        self.shared = shared_graphs
        self.strings: list[str] = []
        self.index: dict[str, int] = {}
        self.graph_list: list[Any] = []
        self.graph_index: dict[Graph, int] = {}
        self.output_code: dict[str, list[str]] = {}  # compile id -> its output code texts

    def text(self, s: str) -> Any:
        n = len(s)
        if n < _SHORT or (n < _LONG and self.counts[s] < 2):
            return s
        i = self.index.get(s)
        if i is None:
            i = self.index[s] = len(self.strings)
            self.strings.append(s)
        return {"$s": i}

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
        if isinstance(obj, Kernel):
            return self.kernel(obj)
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

    def kernel(self, k: Kernel) -> dict[str, Any]:
        out = self.fields(dataclasses.replace(k, source=""))
        out["source"] = self.slice(k.source, self.output_code.get(k.compile_id, ()))
        return out

    def slice(self, s: str, wholes) -> Any:
        """``s`` as a piece of one of ``wholes`` (a kernel inside its compile's output code)."""
        if len(s) >= _LONG and s not in self.index:
            for whole in wholes:
                at = whole.find(s)
                if at >= 0:
                    return {"$s": self.text(whole)["$s"], "at": [at, at + len(s)]}
        return self.text(s)


def _same(v: Any, default: Any) -> bool:
    if type(v) is not type(default):
        return False
    return v == default


# ---- decoding -------------------------------------------------------------------------


class _Resolver:
    def __init__(self, strings: list, graphs: list, resolved: list):
        self.strings = strings
        self.graphs = graphs
        self.resolved = resolved

    def value(self, v: Any) -> Any:
        if isinstance(v, dict):
            if "$s" in v and len(v) <= 2:
                return self.string(v)
            if "$g" in v and len(v) == 1:
                return self.graph(v["$g"])
            if "$d" in v and len(v) == 1 and isinstance(v["$d"], dict):  # a dict with a "$" key of its own
                v = v["$d"]
            return {k: self.value(x) for k, x in v.items()}
        if isinstance(v, list):
            return [self.value(x) for x in v]
        return v

    def string(self, ref: dict) -> str:
        i = ref["$s"]
        if type(i) is not int or not 0 <= i < len(self.strings) or not isinstance(self.strings[i], str):
            raise FileFormError(f"string reference {i!r} outside the {len(self.strings)} strings")
        at = ref.get("at")
        if at is None:
            return self.strings[i]
        if not (isinstance(at, list) and len(at) == 2 and all(type(x) is int for x in at)):
            raise FileFormError(f"string slice {at!r} is not [start, end]")
        return self.strings[i][at[0] : at[1]]

    def graph(self, i: Any) -> Any:
        if type(i) is not int or not 0 <= i < len(self.graphs):
            raise FileFormError(f"graph reference {i!r} outside the {len(self.graphs)} graphs")
        if self.resolved[i] is None:
            self.resolved[i] = self.value(self.graphs[i])
        return self.resolved[i]

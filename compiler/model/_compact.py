"""The report's file form (schema_version 3): each text stored once, defaults left out.

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
* a cache lookup's ``component_lines`` are written as one text, ``components`` (as reports
  wrote them before they were lines; ``compiler.load`` cuts it into lines): a key that recurs
  in a log's compiles is one text, stored once.
* ``"graphs"``: a graph that appears twice in the report (torch logs the same graph before
  and after a pass that changed nothing) is kept once; where it was stands ``{"$g": i}``.
* ``{"$n": {"fields": [...], "rows": [...]}}``: a graph's nodes, each a row of its values in
  the order of ``fields`` (the defaults at a row's end left out);
* a dict of torch's (event metadata, metrics) that has one of these keys ("$s", "$t", "$g",
  "$n", "$d") itself is written
  ``{"$d": {...}}``, so it is never taken for a reference;
* a field whose value is its default (``None``, ``()``, ``False``, ``{}``, ``"forward"``...)
  is left out; ``compiler.load`` fills the default in, as for any optional key.

A file of schema_version 1 (the full form, no references) loads as it always did, and one of
schema_version 2 (the file form with nodes as objects).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter
from typing import Any

from ._speedtypes import CacheLookup
from ._stagetypes import Graph, Node

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
    out = {"schema_version": body.pop("schema_version", 3)}
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
    """Count the texts the string table may hold only when they repeat (``_SHORT`` to
    ``_LONG`` characters), and each graph's occurrences (its texts counted once). One loop over
    a stack, each value's type looked up once: the report of a big training step holds
    ~100,000 values."""
    todo = [obj]
    pop, push, extend = todo.pop, todo.append, todo.extend
    while todo:
        o = pop()
        tp = type(o)
        if tp is str:
            if _SHORT <= len(o) < _LONG:
                counts[o] += 1
        elif tp is tuple or tp is list:
            extend(o)
        elif tp is dict:
            extend(o.values())
        elif tp is Graph:
            n = graphs.get(o, 0)
            graphs[o] = n + 1
            if n == 0:
                push(o.code)
                extend(o.nodes)
        elif o is None or tp is int or tp is float or tp is bool:
            continue
        else:
            names = _names(tp)
            if names is not None:
                extend([getattr(o, name) for name in names])


_NAMES: dict[type, tuple[str, ...] | None] = {}


def _names(tp: type) -> tuple[str, ...] | None:
    """The field names of a dataclass type; None for any other type."""
    try:
        return _NAMES[tp]
    except KeyError:
        got = _NAMES[tp] = (
            tuple(f.name for f in dataclasses.fields(tp)) if dataclasses.is_dataclass(tp) else None
        )
        return got


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
_MARKS = frozenset({"$s", "$t", "$g", "$n", "$d"})  # keys that mark a reference
_SCALARS = (type(None), bool, int, float)


class _Encoder:
    def __init__(self, counts: Counter, shared_graphs: set):
        self.counts = counts
        self.shared = shared_graphs
        self.strings: list[str] = []
        self.index: dict[str, int] = {}
        self.text_list: list[list[int]] = []
        self.text_index: dict[bytes, int] = {}  # a text's digest: the texts are not kept here
        self.graph_list: list[Any] = []
        self.graph_index: dict[Graph, int] = {}
        self.done: dict[str, Any] = {}

    def string(self, s: str) -> int:
        i = self.index.get(s)
        if i is None:
            i = self.index[s] = len(self.strings)
            self.strings.append(s)
        return i

    def text(self, s: str) -> Any:
        got = self.done.get(s)  # a text met before: its reference, one object for all
        if got is None:
            got = self._text(s)
            if len(s) < _PIECES:  # a long one is found by its digest: not kept alive here
                self.done[s] = got
        return got

    def _text(self, s: str) -> Any:
        n = len(s)
        if n < _SHORT or (n < _LONG and self.counts[s] < 2):
            return s
        if n < _PIECES:
            return {"$s": self.string(s)}
        key = hashlib.blake2b(s.encode("utf-8", "surrogatepass"), digest_size=20).digest()
        i = self.text_index.get(key)
        if i is None:
            i = self.text_index[key] = len(self.text_list)
            index, strings = self.index, self.strings
            ids = []
            for p in _pieces(s):  # self.string, inlined: a big report's texts have ~100,000 pieces
                j = index.get(p)
                if j is None:
                    j = index[p] = len(strings)
                    strings.append(p)
                ids.append(j)
            self.text_list.append(ids)
        return {"$t": i}

    def value(self, obj: Any) -> Any:
        tp = type(obj)
        if tp is str:
            return self.text(obj)
        if tp in _SCALARS:
            return obj
        if tp is tuple or tp is list:
            return self.items(obj)
        if tp is dict:
            value = self.value
            out = {str(k): value(v) for k, v in obj.items()}
            return {"$d": out} if _MARKS.intersection(out) else out  # torch's own "$s" key: kept as is
        if tp is Graph and obj in self.shared:
            i = self.graph_index.get(obj)
            if i is None:
                i = self.graph_index[obj] = len(self.graph_list)
                self.graph_list.append(None)
                self.graph_list[i] = self.fields(obj)
            return {"$g": i}
        if _names(tp) is not None:
            return self.fields(obj)
        if isinstance(obj, str):  # a str subclass (an enum's value)
            return self.text(str(obj))
        if isinstance(obj, (bool, int, float)):
            return obj
        if isinstance(obj, (list, tuple)):
            return [self.value(x) for x in obj]
        if isinstance(obj, dict):
            return self.value(dict(obj))
        return repr(obj)

    def items(self, obj: tuple | list) -> list[Any]:
        """A list's values; its texts met before looked up here (a cache key's ~600 lines)."""
        done, value = self.done, self.value
        out = []
        for x in obj:
            got = done.get(x) if type(x) is str else None
            out.append(value(x) if got is None else got)
        return out

    def fields(self, obj: Any) -> dict[str, Any]:
        tp = type(obj)
        if tp is Graph:
            return self.graph(obj)
        out = {}
        value = self.value
        for name, default in _fields(tp):
            v = getattr(obj, name)
            if default is not _REQUIRED and _is_default(v, default):
                continue
            if tp is CacheLookup and name == "component_lines":  # one text: a key that recurs, once
                out["components"] = self.text("\n".join(v))
                continue
            out[name] = value(v)
        return out

    def graph(self, g: Graph) -> dict[str, Any]:
        """A graph with its nodes as rows: ``{"$n": {"fields": [...], "rows": [[...], ...]}}``,
        each row its node's values in the order of ``fields``, the defaults at its end left
        out (a training step's graphs hold tens of thousands of nodes: their keys were a
        seventh of the file)."""
        out: dict[str, Any] = {"code": self.value(g.code)}
        if g.nodes:
            fields = _fields(Node)
            value = self.value
            rows = []
            for n in g.nodes:
                row = [getattr(n, name) for name, _d in fields]
                k = len(row)
                while k and fields[k - 1][1] is not _REQUIRED and _is_default(row[k - 1], fields[k - 1][1]):
                    k -= 1
                rows.append([value(v) for v in row[:k]])
            out["nodes"] = {"$n": {"fields": [name for name, _d in fields], "rows": rows}}
        return out


def _is_default(v: Any, default: Any) -> bool:
    return type(v) is type(default) and v == default


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

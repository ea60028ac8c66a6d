"""The report's file form (schema_version 4): each text stored once, defaults left out.

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
* ``{"$c": {"fields": [...], "rows": [...]}}``: a graph's nodes as what its code does not
  hold. ``compiler.load`` parses the code again (compiler/model/_fxcode.py: ``graph_nodes``)
  and gives node i the values of
  ``fields`` from row i: the fields where some node differs from its parsed self (its
  nn.Module, torch's seq_nr, the side of a joint graph it is on...); a value or a row left out at
  the end is the field's default. A training step's parsed nodes were a third of its file.
* ``{"$n": {"fields": [...], "rows": [...]}}``: a graph's nodes that are not its code's (other
  names or another count), each a row of all its values in the order of ``fields`` (the
  defaults at a row's end left out);
* a dict of torch's (event metadata, metrics) that has one of these keys ("$s", "$t", "$g",
  "$n", "$c", "$d") itself is written ``{"$d": {...}}``, so it is never taken for a reference;
* a field whose value is its default (``None``, ``()``, ``False``, ``{}``, ``"forward"``...)
  is left out; ``compiler.load`` fills the default in, as for any optional key.

A file of schema_version 1 (the full form, no references) loads as it always did, as do
schema_version 2 (the file form with nodes as objects) and 3 (every graph's nodes as ``$n`` rows).
"""

from __future__ import annotations

import dataclasses
import hashlib
import operator
from collections import Counter
from collections.abc import Callable
from typing import Any

from ._fxcode import graph_nodes
from ._pieces import Table, pieces
from ._speedtypes import CacheLookup
from ._stagetypes import Graph, Node
from ._weakid import WeakIdentityMap

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
    graphs = _Graphs()
    _count(report, counts, graphs)
    enc = _Encoder(counts, graphs)
    body = enc.value(report)
    body.pop("schema_version", None)
    out = {"schema_version": report.schema_version}
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


class _Graphs:
    """The report's graphs, each equal pair one group (torch logs a graph again after a pass
    that changed nothing), found by code first and by identity (hashing a graph hashes all its
    nodes); and the node fields each graph's file form stores (``_derived_fields``)."""

    def __init__(self) -> None:
        self.group: dict[int, int] = {}  # id(graph) -> its group
        self.uses: list[int] = []  # per group, how often it occurs
        self.by_code: dict[str, list[Graph]] = {}
        self.fields: dict[int, list[tuple[str, Any]] | None] = {}  # per group
        self.keep: list[Graph] = []  # ids are only stable while the objects live

    def first(self, g: Graph) -> bool:
        """Count an occurrence of ``g``; True where its group is new."""
        gid = self.group.get(id(g))
        if gid is None:
            same = self.by_code.setdefault(g.code, [])
            other = next((o for o in same if o.nodes is g.nodes or o.nodes == g.nodes), None)
            self.keep.append(g)
            if other is not None:
                gid = self.group[id(g)] = self.group[id(other)]
            else:
                same.append(g)
                gid = self.group[id(g)] = len(self.uses)
                self.uses.append(0)
                self.fields[gid] = _derived_fields(g)
        self.uses[gid] += 1
        return self.uses[gid] == 1

    def shared(self, g: Graph) -> int | None:
        """The group of ``g`` where it occurs more than once."""
        gid = self.group[id(g)]
        return gid if self.uses[gid] > 1 else None


def _count(obj: Any, counts: Counter, graphs: _Graphs) -> None:
    """Count the texts the string table may hold only when they repeat (``_SHORT`` to
    ``_LONG`` characters), and each graph's occurrences (its texts counted once). One loop over
    a stack, each value's type looked up once: the report of a big training step holds
    ~100,000 values."""
    todo = [obj]
    pop, push, extend = todo.pop, todo.append, todo.extend
    keys: Counter[tuple[str, ...]] = Counter()  # a cache key's lines: the same few keys recur
    while todo:
        o = pop()
        tp = type(o)
        if tp is str:
            if _SHORT <= len(o) < _LONG:
                counts[o] += 1
        elif tp is tuple or tp is list:
            extend(o)
        elif tp is CacheLookup and type(o.component_lines) is tuple:
            keys[o.component_lines] += 1
            extend([getattr(o, name) for name in _names(tp) if name != "component_lines"])
        elif tp is dict:
            extend(o.values())
        elif tp is Graph:
            if graphs.first(o):  # what its file form holds: its code, what its nodes add to it
                push(o.code)
                fields = graphs.fields[graphs.group[id(o)]] or fields_of(Node)
                extend([getattr(n, name) for n in o.nodes for name, _d in fields])
        elif o is None or tp is int or tp is float or tp is bool:
            continue
        else:
            names = _names(tp)
            if names is not None:
                extend([getattr(o, name) for name in names])
    for lines, k in keys.items():  # each key's lines counted as often as the key occurs
        for line in lines:
            if type(line) is str and _SHORT <= len(line) < _LONG:
                counts[line] += k


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


def fields_of(tp: type) -> list[tuple[str, Any]]:
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
                default = REQUIRED
            got.append((f.name, default))
        _DEFAULTS[tp] = got
    return got


REQUIRED = object()
_MARKS = frozenset({"$s", "$t", "$g", "$n", "$c", "$d"})  # keys that mark a reference
_SCALARS = (type(None), bool, int, float)


class _Encoder:
    def __init__(self, counts: Counter, graphs: _Graphs):
        self.counts = counts
        self.graphs = graphs
        self.index = Table()
        self.strings = self.index.strings
        self.text_list: list[list[int]] = []
        self.text_index: dict[bytes, int] = {}  # a text's digest: the texts are not kept here
        self.graph_list: list[Any] = []
        self.graph_index: dict[int, int] = {}  # a graph's group -> its index in graph_list
        self.done: dict[str, Any] = {}
        self.lines_done: dict[tuple[str, ...], Any] = {}  # a cache key's lines -> their text's reference

    def string(self, s: str) -> int:
        return self.index[s]

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
            # self.string of each piece, in one map: a big report's texts have ~250,000 pieces
            self.text_list.append(list(map(self.index.__getitem__, pieces(s))))
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
        if tp is Graph and self.graphs.shared(obj) is not None:
            gid = self.graphs.shared(obj)
            i = self.graph_index.get(gid)
            if i is None:
                i = self.graph_index[gid] = len(self.graph_list)
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
        for name, default in fields_of(tp):
            v = getattr(obj, name)
            if default is not REQUIRED and _is_default(v, default):
                continue
            if tp is CacheLookup and name == "component_lines":  # one text: a key that recurs, once
                got = self.lines_done.get(v) if type(v) is tuple else None  # a key's lines met before
                if got is None:
                    got = self.text("\n".join(v))
                    if type(v) is tuple:  # the report holds it: kept here, it costs nothing
                        self.lines_done[v] = got
                out["components"] = got
                continue
            out[name] = value(v)
        return out

    def graph(self, g: Graph) -> dict[str, Any]:
        """A graph: its code, and its nodes as what differs from the nodes its code holds
        (``{"$c": ...}``, ``_derived_fields``), or, where they are not its code's, as rows of
        every field (``{"$n": {"fields": [...], "rows": [[...], ...]}}``, the defaults at a
        row's end left out)."""
        out: dict[str, Any] = {"code": self.value(g.code)}
        if g.nodes:
            fields = self.graphs.fields.get(self.graphs.group.get(id(g), -1), _UNSEEN)
            if fields is _UNSEEN:  # a graph the count pass did not reach first
                fields = _derived_fields(g)
            out["nodes"] = (
                self._rows(g.nodes, fields_of(Node), "$n")
                if fields is None
                else self._rows(g.nodes, fields, "$c")
            )
        return out

    def _rows(self, nodes: tuple[Node, ...], fields: list[tuple[str, Any]], mark: str) -> dict[str, Any]:
        value = self.value
        rows = []
        for n in nodes:
            row = [getattr(n, name) for name, _d in fields]
            k = len(row)
            while k and fields[k - 1][1] is not REQUIRED and _is_default(row[k - 1], fields[k - 1][1]):
                k -= 1
            rows.append([value(v) for v in row[:k]])
        while mark == "$c" and rows and not rows[-1]:
            rows.pop()
        return {mark: {"fields": [name for name, _d in fields], "rows": rows}}


def _derived_fields(g: Graph, changed: frozenset[str] | None = None) -> list[tuple[str, Any]] | None:
    """The node fields (with their defaults) where some node of ``g`` differs from the node
    its code holds (``graph_nodes``: module, seq_nr, side ...), written as
    ``{"$c": {"fields": [...], "rows": [...]}}``: node i takes row i's values of them; a value
    or row left out at the end is the field's default. None where the nodes are not the
    code's (another count or other names): they are written whole. Worked out once per graph:
    ``keep_file_fields`` does it where the graph is made (its code's parse still at hand).
    ``changed``: the only fields in which ``g``'s nodes may differ from the parse (None: any)."""
    if node_parser is None or not g.code:  # no parser (or nothing to parse): nodes written whole
        return None
    got = _KEPT.get(g, _UNSEEN)
    if got is not _UNSEEN:
        return got
    base = node_parser(g.code)
    if len(base) != len(g.nodes):
        return None
    ours = [n.__dict__ for n in g.nodes]
    theirs = [b.__dict__ for b in base]
    if ours == theirs:  # every field as parsed (dicts of the same keys: Node's fields)
        return []
    fields = [f for f in fields_of(Node) if changed is None or f[0] in changed or f[0] == "name"]
    row = operator.itemgetter(*(name for name, _d in fields))  # a node's values, in fields' order
    columns, parsed = list(zip(*map(row, ours))), list(zip(*map(row, theirs)))
    name = [n for n, _d in fields].index("name")
    if columns[name] != parsed[name]:
        return None
    return [f for f, a, b in zip(fields, columns, parsed) if a != b]


# graph -> its file form's node fields (keep_file_fields), dropped with the graph
_KEPT: WeakIdentityMap[list[tuple[str, Any]] | None] = WeakIdentityMap()


def keep_file_fields(
    g: Graph | None, changed: frozenset[str] | None = None, made_from: Graph | None = None
) -> Graph | None:
    """``g``, its file form's node fields (``_derived_fields``) worked out now and kept (``_KEPT``),
    for a graph made from code just parsed (the parser's cache still holds the parse): writing
    the report then parses no graph's code again (a big log's report holds thousands of
    graphs). Its code and nodes never change (frozen), so what is kept stays true.
    ``changed``: the only fields its maker may have set on the parsed nodes, or on those of
    ``made_from`` (then also the fields that graph's kept: where none are, every field is
    compared); the other fields are the parse's own values, and only these are compared."""
    if g is None or node_parser is None or g in _KEPT:
        return g
    if made_from is not None:
        before = _KEPT.get(made_from)
        changed = None if before is None or changed is None else changed | {name for name, _d in before}
    _KEPT[g] = _derived_fields(g, changed)
    return g


def kept_file_fields(g: Graph) -> list[tuple[str, Any]] | None:
    return _KEPT[g]  # what keep_file_fields worked out for g (KeyError: nothing)


_UNSEEN = object()

# the graph-code parser (None: every node written whole, as schema 3 wrote them; the tests)
node_parser: Callable[[str], tuple[Node, ...]] | None = graph_nodes


def _is_default(v: Any, default: Any) -> bool:
    return type(v) is type(default) and v == default

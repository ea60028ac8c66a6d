"""The report's file form read back (compiler/model/_compact.py writes it): references resolved,
within caps, without recursion.

``decode`` gives the full form of a file-form report: each ``{"$s": i}``, ``{"$t": i}`` and
``{"$g": i}`` replaced by what it stands for, each ``{"$n": {"fields": [...], "rows": [...]}}``
by a list of dicts (a graph's nodes), each ``{"$d": {...}}`` by the dict inside. A
shared file is input from anyone, so every problem is one ``FileFormError`` naming the JSON
path of the bad value: a reference outside its table, a ``texts`` piece that is not an
index of ``strings`` (a non-negative int: ``true`` and ``-1`` are not), a graph that holds a
graph (a graph that refers to itself included), nesting deeper than ``MAX_DEPTH``, and
references that expand past their cap (compiler/model/_limits.py: the texts they join, each once,
and the values of the graphs they stand for, at each use).
"""

from __future__ import annotations

import math
from array import array
from itertools import compress
from typing import Any

from . import _compact, _limits
from ._schema import json_path_key, shown


def decode(data: dict[str, Any], budget: _limits.Budget | None = None) -> dict[str, Any]:
    """The full JSON form of a file-form report (references resolved); ``data`` of the full
    form (schema_version 1, no ``strings``) comes back as it is. Either way nothing may nest
    deeper than ``MAX_DEPTH``; references expand within what is left of the file's ``budget``
    (None: no bound), each use counted. Raises FileFormError naming the JSON path of the bad
    value. No recursion: a file nested 100k deep, or a graph that refers to itself, is one
    error."""
    strings = data.get("strings")
    if not isinstance(strings, list):
        _check_depth(data)
        return data
    graphs = data.get("graphs") if isinstance(data.get("graphs"), list) else []
    texts = data.get("texts") if isinstance(data.get("texts"), list) else []
    body = {k: v for k, v in data.items() if k not in ("strings", "texts", "graphs", "ranks_top_at")}
    budget = budget or _limits.Budget(0, math.inf)
    out = _Resolver(strings, texts, graphs, budget).walk(body, "$", None)[0]
    top_at, ranks = data.get("ranks_top_at"), out.get("ranks")
    if top_at is not None:  # the top-level report is also one of the ranks (written once)
        if type(top_at) is not int or not isinstance(ranks, list) or not 0 <= top_at <= len(ranks):
            raise FileFormError("$.ranks_top_at", f"must be a position in ranks (0 to {len(ranks or [])})")
        ranks.insert(top_at, {k: v for k, v in out.items() if k != "ranks"})
    return out


class FileFormError(ValueError):
    """A reference that points nowhere (``{"$s": 99}`` with 10 strings), a graph that holds a
    graph, references that expand past their cap, nesting deeper than ``MAX_DEPTH``. The
    message starts with the JSON path of the bad value (in the file as written)."""

    def __init__(self, path: str, problem: str):
        super().__init__(f"{path}: {problem}")


MAX_DEPTH = 100  # levels of JSON nesting a report may have (real ones: 10-14)


# Iterative walks (an explicit stack, no recursion): each container is copied, then the
# references in the copy replaced. A frame is (copy, its items, key in the parent, whether
# the parent held it as {"$d": ...}); a container of plain values only gets none.

_PLAIN = frozenset({str, int, float, bool, type(None)})
_CONTAINERS = frozenset({dict, list})
_UNSET = object()


def _items(c: Any):
    return iter(c.items()) if isinstance(c, dict) else enumerate(c)


def _path(label: str, stack: list, key: Any = None) -> str:
    """The JSON path of ``key`` in the container on top of ``stack`` (the container itself
    for None); stack[0] is the one-element list that holds the walk's root."""
    parts = [label]
    for depth, frame in enumerate(stack[1:], 1):
        if depth > 1:
            parts.append(f"[{frame[2]}]" if isinstance(frame[2], int) else json_path_key(frame[2]))
        if frame[3]:
            parts.append('["$d"]')
    if key is not None and len(stack) > 1:
        parts.append(f"[{key}]" if isinstance(key, int) else json_path_key(key))
    return "".join(parts)


def _too_deep(label: str, stack: list, key: Any) -> FileFormError:
    return FileFormError(_path(label, stack, key), f"nested deeper than {MAX_DEPTH} levels")


def _check_depth(data: Any) -> None:
    """Raise FileFormError where ``data`` nests deeper than MAX_DEPTH (the full form, read as
    it is: only its depth is checked). Level by level, the containers picked out in C; the
    path is looked for only when there is an error to name."""
    level, depth = [data], 1
    while level:
        values: list = []
        add = values.extend
        for c in level:
            add(c.values() if type(c) is dict else c)
        level = list(compress(values, map(_CONTAINERS.__contains__, map(type, values))))
        if level and depth >= MAX_DEPTH:
            raise _first_too_deep(data)
        depth += 1


def _first_too_deep(data: Any) -> FileFormError:
    """The error for the first container (depth first) past MAX_DEPTH in ``data``."""
    stack: list = [(None, enumerate([data]), None, False)]
    while True:
        for k, x in stack[-1][1]:
            if type(x) in _CONTAINERS:
                if len(stack) > MAX_DEPTH:
                    return _too_deep("$", stack, k)
                stack.append((x, _items(x), k, False))
                break
        else:
            stack.pop()


# a node's fields and their defaults as JSON values (a tuple's: a list)
_NODE_FIELDS = {name: [] if d == () else d for name, d in _compact.fields_of(_compact.Node)}


class _Resolver:
    def __init__(self, strings: list, texts: list, graphs: list, budget: _limits.Budget):
        self.strings = strings
        self.texts = texts
        self.joined: list[str | None] = [None] * len(texts)
        self.graphs = graphs
        self.resolved: list[Any] = [_UNSET] * len(graphs)
        self.weight = [0] * len(graphs)  # values of each resolved graph: built at each use
        self.budget = budget
        self.limit = budget.limit
        # what was built: the gzip data's bytes, then the characters of each use of a string
        # or a text (each view prints each use), the values of each use of a graph
        self.spent = budget.spent
        self._longest: int | None = None

    def walk(self, root: Any, label: str, graph: int | None) -> tuple[Any, int]:
        """``root`` with its references resolved, and the number of values in it; ``graph``:
        the graph whose entry this is (a graph holds no graph)."""
        strings, plain = self.strings, _PLAIN
        n = len(strings)
        holder = [root]
        stack: list = [(holder, enumerate(holder), None, False)]
        base = 0 if graph is None else 1  # $.graphs[i] is one level down
        values = 1
        while stack:
            dst, items = stack[-1][:2]
            for k, x in items:
                t = type(x)
                if t in plain:
                    continue
                wrapped = False
                if t is dict and len(x) == 1 and "$n" in x:  # a graph's nodes as rows
                    x, t = self.rows(x["$n"], label, stack, k), list
                if t is dict:
                    if len(x) == 1:
                        (mark,) = x
                        if mark == "$s":
                            i = x[mark]
                            if type(i) is int and 0 <= i < n and type(strings[i]) is str:
                                s = dst[k] = strings[i]
                                self.spent += len(s)
                                if self.spent > self.limit:
                                    raise self._over(label, stack, k, self._string_use(i))
                            else:
                                dst[k] = self.string(i, label, stack, k)
                            continue
                        if mark == "$t":
                            dst[k] = self.text(x[mark], label, stack, k)
                            continue
                        if mark == "$g":
                            dst[k] = self.graph(x[mark], label, stack, k, graph)
                            continue
                        if mark == "$d" and isinstance(x[mark], dict):  # a dict with a "$" key of its own
                            x, wrapped = x[mark], True
                    elif type(x.get("nodes")) is dict and "$c" in x["nodes"] and len(x["nodes"]) == 1:
                        x = self.derived(x, label, stack, k)  # a graph's
                    child = x.copy() if type(x) is dict else dict(x)
                    inner = child.values()
                elif t is list:
                    child = inner = x.copy()
                elif isinstance(x, (dict, list)):
                    child = dict(x) if isinstance(x, dict) else list(x)
                    inner = child.values() if isinstance(x, dict) else child
                else:
                    continue
                if base + len(stack) > MAX_DEPTH:
                    raise _too_deep(label, stack, k)
                dst[k] = child
                values += len(child)
                if not plain.issuperset(map(type, inner)):  # references or containers inside
                    items = enumerate(child) if inner is child else iter(child.items())
                    stack.append((child, items, k, wrapped))
                    break
            else:
                stack.pop()
        return holder[0], values

    def rows(
        self, spec: Any, label: str, stack: list, k: Any, mark: str = "$n", most: int | None = None
    ) -> list[dict[str, Any]]:
        """``{"fields": [...], "rows": [[...], ...]}`` as a list of dicts, one per row (its
        references still in it); a row shorter than ``fields`` leaves the rest out; at most
        ``most`` rows where given."""
        where = _path(label, stack, k) + (f'["{mark}"]' if mark == "$n" else f'.nodes["{mark}"]')
        if (
            type(spec) is not dict
            or type(spec.get("fields")) is not list
            or type(spec.get("rows")) is not list
        ):
            raise FileFormError(where, f'expected {{"fields": [...], "rows": [...]}}, got {shown(spec)}')
        fields = spec["fields"]
        if not all(type(f) is str for f in fields):
            raise FileFormError(where + '["fields"]', f"expected a list of field names, got {shown(fields)}")
        out = []
        for i, row in enumerate(spec["rows"]):
            if type(row) is not list or len(row) > len(fields):
                raise FileFormError(
                    f'{where}["rows"][{i}]',
                    f"expected a list of at most {len(fields)} values, got {shown(row)}",
                )
            out.append(dict(zip(fields, row)))
        if most is not None and len(out) > most:
            raise FileFormError(
                f'{where}["rows"]', f"{len(out)} rows for the {most} nodes the graph's code holds"
            )
        return out

    def derived(self, graph: dict, label: str, stack: list, k: Any) -> dict[str, Any]:
        """The graph with its code resolved and its nodes from ``{"$c": {"fields": [...],
        "rows": [...]}}``: the nodes its code holds (parsed again), each given the values of
        ``fields`` from its row (row i for node i; a value or row left out at the end: the
        field's default)."""
        where = _path(label, stack, k) + '.nodes["$c"]'
        code = graph.get("code")
        if type(code) is dict and len(code) == 1 and ("$t" in code or "$s" in code):
            code = (self.text if "$t" in code else self.string)(*code.values(), label, stack, k)
        if type(code) is not str:
            raise FileFormError(
                where, f"nodes to be parsed from the graph's code, but its code is {shown(code)}"
            )
        if _compact.node_parser is None:
            raise FileFormError(where, "nodes to be parsed from code, and no parser")
        self.spent += len(code)  # parsed at each use, as a graph's values are built at each use
        if self.spent > self.limit:
            raise self._over(
                label, stack, k, f"nodes parsed from code ({len(code):,} characters, at each use)"
            )
        base = _compact.node_parser(code)
        self.spent += _limits.BUILT * len(base)
        if self.spent > self.limit:
            raise self._over(label, stack, k, f"nodes parsed from code ({len(base):,} nodes, at each use)")
        table = self.rows(graph["nodes"]["$c"], label, stack, k, "$c", len(base))
        fields = graph["nodes"]["$c"]["fields"]
        unknown = [f for f in fields if f not in _NODE_FIELDS]
        if unknown:
            raise FileFormError(where + '["fields"]', f"{shown(unknown[0])} is not a field of a node")
        left_out = {f: _NODE_FIELDS[f] for f in fields if _NODE_FIELDS[f] is not _compact.REQUIRED}
        out = []
        for i, b in enumerate(base):
            node = dict(b.__dict__)
            node["args"] = list(node["args"])
            node.update(left_out)
            if i < len(table):
                node.update(table[i])
            out.append(node)
        return {**graph, "code": code, "nodes": out}

    def _over(self, label: str, stack: list, k: Any, what: str) -> FileFormError:
        return FileFormError(_path(label, stack, k), self.budget.over(f"{what} expands the references"))

    def _string_use(self, i: int) -> str:
        return f"string reference {i} ({len(self.strings[i]):,} characters, at each use)"

    def string(self, i: Any, label: str, stack: list, k: Any) -> str:
        strings = self.strings
        if type(i) is not int or not 0 <= i < len(strings):
            raise FileFormError(
                _path(label, stack, k), f"string reference {shown(i)} outside the {len(strings)} strings"
            )
        s = strings[i]
        if not isinstance(s, str):
            raise FileFormError(f"$.strings[{i}]", f"expected a string, got {shown(s)}")
        self.spent += len(s)
        if self.spent > self.limit:
            raise self._over(label, stack, k, self._string_use(i))
        return s

    def text(self, i: Any, label: str, stack: list, k: Any) -> str:
        texts = self.texts
        if type(i) is not int or not 0 <= i < len(texts):
            raise FileFormError(
                _path(label, stack, k), f"text reference {shown(i)} outside the {len(texts)} texts"
            )
        joined = self.joined[i]
        if joined is None:
            pieces = texts[i]
            if type(pieces) is not list:
                raise FileFormError(
                    f"$.texts[{i}]", f"expected a list of string indices, got {shown(pieces)}"
                )
            try:  # ints only (a bool is no index here), none below 0 (a list counts those from its end)
                if list(map(type, pieces)).count(int) != len(pieces):
                    raise TypeError
                array("Q", pieces)  # unsigned: a negative index does not fit
            except (TypeError, OverflowError):
                raise self._bad_piece(i) from None
            get = self.strings.__getitem__
            # joined, it can be no longer than this; the exact length only where that is too long
            size = len(pieces) * self.longest()
            if self.spent + size > self.limit:
                try:
                    size = sum(map(len, map(get, pieces)))
                except (IndexError, TypeError):
                    raise self._bad_piece(i) from None
                if self.spent + size > self.limit:
                    raise self._over(label, stack, k, f"text reference {i} ({size:,} characters)")
            try:
                joined = self.joined[i] = "".join(map(get, pieces))
            except (IndexError, TypeError):  # an index past the end, a string that is no text
                raise self._bad_piece(i) from None
        self.spent += len(joined)  # at each use: joined once, printed by each view at each use
        if self.spent > self.limit:
            raise self._over(label, stack, k, f"text reference {i} ({len(joined):,} characters, at each use)")
        return joined

    def _bad_piece(self, i: int) -> FileFormError:
        """The error for text ``i``, which does not join: a piece that is no index of
        ``strings`` (a non-negative int below its length), or a string that is no text."""
        strings = self.strings
        n = len(strings)
        for at, j in enumerate(self.texts[i]):
            if type(j) is not int or not 0 <= j < n:
                return FileFormError(
                    f"$.texts[{i}][{at}]", f"text piece {shown(j)} is not an index of the {n} strings"
                )
        j = next(j for j in self.texts[i] if not isinstance(strings[j], str))
        return FileFormError(f"$.strings[{j}]", f"expected a string, got {shown(strings[j])}")

    def longest(self) -> int:
        """At least the length of the longest text in ``strings``."""
        if self._longest is None:
            try:  # a list among them counts its length: more than it joins to, never less
                self._longest = max(map(len, self.strings), default=0)
            except TypeError:  # a number among them: a text that joins it fails on it
                self._longest = max((len(s) for s in self.strings if isinstance(s, str)), default=0)
        return self._longest

    def graph(self, i: Any, label: str, stack: list, k: Any, inside: int | None) -> Any:
        if inside is not None:
            problem = f"graph reference {shown(i)} inside graph {inside}: a graph holds no graphs"
            if type(i) is int and i == inside:
                problem = f"graph {i} refers to itself"
            raise FileFormError(_path(label, stack, k), problem)
        if type(i) is not int or not 0 <= i < len(self.graphs):
            raise FileFormError(
                _path(label, stack, k), f"graph reference {shown(i)} outside the {len(self.graphs)} graphs"
            )
        if self.resolved[i] is _UNSET:
            self.resolved[i], self.weight[i] = self.walk(self.graphs[i], f"$.graphs[{i}]", i)
        self.spent += _limits.BUILT * self.weight[i]
        if self.spent > self.limit:
            raise self._over(
                label, stack, k, f"graph reference {i} ({self.weight[i]:,} values, built at each use)"
            )
        return self.resolved[i]

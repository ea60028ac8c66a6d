"""The report's JSON schema, read off the report dataclasses' type hints, and the one walk
that checks JSON against it while building the report objects (``Report.from_dict``).

Types: ``str``, ``int`` (not a bool), ``float`` (an int is fine), ``bool``, ``None``, unions
of them, ``tuple[X, ...]`` (a JSON list), ``dict[str, X]`` (a JSON object), ``Any``, and
nested dataclasses (a JSON object: the fields without a default are required, unknown keys
are ignored). docs/report-schema.md says the same for readers of the JSON.

Each type is compiled once into a check: a set of allowed Python types for scalars (one set
lookup per value), a decoder function otherwise. A mismatch raises ``SchemaError``; the JSON
path of the value is put together while the error unwinds, so a good report pays nothing
for it. The same walk checks a report object (``load_trace`` checks what it built).
"""

from __future__ import annotations

import dataclasses
import json
import operator
import types
import typing
from collections.abc import Callable
from typing import Any

_NONE = type(None)
_SCALARS: dict[Any, tuple[frozenset, str]] = {
    str: (frozenset({str}), "string"),
    int: (frozenset({int}), "int"),  # type(True) is bool: a bool is not an int here
    float: (frozenset({int, float}), "number"),
    bool: (frozenset({bool}), "bool"),
    _NONE: (frozenset({_NONE}), "null"),
}
_STR_KEYS = frozenset({str})


class SchemaError(Exception):
    """A value that does not fit the schema. ``where`` collects the JSON path while the
    error unwinds (innermost segment first); ``path`` is it spelled ``$.a[3].b``."""

    def __init__(self, problem: str):
        super().__init__(problem)
        self.problem = problem
        self.where: list[str] = []

    @property
    def path(self) -> str:
        return "$" + "".join(reversed(self.where))

    def __str__(self) -> str:
        return f"{self.path}: {self.problem}"


class _Check(typing.NamedTuple):
    allowed: frozenset | None  # scalar: the Python types a value may have; None: see decode
    decode: Callable[[Any], Any] | None  # non-scalar: value -> report value, or SchemaError
    desc: str  # what is expected, in words ("int or null")


_ANY = _Check(None, None, "anything")
_CHECKS: dict[Any, _Check] = {}


def decode(tp: Any, value: Any) -> Any:
    """``value`` (parsed JSON) as the report type ``tp``; raises SchemaError. A report
    object is checked the same way (a tuple passes for a list, an object for its JSON
    object) and comes back as it is."""
    c = check_of(tp)
    if c.decode is not None:
        return c.decode(value)
    if c.allowed is not None and not fits(value, c.allowed):
        raise SchemaError(f"expected {c.desc}, got {shown(value)}")
    return value


def check_of(tp: Any) -> _Check:
    c = _CHECKS.get(tp)
    if c is None:
        c = _CHECKS[tp] = _compile(tp)
    return c


def fits(value: Any, allowed: frozenset) -> bool:
    """Is the value of one of the allowed types? Exact types first (one set lookup); then
    subclasses (torch's version string is a str subclass), a bool never passing for an int."""
    if type(value) in allowed:
        return True
    if isinstance(value, bool):
        return False
    return any(isinstance(value, t) for t in allowed)


def shown(value: Any) -> str:
    """A value as a short JSON snippet for an error message."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "a list"
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _compile(tp: Any) -> _Check:
    if tp is Any:
        return _ANY
    if tp in _SCALARS:
        allowed, desc = _SCALARS[tp]
        return _Check(allowed, None, desc)
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return _union([check_of(a) for a in typing.get_args(tp)])
    if origin is tuple:
        elem, *rest = typing.get_args(tp)
        if rest != [Ellipsis]:
            raise TypeError(f"report types use tuple[X, ...], not {tp}")
        return _Check(None, _list_decoder(check_of(elem)), "a list")
    if origin is dict:
        key, value = typing.get_args(tp)
        if key is not str:
            raise TypeError(f"report types use dict[str, X], not {tp}")
        return _Check(None, _dict_decoder(check_of(value)), "an object")
    if dataclasses.is_dataclass(tp):
        return _Check(None, _dataclass_decoder(tp), f"an object ({tp.__name__})")
    raise TypeError(f"no JSON schema for the type {tp!r}")


def _union(members: list[_Check]) -> _Check:
    desc = " or ".join(m.desc for m in members)
    if any(m is _ANY for m in members):
        return _ANY
    if all(m.decode is None for m in members):
        return _Check(frozenset().union(*(m.allowed for m in members)), None, desc)
    scalars = frozenset().union(*(m.allowed for m in members if m.decode is None))
    decoders = [m.decode for m in members if m.decode is not None]
    if len(decoders) == 1:
        (inner,) = decoders

        if scalars == {_NONE}:  # the usual `X | None`

            def decode_optional(v: Any) -> Any:
                return None if v is None else inner(v)

            return _Check(None, decode_optional, desc)

        def decode_either(v: Any) -> Any:
            return v if fits(v, scalars) else inner(v)

        return _Check(None, decode_either, desc)

    def decode_union(v: Any) -> Any:
        if fits(v, scalars):
            return v
        for d in decoders:
            try:
                return d(v)
            except SchemaError:
                continue
        raise SchemaError(f"expected {desc}, got {shown(v)}")

    return _Check(None, decode_union, desc)


def _list_decoder(elem: _Check) -> Callable[[Any], tuple]:
    allowed, inner = elem.allowed, elem.decode

    def decode_list(v: Any) -> tuple:
        if type(v) is not list and not isinstance(v, (list, tuple)):
            raise SchemaError(f"expected a list, got {shown(v)}")
        if inner is None:
            if allowed is None or allowed.issuperset(map(type, v)):
                return tuple(v)
            i = next((i for i, x in enumerate(v) if not fits(x, allowed)), None)
            if i is None:  # subclasses of the types (a str subclass such as torch's version)
                return tuple(v)
            raise _at(SchemaError(f"expected {elem.desc}, got {shown(v[i])}"), f"[{i}]")
        try:
            return tuple([inner(x) for x in v])
        except SchemaError:
            for i, x in enumerate(v):  # again, one by one, for the index (error path only)
                try:
                    inner(x)
                except SchemaError as e:
                    raise _at(e, f"[{i}]") from None
            raise

    return decode_list


def _dict_decoder(value: _Check) -> Callable[[Any], dict]:
    allowed, inner = value.allowed, value.decode

    def decode_dict(v: Any) -> dict:
        if not isinstance(v, dict):
            raise SchemaError(f"expected an object, got {shown(v)}")
        if not _STR_KEYS.issuperset(map(type, v)) and not all(isinstance(k, str) for k in v):
            raise SchemaError("expected an object with string keys")
        if inner is None:
            if allowed is None or allowed.issuperset(map(type, v.values())):
                return dict(v)
            k = next((k for k, x in v.items() if not fits(x, allowed)), None)
            if k is None:
                return dict(v)
            raise _at(SchemaError(f"expected {value.desc}, got {shown(v[k])}"), json_path_key(k))
        out = {}
        for k, x in v.items():
            try:
                out[k] = inner(x)
            except SchemaError as e:
                raise _at(e, json_path_key(k)) from None
        return out

    return decode_dict


def _dataclass_decoder(tp: type) -> Callable[[Any], Any]:
    plan: list[tuple[str, frozenset | None, Callable | None, str, bool]] = []
    objects = _Objects()

    def decode_dataclass(v: Any) -> Any:
        if not plan:  # made at first use: the field types may refer back to tp
            plan[:] = _plan(tp)
            objects.plan(plan)
        built = None
        if type(v) is tp:  # a report object: checked field by field, returned as it is
            if objects.fit(v.__dict__):
                return v
            built, v = v, v.__dict__
        elif not isinstance(v, dict):
            raise SchemaError(f"expected an object ({tp.__name__}), got {shown(v)}")
        kw = {}
        for name, allowed, inner, desc, required in plan:
            x = v.get(name, v)  # v itself: the key is absent (a value is never its own dict)
            if x is v:
                if required:
                    raise SchemaError(f"missing required key {name!r} ({tp.__name__})")
                continue
            if inner is not None:
                try:
                    x = inner(x)
                except SchemaError as e:
                    raise _at(e, "." + name) from None
            elif allowed is not None and type(x) not in allowed and not fits(x, allowed):
                raise _at(SchemaError(f"expected {desc}, got {shown(x)}"), "." + name)
            kw[name] = x
        return built if built is not None else tp(**kw)

    return decode_dataclass


class _Objects:
    """The quick check of a report object of one dataclass (``load_trace`` checks the ~40,000
    objects it built, most of them nodes): its scalar fields' types at once, as one tuple
    that is looked up among those seen to fit (a type each field allows as it is, not only a
    subclass of one), then its other fields' decoders. Where it is not sure the object fits,
    the field-by-field walk decides (and names what does not fit)."""

    def __init__(self) -> None:
        self.scalars: Callable[[dict], tuple] = tuple  # the scalar fields' values
        self.allowed: list[frozenset] = []
        self.others: list[tuple[str, Callable]] = []  # (name, decoder) of the other fields
        self.fitting: set[tuple[type, ...]] = set()

    def plan(self, plan: list[tuple[str, frozenset | None, Callable | None, str, bool]]) -> None:
        scalars = [(name, allowed) for name, allowed, inner, _d, _r in plan if inner is None and allowed]
        names = [name for name, _a in scalars]
        if len(names) > 1:  # itemgetter of several names: a tuple of their values
            self.scalars = operator.itemgetter(*names)
        elif names:
            self.scalars = lambda fields, name=names[0]: (fields[name],)
        else:
            self.scalars = lambda fields: ()
        self.allowed = [allowed for _n, allowed in scalars]
        self.others = [(name, inner) for name, _a, inner, _d, _r in plan if inner is not None]

    def fit(self, fields: dict[str, Any]) -> bool:
        """True where the object's fields fit; False where the walk must decide (it raises)."""
        try:
            types_ = tuple(map(type, self.scalars(fields)))
        except KeyError:  # a field missing: the walk says which
            return False
        if types_ not in self.fitting:
            if not all(t in a for t, a in zip(types_, self.allowed)):
                return False
            self.fitting.add(types_)
        for name, inner in self.others:
            x = fields.get(name, fields)
            if x is fields:
                return False
            try:
                inner(x)
            except SchemaError:
                return False
        return True


def _plan(tp: type) -> list[tuple[str, frozenset | None, Callable | None, str, bool]]:
    """Per field: name, allowed scalar types, decoder, expected (in words), required."""
    hints = typing.get_type_hints(tp)
    plan = []
    for f in dataclasses.fields(tp):
        c = check_of(hints[f.name])
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        plan.append((f.name, c.allowed, c.decode, c.desc, required))
    return plan


def _at(e: SchemaError, segment: str) -> SchemaError:
    e.where.append(segment)
    return e


def json_path_key(k: str) -> str:
    return f".{k}" if k.isidentifier() else f"[{json.dumps(k)}]"

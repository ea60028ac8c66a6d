"""A census's JSON files (``census.json``, ``settings.json``, ``rows/<case>.json``): written
whole, read as input from anyone.

A census is a file anyone can send, so reading one is bounded and says what is wrong in one
line, a ``CensusFormatError`` naming the file and the JSON path, never a traceback: text that
is not UTF-8 or not JSON, nesting deeper than ``MAX_DEPTH`` (refused before json recurses
into it), a number that is not finite or is larger than ``MAX_NUMBER`` (``1e400``,
``10**400``: no view could print it), a string holding a lone surrogate (``"\\ud800"``: no
terminal, page or file can encode it), and settings that are not an object of the expected
field types.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_DEPTH = 16  # a census nests 6 deep ($.rows[i].breaks[j].compiles[k])
MAX_NUMBER = 2**53  # counts, seconds and megabytes; every integer up to it is exact as a float


class CensusFormatError(ValueError):
    """A census file that is not one: its message names the file and the JSON path."""


def bad(path: str, where: str, what: str) -> CensusFormatError:
    return CensusFormatError(f"{path}: {where}: {what}")


def read_json(path: str) -> Any:
    """The JSON value in the file ``path``, checked as the module says (OSError where it
    cannot be read)."""
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CensusFormatError(
            f"{path}: not a census file: byte 0x{raw[e.start]:02x} at offset {e.start} is not UTF-8"
        ) from None
    return parse_json(text, path)


def parse_json(text: str, path: str) -> Any:
    """``json.loads(text)``, checked as the module says; ``path`` names it in errors."""
    _check_depth(text, path)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as e:  # JSONDecodeError, an int of 5000 digits
        raise CensusFormatError(f"{path}: not JSON ({str(e) or type(e).__name__})") from None
    check_values(data, path)
    return data


def write_json(path: str, data) -> None:
    """``data`` as JSON at ``path``, whole or not at all."""
    from compiler._viewer import write_file

    write_file(path, json.dumps(data, indent=1) + "\n")


# a JSON string, or one of the characters that open, close or separate containers
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{},]')


def _check_depth(text: str, path: str) -> None:
    """CensusFormatError where ``text`` nests deeper than MAX_DEPTH, naming the JSON path of
    the first container too deep; before any parsing (json recurses once per level). Text
    that is not JSON passes here for json to refuse."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return
    stack: list[list] = []  # per open container: its opener, and its index or its last key
    key_next = False  # the next string of an object is a key
    for m in _TOKEN.finditer(text):
        t = m.group()
        if t in "[{":
            if len(stack) >= MAX_DEPTH:
                where = "$" + "".join(_step(o, k) for o, k in stack)
                raise bad(path, where, f"nested deeper than {MAX_DEPTH} levels")
            stack.append([t, 0 if t == "[" else None])
            key_next = t == "{"
        elif t in "]}":
            if stack:
                stack.pop()
            key_next = False
        elif t == ",":
            if stack and stack[-1][0] == "[":
                stack[-1][1] += 1
            key_next = bool(stack) and stack[-1][0] == "{"
        elif key_next:  # an object's key
            try:
                stack[-1][1] = json.loads(t)
            except ValueError:
                stack[-1][1] = t
            key_next = False


def _step(opener: str, at) -> str:
    if opener == "[":
        return f"[{at}]"
    if isinstance(at, str) and at.isidentifier() and at.isascii():
        return f".{at}"
    return f"[{json.dumps(at) if isinstance(at, str) else '?'}]"


def check_values(data: Any, path: str) -> None:
    """CensusFormatError for the first value (in the file's order) that is a number not
    finite or past MAX_NUMBER, or a string (value or key) that is not text (a lone
    surrogate)."""
    stack: list[tuple[str, Any]] = [("$", data)]
    while stack:
        where, v = stack.pop()
        t = type(v)
        if t is str:
            _check_text(v, path, where)
        elif t is float or t is int:
            if not (abs(v) <= MAX_NUMBER):  # False for nan too; an int is never made a float
                raise bad(path, where, f"expected a finite number of at most {MAX_NUMBER:,}, got {_shown(v)}")
        elif t is dict:
            items = []
            for k, x in v.items():
                _check_text(k, path, f"{where} (a key)")
                items.append((where + _step("{", k), x))
            stack += reversed(items)
        elif t is list:
            stack += reversed([(f"{where}[{i}]", x) for i, x in enumerate(v)])


def _check_text(s: str, path: str, where: str) -> None:
    if s.isascii():
        return
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as e:
        raise bad(
            path, where, f"not text: a lone surrogate ({ascii(s[e.start])}) at character {e.start}"
        ) from None


_SURROGATE = re.compile("[\ud800-\udfff]")


def as_text(value):
    """``value`` (a string, or lists, tuples and dicts of them) with each lone surrogate
    written as U+FFFD: what a census file holds (``check_values`` refuses them on reading)."""
    if isinstance(value, str):
        return value if value.isascii() else _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {as_text(k): as_text(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(as_text(v) for v in value)
    return value


def _shown(v: float | int) -> str:
    if isinstance(v, int):
        digits = len(str(abs(v)))
        return f"an integer of {digits} digits" if digits > 20 else str(v)
    return repr(v)


# settings.json and a census file's "settings": Settings' fields (explorer/census/_cases.py)
_SETTINGS = {
    "modes": "a list of strings",
    "precisions": "a list of strings",
    "backend": "a string",
    "compile_mode": "a string or null",
    "device": "a string",
    "timeout_s": "a number of seconds > 0",
    "memory_gb": "a number >= 0 or null",
    "bench": "true or false",
    "keep_trace": "true or false",
    "fresh": "true or false",
}


def _setting_ok(key: str, v) -> bool:
    number = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    if key in ("modes", "precisions"):
        return isinstance(v, list) and all(isinstance(m, str) for m in v)
    if key in ("backend", "device"):
        return isinstance(v, str)
    if key == "compile_mode":
        return v is None or isinstance(v, str)
    if key == "timeout_s":
        return number and v > 0
    if key == "memory_gb":
        return v is None or (number and v >= 0)
    return isinstance(v, bool)


def check_settings(settings: Any, path: str, where: str = "$") -> dict:
    """``settings`` where it is an object whose known fields have their types (others are
    kept as they are); CensusFormatError naming the first that does not fit."""
    if not isinstance(settings, dict):
        raise bad(path, where, f"expected an object of settings, got {_kind(settings)}")
    for key, what in _SETTINGS.items():
        if key in settings and not _setting_ok(key, settings[key]):
            v = settings[key]
            got = _kind(v) if not isinstance(v, (int, float)) or isinstance(v, bool) else repr(v)
            raise bad(path, f"{where}{_step('{', key)}", f"expected {what}, got {got}")
    return settings


def _kind(v) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(v), "a number"
    )

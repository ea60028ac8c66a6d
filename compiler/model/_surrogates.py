"""Lone surrogates: what JSON may spell (``"\\ud800"``) but no text holds. Python's json reads
such an escape into a str that cannot be encoded, so a report or a TORCH_TRACE log that has
one would make every output fail (printing, HTML, ``to_json``). One rule, wherever a file is
read (``compiler.load``, the log reader): each is replaced by U+FFFD, and the reader says
so in one line naming where (the JSON path, or the log's line).
"""

from __future__ import annotations

import re
from typing import Any

from ._schema import json_path_key

REPLACEMENT = "\ufffd"
_LONE = re.compile("[\ud800-\udfff]")
# a surrogate's escape in JSON text: what may read into a lone surrogate (a pair reads into
# one character: only where one is found are the values looked at)
_ESCAPE_TEXT = re.compile(r"\\u[dD][89a-fA-F]")
_ESCAPE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")


def may_hold(json_text: str | bytes) -> bool:
    """Could JSON ``json_text`` read into a lone surrogate? (It spells a surrogate's escape.)"""
    return (_ESCAPE_BYTES if isinstance(json_text, bytes) else _ESCAPE_TEXT).search(json_text) is not None


def replaced(data: Any, root: str = "$") -> tuple[Any, str | None, int]:
    """``data`` (parsed JSON) with each lone surrogate in its strings and keys replaced by
    U+FFFD, in place (a str as such: a new one); the JSON path of the first string that held
    one (in the order of the text) and how many did. No recursion."""
    if isinstance(data, str):
        return (_LONE.sub(REPLACEMENT, data), root, 1) if _LONE.search(data) else (data, None, 0)
    first: str | None = None
    count = 0
    stack: list[tuple[Any, Any, str]] = [(data, _items(data), root)]
    while stack:
        c, items, path = stack[-1]
        for k, v in items:
            here = path + (json_path_key(k) if isinstance(k, str) else f"[{k}]")
            if isinstance(k, str) and _LONE.search(k):
                del c[k]
                k = _LONE.sub(REPLACEMENT, k)
                c[k] = v  # the key as text (last among the object's keys)
                count += 1
                first = first or here
            if isinstance(v, str):
                if _LONE.search(v):
                    c[k] = _LONE.sub(REPLACEMENT, v)
                    count += 1
                    first = first or here
            elif isinstance(v, (dict, list)):
                stack.append((v, _items(v), here))
                break
        else:
            stack.pop()
    return data, first, count


def _items(c: dict | list):
    """A container's (key, value) pairs, taken before any is changed (a key replaced)."""
    return iter(list(c.items()) if isinstance(c, dict) else list(enumerate(c)))


def said(count: int, first: str, read: bool = True) -> str:
    """What was found, in words: ``2 strings held lone surrogates (not text; the first at
    $.x)``, and where ``read``, ``, read with U+FFFD in their place``."""
    what = "1 string held a lone surrogate" if count == 1 else f"{count:,} strings held lone surrogates"
    done = f", read with U+FFFD in {'its' if count == 1 else 'their'} place" if read else ""
    return f"{what} (not text; the first at {first}){done}"

"""``json.loads`` by orjson where it is installed: torch's timed-phase records
(``chromium_event``: a 200 MB TORCH_TRACE log holds ~46,000 of ~2.3 KB each; json.loads was
half of building the report's phases, orjson reads them 2-3x faster) and every event's
metadata line (~58,000). ``loads``: the same values as json, but for an integer past 64 bits,
which orjson reads as a float (a caller that keeps such a number checks it); ``loads_exact``:
the same values, a text with 20 digits in a row given to json; ``loads_bytes``: loads_exact of
bytes where orjson alone can tell it, else None (the reader's metadata lines, no str made).
What orjson refuses is given to json, which decides: NaN and Infinity, lone surrogates,
nesting past 1024 levels, and every error (json's JSONDecodeError and RecursionError, as
before). Without orjson, json."""

from __future__ import annotations

import json
from typing import Any

try:
    import orjson
except ImportError:  # an optional speed-up: json reads the same
    orjson = None


def loads(text: str) -> Any:
    """``json.loads(text)`` (an integer past 64 bits may come as a float)."""
    if orjson is not None:
        try:
            return orjson.loads(text)
        except (ValueError, TypeError):  # orjson.JSONDecodeError is a ValueError
            pass
    return json.loads(text)


_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 20


def loads_exact(text: str) -> Any:
    """``json.loads(text)``, every value as json reads it (short texts: event metadata)."""
    if orjson is not None:
        try:
            data = text.encode()
        except UnicodeEncodeError:  # a lone surrogate: json's
            return json.loads(text)
        if _LONG_NUMBER not in data.translate(_DIGITS):  # no integer past 64 bits
            try:
                return orjson.loads(data)
            except ValueError:
                pass
    return json.loads(text)


def loads_bytes(data: bytes) -> Any:
    """``loads_exact(data.decode())`` where orjson alone can tell it (UTF-8 text, no integer
    past 64 bits, nothing orjson refuses: event metadata as torch writes it); None elsewhere
    (JSON's null too): the caller then asks ``loads_exact`` with the decoded text, which
    decides, errors included."""
    if orjson is None or _LONG_NUMBER in data.translate(_DIGITS):
        return None
    try:
        return orjson.loads(data)  # invalid UTF-8 is refused
    except ValueError:
        return None

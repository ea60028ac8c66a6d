"""``json.loads`` by orjson where it is installed, for JSON read for its strings and ordinary
numbers (torch's timed-phase records, ``chromium_event``: a 200 MB TORCH_TRACE log holds ~46,000
of ~2.3 KB each; json.loads was half of building the report's phases, orjson reads them 2-3x
faster). The same values as json, but for an integer past 64 bits, which orjson reads as a float:
a caller that keeps such a number checks it. What orjson refuses is given to json, which
decides: NaN and Infinity, lone surrogates, nesting past 1024 levels, and every error (json's
JSONDecodeError and RecursionError, as before). Without orjson, json."""

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

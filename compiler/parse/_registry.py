"""torch's graph-break registry: the file torch ships that names every graph break it can
report (GB id -> type, explanation, hints), read without importing torch; and a break's
debug context, the "Key: value" lines torch's message gives it."""

from __future__ import annotations

import functools
import json
import os
import re
from typing import Any

from ..model._paths import torch_dir


@functools.lru_cache(maxsize=1)
def graph_break_registry() -> dict[str, list[dict[str, Any]]] | None:
    """torch's graph-break registry (torch/_dynamo/graph_break_registry.json): GB id ->
    entries of {Gb_type, Context, Explanation, Hints}, one per wording torch has used.
    None where the installed torch ships none (or no torch is installed)."""
    base = torch_dir()
    if base is None:
        return None
    path = os.path.join(base, "_dynamo", "graph_break_registry.json")
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def debug_context(text: str | None) -> dict[str, str]:
    """The "Key: value" lines of torch's ``Developer debug context`` of an Unsupported (the
    ``context`` torch's graph-break call was given), e.g. {"Backend": "inductor",
    "Exception": "aten._local_scalar_dense.default"}."""
    lines = (text or "").splitlines()
    at = next((i for i, ln in enumerate(lines) if ln.strip().startswith("Developer debug context:")), None)
    if at is None:
        return {}
    body = [lines[at].strip()[len("Developer debug context:") :], *lines[at + 1 :]]
    out: dict[str, str] = {}
    for ln in body:
        if not ln.strip():
            break
        key, sep, value = ln.strip().partition(":")
        if sep and key.isidentifier() and value.strip() and key not in out:
            out[key] = value.strip()
    return out


def logging_call(text: str | None) -> tuple[str, str] | None:
    """The logger and the method of a logging call Dynamo would not trace (GB0291's debug
    context ``method: <Logger transformers.modeling_utils (WARNING)>.warning_once, args: …``):
    ("transformers.modeling_utils", "warning_once"); None where the context names none."""
    m = re.match(r"<Logger (\S+) \([A-Z]+\)>\.(\w+)", debug_context(text).get("method", ""))
    return (m.group(1), m.group(2)) if m else None

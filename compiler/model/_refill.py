"""The one shape of an upgrade that fills in a fact the build now reads (compiler/model/_upgrades.py):
each record of a report's list that lacks it, made anew; the report left as it was."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def refilled(report: Any, key: str, missing: Callable[[Any], bool], read: Callable[[dict], dict]) -> Any:
    """``report`` (a report's JSON form) with each record of its list ``key`` for which
    ``missing`` holds replaced by ``read`` of it; ``report`` itself where none lacks it (or the
    list is not of the schema's shape: kept for the schema check to name)."""
    items = report.get(key) if isinstance(report, dict) else None
    if not isinstance(items, list) or not any(missing(x) for x in items):
        return report
    return {**report, key: [read(x) if missing(x) else x for x in items]}

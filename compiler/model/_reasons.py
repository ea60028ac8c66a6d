"""A recompile reason's short form, read once: the first line of each reason, torch's padding
before its ``# source`` comment made one gap (``Recompile.short_reasons``), and each failure's
first line without the cache entry torch names before it (``GuardFailure.short_reason``).
Read when the report is built (compiler/assemble/_derive.py), and when a report written before
it held them loads (``with_short_reasons``, one of ``UPGRADES``): in the file form's layer, so
that the loader reaches it."""

from __future__ import annotations

import re
from typing import Any

from ._refill import refilled

TORCH_ID = r"(?:!\d+/)?\d+/\d+"  # as torch prints one inside a text (a recompile reason's "0/0: ")
_ENTRY = re.compile(rf"^\s*{TORCH_ID}:\s*")  # the cache entry torch names before a recompile reason
_PADDING = re.compile(r"(?<! ) {3,}#")


def without_entry(reason: str) -> str:
    """A recompile reason without the cache entry torch names before it (``0/0: ``)."""
    return _ENTRY.sub("", reason)


def one_gap(reason: str) -> str:
    """A recompile reason's line with one gap before its ``# source`` comment: torch pads a
    guard's code to a column before it. (The gap starts a run of blanks: from every blank of
    a long run, the run was scanned again.)"""
    return _PADDING.sub("  #", reason)


def short_reasons(reasons: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Each reason that says something, as one line: its first (torch appends a "User stack
    trace:" block to some), with one gap before its comment."""
    return tuple(one_gap(r.strip().splitlines()[0]) for r in reasons if r.strip())


def failure_reason(reason: str) -> str:
    """A failure's reason as one line: its first, without the cache entry (``0/0: ``)."""
    return without_entry((reason.strip().splitlines() or [""])[0])


def with_short_reasons(report: Any) -> Any:
    """A report's JSON form with each recompile's ``short_reasons`` and each of its failures'
    ``short_reason`` (reports written before the build read them). ``report`` itself is left
    as it was; a part not of the schema's shape is kept for the schema check to name."""
    return refilled(report, "recompiles", _missing, _read)


def _texts(r: dict) -> list[str] | None:
    reasons = r.get("reasons")
    return reasons if isinstance(reasons, list) and all(isinstance(x, str) for x in reasons) else None


def _old_failure(f: Any) -> bool:
    return isinstance(f, dict) and "short_reason" not in f and isinstance(f.get("reason"), str)


def _missing(r: Any) -> bool:
    if not isinstance(r, dict):
        return False
    # the file form leaves an empty tuple out: a recompile without the key and without a reason
    # that says something is as the build made it
    texts = _texts(r)
    failures = r.get("failures")
    old_failures = isinstance(failures, list) and any(_old_failure(f) for f in failures)
    return ("short_reasons" not in r and bool(texts and short_reasons(texts))) or old_failures


def _read(r: dict) -> dict:
    out = dict(r)
    texts = _texts(r)
    if "short_reasons" not in r and texts:
        out["short_reasons"] = list(short_reasons(texts))
    failures = r.get("failures")
    if isinstance(failures, list):
        out["failures"] = [
            {**f, "short_reason": failure_reason(f["reason"])} if _old_failure(f) else f for f in failures
        ]
    return out

"""What a view shows of a report's strings: each within a length, cut with a marker that says
how much was left out, and each text output within a budget that says where it stopped.

A report is input from anyone: its file form shares a string among every place it stands
(compiler/model/_compact.py), so a file of a few kilobytes can put the same megabyte in
every graph break. Loading counts each use against the file's budget
(compiler/model/_limits.py), but a report within it may still hold lines no one reads whole.
Views cut each one-line field (a break's type, a hint, a summary line) at ``LINE``
characters and each text field (a reason, an explanation) at ``TEXT``; what they print goes
out whole up to ``OUTPUT`` characters. No real report's field or output is that long: they
show as before.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass, replace
from typing import Any

LINE = 4096  # characters of a field shown on one line
TEXT = 65536  # characters of a field shown as text (it may have lines of its own)
OUTPUT = 64 * 2**20  # characters a text view prints


def clip(text: str, most: int = LINE) -> str:
    """``text``, or its first ``most`` characters and a marker saying how many more there were."""
    if len(text) <= most:
        return text
    return f"{text[:most]}… [{len(text) - most:,} more characters not shown]"


def clipped(obj: Any, most: int = LINE) -> Any:
    """``obj`` (a view's dataclass, a tuple, a string) with each of its strings ``clip``ped;
    the object itself where none is longer than ``most``."""
    if isinstance(obj, str):
        return clip(obj, most)
    if isinstance(obj, tuple):
        out = tuple(clipped(x, most) for x in obj)
        return obj if all(a is b for a, b in zip(out, obj)) else out
    if is_dataclass(obj) and not isinstance(obj, type):
        changed = {}
        for f in fields(obj):
            value = getattr(obj, f.name)
            new = clipped(value, most)
            if new is not value:
                changed[f.name] = new
        return replace(obj, **changed) if changed else obj
    return obj


def bounded(text: str, most: int = OUTPUT) -> str:
    """``text`` whole, or up to the end of the line at ``most`` characters and a last line that
    says where it stopped."""
    if len(text) <= most:
        return text
    end = text.rfind("\n", 0, most) + 1 or most
    return (
        text[:end]
        + ("" if text[end - 1 : end] == "\n" else "\n")
        + f"… output stopped after {end:,} of {len(text):,} characters (at most {most:,} are printed)\n"
    )

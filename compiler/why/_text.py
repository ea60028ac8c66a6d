"""Small words the verdict's parts share: where a site is, a text's first line, a long name cut."""

from __future__ import annotations

import os


def where(filename: str | None, line: int | None) -> str:
    """``file.py:12`` (the file's base name), ``?`` where unknown."""
    return f"{os.path.basename(filename)}:{line}" if filename else "?"


def first_line(texts) -> str:
    """The first line of the first non-empty text, at most 200 characters."""
    text = next((t for t in texts if t), "")
    return (text.strip().splitlines() or [""])[0][:200]


def short(name: str, n: int = 60) -> str:
    return name if len(name) <= n else name[: n - 1] + "…"

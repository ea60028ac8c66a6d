"""Words every view uses for the same things: a compile's function name, a duration."""

from __future__ import annotations

from compiler.analysis import resume_of


def display_name(name: str | None) -> str:
    """`torch_dynamo_resume_in_forward_at_18` -> `forward (resumed after line 18)`."""
    if not name:
        return "?"
    resumed = resume_of(name)
    return f"{resumed[0]} (resumed after line {resumed[1]})" if resumed else name


def secs(s: float | None) -> str:
    return "-" if s is None else (f"{s:.2f} s" if s >= 0.1 else f"{s * 1000:.0f} ms")

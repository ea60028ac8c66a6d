"""Figures as text, with no float noise: a part of a call found by subtracting two times
(5.551e-17 ms), or a negative zero, is printed as the 0 it is. Torch-free."""

from __future__ import annotations

# below this a figure is rounding left over from subtracting times in ms (a nanosecond is 1e-6
# ms; no timer here resolves a femtosecond)
NOISE = 1e-9


def clean(x: float) -> float:
    """``x``, or 0.0 where it is float noise (``|x| < NOISE``, a negative zero included)."""
    return 0.0 if abs(x) < NOISE else x


def figure(x: float | None, spec: str = ".4g", none: str = "") -> str:
    """``x`` formatted by ``spec`` once cleaned (``clean``): ``figure(5.551e-17)`` is "0";
    ``none`` where ``x`` is None."""
    return none if x is None else format(clean(x), spec)

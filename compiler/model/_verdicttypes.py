"""The verdict's records (``compiler.analysis.verdict``): each cause of a compiled call's time, with its
share, evidence and fix, and the verdict that orders them. Frozen dataclasses, torch-free."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Cause:
    key: str  # fallback | backend | breaks | recompiles | cudagraphs | sync | guards | launch | library | generated | cpp-unprofiled | compile
    title: str
    ms: float | None  # of the compiled call's median (None: not a part of the call's time)
    share: float | None  # of the compiled call's median; the parts' shares add up to 1
    evidence: tuple[str, ...] = ()
    fix: str | None = None  # the change to make, as code to paste
    advice: str | None = None  # the change to make in words, where no code is the fix
    # what the fix can win at most (Amdahl: the call without the part the fix removes, ``removes``
    # of it): the compiled call up to ``gain``× faster; None where the cause has no fix, or no
    # share of the call to bound it from (recompiles), or its part is nearly all of the call
    gain: float | None = None
    removes: float | None = None  # the share of the call the fix removes (``gain`` = 1 / (1 - removes))

    @property
    def gain_words(self) -> str | None:
        """``its fix can make the call up to ~2.3× faster (it removes 57% of the call)``, or None."""
        if self.gain is None or self.removes is None:
            return None
        return f"its fix can make the call up to ~{self.gain:.3g}× faster (it removes {self.removes:.0%} of the call)"


@dataclass(frozen=True)
class Verdict:
    name: str  # the benchmark's
    headline: str
    speedup: float | None
    eager_ms: float | None
    compiled_ms: float | None
    main: str | None  # the key of the cause the headline names
    causes: tuple[Cause, ...] = ()
    missing: tuple[str, ...] = ()  # facts the benchmark did not record, and what that leaves open
    mode: str = "default"  # the mode the function was compiled with
    # why no cause is named, where the figures cannot carry one (the benchmark compiled anew,
    # or its cautions hold: ``compiler/why/_carry.py``); None: the headline names ``main``
    unread: str | None = None

    @property
    def fixes(self) -> tuple[str, ...]:
        """Each cause's fix, once each: the headline's cause first, then by share of the call
        (the causes that are no part of the call's time after those). None where the verdict
        names no cause (``unread``)."""
        if self.unread:
            return ()
        ranked = sorted(self.causes, key=lambda c: (c.key != self.main, -(c.share or 0.0)))
        return tuple(dict.fromkeys(c.fix for c in ranked if c.fix))

    @property
    def advice(self) -> tuple[str, ...]:
        """Each cause's advice (a change in words, where no code is the fix), once each, in
        the order of ``fixes``; none where the verdict names no cause (``unread``)."""
        if self.unread:
            return ()
        ranked = sorted(self.causes, key=lambda c: (c.key != self.main, -(c.share or 0.0)))
        return tuple(dict.fromkeys(c.advice for c in ranked if c.advice))

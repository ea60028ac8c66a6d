"""A record frozen but for the fields it names open (``Report.benchmarks``, which
``compiler.benchmark(report)`` adds to): every other field is set once, when the record is made."""

from __future__ import annotations

import dataclasses
from typing import Any


class FrozenBut:
    """Base of a dataclass (``eq=True``, not ``frozen``) whose fields are set once, but for
    those in its class attribute ``OPEN``; deleting any is refused."""

    OPEN: frozenset[str] = frozenset()

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self.OPEN and name in self.__dict__:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}: it is frozen")
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}: it is frozen")

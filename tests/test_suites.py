"""The two test sets (CONTRIBUTING.md, the set-up): `make test` deselects the marks the Makefile's LONG names,
`make test-slow` selects them. Every such mark is declared with why its tests are slow, and
every declared mark but `gpu` and `slow` is one of them: a new mark cannot fall out of both
sets, nor a long one into the quick set unnoticed."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_makefiles_long_marks_are_the_declared_ones():
    (long,) = re.findall(r"^LONG := (.+)$", (ROOT / "Makefile").read_text(), re.M)
    names = long.split(" or ")
    (block,) = re.findall(r"^markers = \[\n(.*?)^\]", (ROOT / "pyproject.toml").read_text(), re.M | re.S)
    declared = re.findall(r'^    "(\w+): ', block, re.M)
    assert "gpu" in declared and "corpus" in declared
    assert names == [d for d in declared if d not in ("gpu", "slow")]

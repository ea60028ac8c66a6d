"""The largest modules of compiler/ and explorer/ with their line counts (`make lint` prints them).

STYLE.md keeps modules under about 400 lines and splits them by role, never to get under a
size: this prints, it does not fail. `python benchmarks/sizes.py [N]` lists the N largest
(default 12) and how many modules pass 400 lines.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("compiler", "explorer")
LIMIT = 400  # STYLE.md's "under ~400 lines"


def sizes() -> list[tuple[int, str]]:
    """(lines, path) of every module of the packages, the largest first."""
    out = []
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            with path.open("rb") as f:
                out.append((sum(1 for _ in f), path.relative_to(ROOT).as_posix()))
    return sorted(out, key=lambda s: (-s[0], s[1]))


def main(argv: list[str]) -> None:
    most = int(argv[0]) if argv else 12
    every = sizes()
    over = sum(1 for n, _ in every if n > LIMIT)
    total = sum(n for n, _ in every)
    print(f"module sizes: {len(every)} modules, {total} lines; {over} over {LIMIT} lines; the largest:")
    for n, path in every[:most]:
        print(f"  {n:5d}  {path}")


if __name__ == "__main__":
    main(sys.argv[1:])

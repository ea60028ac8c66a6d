"""The largest modules of compiler/ and explorer/ (Python) and of extension/src (TypeScript)
with their line counts; `make lint` runs it.

CONTRIBUTING.md keeps modules at 400 lines or fewer, Python and TypeScript alike, split by role (a view, a parser, a lowering),
never to get under a size. `python benchmarks/sizes.py [N]` lists the N largest (default 12)
and exits 1, naming each, when a module has more than 400 lines: `make lint` fails on it.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# (folder, the modules' pattern): the Python packages and the extension's TypeScript sources
# (its tests, extension/test, and its build outputs, lib/ and labextension/, are not modules)
SOURCES = (("compiler", "*.py"), ("explorer", "*.py"), ("extension/src", "*.ts"))
LIMIT = 400  # CONTRIBUTING.md, the size rule: a module has at most this many lines


def sizes() -> list[tuple[int, str]]:
    """(lines, path) of every module of SOURCES, the largest first."""
    out = []
    for folder, pattern in SOURCES:
        for path in (ROOT / folder).rglob(pattern):
            with path.open("rb") as f:
                out.append((sum(1 for _ in f), path.relative_to(ROOT).as_posix()))
    return sorted(out, key=lambda s: (-s[0], s[1]))


def main(argv: list[str]) -> int:
    most = int(argv[0]) if argv else 12
    every = sizes()
    over = [(n, path) for n, path in every if n > LIMIT]
    total = sum(n for n, _ in every)
    print(f"module sizes: {len(every)} modules, {total} lines; {len(over)} over {LIMIT} lines; the largest:")
    for n, path in every[:most]:
        print(f"  {n:5d}  {path}")
    for n, path in over:
        print(f"{path}: {n} lines, over {LIMIT}: split it by role (CONTRIBUTING.md)", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Every view of every shipped report, printed by ``pt2-explorer report R --view V`` one after
another in one process (its stdout the caller's terminal), each led by a line
``MARK R V`` (``python tests/_every_view.py``). The reports: tests/fixtures/reports (a
directory of ranks: its ranks view) and notebooks/data/*.json.gz."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARK = "\u241e every view:"  # ␞: a line no view prints


def shipped() -> list[Path]:
    """The shipped reports: a file each, a directory of per-rank reports as itself."""
    fixtures = ROOT / "tests" / "fixtures" / "reports"
    return sorted(
        [*fixtures.glob("*.json.gz"), *(d for d in fixtures.iterdir() if d.is_dir())]
        + list((ROOT / "notebooks" / "data").glob("*.json.gz"))
    )


def runs() -> list[tuple[str, str]]:
    """(report, view) for every view of every shipped report: a directory has its ranks view."""
    import compiler
    from explorer.views._registry import names

    out = []
    for path in shipped():
        if path.is_dir():
            views = ["ranks"]
        elif _is_modes(compiler, path):  # compare_modes' result: its one text
            views = ["summary"]
        else:
            views = names()
        out += [(str(path.relative_to(ROOT)), v) for v in views]
    return out


def _is_modes(compiler, path: Path) -> bool:
    try:
        compiler.load_modes(str(path))
    except compiler.ReportFormatError:
        return False
    return True


def main() -> int:
    from explorer.cli import main as cli

    failed = 0
    for report, view in runs():
        print(f"\n{MARK} {report} {view}", flush=True)  # a view may end without its newline
        status = cli(["report", report, "--view", view])
        sys.stdout.flush()
        if status:
            print(f"\n{MARK} exit {status}", flush=True)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

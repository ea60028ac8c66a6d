"""The shipped recordings (notebooks/data) name lines of the scripts beside them, and the views
open the source around those lines from the files as they are now: each recorded frame whose
code torch kept must still be that line of its file, or a page shows the wrong code (a line
added above it shifts every line after)."""

from __future__ import annotations

from pathlib import Path

import compiler

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "notebooks" / "data"


def test_each_recorded_line_is_still_its_files_line():
    checked, wrong = 0, []
    for path in sorted(DATA.glob("*.json.gz")):
        try:
            report = compiler.load(path)
        except ValueError:
            continue  # not a report (a census, a mode comparison)
        for b in report.graph_breaks:
            for f in b.user_stack:
                file = ROOT / f.filename
                if (
                    not f.code
                    or f.line is None
                    or not f.filename.startswith("notebooks/data/")
                    or not file.exists()
                ):
                    continue
                lines = file.read_text(encoding="utf-8").splitlines()
                checked += 1
                now = lines[f.line - 1].strip() if f.line <= len(lines) else None
                if now != f.code.strip():
                    wrong.append(
                        f"{path.name}: {f.filename}:{f.line}: recorded {f.code.strip()!r}, now {now!r}"
                    )
    assert checked >= 10
    assert wrong == []

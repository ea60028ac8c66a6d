"""A saved ``compiler.compare_modes`` result (``ModeComparison.save``) reads without torch:
``compiler.load_modes`` and ``pt2-explorer report`` of it, bounded and checked as a report is
(compiler/model/_modetypes.py; docs/benchmark.md)."""

from __future__ import annotations

import copy
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import compiler
import explorer
from benchmarks.fuzz_reports import nested
from tests.test_reader_no_torch import _BLOCK

ROOT = Path(__file__).resolve().parents[1]
MODES = ROOT / "notebooks" / "data" / "h100-modes-mlp.json.gz"


def _write(path: Path, data) -> Path:
    path.write_text(json.dumps(data))
    return path


_MODES_CLI = """
import json, sys
from explorer.cli import main
codes = [main(["report", a]) for a in sys.argv[1:]]
print(json.dumps({"codes": codes, "heavy": sorted(m for m in sys.modules if m.split(".")[0] in HEAVY)}), file=sys.stderr)
"""


_IMPORTS = """
import sys
from explorer.cli import main
code = main(["report", sys.argv[1]])
print(f"torch imported: {'torch' in sys.modules}", file=sys.stderr)
sys.exit(code)
"""


def test_a_saved_modes_comparison_reads_without_torch(tmp_path):
    notreport = _write(tmp_path / "other.json", {"rows": "x"})
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", _BLOCK + _MODES_CLI, str(MODES), str(notreport)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    *errors, summary = proc.stderr.strip().splitlines()
    assert json.loads(summary) == {"codes": [0, 2], "heavy": []}
    assert errors == [f"pt2-explorer: error: {notreport}: not a PT2 Explorer report (no schema_version)"]
    assert proc.stdout.startswith("MLPBlock, 8×32×1024: modes\n")
    assert proc.stdout == explorer.text(compiler.load_modes(MODES))
    # where torch is installed: a file that is neither a report nor a comparison does not
    # import it either (it took a second and 200 MB to say so)
    proc = subprocess.run(
        [sys.executable, "-c", _IMPORTS, str(notreport)], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"pt2-explorer: error: {notreport}: not a PT2 Explorer report (no schema_version)",
        "torch imported: False",
    ]


def test_a_damaged_modes_comparison_names_the_value(tmp_path):
    data = json.loads(gzip.decompress(MODES.read_bytes()))
    good = copy.deepcopy(data)
    data["rows"][1]["config"]["dynamic"] = "yes"
    p = _write(tmp_path / "m.json", data)
    with pytest.raises(compiler.ReportFormatError) as e:
        compiler.load_modes(p)
    assert str(e.value) == f'{p}: $.rows[1].config.dynamic: expected bool or null, got "yes"'
    good["rows"][2]["report"]["compiles"][0]["metrics"] = nested(200)
    p = _write(tmp_path / "m.json", good)
    with pytest.raises(compiler.ReportFormatError) as e:
        compiler.load_modes(p)
    assert (
        str(e.value) == f"{p}: $.rows[2].report.compiles[0].metrics{'.a' * 97}: nested deeper than 100 levels"
    )

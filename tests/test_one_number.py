"""One number per fact (tests/_one_number.py) on the shipped GPU recordings
(notebooks/data/*.json.gz): every report among them, its text views and its static page; and
on the tour's recording (notebooks/00_tour.ipynb: its cells, run by ``%%compile`` in an IPython
shell as the notebook runs them). The GPT-2 training step's check is in
tests/test_terminal_fit.py (it records the step)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from _one_number import check

import compiler
import explorer
from explorer.lower._html import esc
from explorer.model._speed import cache_detail_lines

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
DATA = NOTEBOOKS / "data"
# the recordings that are reports (the others: censuses, mode comparisons, rank sets)
REPORTS = sorted(
    p.name
    for p in DATA.glob("*.json.gz")
    if not p.name.startswith(("census", "h100-modes")) and "ranks" not in p.name
)


def test_the_shipped_reports_are_listed():
    assert "h100-cudagraphs.json.gz" in REPORTS and "h100-caches.json.gz" in REPORTS and len(REPORTS) >= 12


@pytest.mark.parametrize("name", REPORTS)
def test_one_number_per_fact(name):
    report = compiler.load(DATA / name)
    assert check(report, explorer.html(report)) > 0


def test_cache_savings_nest_and_cuda_graph_sizes_say_what_they_count():
    """The warm compile's two cache hits: AOTAutograd's saving holds the FX graph's; the
    dynamic layer's CUDA graphs: 6 sizes recorded, torch's warning counted 5 when it warned."""
    caches = compiler.load(DATA / "h100-caches.json.gz")
    warm = next(c for c in caches.compiles if any(lk.state == "hit" for lk in c.caches))
    fx = next(lk for lk in warm.caches if lk.kind == "fx_graph")
    aot = next(lk for lk in warm.caches if lk.kind == "aotautograd")
    assert fx.time_saved_s < aot.time_saved_s  # torch's figures: the one inside the other
    # the summary: the run's caches in one line, torch's figure for the warm compile
    summary = explorer.text(caches, "summary")
    looked = sum(1 for c in caches.compiles if c.caches)
    assert (
        f"  caches: 1 of {looked} compiles from the cache (torch: saved {aot.time_saved_s:.2f} s); "
        in summary
    )
    assert "caches: FX graph hit" not in summary  # each compile's: folded in the page, in the compile view
    (line,) = [ln for ln in cache_detail_lines(caches) if ln.startswith(f"[{warm.id}] ")]
    assert f"<div>{esc(line)}</div>" in explorer.html(caches)
    assert (
        f"caches: FX graph hit, AOTAutograd hit · torch: saved {aot.time_saved_s:.2f} s (AOTAutograd's "
        f"figure: the compile that wrote the entry, with its FX graphs' {fx.time_saved_s:.2f} s inside it)"
    ) in line  # one saving: torch's figure for the compile, never the two added
    own = explorer.text(caches, "compiles", compile=str(warm.id))
    assert f"hit (saved {fx.time_saved_s:.2f} s, part of AOTAutograd's)" in own
    assert f"hit (saved {aot.time_saved_s:.2f} s, the FX graph's included)" in own
    graphs = compiler.load(DATA / "h100-cudagraphs.json.gz")
    text = explorer.text(graphs, "compiles", compile="3/0")
    assert "We have observed 5 distinct sizes." in text
    assert "[torch said this at its 5th size; 6 sizes were recorded in all]" in text


@pytest.mark.slow
def test_one_number_per_fact_on_the_tour(tmp_path, monkeypatch):
    """The tour's training step (cells "model" and "step" after its first cell), recorded by
    ``%%compile`` as in the notebook: a break, a recompile, a backward, Inductor's kernels."""
    ip = pytest.importorskip("IPython.testing.globalipapp").get_ipython()
    monkeypatch.chdir(tmp_path)
    nb = nbformat.read(NOTEBOOKS / "00_tour.ipynb", as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    for cell in [code[0], *(c for c in code if set(c.metadata.get("tags", ())) & {"model", "step"})]:
        result = ip.run_cell(cell.source)
        assert result.success, result.error_in_exec or result.error_before_exec
    report = explorer.reports["step"]
    # the cell, forward and its resume after the break, the cell's resumes; [1/1], [2/1]: the
    # batch of 12's recompiles
    assert [c.id for c in report.compiles] == ["0/0", "1/0", "2/0", "3/0", "4/0", "1/1", "2/1", "5/0"]
    assert report.kernels_of("1/0") and report.graph_breaks
    assert check(report, explorer.html(report)) >= len(report.compiles)

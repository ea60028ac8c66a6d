"""The H100 benchmark recordings in notebooks/data, read on CPU (see notebooks/data/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

import compiler

DATA = Path(__file__).parent.parent / "notebooks" / "data"


def test_gpu_benchmark_recording():
    r = compiler.load(DATA / "h100-bench-mlp.json.gz")
    (b,) = r.benchmarks
    assert (b.device, b.device_name, b.name) == ("cuda", "NVIDIA H100 80GB HBM3", "MLPBlock")
    assert (b.eager.reps, b.compiled.reps, b.profiled_calls, b.peak_gb_per_s) == (50, 50, 3, 3350.0)
    assert b.accuracy.ok and b.peak_memory_eager > 0 and b.peak_memory_compiled > 0
    triton = [k for k in b.kernels if k.kind == "triton"]
    assert {k.kernel for k in triton} == {k.name for k in r.kernels}
    assert {k.compile_id for k in triton} == {"0/0"}
    assert all(k.gb > 0 and k.gb_per_s > 0 for k in triton)
    (extern,) = [k for k in b.kernels if k.kind == "extern"]
    assert "gemm" in extern.name and extern.kernel is None
    assert sum(k.share for k in b.kernels) == pytest.approx(1.0)
    assert b.speedup == b.eager.median_ms / b.compiled.median_ms


def test_gpu_modes_recording():
    m = compiler.load_modes(DATA / "h100-modes-mlp.json.gz")
    labels = [
        "default",
        "reduce-overhead",
        "max-autotune",
        "default · dynamic",
        "default · dynamic · bfloat16",
    ]
    assert [r.label for r in m.rows] == labels
    assert all(r.skipped is None and r.error is None and r.benchmark.device == "cuda" for r in m.rows)
    assert m.row("default · dynamic · bfloat16").config.autocast == "bfloat16"
    assert m.row("default · dynamic").config.dynamic is True
    assert m.row("reduce-overhead").report.compiles[0].status == "ok"
    # CUDA graphs cut the launch overhead that dominates at this small batch (README in notebooks/data)
    ms = {r.label: r.benchmark.compiled.median_ms for r in m.rows}
    assert ms["reduce-overhead"] < ms["default"]


def test_modes_views_text_page_cli_and_widget(tmp_path):
    import explorer
    from explorer import cli

    m = compiler.load_modes(DATA / "h100-modes-mlp.json.gz")
    text = explorer.text(m)
    assert text.splitlines()[:3] == [
        "MLPBlock, 8×32×1024: modes",
        "configuration                 eager       compiled    speedup  compile  pays off                        caution",
        "default                       0.05614 ms  0.08701 ms  ×0.65    1.0 s    never (compiled is not faster)  compiled unstable",
    ]
    assert "\n[reduce-overhead]\nreduce-overhead on NVIDIA H100 80GB HBM3 (cuda, 16 threads)\n" in text
    assert "; never pays off (compiled is not faster)\n" in text

    # the static page: every configuration linked to its own recording, written beside it
    page = tmp_path / "modes.html"
    assert explorer.save_html(m, page) == str(page)
    html = page.read_text()
    for i, label, slug in (
        (0, "default", "default"),
        (4, "default · dynamic · bfloat16", "default-dynamic-bfloat16"),
    ):
        assert f'<a href="modes.{i}-{slug}.html">{label}</a>' in html
        assert f"{m.name}: {label}" in (tmp_path / f"modes.{i}-{slug}.html").read_text()
    assert html.count("plotly.js v") == 1 and "plotly_click" in html
    assert explorer.html(m).count('<a href="#mode-') == 5  # one page: links to its own sections

    assert cli.main(["report", str(DATA / "h100-modes-mlp.json.gz")]) == 0

    # user text in a configuration's name stays text
    hostile = compiler.types.ModeComparison(m.rows[:1], name="<script>alert(1)</script>")
    assert "<script>alert" not in explorer.html(hostile)

    # the widget: a button in each row opens that configuration's recording
    from explorer.pages._modes import modes_widget

    w = modes_widget(m)
    chart, title, grid, opened = w.children
    buttons = [c for c in grid.children if hasattr(c, "on_click")]
    assert [b.description for b in buttons] == [r.label for r in m.rows]
    buttons[1].click()
    (shown,) = opened.children
    assert shown.report is m.rows[1].report

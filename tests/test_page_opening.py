"""A page with a benchmark opens on "Why not faster", each benchmark's verdict in its header
(the shipped GPU recordings, notebooks/data); one without opens as before."""

from __future__ import annotations

import html
import re
from pathlib import Path

import compiler
import explorer
from explorer.views._registry import opening

DATA = Path(__file__).resolve().parent.parent / "notebooks" / "data"


def test_a_benchmarked_page_opens_on_why_with_the_verdict_in_its_header():
    report = compiler.load(DATA / "h100-why-gemm.json.gz")
    (b,) = report.benchmarks
    assert opening(report) == "why"
    page = explorer.html(report)
    head = page[: page.index('<div class="pt2x-tabs">')]
    said = html.escape(compiler.analysis.verdict(report, b).headline)
    assert f"<b>Why not faster</b> · {html.escape(b.name)}: {said}</div>" in head
    assert re.search(r'<button data-tab="tab-why" class="on">', page)
    assert '<section class="pt2x-tab" id="tab-why">' in page  # shown, not hidden
    assert '<section class="pt2x-tab" id="tab-compiles" hidden>' in page


def test_a_page_without_a_benchmark_opens_as_before():
    report = compiler.load(DATA / "h100-caches.json.gz")
    assert not report.benchmarks and opening(report) == "compiles"
    assert 'class="pt2x-verdict"' not in explorer.html(report)

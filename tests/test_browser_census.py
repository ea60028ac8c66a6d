"""The census page of the shipped H100 census (notebooks/data/census-h100-speed.json, 390 rows)
in Chromium at 1,400 px: the row table fits the window (its columns fold: family under the
model, precision under the mode, both arms' times under the speedup), the headline table has
each group's compile time and peak memory beside its speedup, every row with a finding links
to a report or says that none was kept, and a training step that compiled faster than its
eval call carries a note. Facts are read from the census file itself, not from our objects.
Screenshot: test-artifacts/browser/test_census_page.png."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from _lab import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, require_browser

from explorer.census._table import load_census
from explorer.census._view import census_page

pytestmark = pytest.mark.browser

DATA = Path(__file__).resolve().parent.parent / "notebooks" / "data"
CENSUS = DATA / "census-h100-speed.json"


def _raw() -> list[dict]:
    return json.loads(CENSUS.read_text())["rows"]


def test_census_page_fits_the_window_with_compile_time_memory_links_and_notes(tmp_path):
    require_browser()
    from playwright.sync_api import sync_playwright

    census = load_census(CENSUS)
    links = {r.key: str(census.report_path(r)) for r in census.rows if census.report_path(r)}
    page_path = tmp_path / "census.html"
    page_path.write_text(census_page(census, links), encoding="utf-8")
    raw = _raw()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(page_path.as_uri())
            widths = page.evaluate(
                "[document.getElementById('census').getBoundingClientRect().right,"
                " document.documentElement.scrollWidth]"
            )
            assert max(widths) <= 1400, widths  # no sideways scrolling
            page.locator("#census").scroll_into_view_if_needed()
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "test_census_page.png"))
            head = page.eval_on_selector_all("table.headline th", "hs => hs.map(h => h.textContent)")
            cells = page.eval_on_selector_all(
                "table.headline tbody tr", "rs => rs.map(r => [...r.cells].map(c => c.textContent))"
            )
            rows = page.eval_on_selector_all(
                "#census tbody tr",
                "rs => rs.map(r => [r.id, r.cells[0].textContent, r.cells[0].querySelector('a')?.getAttribute('href')"
                " ?? null, r.cells[6].textContent])",
            )
            assert not errors
        finally:
            browser.close()
    # the headline: hf-base fp32 eval's median compile time and peak memory (eager's over compiled's)
    assert head[-2:] == ["compile", "peak memory"]
    group = [r for r in raw if (r["source"], r["precision"], r["mode"]) == ("hf-base", "fp32", "eval")]
    times = sorted(r["compile_time_s"] for r in group if r.get("compile_time_s") is not None)
    ratios = [r["peak_mb_eager"] / r["peak_mb_compiled"] for r in group if r.get("peak_mb_compiled")]
    mem = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
    (hf,) = [c for c in cells if c[:3] == ["hf-base", "fp32", "eval"]]
    assert hf[-2:] == [f"{times[len(times) // 2]:.1f} s", f"{mem:.2f}×"]
    # every row with a finding links to a report, or says none was kept
    by_id = {r[0]: r for r in rows}
    assert len(rows) == len(raw) == 390
    finding = [r for r in raw if r["status"] != "one graph" or (r.get("speedup") or 9) < 1.05]
    for r in finding:
        key = f"{r['model']}:{r['mode']}" + (f":{r['precision']}" if r["precision"] != "fp32" else "")
        row = by_id["row-" + "".join(c if c.isalnum() or c in "-_" else "_" for c in key)]
        if r.get("report"):
            assert row[2].endswith(r["report"]), row
        else:
            assert row[2] is not None or row[1] == f"{r['model']}its report was not kept{r['family']}", row
    # the AMP eval row of gpt2 breaks as its fp32 row does: it links to that report, and says so
    (gpt2,) = [v for k, v in by_id.items() if k == "row-gpt2_eval_amp"]
    assert gpt2[2].endswith("census-h100-speed/gpt2.eval.json.gz")
    assert gpt2[1] == "gpt2the fp32 row's report (the same finding)decoder"
    # odd rows: qwen3's training step compiled in 10.1 s, its eval call in 49.7 s
    (qwen,) = [v for k, v in by_id.items() if k == "row-qwen3_train_amp"]
    assert (
        qwen[3]
        == "10.1 sodd: compiled in 10.1 s, faster than eval's 49.7 s though it compiles a backward too"
    )

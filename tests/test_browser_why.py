"""Every name in the Why tab is a way in, clicked in Chromium on the static page of shipped H100
reports (notebooks/data/h100-why-gemm.json.gz, h100-cause-item.json.gz) and of a CPU run
recorded here:

- a kernel opens the Compiles tab on its compile, its row and source in codegen, and selects
  its nodes in the fuse graph (as many as the report's kernel has);
- a line of the model opens the source around it (read from the file itself) and the kernels
  made from it;
- a break site opens that break in the Breaks tab;
- a fix is a code block whose copy button puts the verdict's fix on the clipboard.

Screenshots: test-artifacts/browser/test_why_*.png."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest
import torch
from _lab import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, VIEWPORT, require_browser

import compiler
import compiler._viewer
from explorer.pages._page import report_html

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "notebooks" / "data"


@contextlib.contextmanager
def _page(report, tmp_path, name):
    require_browser()
    from playwright.sync_api import sync_playwright

    path = tmp_path / f"{name}.html"
    path.write_text(report_html(report), encoding="utf-8")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            ctx = browser.new_context(viewport=VIEWPORT)
            ctx.grant_permissions(["clipboard-read", "clipboard-write"])
            page = ctx.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(path.as_uri())
            yield page
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"test_why_{name}.png"))
            assert not errors, errors
        finally:
            browser.close()


def _kernel_lands(page, report, name: str, cid: str) -> None:
    """A click on kernel ``name`` in the Why tab lands on its compile, its codegen row and
    source, and its nodes selected in the fuse graph."""
    from playwright.sync_api import expect

    (k,) = [k for k in report.kernels if k.name == name and k.compile_id == cid]
    page.locator("#tab-why").locator(f'a.pt2x-why-link[data-kernel="{name}"] >> visible=true').first.click()
    expect(page.locator("#tab-compiles")).to_be_visible()
    assert page.locator("#pt2x-compile").input_value() == cid
    box = page.locator(f".pt2x-compile[data-id='{cid}']")
    source = box.locator("details", has=page.locator("summary", has_text=f" kernel {name} ("))
    expect(source.first).to_have_attribute("open", "")
    view = box.locator(f'.pt2x-gv[data-kernel="{name}"]')
    expect(view.locator(".pt2x-gv-info tr", has_text="count")).to_have_text(f"count{len(k.nodes)}")
    page.locator("[data-tab=tab-why]").click()


def _copy_lands(page, fix: str) -> None:
    from playwright.sync_api import expect

    block = page.locator("#tab-why .pt2x-fix", has=page.locator("code", has_text=fix)).first
    expect(block.locator("code")).to_have_text(fix)
    block.locator("button.pt2x-copy").click()
    expect(block.locator("button.pt2x-copy")).to_have_text("copied")
    assert page.evaluate("navigator.clipboard.readText()") == fix


def test_why_tab_ways_in_on_an_h100_page(tmp_path):
    from playwright.sync_api import expect

    report = compiler.load(DATA / "h100-why-gemm.json.gz")
    v = compiler.analysis.verdict(report, report.benchmarks[0])
    with _page(report, tmp_path, "gemm") as page:
        expect(page.locator("#tab-why")).to_be_visible()  # a GPU page opens on Why
        _kernel_lands(page, report, "triton_poi_fused_addmm_gelu_view_1", "0/0")
        # the model's line: the source around it, as the file reads, and the kernels it made
        line = page.locator("#tab-why details", has=page.locator("summary", has_text="make_gpu_data.py:34"))
        line.locator("summary").click()
        source = (DATA / "make_gpu_data.py").read_text().splitlines()[33]
        expect(line.locator("pre.src .hl")).to_contain_text(source.strip())
        made = {k.name for k in report.kernels if k.compile_id == "0/0" and k.role == "forward"}
        links = line.locator("a.pt2x-why-link").all_text_contents()
        assert made <= set(links), (made, links)
        # each fix a code block with a copy button
        fixes = [c.fix for c in v.causes if c.fix]
        assert fixes and page.locator("#tab-why button.pt2x-copy").count() == len(fixes)
        for fix in fixes:
            _copy_lands(page, fix)


def test_why_tab_break_sites_open_the_break(tmp_path):
    from playwright.sync_api import expect

    report = compiler.load(DATA / "h100-cause-item.json.gz")
    sites = [b for b in report.graph_breaks]
    assert len(sites) == 2
    with _page(report, tmp_path, "breaks") as page:
        links = page.locator("#tab-why a.pt2x-why-link[data-break]")
        expect(links).to_have_count(2)
        for i in range(2):
            site = links.nth(i).get_attribute("data-break")
            links.nth(i).click()
            target = page.locator(f'[id="break-{site}"]')
            expect(page.locator("#tab-breaks")).to_be_visible()
            expect(target).to_be_in_viewport()
            expect(target.locator("b").first).to_have_text(site)
            page.locator("[data-tab=tab-why]").click()


def _scaled(x):
    y = x.sin() * 2
    s = y.sum().item()  # the break: Tensor.item()
    return y.cos() * s


def test_why_tab_ways_in_on_a_cpu_page(tmp_path):
    """A CPU run: its C++ kernel opens its code and nodes; the .item() break's fix is copied."""
    torch._dynamo.reset()
    with contextlib.redirect_stdout(io.StringIO()):
        with compiler.recording() as rec:
            compiled = torch.compile(_scaled)
            x = torch.randn(4096)
            compiled(x)
        compiler._viewer.remember_benchmark_subject(rec.report, _scaled, compiled, (x,), {})
        compiler.benchmark(rec.report, reps=5, warmup=1, progress=False)
    report = rec.report
    costs = compiler.analysis.kernel_costs(report, report.benchmarks[0])
    cpp = next(c for c in costs if c.kind == "cpp" and c.kernel and c.compile_id)
    v = compiler.analysis.verdict(report, report.benchmarks[0])
    fix = next(c.fix for c in v.causes if c.key == "breaks")
    assert fix == "torch._dynamo.config.capture_scalar_outputs = True"
    with _page(report, tmp_path, "cpu") as page:
        page.locator("[data-tab=tab-why]").click()
        _kernel_lands(page, report, cpp.kernel, cpp.compile_id)
        _copy_lands(page, fix)
    torch._dynamo.reset()

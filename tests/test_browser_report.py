"""Reading a real report in a real browser: a Hugging Face GPT-2 training step (tests/hf_corpus.py
``gpt2_train``, Inductor on CPU: 5 frames, 5 compiles, 1 break site, 17 kernels) recorded once
per session with ``pt2-explorer record -q --json --html`` (the console script beside this
python), then read on its static page (file://) and in JupyterLab (tests/_lab.py), each checked
against the text views of the same report: one number per fact, on every surface.

- the record: ``-q`` prints the program's output and one line naming what it wrote;
- the page and the notebook explorer open the compiles tab on the compile with the most work
  ([1/0] forward, its kernels), not the first compile (an empty wrapper frame);
- a compile's time is the same figure in the compiles tab and in the compile-time tab, whose
  phases are named in words with torch's name beside; a break's compiles are said one way in
  the header, the breaks tab and the text;
- a break's stack holds neither this tool's frames (the console script, the CLI) nor IPython's
  machinery; a ``%%compile`` cell's frames read ``Cell In[N], line M`` as IPython's do.

Screenshots: test-artifacts/browser/test_report_*.png. The JupyterLab server is given this
checkout's build of the lab extension (extension/labextension, where built) ahead of the one
installed in the venv. Skipped without /usr/bin/chromium, unless PT2X_REQUIRE_BROWSER=1 (CI).
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import pytest
from _corpus_run import record_scenario
from _lab import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, VIEWPORT, notebook, require_browser, run_notebook, serve
from _torch_trace import read_log

import compiler
import explorer
from explorer.model._summary import where_source
from explorer.model._view import build_view

pytestmark = [pytest.mark.browser, pytest.mark.corpus]  # GPT-2 from tests/hf_corpus.py

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
CELLS_DONE_S = 240
STACK_CELLS = (
    "%load_ext explorer\nimport torch",
    'def f(x):\n    y = x.sin()\n    print("hi")  # the break: line 3 of this cell\n    return y.cos()',
    "%%compile --backend eager\nz = f(torch.randn(3))",
)


@contextmanager
def _chromium():
    """A Chromium page (file:// pages need no server) and the errors raised on it."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            yield page, errors
        finally:
            browser.close()


def _launcher() -> list[str]:
    """The console script a user runs (``pt2-explorer``), else ``python -m explorer``."""
    script = Path(sys.executable).parent / "pt2-explorer"
    return [str(script)] if script.exists() else [sys.executable, "-m", "explorer"]


@pytest.fixture(scope="session")
def gpt2(tmp_path_factory):
    """The GPT-2 training step recorded once: (report, its JSON, its page, record's stderr)."""
    require_browser()
    pytest.importorskip("transformers")
    out = tmp_path_factory.mktemp("gpt2")
    json_path, html_path = out / "gpt2.json", out / "gpt2.html"
    run = record_scenario(
        _launcher(), out, "gpt2_train", ["--json", str(json_path), "--html", str(html_path)]
    )
    assert run.returncode == 0, run.stderr
    return compiler.load(json_path), json_path, html_path, run


def _torch_says(
    json_path: Path, cid: str
) -> tuple[dict[str, str], dict[str, str], dict[str, list[str]], dict]:
    """What torch's own log of the run (TORCH_TRACE) says of compile ``cid``: Dynamo's graph
    (node -> the function it calls), the forward post-grad graph (node -> ATen op) and
    Inductor's provenance (``postToPre``; ``cppCodeToPost``: kernel call -> post-grad nodes)."""
    (log,) = (json_path.parent / "trace").glob("*.log")
    dynamo, post, prov = {}, {}, {}
    call = re.compile(r'^ +(\w+)(?:: "[^"]*")? = ([\w.]+)\(', re.MULTILINE)
    for meta, payload in read_log(str(log)):
        if f"{meta.get('frame_id')}/{meta.get('frame_compile_id')}" != cid:
            continue
        name = (meta.get("artifact") or {}).get("name")
        if "dynamo_output_graph" in meta:
            dynamo = dict(call.findall(payload))
        elif name == "inductor_post_grad_graph" and not post:  # the forward's comes first
            post = {n: _op(t) for n, t in call.findall(payload)}
            post |= {
                n: "getitem" for n in re.findall(r'^ +(\w+): "[^"]*" = \w+\[\d+\]', payload, re.MULTILINE)
            }
        elif name == "inductor_provenance_tracking_node_mappings" and "postToPre" in payload:
            prov = json.loads(payload)
    return dynamo, post, prov["postToPre"], prov


def _line(code: str) -> int:
    """The line of tests/hf_corpus.py that reads ``code``."""
    return (TESTS / "hf_corpus.py").read_text().splitlines().index(code) + 1


def _most_work(report) -> str:
    """The compile with the most kernels, from the report's own kernel list."""
    return max(report.compiles, key=lambda c: len(report.kernels_of(c.id))).id


def _compile_time(report, cid: str) -> str:
    """The compile's time as its text view says it."""
    return re.search(r"compile time +(\S+ m?s)\n", explorer.text(report, "compiles", compile=cid))[1]


def test_record_quiet_names_what_it_wrote(gpt2):
    report, json_path, html_path, run = gpt2
    assert run.stdout == ""  # the program prints nothing; -q: no summary
    assert run.stderr.splitlines()[-1] == f"pt2-explorer: wrote {json_path}, {html_path}"
    assert len(report.kernels) == 17 and len(report.compiles) == 5


@pytest.mark.slow
def test_report_page_opens_on_what_matters_and_says_one_number_per_fact(gpt2):
    from playwright.sync_api import expect

    report, _json, html_path, _run = gpt2
    busiest = _most_work(report)
    label = next(c for c in build_view(report).compiles if c.compile_id == busiest).label
    said = _compile_time(report, busiest)
    (brk,) = report.graph_breaks
    hits = f"hit {brk.count}×; logged in " + ", ".join(f"[{c}]" for c in brk.compile_ids)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with _chromium() as (page, errors):
        page.goto(html_path.as_uri())
        # one phrase for a break's compiles: the header, the breaks tab and the text
        expect(page.locator(".pt2x li.brk").first).to_contain_text(f"({hits})")
        expect(page.locator("#tab-breaks .break").first).to_contain_text(hits)
        assert f"({hits})" in explorer.text(report, "breaks")
        # no frame of the tool that ran the program
        stack = page.locator("#tab-breaks .stack").first.inner_text()
        main, call = (
            _line("    SCENARIOS[name](backend)"),
            _line("    out = step(input_ids=ids, labels=ids)"),
        )
        assert re.match(
            rf"stack: \S*tests/hf_corpus\.py:{main} in <module> → \S*tests/hf_corpus\.py:{call} in gpt2_train → ",
            stack,
        ), stack
        assert "pt2-explorer" not in stack and "explorer/" not in stack and "runpy" not in stack
        page.screenshot(path=str(ARTIFACTS / "test_report_page-breaks.png"))
        # the compiles tab opens on the compile with the most kernels
        page.locator("[data-tab=tab-compiles]").click()
        expect(page.locator("#pt2x-compile option:checked")).to_have_text(label)
        shown = page.locator(f'.pt2x-compile[data-id="{busiest}"]')
        expect(shown).to_be_visible()
        expect(shown.locator("tr", has_text="compile time").first).to_contain_text(said)
        # its guards grouped by kind, each kind explained, the numbers of the text view
        text = explorer.text(report, "capture", compile=busiest)
        title = re.search(r"^guards by kind \(.*\)$", text, re.MULTILINE)[0]
        kinds = shown.locator("table", has=page.locator("th", has_text="what it checks on each call"))
        expect(kinds.locator("xpath=preceding-sibling::h3[1]")).to_have_text(title)
        first = re.search(r"^guards by kind .*\n.*\n(\w+) +(\d+) +(.*)$", text, re.MULTILINE)
        expect(kinds.locator("tbody tr").first).to_have_text(
            re.compile(rf"^{first[1]}\s*{first[2]}\s*{re.escape(first[3])}$")
        )
        expect(shown.locator("h3", has_text="guards by source")).to_be_visible()
        page.screenshot(path=str(ARTIFACTS / "test_report_page-compiles.png"))
        # its kernels, the largest first, sortable; the extern calls its wrapper makes
        table = shown.locator("table", has=page.locator("th", has_text="nodes fused"))
        shown.locator("summary", has_text="codegen").first.click()
        expect(table.locator("tbody tr")).to_have_count(len(report.kernels_of(busiest)))
        lines = [int(x) for x in table.locator("tbody tr td:nth-child(4)").all_inner_texts()]
        assert lines == sorted(lines, reverse=True)
        table.locator("th", has_text="lines").click()  # largest first, then smallest
        table.locator("th", has_text="lines").click()
        lines = [int(x) for x in table.locator("tbody tr td:nth-child(4)").all_inner_texts()]
        assert lines == sorted(lines)
        externs = shown.locator("table", has=page.locator("th", has_text="call"))
        expect(externs.locator("tr", has_text="extern_kernels.addmm").first).to_be_visible()
        page.screenshot(path=str(ARTIFACTS / "test_report_page-kernels.png"), full_page=True)
        # a kernel's link while the fuse section is collapsed: the section opens and its graph
        # shows the kernel's nodes
        fused = next(k for k in report.kernels_of(busiest) if k.role == "forward" and k.nodes)
        fuse = page.locator(
            f".pt2x-compile[data-id='{busiest}'] > details",
            has=page.locator("summary", has_text=re.compile("^fuse$")),
        )
        assert fuse.get_attribute("open") is None
        table.locator(f'a.pt2x-kernel-link[data-kernel="{fused.name}"]').click()
        expect(fuse).to_have_attribute("open", "")
        view = fuse.locator(f'.pt2x-gv[data-kernel="{fused.name}"]')
        expect(view.locator(".pt2x-gv-info tr", has_text="count")).to_have_text(f"count{len(fused.nodes)}")
        expect(view).to_be_in_viewport()
        # the same figure heads its waterfall; phases in words, torch's name beside
        page.locator("[data-tab=tab-time]").click()
        head = page.locator("#tab-time h4", has_text=f"[{busiest}] ")
        expect(head).to_contain_text(f"compile time {said}")
        expect(page.locator("#tab-time .pt2x-ph").first).to_contain_text("Dynamo, the whole frame (dynamo)")
        expect(page.locator("#tab-time")).to_contain_text("tracing the bytecode (bytecode_tracing)")
        assert f"[{busiest}] forward — compile time {said}" in explorer.text(report, "time")
        page.screenshot(path=str(ARTIFACTS / "test_report_page-time.png"))
        assert not errors, errors


def _op(target: str) -> str:
    """The op torch's target names: ``torch.ops.aten.addmm.default`` -> ``addmm``."""
    return target.split(".")[3].rstrip("_") if target.startswith("torch.ops.") else target.rsplit(".", 1)[-1]


@pytest.mark.slow
def test_search_with_fields_in_the_joint_graph(gpt2):
    """The joint graph of [1/0] on the page: ``op:addmm`` finds the addmm nodes alone (not the
    views made on the same source line), ``op:layer_norm`` the nodes LayerNorm decomposed into,
    ``module:ln_1`` the nodes of those modules; no match clears the node panel."""
    from playwright.sync_api import expect

    report, json_path, html_path, _run = gpt2
    busiest = _most_work(report)
    joint = report.compile(busiest).stages.autograd.joint
    addmm = [n.name for n in joint.nodes if _op(n.target) == "addmm"]
    ln_1 = [n.name for n in joint.nodes if n.module and "ln_1" in n.module]
    assert addmm and ln_1 and not any(_op(n.target) == "layer_norm" for n in joint.nodes)
    made = {
        n.source for n in report.compile(busiest).stages.capture.graph.nodes if _op(n.target) == "layer_norm"
    }
    from_ln = [n.name for n in joint.nodes if n.source in made]
    with _chromium() as (page, errors):
        page.goto(html_path.as_uri())
        view = _stage_graph(page, busiest, "autograd")
        # it opens on the compile's largest kernel whose nodes it shows (the first such row of
        # the codegen table), its nodes marked, closer than "fit" would
        rows = re.findall(
            r"^(forward|backward) +(\w+) +cpp +(\d+)", explorer.text(report, "codegen", compile=busiest), re.M
        )
        nodes = {k.name: k.nodes for k in report.kernels_of(busiest)}
        names = {n.name for n in joint.nodes}
        role, largest, lines = next(r for r in rows if set(nodes[r[1]]) & names)
        expect(view).to_have_attribute(
            "data-focus", f"{largest}: the largest kernel shown here ({lines} lines)"
        )
        marked = view.locator(".pt2x-gv-hit").evaluate_all("els => els.map(e => e.dataset.name)")
        assert role == "forward" and marked and set(marked) <= set(nodes[largest]), (marked, nodes[largest])
        focused = float(view.get_attribute("data-scale"))
        view.screenshot(path=str(ARTIFACTS / "test_report_page-opens-on-kernel.png"))
        view.get_by_role("button", name="fit", exact=True).click()
        expect(view).not_to_have_attribute("data-scale", f"{focused:.4f}")
        assert float(view.get_attribute("data-scale")) < focused / 2
        search, hits, info = (view.locator(c) for c in (".pt2x-gv-search", ".pt2x-gv-hits", ".pt2x-gv-info"))
        search.fill("op:addmm")
        expect(hits).to_have_text(f"1 of {len(addmm)}")
        expect(info.locator("tr", has_text="target").first).to_contain_text("aten.addmm")
        expect(view.locator(".pt2x-gv-selected")).to_have_attribute("data-name", addmm[0])
        search.press("Enter")  # the Enter that ends the typing stays on the match shown
        expect(hits).to_have_text(f"1 of {len(addmm)}")
        expect(view.locator(".pt2x-gv-selected")).to_have_attribute("data-name", addmm[0])
        search.press("Enter")  # the next match, the panel following it
        expect(hits).to_have_text(f"2 of {len(addmm)}")
        expect(info.locator("tr", has_text="name").first).to_contain_text(addmm[1])
        search.fill("module:ln_1")
        expect(hits).to_have_text(f"1 of {len(ln_1)}")
        search.fill("op:layer_norm")  # the nodes of the lines where Dynamo's graph called it
        expect(hits).to_have_text(f"1 of {len(from_ln)}")
        assert view.locator(".pt2x-gv-selected").get_attribute("data-name") in from_ln
        view.screenshot(path=str(ARTIFACTS / "test_report_page-search.png"))
        search.fill("op:no_such_op")
        expect(hits).to_have_text("no match")
        expect(info).to_have_text("no node matches op:no_such_op")
        expect(view.locator(".pt2x-gv-selected")).to_have_count(0)
        # the fuse view's graph: a node's row names the kernel it was fused into
        k = next(k for k in report.kernels_of(busiest) if k.role == "forward" and k.nodes)
        fuse = page.locator(
            f".pt2x-compile[data-id='{busiest}'] > details",
            has=page.locator("summary", has_text=re.compile("^fuse$")),
        )
        fuse.evaluate("d => d.open = true")
        graph = fuse.locator("h3", has_text="forward graph coloured by kernel").locator(
            "xpath=following-sibling::div[contains(@class, 'pt2x-graph')][1]"
        )
        graph.scroll_into_view_if_needed()
        fv = graph.locator(".pt2x-gv").first
        fv.locator(".pt2x-gv-box, .pt2x-gv-node").first.wait_for()
        fv.locator(".pt2x-gv-search").fill(k.nodes[0])
        row = fv.locator(".pt2x-gv-info tr", has=page.locator("th", has_text=re.compile("^kernel$")))
        expect(row.locator("td")).to_have_text(k.name)
        fv.screenshot(path=str(ARTIFACTS / "test_report_page-fuse-kernel.png"))
        _links_between_nodes_kernels_and_lines(page, fuse, report, json_path, busiest)
        assert not errors, errors


def _links_between_nodes_kernels_and_lines(page, fuse, report, json_path, busiest):
    """The fuse table's node (a swatch beside) selects itself in the graph; its kernel, named
    by torch's provenance, shows its codegen row, whose kernel selects its nodes again; the
    census pairs layer_norm with what torch's graphs made of it, as the text view does."""
    from playwright.sync_api import expect

    dynamo, post, post_to_pre, prov = _torch_says(json_path, busiest)
    first = next(k for k in prov["cppCodeToPost"] if k.startswith("cpp_fused"))
    kernel = first.split(":")[0]
    fused = {n for k, ns in prov["cppCodeToPost"].items() if k.split(":")[0] == kernel for n in ns}
    node = next(n for n in prov["cppCodeToPost"][first] if post.get(n) == "var_mean")
    table = fuse.locator("table", has=page.locator("th", has_text="colour"))
    row = table.locator(f'tr[data-kernel="{kernel}"]')
    expect(row.locator(".pt2x-swatch")).to_have_count(1)
    row.locator(f'a.pt2x-node-link[data-node="{node}"]').click()
    view = fuse.locator(".pt2x-gv", has=page.locator(f'.pt2x-gv-selected[data-name="{node}"]'))
    info = view.locator(".pt2x-gv-info")
    expect(info.locator("tr", has=page.locator("th", has_text=re.compile("^kernel$")))).to_have_text(
        f"kernel{kernel}"
    )
    line = report.compile(busiest).stages.decompose.post_grad[0].graph
    src = next(n.source for n in line.nodes if n.name == node)
    same = [n.name for n in line.nodes if n.source == src and n.op != "placeholder"]
    expect(info.locator("tr", has_text="from this line")).to_contain_text(f"{len(same)} nodes: ")
    view.screenshot(path=str(ARTIFACTS / "test_report_page-node-kernel.png"))
    info.locator("a.pt2x-code-link").click()  # the kernel's row in codegen
    code = page.locator(f".pt2x-compile[data-id='{busiest}'] tr.pt2x-flash")
    expect(code).to_have_attribute("data-kernel", kernel)
    expect(code).to_be_in_viewport()
    source = page.locator(
        f".pt2x-compile[data-id='{busiest}'] details[open] > summary", has_text=f" kernel {kernel} ("
    )
    expect(source).to_have_count(1)  # and its source, opened
    page.screenshot(path=str(ARTIFACTS / "test_report_page-kernel-row.png"))
    first = code.locator("a.pt2x-line-link").first  # a source line it came from: its nodes
    where = first.get_attribute("data-line")
    made = [
        n.name for n in line.nodes if n.source and where_source(n.source) == where and n.op != "placeholder"
    ]
    first.click()
    expect(fuse.locator(f'.pt2x-gv[data-line="{where}"] .pt2x-gv-info tr', has_text="made")).to_contain_text(
        f"{len(made)} node{'s' if len(made) > 1 else ''}: {', '.join(made)}"
    )
    code.locator("a.pt2x-kernel-link").click()  # and back: the kernel's nodes in the graph
    view = fuse.locator(f'.pt2x-gv[data-kernel="{kernel}"]')
    expect(view.locator(".pt2x-gv-info tr", has_text="count")).to_have_text(f"count{len(fused)}")
    view.screenshot(path=str(ARTIFACTS / "test_report_page-kernel-nodes.png"))
    # the census: layer_norm's forward row holds what torch's own graphs say
    norms = {n for n, fn in dynamo.items() if fn == "torch.nn.functional.layer_norm"}
    made = Counter(post[n] for n, pre in post_to_pre.items() if pre[0] in norms and n in post)
    after = ", ".join(f"{op} {k}" for op, k in sorted(made.items(), key=lambda kv: (-kv[1], kv[0]))[:6])
    census = page.locator(
        f".pt2x-compile[data-id='{busiest}'] table", has=page.locator("th", has_text="traced by")
    )
    expect(census.locator("tr", has_text=f"layer_norm {len(norms)}").first).to_have_text(
        re.compile(rf"^forward\s*layer_norm {len(norms)}\s*{re.escape(after)}\s*provenance$")
    )
    text = explorer.text(report, "decompose", compile=busiest)
    assert re.search(
        rf"^forward +layer_norm {len(norms)} +{re.escape(after)} +provenance$", text, re.MULTILINE
    )


def _lab_extension(tmp: Path) -> None:
    """This checkout's build of the lab extension, ahead of the venv's (JUPYTER_DATA_DIR is
    searched first): what these tests exercise is this tree's, where it is built."""
    built = ROOT / "extension" / "labextension"
    if (built / "package.json").exists():
        (tmp / "data" / "labextensions").mkdir(parents=True)
        (tmp / "data" / "labextensions" / "pt2-explorer").symlink_to(built)


@pytest.fixture(scope="module")
def lab(gpt2, tmp_path_factory):
    _report, json_path, _html, _run = gpt2
    tmp = tmp_path_factory.mktemp("lab")
    _lab_extension(tmp)
    notebooks = {
        "gpt2.ipynb": notebook(
            f"import compiler, explorer\nexplorer.Explorer(compiler.load({str(json_path)!r}))"
        ),
        "stack.ipynb": notebook(*STACK_CELLS),
    }
    with serve(tmp, notebooks) as lab:
        yield lab


def _explorer(page):
    return page.locator(
        ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output", has=page.locator(".widget-tab")
    ).first


def _tab(page, label: str):
    return page.locator(
        ".jp-NotebookPanel:not(.lm-mod-hidden) .widget-tab .lm-TabBar-tab", has_text=label
    ).first


@pytest.mark.slow
def test_report_in_jupyterlab_opens_on_what_matters_with_the_pages_numbers(lab, gpt2, request):
    from playwright.sync_api import expect

    report = gpt2[0]
    busiest = _most_work(report)
    label = next(c for c in build_view(report).compiles if c.compile_id == busiest).label
    said = _compile_time(report, busiest)
    with run_notebook(lab, "gpt2.ipynb", "test_report_lab") as s:
        page = s.page
        tab = _tab(page, "Compiles (5)")
        tab.wait_for(timeout=CELLS_DONE_S * 1000)
        tab.click()
        widget = _explorer(page)
        expect(widget.locator(".widget-dropdown select option:checked").first).to_have_text(label)
        expect(widget.locator("tr", has_text="compile time").first).to_contain_text(said)
        # the same guard groups and kernel order as the text view
        text = explorer.text(report, "capture", compile=busiest)
        title = re.search(r"^guards by kind \(.*\)$", text, re.MULTILINE)[0]
        expect(widget.locator("h3", has_text="guards by kind").first).to_have_text(title)
        s.shot("compiles", widget)
        _tab(page, "codegen").click()
        kernels = widget.locator("table", has=page.locator("th", has_text="nodes fused")).first
        rows = re.findall(
            r"^\w+ +(\w+) +cpp +\d+", explorer.text(report, "codegen", compile=busiest), re.MULTILINE
        )
        expect(kernels.locator("tbody tr td:nth-child(2)")).to_have_text(rows)
        s.shot("kernels", widget)
        # a kernel selects its nodes in the fuse tab's graph, whose panel leads back to codegen
        largest = next(k for k in report.kernels_of(busiest) if k.name in rows and k.nodes)
        kernels.locator(f'a.pt2x-kernel-link[data-kernel="{largest.name}"]').click()
        view = widget.locator(f'.pt2x-gv[data-kernel="{largest.name}"]')
        expect(view.locator(".pt2x-gv-info tr", has_text="count")).to_have_text(f"count{len(largest.nodes)}")
        s.shot("kernel-nodes", widget)
        view.locator(".pt2x-gv-info a.pt2x-code-link").click()
        expect(widget.locator("tr.pt2x-flash")).to_have_attribute("data-kernel", largest.name)
        _tab(page, "Compile time").click()
        expect(widget.locator("h4", has_text=f"[{busiest}] ")).to_contain_text(f"compile time {said}")
        expect(widget.locator(".pt2x-ph", has_text="(bytecode_tracing)").first).to_contain_text(
            "tracing the bytecode (bytecode_tracing)"
        )
        s.shot("time", widget)
        assert not s.errors, s.errors


@pytest.mark.slow
def test_cell_stacks_read_as_ipython_says_them(lab, request):
    from playwright.sync_api import expect

    with run_notebook(lab, "stack.ipynb", "test_report_stack") as s:
        page = s.page
        tab = _tab(page, "Graph breaks (1)")
        tab.wait_for(timeout=CELLS_DONE_S * 1000)
        brk = _explorer(page).locator(".pt2x .break").first
        expect(brk).to_be_visible()
        # the %%compile cell's line, then the function's: no IPython frame, no frame of ours
        expect(brk.locator(".stack")).to_have_text(
            re.compile(r"^stack: Cell In\[(\d+)\], line 1 → Cell In\[(\d+)\], line 3 in f$")
        )
        stack = brk.locator(".stack").inner_text()
        cells = [int(n) for n in re.findall(r"In\[(\d+)\]", stack)]
        assert cells[0] == cells[1] + 1, stack  # the %%compile cell ran right after f's
        # the graph before the break is f's (the function that broke), not the cell's
        _explorer(page).get_by_role("button", name=re.compile(r"^graph before ")).click()
        chosen = _explorer(page).locator(".widget-dropdown select option:checked").first
        expect(chosen).not_to_have_text(re.compile(r"__pt2_cell__"))
        expect(chosen).to_have_text(
            re.compile(r"^\[\d+/\d+\]\s+f\s+\W+\s+ok$")
        )  # ipywidgets writes no-break spaces
        s.shot("break", _explorer(page))
        assert not s.errors, s.errors


BENCHED = ROOT / "notebooks" / "data" / "h100-bench-mlp.json.gz"  # an H100 run, benchmarked
RECOMPILED = TESTS / "fixtures" / "traces" / "cpu-torch213-breaks.log.gz"  # two recompiles
KEYED = TESTS / "fixtures" / "traces" / "h100-torch211-breaks.log.gz"  # 4 compiles, 3 cache keys each
EVIL = "</script><img src=x onerror=\"document.title='pwned'\"><b>not bold</b>"


def test_static_page_has_the_benchmark_kernel_times_the_recompiles_diffs_and_the_cache_keys(tmp_path):
    from playwright.sync_api import expect

    require_browser()
    benched, recompiled, keyed = (
        compiler.load(BENCHED),
        compiler.load_trace(RECOMPILED),
        compiler.load_trace(KEYED),
    )
    explorer.save_html(benched, str(tmp_path / "bench.html"))
    explorer.save_html(recompiled, str(tmp_path / "recompiles.html"))
    explorer.save_html(keyed, str(tmp_path / "keys.html"))
    (first, *rest) = keyed.compiles
    hostile = dataclasses.replace(
        first,
        caches=(
            dataclasses.replace(first.caches[0], component_lines=(EVIL, *first.caches[0].component_lines)),
            *first.caches[1:],
        ),
    )
    explorer.save_html(dataclasses.replace(keyed, compiles=(hostile, *rest)), str(tmp_path / "hostile.html"))
    (bench,) = benched.benchmarks
    times = {k.kernel: k.per_call_ms for k in bench.kernels if k.kernel}
    with _chromium() as (page, errors):
        page.goto((tmp_path / "bench.html").as_uri())
        page.locator("[data-tab=tab-bench]").click()
        expect(page.locator("#tab-bench")).to_contain_text(bench.speedup_words)
        page.locator("[data-tab=tab-compiles]").click()
        page.locator(".pt2x-compile:visible summary", has_text="codegen").first.click()
        table = page.locator(".pt2x-compile:visible table", has=page.locator("th", has_text="ms per call"))
        names = table.locator("tbody tr td:nth-child(2)").all_inner_texts()
        assert names == sorted(times, key=lambda n: -times[n])  # the slowest first, as measured
        ms = table.locator("tbody tr td:nth-child(7)").all_inner_texts()
        assert ms == [f"{times[n]:.4g}" for n in names]  # the Benchmark tab's figures
        table.locator("th", has_text="ms per call").click()
        table.locator("th", has_text="ms per call").click()
        assert table.locator("tbody tr td:nth-child(2)").all_inner_texts() == names[::-1]
        page.screenshot(path=str(ARTIFACTS / "test_report_page-bench-kernels.png"), full_page=True)
        page.goto((tmp_path / "recompiles.html").as_uri())
        page.locator("[data-tab=tab-recompiles]").click()
        for r in recompiled.recompiles:
            diff = page.locator(f'details.pt2x-page-diff[data-diff="{r.failed_entry}-{r.compile_id}"]')
            diff.locator("summary").first.click()
            expect(diff.locator(".pt2x-diff h2")).to_have_text(
                explorer.diff_compiles(recompiled, r.failed_entry, r.compile_id).title
            )
        page.screenshot(path=str(ARTIFACTS / "test_report_page-diffs.png"))
        if explorer.lower._html.browser_highlighting():
            _code_highlighted_when_shown(page)
        page.goto((tmp_path / "keys.html").as_uri())
        _shared_texts_shown_as_the_report_holds_them(page, keyed)
        page.goto((tmp_path / "hostile.html").as_uri())
        title = page.title()
        hostile_report = dataclasses.replace(keyed, compiles=(hostile, *rest))
        key = _shared_texts_shown_as_the_report_holds_them(page, hostile_report, [hostile.id])[0]
        assert key.startswith(EVIL + "\n") and page.title() == title  # text: no element, no handler ran
        assert page.locator(".pt2x-compile img, .pt2x-compile pre b").count() == 0
        assert not errors, errors


def _shared_texts_shown_as_the_report_holds_them(page, report, ids=None) -> list[str]:
    """Each compile's cache keys and metrics (``LinesBlock``s, put together by the page's
    script when opened), opened one by one: the report's key components exactly, and the
    metrics as the view has them (``torch's key: json``, a line each). Returns the texts shown."""
    page.locator("[data-tab=tab-compiles]").click()
    shown = []
    for cv in build_view(report).compiles:
        if ids is not None and cv.compile_id not in ids:
            continue
        c = report.compile(cv.compile_id)
        page.select_option("#pt2x-compile", c.id)
        blocks = page.locator(f'.pt2x-compile[data-id="{c.id}"] > details[data-lines]')
        keys = [(f"{lk.kind} cache key components", lk.components) for lk in c.caches if lk.components]
        metrics = [(b.title, b.code) for b in cv.blocks if b.title == "compilation metrics"]
        assert len(keys) == 3 and len(metrics) == 1 and blocks.count() == 4
        texts = []
        for i, (title, text) in enumerate(keys + metrics):
            block = blocks.nth(i)
            block.locator("summary").click()
            expect_title = f"{title} ({text.count(chr(10)) + 1} lines)"
            assert block.locator("summary").inner_text() == expect_title
            texts.append(block.locator("pre").evaluate("e => e.textContent"))
            assert texts[-1] == text
        shown += texts
    return shown


def _stage_graph(page, cid: str, stage: str):
    """The first graph of compile ``cid``'s ``stage`` on the page, mounted (the autograd
    stage's: the joint graph)."""
    page.locator("[data-tab=tab-compiles]").click()
    details = page.locator(
        f".pt2x-compile[data-id='{cid}'] > details",
        has=page.locator("summary", has_text=re.compile(f"^{stage}$")),
    )
    details.evaluate("d => d.open = true")
    details.locator(".pt2x-graph").first.scroll_into_view_if_needed()
    view = details.locator(".pt2x-gv").first
    view.locator(".pt2x-gv-box").first.wait_for()
    return view


_INNERMOST = """(e, name) => {
  const n = e.querySelector(`.pt2x-gv-node[data-name="${name}"]`).getBoundingClientRect();
  const around = [...e.querySelectorAll('.pt2x-gv-cluster')].filter(c => {
    const r = c.querySelector('rect').getBoundingClientRect();
    return r.x <= n.x && r.y <= n.y && r.right >= n.right && r.bottom >= n.bottom;
  });
  around.sort((a, b) => a.querySelector('rect').getBoundingClientRect().width - b.querySelector('rect').getBoundingClientRect().width);
  return around.length ? around[0].dataset.label : null;
}"""


@pytest.mark.slow
def test_joint_graph_readable_at_every_zoom(gpt2):
    """The joint graph of [1/0] (forward and backward, GPT-2): opened with the ops' labels on;
    at fit, module names at a fixed
    readable size instead of the ops' specks; zoomed in, the ops; backward runs named as their
    module's backward; expand all / collapse all; a minimap following the view; saved tensors
    as ports, not edges across the drawing; a backward node linked to its forward node."""
    from playwright.sync_api import expect

    report, _json, html_path, _run = gpt2
    busiest = _most_work(report)
    joint = report.compile(busiest).stages.autograd.joint
    back = {n.name for n in joint.nodes if n.backward}
    saved = {a for n in joint.nodes if n.backward for a in n.args if a not in back}
    ln = next(n for n in joint.nodes if n.backward and n.module == "transformer.h.0.ln_1" and n.grad_of)
    fwd = next(n for n in joint.nodes if n.name == ln.grad_of)
    with _chromium() as (page, errors):
        page.goto(html_path.as_uri())
        view = _stage_graph(page, busiest, "autograd")
        opened = float(view.get_attribute("data-scale"))
        assert opened >= 0.7
        expect(view).not_to_have_class(re.compile(r"\bpt2x-gv-far\b"))
        view.get_by_role("button", name="fit", exact=True).click()
        expect(view).not_to_have_attribute("data-scale", f"{opened:.4f}")
        k = float(view.get_attribute("data-scale"))
        assert k < 0.7
        expect(view).to_have_class(re.compile(r"\bpt2x-gv-far\b"))
        expect(view.locator(".pt2x-gv-nodes text").first).to_be_hidden()  # no op specks
        labels = view.locator(".pt2x-gv-label:not([display])").evaluate_all(
            "es => es.map(e => [e.textContent, e.getBoundingClientRect().height])"
        )
        boxes = view.locator(".pt2x-gv-box, .pt2x-gv-cluster").evaluate_all(
            "es => es.map(e => e.dataset.label)"
        )
        assert len(labels) >= 8 and all(t in boxes and h >= 12 for t, h in labels), labels
        assert "transformer (backward)" in [t for t, _h in labels]
        view.screenshot(path=str(ARTIFACTS / "test_report_graph-fit.png"))
        # no module name takes the click meant for a box: each box shown is on top at its centre
        taken = view.evaluate("""v => {
            const s = v.querySelector('.pt2x-gv-stage').getBoundingClientRect();
            return [...v.querySelectorAll('.pt2x-gv-box')].flatMap(b => {
                const r = b.getBoundingClientRect(), x = r.x + r.width / 2, y = r.y + r.height / 2;
                const shown = x > s.x && x < s.right && y > s.y && y < s.bottom;
                return shown && !b.contains(document.elementFromPoint(x, y)) ? [b.dataset.label] : [];
            });
        }""")
        assert taken == [], taken
        # the minimap's rectangle is the part shown: it moves as the view pans
        mini = view.locator(".pt2x-gv-mini-view")
        x0 = float(mini.get_attribute("x"))
        stage = rect_of(view.locator(".pt2x-gv-stage"))
        page.mouse.move(stage["x"] + 100, stage["y"] + 100)
        page.mouse.down()
        page.mouse.move(stage["x"] + 300, stage["y"] + 100, steps=5)
        page.mouse.up()
        assert abs(float(mini.get_attribute("x")) - (x0 - 200 / k)) < 2
        # a backward node: in its module's backward box, linked to the forward node it
        # differentiates, which lists it back
        view.locator(".pt2x-gv-search").fill(f"name:{ln.name}")
        expect(view.locator(".pt2x-gv-selected")).to_have_attribute("data-name", ln.name)
        assert view.evaluate(_INNERMOST, ln.name) == "transformer.h.0.ln_1 (backward)"
        expect(view).not_to_have_class(re.compile(r"\bpt2x-gv-far\b"))  # zoomed in: the ops
        expect(view.locator(f'.pt2x-gv-node[data-name="{ln.name}"] text').first).to_be_visible()
        view.screenshot(path=str(ARTIFACTS / "test_report_graph-zoom.png"))
        info = view.locator(".pt2x-gv-info")
        expect(info.locator("tr", has_text="side")).to_contain_text("backward")
        info.locator("tr", has_text="gradient of").locator("button").click()
        expect(view.locator(".pt2x-gv-selected")).to_have_attribute("data-name", fwd.name)
        assert view.evaluate(_INNERMOST, fwd.name) == fwd.module
        expect(
            info.locator("tr", has_text="backward nodes").locator(f'button[data-node="{ln.name}"]')
        ).to_have_count(1)
        # collapse all: every module one box, the saved tensors as ports
        view.get_by_role("button", name="collapse all").click()
        expect(view.locator(".pt2x-gv-box")).not_to_have_count(0)
        ports = view.locator(".pt2x-gv-port-saved")
        assert sum(int(n) for n in ports.evaluate_all("es => es.map(e => e.dataset.tensors)")) == len(saved)
        pairs = ports.evaluate_all(
            "es => es.flatMap(e => e.dataset.to.split(' ').map(t => `${e.dataset.leaf}>${t}`))"
        )
        drawn = view.locator(".pt2x-gv-edges path").evaluate_all(
            "es => es.map(e => `${e.dataset.from}>${e.dataset.to}`)"
        )
        assert pairs and not set(pairs) & set(drawn)  # no edge drawn from the forward into the backward
        view.screenshot(path=str(ARTIFACTS / "test_report_graph-collapsed.png"))
        # expand all, on Dynamo's graph of the same compile: every node drawn on its own
        dynamo = _stage_graph(page, busiest, "capture")
        dynamo.get_by_role("button", name="expand all").click()
        expect(dynamo).to_have_attribute(
            "data-leaves", str(len(report.compile(busiest).stages.capture.graph.nodes))
        )
        expect(dynamo.locator(".pt2x-gv-box")).to_have_count(0)
        dynamo.screenshot(path=str(ARTIFACTS / "test_report_graph-expanded.png"))
        assert not errors, errors


def rect_of(locator) -> dict:
    return locator.evaluate("e => { const r = e.getBoundingClientRect(); return {x: r.x, y: r.y}; }")


def _code_highlighted_when_shown(page) -> None:
    """The page ships code as text (``<pre data-lang>``): a block is highlighted (highlight.js,
    the colours of the page's stylesheet) when its <details> opens, its text unchanged; the
    blocks still closed wait."""
    from playwright.sync_api import expect

    page.locator("[data-tab=tab-compiles]").click()
    shown = page.locator(".pt2x-compile:visible")
    waiting = shown.locator("pre[data-lang=python]").count()
    assert waiting >= 2
    shown.locator("pre[data-lang=python]").first.evaluate("e => e.id = 'pt2x-test-code'")
    pre = page.locator("#pt2x-test-code")
    text = pre.text_content()
    assert "def forward" in text and pre.locator("span").count() == 0
    pre.locator("xpath=ancestor::details[1]/summary").click()
    keyword = pre.locator(".hljs-keyword", has_text=re.compile("^def$")).first
    expect(keyword).to_be_visible()
    assert keyword.evaluate("e => getComputedStyle(e).color") == "rgb(215, 58, 73)"  # .hljs-keyword
    assert pre.text_content() == text and pre.get_attribute("data-lang") is None
    assert shown.locator("pre[data-lang=python]").count() == waiting - 1  # the others wait
    page.screenshot(path=str(ARTIFACTS / "test_report_page-code.png"))


@pytest.mark.slow
def test_every_graph_opens_readable_and_backward_runs_say_so(gpt2):
    """Every graph of the compile with the most work (Dynamo's, the joint, forward and backward
    graphs, the post-grad and fuse graphs) opens at a zoom where its ops' labels show (0.7 and
    above, none of the far view's module labels), some of them on screen; a backward graph's
    module runs are "(backward)", never "(run N)", as torch's backward graph is one run of the
    backward, whatever order it visits the modules in; no graph names a module's "(run N)", as
    GPT-2 calls each module once. An addmm node's row names the library call it runs as, and
    links to its row in codegen, opening that section."""
    from playwright.sync_api import expect

    report, _json, html_path, _run = gpt2
    busiest = _most_work(report)
    autograd = report.compile(busiest).stages.autograd
    assert autograd.backward is not None  # torch's aot_backward_graph: a backward to look at
    seen = []
    with _chromium() as (page, errors):
        page.goto(html_path.as_uri())
        page.locator("[data-tab=tab-compiles]").click()
        for stage in ("capture", "autograd", "decompose", "fuse"):
            details = page.locator(
                f".pt2x-compile[data-id='{busiest}'] > details",
                has=page.locator("summary", has_text=re.compile(f"^{stage}$")),
            )
            details.evaluate("d => d.open = true")
            graphs = details.locator(".pt2x-graph")
            for i in range(graphs.count()):
                graph = graphs.nth(i)
                title = graph.evaluate("g => g.previousElementSibling.textContent")
                graph.scroll_into_view_if_needed()
                view = graph.locator(".pt2x-gv")
                view.locator(".pt2x-gv-box, .pt2x-gv-node").first.wait_for()
                k = float(view.get_attribute("data-scale"))
                assert k >= 0.7, (title, k)
                expect(view).not_to_have_class(re.compile(r"\bpt2x-gv-far\b"))
                stage_box = view.locator(".pt2x-gv-stage").bounding_box()
                shown = view.locator(".pt2x-gv-nodes text").evaluate_all(
                    """(es, s) => es.filter(e => {
                        const r = e.getBoundingClientRect();
                        return r.width > 0 && r.x >= s.x && r.right <= s.x + s.width
                            && r.y >= s.y && r.bottom <= s.y + s.height;
                    }).map(e => e.textContent)""",
                    stage_box,
                )
                assert shown, title  # labels on screen, not an empty stretch of the drawing
                labels = view.locator(".pt2x-gv-box, .pt2x-gv-cluster").evaluate_all(
                    "es => es.map(e => e.dataset.label)"
                )
                if "backward" in title:
                    assert not [x for x in labels if re.search(r"\(run \d+\)", x)], (title, labels)
                    assert any(x.endswith("(backward)") for x in labels), (title, labels)
                # GPT-2 calls each module once a step: no module's second run anywhere (the
                # tensors a forward graph saves, listed last, stay with their module)
                assert not [x for x in labels if re.fullmatch(r"[\w.]+ \(run \d+\)", x)], (title, labels)
                seen.append(title)
                graph.screenshot(path=str(ARTIFACTS / f"test_report_opens-{len(seen)}.png"))
                if title == "forward graph coloured by kernel":  # an addmm runs as a library call
                    view.locator(".pt2x-gv-search").fill("op:addmm")
                    row = view.locator(".pt2x-gv-info tr", has_text="kernel").first
                    expect(row).to_contain_text("runs as extern_kernels.addmm")
                    row.locator("a").click()  # to its row of the extern calls, in codegen
                    target = page.locator(
                        f".pt2x-compile[data-id='{busiest}'] tr[data-kernel='extern_kernels.addmm']"
                    ).first
                    expect(target).to_be_visible()
                    expect(target).to_contain_text("forward")
        assert not errors
    # a backward graph coloured by kernel where the recording maps a backward kernel to nodes
    mapped = any(k.role == "backward" and k.nodes for k in report.kernels_of(busiest))
    assert seen == [
        "Dynamo graph",
        "joint graph",
        "forward graph",
        "backward graph",
        "post-grad graph (forward)",
        "post-grad graph (backward)",
        "forward graph coloured by kernel",
        *(["backward graph coloured by kernel"] if mapped else []),
    ]


def test_numerics_page_opens_its_graph_on_the_first_diverging_kernel(tmp_path):
    """The H200 numerics recording (notebooks/data/h200-numerics-bf16.json.gz) on its page: the
    Numerics tab's graph opens on the first diverging kernel's nodes, as the report's
    provenance names them, and the kernel's name leads to its code in the compiles tab."""
    from playwright.sync_api import expect

    report = compiler.load(ROOT / "notebooks" / "data" / "h200-numerics-bf16.json.gz")
    (n,) = report.numerics
    (kernel,) = [k for k in report.kernels_of("0/0") if k.name == n.first_kernel]
    path = tmp_path / "numerics.html"
    path.write_text(explorer.html(report), encoding="utf-8")
    with _chromium() as (page, errors):
        page.goto(path.as_uri())
        page.locator("[data-tab=tab-numerics]").click()
        page.locator("#tab-numerics .pt2x-graph").first.scroll_into_view_if_needed()  # mounts when shown
        view = page.locator("#tab-numerics .pt2x-gv").first
        view.locator(".pt2x-gv-node").first.wait_for()
        expect(view).to_have_attribute(
            "data-focus", f"{n.first_kernel}: the first kernel to diverge from eager"
        )
        marked = view.locator(".pt2x-gv-hit").evaluate_all("els => els.map(e => e.dataset.name)")
        assert marked and set(marked) <= set(kernel.nodes), (marked, kernel.nodes)
        view.screenshot(path=str(ARTIFACTS / "test_report_numerics-graph.png"))
        page.locator(f"#tab-numerics a.pt2x-why-link[data-kernel='{n.first_kernel}']").first.click()
        expect(page.locator("[data-tab=tab-compiles]")).to_have_class(re.compile("on"))
        assert not errors, errors

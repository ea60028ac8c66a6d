"""What the graph view costs: payload bytes and first-view time of real model graphs, and
``pt2-explorer record --html`` against the plain run of a GPT-2-size training step.

    .venv/bin/python benchmarks/render.py                 # graphs: ~3 min on 2 CPUs
    .venv/bin/python benchmarks/render.py --record-html 2 # + 2 pairs of GPT-2 training steps (~15 min)

(a) Graphs. Hugging Face models built from configs (no weights), one training step recorded on
the CPU with ``backend="aot_eager"`` (the AOT joint / forward / backward graphs are the same as
with Inductor): GPT-2 with 2, 8 and 40 layers gives joint graphs of about 500, 2k and 10k
nodes. Per graph: the payload (explorer/graph/_data.py) in bytes and the seconds Python takes to
build it; then in headless Chromium (/usr/bin/chromium, Playwright) the time from setting the
page's content to the first painted graph (two animation frames after the component drew its
SVG), measured for

* ``widget``: the payload as the notebook widget receives it (a JSON string), handed to the
  bundle's anywidget ``render`` with a stub model, as JupyterLab would call it;
* ``static``: a page as ``explorer.html`` writes it (the bundle inlined once, the graph's
  JSON in a ``<script type="application/json">``), from its own parsing to the first paint.

Target (not asserted anywhere): first view <= 2 s and <= 5 MB at 10k nodes.

(b) ``--record-html PAIRS``: a GPT-2 training step (transformers' default ``GPT2Config``:
12 layers, 768 wide, 124M parameters, no weights; batch 2 x 64 tokens; ``torch.compile`` with
Inductor; forward, backward, SGD step) run as ``python step.py`` and as ``pt2-explorer record
--html out.html step.py``, in alternating order, each a fresh process with Inductor's caches
off and a fresh cache directory. Target: record --html <= 1.2x the plain run's wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHROMIUM = "/usr/bin/chromium"
WIDGET_PAGE = """<!doctype html><html><head><meta charset="utf-8"></head><body>
<div id="host" style="width:1100px"></div>
<script type="module">
const t0 = performance.now();
const mod = await import(URL.createObjectURL(new Blob([document.getElementById('bundle').textContent],
  {type: 'text/javascript'})));
const data = document.getElementById('data').textContent;
const model = {get: () => data, on() {}, off() {}};
mod.default.render({model, el: document.getElementById('host')});
requestAnimationFrame(() => requestAnimationFrame(() => { window.firstPaint = performance.now() - t0; }));
</script>
<script type="text/plain" id="bundle">BUNDLE</script>
<script type="text/plain" id="data">DATA</script>
</body></html>"""


def graphs_of(layers: int):
    """The joint, forward and backward graphs of one GPT-2 training step (aot_eager)."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    import compiler

    torch._dynamo.reset()
    torch.manual_seed(0)
    config = GPT2Config(
        n_layer=layers, n_head=2, n_embd=32, vocab_size=128, n_positions=64, bos_token_id=0, eos_token_id=0
    )
    model = GPT2LMHeadModel(config).train()
    model.loss_type = "ForCausalLM"  # one graph: no logger break in the loss
    step = torch.compile(model, backend="aot_eager")
    ids = torch.randint(0, 128, (2, 16))
    with compiler.recording(fusion_logs=False, provenance=False) as rec:
        step(input_ids=ids, labels=ids).loss.backward()
    a = max(
        (c.stages.autograd for c in rec.report.compiles if c.stages.autograd),
        key=lambda a: len(a.joint.nodes),
    )
    return {"joint": a.joint, "forward": a.forward, "backward": a.backward}


def first_paint(page, html: str) -> float:
    page.set_content(html, wait_until="domcontentloaded")
    page.wait_for_function("window.firstPaint !== undefined", timeout=120_000)
    return page.evaluate("window.firstPaint") / 1000


STATIC_TIMER = """<script>
const pt2xT0 = performance.now();
new MutationObserver((_, obs) => { if (document.querySelector('.pt2x-gv-nodes')) { obs.disconnect();
  requestAnimationFrame(() => requestAnimationFrame(() => { window.firstPaint = performance.now() - pt2xT0; })); } })
  .observe(document.documentElement, {childList: true, subtree: true});
</script>"""


def measure_graphs(sizes: list[int]) -> list[dict]:
    from playwright.sync_api import sync_playwright

    from explorer.graph._data import BUNDLE, graph_payload, payload_json
    from explorer.graph._view import graph_static_html, with_graph_script
    from explorer.model._view import GraphBlock

    bundle = BUNDLE.read_text(encoding="utf-8")
    rows = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        for layers in sizes:
            for role, graph in graphs_of(layers).items():
                t = time.perf_counter()
                data = payload_json(graph_payload(graph, f"{role} graph"))
                build = time.perf_counter() - t
                widget = WIDGET_PAGE.replace("BUNDLE", bundle.replace("</script", "<\\/script")).replace(
                    "DATA", data
                )
                block = GraphBlock(f"{role} graph", graph)
                static = with_graph_script(
                    f"<!doctype html><html><head>{STATIC_TIMER}</head><body>{graph_static_html(block)}</body></html>"
                )
                tw = min(first_paint(page, widget) for _ in range(2))
                ts = min(first_paint(page, static) for _ in range(2))
                shown = page.locator(".pt2x-gv").get_attribute("data-leaves")
                rows.append(
                    dict(
                        graph=f"GPT-2 {layers} layers {role}",
                        nodes=len(graph.nodes),
                        payload=len(data.encode()),
                        build_s=build,
                        shown=int(shown),
                        widget_s=tw,
                        static_s=ts,
                    )
                )
                r = rows[-1]
                print(
                    f"{r['graph']:30} {r['nodes']:6} {r['payload']:11,} {r['build_s']:7.3f} {r['shown']:6}"
                    f" {r['widget_s']:8.2f} {r['static_s']:8.2f}",
                    flush=True,
                )
        browser.close()
    return rows


STEP = textwrap.dedent(
    """
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config()).train()  # 12 layers, 768 wide: 124M parameters
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    step = torch.compile(model)
    ids = torch.randint(0, 50257, (2, 64))
    loss = step(input_ids=ids, labels=ids).loss
    loss.backward()
    opt.step()
    print(f"loss {loss.item():.4f}")
    """
)


def record_html(pairs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "step.py"
        script.write_text(STEP)
        arms = {
            "plain": [sys.executable, str(script)],
            "record --html": [
                str(Path(sys.executable).with_name("pt2-explorer")),
                "record",
                "-q",
                "--html",
                str(Path(tmp) / "out.html"),
                str(script),
            ],
        }
        times: dict[str, list[float]] = {k: [] for k in arms}
        for i in range(pairs):
            order = list(arms) if i % 2 == 0 else list(arms)[::-1]
            for arm in order:
                env = {k: v for k, v in os.environ.items() if k not in ("TORCH_TRACE", "TORCH_LOGS")}
                env["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"
                env["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(dir=tmp)
                t = time.perf_counter()
                subprocess.run(arms[arm], check=True, env=env, cwd=tmp, capture_output=True)
                times[arm].append(time.perf_counter() - t)
                print(f"pair {i}: {arm:14} {times[arm][-1]:7.1f} s", file=sys.stderr, flush=True)
            print(
                f"pair {i}: plain {times['plain'][-1]:.1f} s, record --html {times['record --html'][-1]:.1f} s,"
                f" ratio {times['record --html'][-1] / times['plain'][-1]:.3f}",
                flush=True,
            )
        size = (Path(tmp) / "out.html").stat().st_size
        ratios = [b / a for a, b in zip(times["plain"], times["record --html"])]
        print(f"median ratio {statistics.median(ratios):.3f}; the page: {size:,} bytes")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="2,8,40", help="GPT-2 layers per graph size (default 2,8,40)")
    ap.add_argument("--record-html", type=int, default=0, metavar="PAIRS")
    ap.add_argument("--no-graphs", action="store_true")
    ap.add_argument("--json", help="also write the graph figures here")
    args = ap.parse_args()
    if not args.no_graphs:
        print(
            f"{'graph':30} {'nodes':>6} {'payload B':>11} {'build s':>7} {'shown':>6} {'widget s':>8} {'static s':>8}"
        )
        rows = measure_graphs([int(s) for s in args.sizes.split(",")])
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=1))
    if args.record_html:
        record_html(args.record_html)


if __name__ == "__main__":
    main()

"""The notebook explorer's "fill in this compile": on a compile recorded with the caches on (no
kernel-to-node map), the button runs ``compiler.fill`` for that compile, its progress line under
the buttons, then every view shows the filled report on the same compile and stage."""

from __future__ import annotations

import re

import pytest
import torch
import torch._functorch.config
import torch._inductor.config
from torch._inductor.utils import fresh_cache

import compiler
from explorer.pages._widgets import Explorer

pytestmark = pytest.mark.child


def f(x):
    return torch.relu(torch.sin(x)) * 2


def _html(widget) -> str:
    kids = getattr(widget, "children", ())
    return "".join(_html(k) for k in kids) if kids else str(getattr(widget, "value", ""))


def test_fill_button_fills_the_selected_compile_and_shows_its_nodes(tmp_path):
    with (
        fresh_cache(dir=str(tmp_path)),
        torch._inductor.config.patch({"fx_graph_cache": True}),
        torch._functorch.config.patch({"enable_autograd_cache": True}),
        compiler.recording() as rec,
    ):
        torch.compile(f)(torch.randn(8))
    app = Explorer(rec.report)
    app.select("0/0", "fuse")
    tab = app.compiles
    assert not tab.fill_button.disabled
    assert tab.fill_button.tooltip.startswith(
        "no kernel-to-node map: the caches were on (Inductor's provenance level is in their key): "
    )
    assert "kernels and the graph nodes fused into them" not in _html(tab.stage_tabs)
    lines = []
    app.fill_status.observe(lambda ch: lines.append(ch["new"]), names="value")
    tab.fill_button.click()

    assert lines[0] == "<i>pt2-explorer: fill-in 1/1: compile [0/0] f, cold, in a fresh process…</i>"
    assert re.fullmatch(r"<i>pt2-explorer: fill-in 1/1: compile \[0/0\] filled, in \d+\.\d s</i>", lines[-1])
    (c,) = app.report.compiles
    assert c.regenerated.state == "filled" and c.regenerated.same_code is True
    assert rec.report.compiles[0].regenerated is None  # the recording's report is as it was
    (kernel,) = app.report.kernels_of("0/0")
    assert kernel.nodes  # sin, relu and mul fused in one kernel
    # the views are rebuilt on the filled report, on the same compile and stage
    tab = app.compiles
    assert app.view.compiles[tab.selector.value].compile_id == "0/0"
    assert tab.stage_tabs.selected_index == 3
    shown = _html(tab.stage_tabs)
    assert "kernels and the graph nodes fused into them" in shown
    assert kernel.name in shown and all(n in shown for n in kernel.nodes)
    assert tab.fill_button.disabled  # nothing left to fill in
    assert tab.fill_button.tooltip.startswith("nothing to fill in")
    assert app.fill_status.value == lines[-1]  # the outcome stays under the buttons

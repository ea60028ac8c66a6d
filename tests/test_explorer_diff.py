"""Diffs wired into the explorer: the recompile and compile buttons, %%compile --diff-with."""

from __future__ import annotations

import pytest
import torch

import compiler
from explorer.pages._widgets import Explorer


def _f(x):
    return torch.relu(x) * 2


@pytest.fixture(scope="module")
def report():
    torch._dynamo.reset()
    with compiler.recording() as rec:
        f = torch.compile(_f, backend="aot_eager", dynamic=False)
        f(torch.randn(4))
        f(torch.randn(6))  # size guard fails: recompile 0/1
    return rec.report


def _clicked(app, monkeypatch):
    calls = []
    monkeypatch.setattr(app, "show_diff", lambda make, out, what: calls.append((make(), out, what)))
    return calls


def test_recompile_has_a_diff_button_with_the_failing_guard(report, monkeypatch):
    app = Explorer(report)
    assert app.tabs.selected_index == 1  # no graph breaks: the explorer opens on the recompiles
    (button,) = [b for b in app.recompiles.children[0].children]
    assert button.description == "diff [0/0] → [0/1]"
    calls = _clicked(app, monkeypatch)
    button.click()
    ((d, out, what),) = calls
    # the diff lands right under the row of buttons, headed by what was asked
    assert out is app.recompiles.children[1] and what == "diff [0/0] → [0/1]"
    assert (d.a_label, d.b_label) == ("0/0", "0/1")
    guards = next(s for s in d.sections if s.id == "guards")
    (mark,) = guards.a_marks
    assert report.recompiles[0].failing_guard.strip() in guards.a.splitlines()[mark - 1]


def test_compile_tab_compares_stages_and_previous_compile(report, monkeypatch):
    app = Explorer(report)
    calls = _clicked(app, monkeypatch)
    assert app.previous_button.disabled  # 0/0 is its frame's first compile
    app.selector.value = 1  # 0/1
    assert not app.previous_button.disabled
    app.previous_button.click()
    app.stage_a.value, app.stage_b.value = "capture", "autograd"
    row = app.tabs.children[2].children[1]
    compare = [b for b in row.children if getattr(b, "description", "") == "compare stages"][0]
    compare.click()
    (prev, out1, what1), (stages, out2, what2) = calls
    # both under the row of compile buttons and its fill-in line, above the stage tabs
    assert app.tabs.children[2].children[2] is app.fill_status
    assert out1 is out2 is app.tabs.children[2].children[3]
    assert (what1, what2) == ("diff [0/0] → [0/1]", "[0/1] capture vs autograd")
    assert (prev.a_label, prev.b_label) == ("0/0", "0/1")
    assert stages.title == "compile 0/1: capture vs autograd"
    (section,) = stages.sections
    assert "torch.relu(" in section.a and "torch.ops.aten.relu.default(" in section.b and section.changed


def test_a_stage_that_is_missing_is_said(report):
    shown = []
    app = Explorer(report)
    app.show_diff = lambda make, out, what: shown.append(pytest.raises(ValueError, make))
    app.compare_stages("capture", "fuse:pre", "0/0")  # aot_eager: no Inductor, no IR
    (exc,) = shown
    assert "fuse:pre" in str(exc.value)

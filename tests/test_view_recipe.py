"""CONTRIBUTING.md's recipe "add a view" held to the code: a view is one module and one
row of ``VIEWS``. Each row's builders come from one module of explorer/views/, each module
there is a row's or one the recipe names, and a view made here with one row shows in
``explorer.text``, ``pt2-explorer report --view``, the static page and the notebook's tabs."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest

import compiler
import compiler.types
import explorer
from explorer import cli
from explorer.lower._html import frag
from explorer.views import _registry
from explorer.views._registry import View

ROOT = Path(__file__).resolve().parent.parent
VIEWS_DIR = ROOT / "explorer" / "views"
TRACE = ROOT / "tests" / "fixtures" / "traces" / "cpu-torch213-breaks.log.gz"


def _recipe() -> str:
    doc = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    return doc[doc.index("## Recipe: add a view") :].split("\n## ", 1)[0]


def _rows() -> list[tuple[str, set[str]]]:
    """Each ``View(...)`` of ``VIEWS`` in _registry.py: its name (a stage's: "stage") and the
    modules of explorer/views/ whose names it uses."""
    tree = ast.parse((VIEWS_DIR / "_registry.py").read_text(encoding="utf-8"))
    origin = {
        alias.asname or alias.name: node.module
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.level == 1
        for alias in node.names
    }
    (views,) = [n for n in tree.body if isinstance(n, ast.AnnAssign) and n.target.id == "VIEWS"]
    rows = []
    for call in ast.walk(views.value):
        if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "View":
            first = call.args[0]
            name = first.value if isinstance(first, ast.Constant) else "stage"
            used = {origin[n.id] for n in ast.walk(call) if isinstance(n, ast.Name) and n.id in origin}
            rows.append((name, used))
    return rows


def test_each_row_is_built_by_one_module():
    rows = _rows()
    assert (
        len(rows) == len(_registry.VIEWS) - len(compiler.types.STAGES) + 1
    )  # the stages: one row, each stage
    for name, modules in rows:
        assert len(modules) == 1, f"view {name!r} is built from {sorted(modules) or 'no module'}"
    assert dict(rows)["breaks"] == {"_breaks"} and dict(rows)["stage"] == {"_compiles"}


def test_each_module_of_views_is_a_rows_or_named_by_the_recipe():
    recipe = _recipe()
    helpers = set(re.findall(r"`(_\w+)\.py`", recipe.split("not a row's", 1)[1]))
    modules = {p.stem for p in VIEWS_DIR.glob("*.py")} - {"__init__"}
    rows = {m for _, used in _rows() for m in used}
    assert helpers == {"_registry", "_advice", "_compileadvice", "_whyhtml"}
    assert helpers <= modules
    assert modules == rows | helpers, (
        f"modules of views/ in no row, not named by the recipe: {modules - rows - helpers}"
    )
    # what the recipe says a row takes is what a View takes
    said = set(re.findall(r"\b(\w+)=…", recipe)) | set(re.findall(r"`(\w+)(?:=True)?`", recipe))
    fields = {f.name for f in dataclasses.fields(View)}
    assert {"tab", "needs", "html", "widget", "opens", "header", "printed"} <= said & fields


def test_a_view_made_here_with_one_row_shows_everywhere(monkeypatch, tmp_path, capsys):
    pytest.importorskip("ipywidgets")
    from explorer.pages._widgets import Explorer

    r = compiler.load_trace(TRACE)
    with pytest.raises(ValueError, match="unknown view 'probe'"):
        explorer.text(r, "probe")

    # the module: its text and its tab's HTML, from the report's facts
    def probe_text(s) -> str:
        return f"probe: {len(s.report.compiles)} compiles of {s.title}\n"

    def probe_html(s) -> str:
        return f'<div class="probe">{len(s.view.compiles)} compiles</div>'

    # the row
    row = View("probe", "a view made by a test", probe_text, tab=lambda r: "Probe", html=probe_html)
    monkeypatch.setattr(_registry, "VIEWS", (*_registry.VIEWS, row))

    assert explorer.text(r, "probe", title="t") == "probe: 4 compiles of t\n"
    page = explorer.html(r)
    buttons = re.findall(r'<button data-tab="tab-(\w+)"[^>]*>([^<]*)</button>', page)
    assert buttons[-1] == ("probe", "Probe")
    assert (
        '<section class="pt2x-tab" id="tab-probe" hidden><div class="probe">4 compiles</div></section>'
        in page
    )

    app = Explorer(r)
    titles = [app.tabs.get_title(i) for i in range(len(app.tabs.children))]
    assert titles == [label for _, label in buttons]
    assert app.tabs.children[-1].value == frag('<div class="probe">4 compiles</div>')

    saved = tmp_path / "r.json"
    r.to_json(saved)
    assert cli.main(["report", str(saved), "--view", "probe"]) == 0
    assert capsys.readouterr().out == f"probe: 4 compiles of {saved}\n"

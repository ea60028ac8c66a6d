"""The notebook explorer's tabs that are more than their HTML fragment: the registry's
``widget`` builders (``views/_registry.py``), each given the app (``_widgets.Explorer``).

The graph breaks with buttons that open the graphs before and after each break; the
recompiles with a button per recompile that diffs it with the compile it replaced; the
compiles: a compile selector, "compare stages" and "diff with previous compile" buttons with
their diff right under them, the compile's own facts, and one tab per stage (built when first
shown). Graphs are the browser component of ``graph/_view.py``.
"""

from __future__ import annotations

import ipywidgets as w

from compiler.types import STAGES

from ..base._types import GraphBlock, StageView
from ..diffs._diff import STAGE_NAMES
from ..graph._view import graph_widget
from ..lower import _html
from ..lower._html import frag


def stage_widget(sv: StageView) -> w.Widget:
    if not sv.blocks:
        return w.HTML(frag(_html.stage_html(sv)))
    children = [
        graph_widget(b) if isinstance(b, GraphBlock) else w.HTML(frag(_html.block_html(b))) for b in sv.blocks
    ]
    return w.VBox(children)


def breaks_tab(app) -> w.Widget:
    """One row per break site, with buttons that open the graphs before and after it."""
    view = app.view
    if not view.breaks:
        return w.HTML(frag(_html.breaks_html(view)))
    rows: list[w.Widget] = []
    if view.summary.error:  # users land on this tab: how the program ended comes first
        rows.append(w.HTML(frag(_html.error_html(view))))
    for b in view.breaks:
        rows.append(w.HTML(frag(_html.break_html(b))))
        buttons = []
        for label, cid in (("graph before", b.graph_before), ("graph after", b.graph_after)):
            if cid:
                btn = w.Button(description=f"{label} [{cid}]", layout=w.Layout(width="auto"))
                btn.on_click(lambda _b, cid=cid: app.select(cid, "capture"))
                buttons.append(btn)
        if buttons:
            rows.append(w.HBox(buttons))
    return w.VBox(rows)


def recompiles_tab(app) -> w.Widget:
    """Per recompile a button to diff it with the compile whose guards failed (the failing
    guard marked), then the recompiles view."""
    body = w.HTML(frag(_html.recompiles_html(app.view)))
    buttons = []
    for r in app.view.recompiles:
        before = r.diff_from
        if before is None:
            continue
        btn = w.Button(description=f"diff [{before}] → [{r.compile_id}]", layout=w.Layout(width="auto"))
        btn.tooltip = f"compare compile {before} with {r.compile_id}: guards, graphs, kernels"
        btn.on_click(lambda _b, a=before, b=r.compile_id: app.diff_compiles(a, b, out=app.recompile_diff))
        buttons.append(btn)
    # the buttons first (the guard lists below can run long), their diff right under them
    if not buttons:
        return body
    return w.VBox([w.HBox(buttons, layout=w.Layout(flex_flow="row wrap")), app.recompile_diff, body])


class CompilesTab(w.VBox):
    """The compile selector, the diff controls and their diff, the compile's own facts, and
    its stages, one tab each; ``selected``: the compile shown first (None: the first)."""

    def __init__(self, app, selected: str | None = None):
        self.app = app
        compiles = app.view.compiles
        self.selector = w.Dropdown(
            options=[(c.label, i) for i, c in enumerate(compiles)],
            description="compile",
            layout=w.Layout(width="70%"),
        )
        self.facts = w.HTML("")
        self.stage_tabs = w.Tab(children=[w.HTML("") for _ in STAGES])
        for i, s in enumerate(STAGES):
            self.stage_tabs.set_title(i, s)
        self._built: dict[tuple[int, int], w.Widget] = {}
        self.selector.observe(lambda ch: self.show(), names="value")
        self.stage_tabs.observe(lambda ch: self.show(), names="selected_index")
        controls = self._compare_controls()
        if not compiles:
            super().__init__([w.HTML(frag('<div class="note">No compiles recorded.</div>'))])
            return
        super().__init__([self.selector, controls, app.compile_diff, self.facts, self.stage_tabs])
        ids = [c.compile_id for c in compiles]
        if selected in ids:
            self.selector.value = ids.index(selected)
        self.show()

    def _compare_controls(self) -> w.Widget:
        app = self.app
        self.stage_a = w.Dropdown(options=STAGE_NAMES, value="capture", layout=w.Layout(width="auto"))
        self.stage_b = w.Dropdown(options=STAGE_NAMES, value="decompose", layout=w.Layout(width="auto"))
        compare = w.Button(description="compare stages", icon="columns", layout=w.Layout(width="auto"))
        compare.tooltip = "this compile's two stages side by side"
        compare.on_click(lambda _b: app.compare_stages(self.stage_a.value, self.stage_b.value))
        self.previous_button = w.Button(
            description="diff with previous compile", layout=w.Layout(width="auto")
        )
        self.previous_button.on_click(lambda _b: self._diff_previous())
        self.selector.observe(lambda ch: self._update_previous(), names="value")
        self._update_previous()
        return w.HBox([self.stage_a, w.HTML("&nbsp;vs&nbsp;"), self.stage_b, compare, self.previous_button])

    def selected(self):
        """The compile shown (its ``CompileView``)."""
        return self.app.view.compiles[self.selector.value or 0]

    def _update_previous(self) -> None:
        prev = self.selected().previous if self.app.view.compiles else None
        self.previous_button.disabled = prev is None
        self.previous_button.tooltip = (
            f"compare [{prev}] with this compile"
            if prev
            else "the first compile of its frame: nothing before it"
        )

    def _diff_previous(self) -> None:
        cv = self.selected()
        if cv.previous is not None:
            self.app.diff_compiles(cv.previous, cv.compile_id)

    def show(self) -> None:
        """The selected compile's facts and its selected stage (each stage built once)."""
        ci = self.selector.value or 0
        si = self.stage_tabs.selected_index or 0
        self.facts.value = frag(_html.compile_facts_html(self.selected()))
        key = (ci, si)
        if key not in self._built:
            self._built[key] = stage_widget(self.app.view.compiles[ci].stages[si])
        children = list(self.stage_tabs.children)
        children[si] = self._built[key]
        self.stage_tabs.children = children

    def select(self, compile_id: str, stage: str = "capture") -> None:
        """Show one compile's stage (``"0/1"``, ``"codegen"``)."""
        self.selector.value = [c.compile_id for c in self.app.view.compiles].index(compile_id)
        self.stage_tabs.selected_index = STAGES.index(stage)

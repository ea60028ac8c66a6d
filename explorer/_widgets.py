"""The view model lowered to ipywidgets: the notebook explorer.

The same HTML fragments as the static page (``_html.py``), arranged in widgets: a summary
header, tabs for graph breaks / recompiles / compiles, a compile selector, one tab per stage
(built when first shown); graphs are the browser component of ``_graphview.py``.
Diff buttons ("diff with the compile it replaced" on every recompile, "compare stages" and
"diff with previous compile" on every compile) show ``explorer.diff`` results right under the
row of buttons that made them. The explorer opens on the most informative tab (``_view.opening``);
the stylesheet comes once, in the header, the fragments carry none.
"""

from __future__ import annotations

import ipywidgets as w

from compiler import STAGES, Report

from . import _html
from ._view import ExplorerView, GraphBlock, StageView, build_view, opening


def _frag(body: str) -> str:
    return f'<div class="pt2x">{body}</div>'


def _graph_widget(block: GraphBlock) -> w.Widget:
    """The heading, then the graph component with its controls (explorer/_graphview.py)."""
    from ._graphview import graph_widget

    return graph_widget(block)


def stage_widget(sv: StageView) -> w.Widget:
    if not sv.blocks:
        return w.HTML(_frag(_html.stage_html(sv)))
    children = [
        _graph_widget(b) if isinstance(b, GraphBlock) else w.HTML(_frag(_html.block_html(b)))
        for b in sv.blocks
    ]
    return w.VBox(children)


class Explorer(w.VBox):
    """The explorer app for one report. ``Explorer(report)``; ``explorer.show(report)``."""

    def __init__(self, report: Report, title: str | None = None, view: ExplorerView | None = None):
        self.report = report
        self.view = view or build_view(report, title)
        v = self.view
        self.header = w.HTML(_html.fragment_css() + _frag(_html.summary_html(v)))
        self.breaks = self._breaks_widget()
        self.recompile_diff = w.Output()  # a recompile's diff, under its buttons
        self.compile_diff = w.Output()  # "compare stages" / "diff with previous", under them
        self.recompiles = self._recompiles_widget()
        self.selector = w.Dropdown(
            options=[(c.label, i) for i, c in enumerate(v.compiles)],
            description="compile",
            layout=w.Layout(width="70%"),
        )
        self.stage_tabs = w.Tab(children=[w.HTML("") for _ in STAGES])
        for i, s in enumerate(STAGES):
            self.stage_tabs.set_title(i, s)
        self._built: dict[tuple[int, int], w.Widget] = {}
        self.selector.observe(lambda ch: self._show(), names="value")
        self.stage_tabs.observe(lambda ch: self._show(), names="selected_index")
        compiles = (
            w.VBox([self.selector, self._compare_controls(), self.compile_diff, self.stage_tabs])
            if v.compiles
            else w.HTML(_frag('<div class="note">No compiles recorded.</div>'))
        )
        self.tabs = w.Tab(children=[self.breaks, self.recompiles, compiles])
        for i, t in enumerate(
            (
                f"Graph breaks ({len(v.breaks)})",
                f"Recompiles ({len(v.recompiles)})",
                f"Compiles ({len(v.compiles)})",
            )
        ):
            self.tabs.set_title(i, t)
        self._bench_tab: int | None = None
        bench_row = self._bench_controls()
        super().__init__([self.header, bench_row, self.tabs])
        if report.benchmarks:
            self._show_benchmarks()
        tab, cid = opening(v)
        self.tabs.selected_index = ("breaks", "recompiles", "compiles").index(tab)
        if cid is not None:
            self.selector.value = [c.compile_id for c in v.compiles].index(cid)
        if v.compiles:
            self._show()

    def _bench_controls(self) -> w.Widget:
        """The Benchmark button (report.benchmark() on what the report remembers) and its
        progress line; disabled, with a tooltip saying what to call, when nothing is remembered."""
        from compiler.model._subject import subject_of

        self.bench_status = w.HTML("")
        self.bench_button = w.Button(
            description="Benchmark", icon="tachometer", layout=w.Layout(width="auto")
        )
        if subject_of(self.report) is None:
            self.bench_button.disabled = True
            self.bench_button.tooltip = (
                "nothing to time: this report remembers no function; call report.benchmark(fn, *args), "
                "or record with compiler.record(fn, *args) or %%compile"
            )
        else:
            self.bench_button.tooltip = "time eager vs compiled on the same inputs, profile the kernels"
            self.bench_button.on_click(lambda _b: self.run_benchmark())
        self.bench_row = w.HBox([self.bench_button, self.bench_status])
        return self.bench_row

    def run_benchmark(self, **kwargs) -> None:
        from ._html import esc

        def progress(text: str, final: bool = False) -> None:
            if final:  # "done" only once the result is on screen (below)
                text = text.replace(": done", ": showing the result")
            self.bench_status.value = f"<i>{esc(text)}</i>"

        from compiler import StateMutationError

        self.bench_button.disabled = True
        self.bench_row.children = (self.bench_button, self.bench_status)
        try:
            self.report.benchmark(progress=progress, **kwargs)
        except KeyboardInterrupt:  # the kernel's interrupt: keep what was measured, say so
            self.bench_status.value = "<i>interrupted: the calls timed so far are in the Benchmark tab</i>"
        except Exception as e:  # shown, not lost in the widget's callback
            self.bench_status.value = (
                f'<span style="color:#cf222e">{esc(type(e).__name__)}: {esc(str(e))}</span>'
            )
            if isinstance(e, StateMutationError):  # the opt-in, one click away
                anyway = w.Button(
                    description="Benchmark anyway (state restored)",
                    button_style="warning",
                    layout=w.Layout(width="auto"),
                    tooltip="report.benchmark(mutates=True): the state is snapshotted and restored afterwards",
                )
                anyway.on_click(lambda _b: self.run_benchmark(**{**kwargs, "mutates": True}))
                self.bench_row.children = (self.bench_button, anyway, self.bench_status)
        else:
            if self.report.benchmarks:
                self._show_benchmarks(select=True)
            self.bench_status.value = "<i>benchmark done: the result is in the Benchmark tab (open)</i>"
            return
        finally:
            self.bench_button.disabled = False
        if self.report.benchmarks:
            self._show_benchmarks()

    def _show_benchmarks(self, select: bool = False) -> None:
        from ._benchview import bench_widget

        body = bench_widget(self.report)
        children = list(self.tabs.children)
        if self._bench_tab is None:
            self._bench_tab = len(children)
            children.append(body)
        else:
            children[self._bench_tab] = body
        self.tabs.children = children
        self.tabs.set_title(self._bench_tab, f"Benchmark ({len(self.report.benchmarks)})")
        if select:
            self.tabs.selected_index = self._bench_tab

    def _breaks_widget(self) -> w.Widget:
        """One row per break site, with buttons that open the graphs before and after it."""
        if not self.view.breaks:
            return w.HTML(_frag(_html.breaks_html(self.view)))
        rows: list[w.Widget] = []
        if self.view.summary.error:  # users land on this tab: how the program ended comes first
            rows.append(w.HTML(_frag(_html.error_html(self.view))))
        for b in self.view.breaks:
            rows.append(w.HTML(_frag(_html.break_html(b))))
            buttons = []
            for label, cid in (("graph before the break", b.graph_before), ("code after it", b.graph_after)):
                if cid:
                    btn = w.Button(description=f"{label} [{cid}]", layout=w.Layout(width="auto"))
                    btn.on_click(lambda _b, cid=cid: self.select(cid, "capture"))
                    buttons.append(btn)
            if buttons:
                rows.append(w.HBox(buttons))
        return w.VBox(rows)

    # ---- diffs -----------------------------------------------------------------------------

    def _recompiles_widget(self) -> w.Widget:
        """Per recompile a button to diff it with the compile whose guards failed (the failing
        guard marked), then the recompiles view."""
        body = w.HTML(_frag(_html.recompiles_html(self.view)))
        buttons = []
        for r in self.view.recompiles:
            before = r.diff_from
            if before is None:
                continue
            btn = w.Button(description=f"diff [{before}] → [{r.compile_id}]", layout=w.Layout(width="auto"))
            btn.tooltip = f"compare compile {before} with {r.compile_id}: guards, graphs, kernels"
            btn.on_click(
                lambda _b, a=before, b=r.compile_id: self.diff_compiles(a, b, out=self.recompile_diff)
            )
            buttons.append(btn)
        # the buttons first (the guard lists below can run long), their diff right under them
        if not buttons:
            return body
        return w.VBox([w.HBox(buttons, layout=w.Layout(flex_flow="row wrap")), self.recompile_diff, body])

    def _compare_controls(self) -> w.Widget:
        from ._diff import STAGE_NAMES

        self.stage_a = w.Dropdown(options=STAGE_NAMES, value="capture", layout=w.Layout(width="auto"))
        self.stage_b = w.Dropdown(options=STAGE_NAMES, value="decompose", layout=w.Layout(width="auto"))
        compare = w.Button(description="compare stages", icon="columns", layout=w.Layout(width="auto"))
        compare.tooltip = "this compile's two stages side by side"
        compare.on_click(lambda _b: self.compare_stages(self.stage_a.value, self.stage_b.value))
        self.previous_button = w.Button(
            description="diff with previous compile", layout=w.Layout(width="auto")
        )
        self.previous_button.on_click(lambda _b: self._diff_previous())
        self.selector.observe(lambda ch: self._update_previous(), names="value")
        self._update_previous()
        return w.HBox([self.stage_a, w.HTML("&nbsp;vs&nbsp;"), self.stage_b, compare, self.previous_button])

    def _selected_id(self) -> str:
        return self.view.compiles[self.selector.value or 0].compile_id

    def _update_previous(self) -> None:
        prev = self.view.compiles[self.selector.value or 0].previous if self.view.compiles else None
        self.previous_button.disabled = prev is None
        self.previous_button.tooltip = (
            f"compare [{prev}] with this compile"
            if prev
            else "the first compile of its frame: nothing before it"
        )

    def _diff_previous(self) -> None:
        cid = self._selected_id()
        prev = self.view.compiles[self.selector.value or 0].previous
        if prev is not None:
            self.diff_compiles(prev, cid)

    def show_diff(self, make, out: w.Output, what: str) -> None:
        """Show ``make()``'s diff in ``out`` (right under the buttons that asked for it),
        headed by what was asked; an error (stage missing…) is shown instead."""
        from IPython.display import HTML, display

        from ._html import esc

        out.clear_output()
        with out:
            display(HTML(f'<div class="pt2x"><b>{esc(what)}</b> (here, under the buttons)</div>'))
            try:
                display(make())
            except (ValueError, TypeError, KeyError) as e:
                display(HTML(f'<div style="color:#cf222e">cannot diff: {esc(str(e))}</div>'))

    def diff_compiles(self, id_a: str, id_b: str, out: w.Output | None = None) -> None:
        from ._diff import diff_compiles

        self.show_diff(
            lambda: diff_compiles(self.report, id_a, id_b),
            out or self.compile_diff,
            f"diff [{id_a}] → [{id_b}]",
        )

    def compare_stages(self, stage_a: str, stage_b: str, compile_id: str | None = None) -> None:
        from ._diff import compare_stages

        cid = compile_id or self._selected_id()
        self.show_diff(
            lambda: compare_stages(self.report, cid, stage_a, stage_b),
            self.compile_diff,
            f"[{cid}] {stage_a} vs {stage_b}",
        )

    def _show(self) -> None:
        ci = self.selector.value or 0
        si = self.stage_tabs.selected_index or 0
        key = (ci, si)
        if key not in self._built:
            self._built[key] = stage_widget(self.view.compiles[ci].stages[si])
        children = list(self.stage_tabs.children)
        children[si] = self._built[key]
        self.stage_tabs.children = children

    def select(self, compile_id: str, stage: str = "capture") -> None:
        """Show one compile's stage (``"0/1"``, ``"codegen"``)."""
        ids = [c.compile_id for c in self.view.compiles]
        self.tabs.selected_index = 2
        self.selector.value = ids.index(compile_id)
        self.stage_tabs.selected_index = STAGES.index(stage)

"""The view model lowered to ipywidgets: the notebook explorer.

A header (the summary: the registry's header views, the same HTML fragment as the static
page's), then one tab per view of the registry (``views/_registry.py``) whose facts the report holds, in its order: the
page's tabs. A view's tab is its own widget where it has one (in its module: buttons that
open graphs and diffs, the compile selector and stage tabs), else its HTML fragment. Diff
buttons ("diff with the compile it replaced" on every recompile, "compare stages" and "diff
with previous compile" on every compile) show ``explorer.diff`` results right under the row of
buttons that made them. "fill in this compile" (on a compile whose kernels have no nodes
because the caches were on) runs ``compiler.fill`` for it with a progress line under the buttons,
then shows the filled report (``explorer.report``). The explorer opens on the most informative tab (``_registry.opening``);
the stylesheet comes once, in the header, the fragments carry none.
"""

from __future__ import annotations

import ipywidgets as w

from compiler import Report
from compiler.types import STAGES

from ..base._types import ExplorerView, opening_compile
from ..lower import _html
from ..lower._html import esc, frag
from ..views._registry import Subject, headers, opening, tabs

# the button the Benchmark button offers after it refused a step that changes state
ANYWAY = "benchmark anyway (restores the state)"

# A Why tab link in the notebook (``a.pt2x-why-link``: views/_whyhtml.py): its data handed to the
# kernel through the explorer's hidden text box (``Explorer.go``), which opens the compile's
# code or the break (``Explorer.go_to``); then, the tab drawn, the place scrolled into view and
# flashed. The static page follows the same links with its own script (pages/_page.py).
_WIDGET_GO = (
    "event.preventDefault();const a=this,root=a.closest('.pt2x-explorer');if(!root)return;"
    "const box=root.querySelector('.pt2x-why-go input');if(!box)return;"
    "box.value=JSON.stringify({compile:a.dataset.compile,kernel:a.dataset.kernel,break:a.dataset.break,at:Date.now()});"
    "box.dispatchEvent(new Event('input',{bubbles:true}));box.dispatchEvent(new Event('change',{bubbles:true}));"
    "const find=()=>{const all=a.dataset.break!==undefined?[...root.querySelectorAll('.break')]"
    ".filter(d=>d.id==='break-'+a.dataset.break):[...root.querySelectorAll('tr[data-kernel]')]"
    ".filter(r=>r.dataset.kernel===a.dataset.kernel);return all.find(e=>e.getClientRects().length)};"
    "const t0=Date.now(),then=()=>{const el=find();if(el){el.scrollIntoView({block:'center'});"
    "el.classList.add('pt2x-flash');setTimeout(()=>el.classList.remove('pt2x-flash'),2500)}"
    "else if(Date.now()-t0<8000)setTimeout(then,100)};setTimeout(then,100);"
)


def _widget_links(html: str) -> str:
    """A view's HTML fragment with its Why links followed in the notebook (``_WIDGET_GO``)."""
    return html.replace('<a class="pt2x-why-link"', f'<a class="pt2x-why-link" onclick="{esc(_WIDGET_GO)}"')


def _whole_label() -> w.Layout:
    """A button's layout that shows its whole label: its own width, never shrunk by the
    status text beside it in the row (a flex item shrinks by default: "Benchma…")."""
    return w.Layout(width="auto", flex="0 0 auto")


class Explorer(w.VBox):
    """The explorer app for one report. ``Explorer(report)``; ``explorer.show(report)``."""

    def __init__(self, report: Report, title: str | None = None, view: ExplorerView | None = None):
        self.report = report
        self.subject = Subject(report, title, view=view)
        self.view = self.subject.view
        head = "".join(v.html(self.subject) for v in headers())
        self.header = w.HTML(_html.fragment_css() + frag(head))
        self.recompile_diff = w.Output()  # a recompile's diff, under its buttons
        self.compile_diff = w.Output()  # "compare stages" / "diff with previous", under them
        self.fill_status = w.HTML("")  # "fill in this compile": its progress, then its outcome
        self.title = title
        first = opening(report)
        if self.subject.compile is None:  # the compiles tab on the compile with the most work
            cv = opening_compile(self.view)
            self.subject.compile = cv.compile_id if cv else None
        self.tabs = w.Tab()
        self._names: list[str] = []
        self._bodies: dict[str, w.Widget] = {}
        self._update_tabs()
        bench_row = self._bench_controls()
        # where the Why tab's links hand the kernel what they open (``_WIDGET_GO``): hidden
        self.go = w.Text(layout=w.Layout(display="none"))
        self.go.add_class("pt2x-why-go")
        self.go.observe(lambda ch: self._go(ch["new"]), names="value")
        super().__init__([self.header, bench_row, self.tabs, self.go])
        self.add_class("pt2x-explorer")
        self.tabs.selected_index = self._names.index(first)

    # ---- tabs ------------------------------------------------------------------------------

    def _update_tabs(self) -> None:
        """One tab per view whose facts the report holds now (a benchmark adds its tab), each
        body built once, the selected tab kept."""
        i = self.tabs.selected_index
        shown = self._names[i] if i is not None and i < len(self._names) else None
        views = tabs(self.report)
        for v in views:
            if v.name not in self._bodies:
                body = v.widget(self) if v.widget else w.HTML(self.linked(v.html(self.subject)))
                self._bodies[v.name] = body
        self._names = [v.name for v in views]
        self.tabs.children = [self._bodies[n] for n in self._names]
        for i, v in enumerate(views):
            self.tabs.set_title(i, v.tab(self.report))
        if shown in self._names:
            self.tabs.selected_index = self._names.index(shown)

    @property
    def breaks(self) -> w.Widget:
        return self._bodies["breaks"]

    @property
    def recompiles(self) -> w.Widget:
        return self._bodies["recompiles"]

    @property
    def compiles(self):  # views/_compiles.py: compiles_tab
        return self._bodies["compiles"]

    @property
    def selector(self) -> w.Dropdown:
        return self.compiles.selector

    @property
    def stage_tabs(self) -> w.Tab:
        return self.compiles.stage_tabs

    @property
    def stage_a(self) -> w.Dropdown:
        return self.compiles.stage_a

    @property
    def stage_b(self) -> w.Dropdown:
        return self.compiles.stage_b

    @property
    def previous_button(self) -> w.Button:
        return self.compiles.previous_button

    @property
    def _bench_tab(self) -> int | None:
        """The Benchmark tab's index, once there is one."""
        return self._names.index("bench") if "bench" in self._names else None

    def select(self, compile_id: str, stage: str = "capture") -> None:
        """Show one compile's stage (``"0/1"``, ``"codegen"``)."""
        self.tabs.selected_index = self._names.index("compiles")
        self.compiles.select(compile_id, stage)

    def linked(self, html: str) -> str:
        """A view's HTML fragment as a tab shows it, its Why links followed here."""
        return frag(_widget_links(html))

    def go_to(
        self, *, compile_id: str | None = None, kernel: str | None = None, site: str | None = None
    ) -> None:
        """Where a Why tab link leads: a break site's break in the Breaks tab; a kernel's code,
        its compile's codegen stage (the page's script then scrolls to its row)."""
        if site is not None and "breaks" in self._names:
            self.tabs.selected_index = self._names.index("breaks")
        elif compile_id is not None and kernel is not None and "compiles" in self._names:
            if compile_id in {c.compile_id for c in self.view.compiles}:
                self.select(compile_id, "codegen")

    def _go(self, value: str) -> None:
        import json

        try:
            d = json.loads(value) if value else {}
        except ValueError:
            return
        if isinstance(d, dict):
            self.go_to(compile_id=d.get("compile"), kernel=d.get("kernel"), site=d.get("break"))

    # ---- benchmark -------------------------------------------------------------------------

    def _bench_controls(self) -> w.Widget:
        """The Benchmark button (compiler.benchmark(report) on what the report remembers) and its
        progress line; disabled, with a tooltip saying what to call, when nothing is remembered."""
        from compiler._viewer import benchmark_subject

        self.bench_status = w.HTML("")
        self.bench_button = w.Button(description="Benchmark", icon="tachometer", layout=_whole_label())
        if benchmark_subject(self.report) is None:
            self.bench_button.disabled = True
            self.bench_button.tooltip = (
                "nothing to time: this report remembers no function; call compiler.benchmark(report, fn, *args), "
                "or record with compiler.record(fn, *args) or %%compile"
            )
        else:
            self.bench_button.tooltip = "time eager vs compiled on the same inputs, profile the kernels"
            self.bench_button.on_click(lambda _b: self.run_benchmark())
        self.bench_row = w.HBox([self.bench_button, self.bench_status])
        return self.bench_row

    def run_benchmark(self, **kwargs) -> None:
        def progress(text: str, final: bool = False) -> None:
            if final:  # "done" only once the result is on screen (below)
                text = text.replace(": done", ": showing the result")
            self.bench_status.value = f"<i>{esc(text)}</i>"

        from compiler import StateMutationError, benchmark

        self.bench_button.disabled = True
        self.bench_row.children = (self.bench_button, self.bench_status)
        try:
            benchmark(self.report, progress=progress, **kwargs)
        except KeyboardInterrupt:  # the kernel's interrupt: keep what was measured, say so
            self.bench_status.value = "<i>interrupted: the calls timed so far are in the Benchmark tab</i>"
        except Exception as e:  # shown, not lost in the widget's callback
            self.bench_status.value = _error_html(e)
            if isinstance(e, StateMutationError):  # the opt-in, one click away
                anyway = w.Button(
                    description=ANYWAY,
                    button_style="warning",
                    layout=_whole_label(),
                    tooltip="compiler.benchmark(report, mutates=True): the state is snapshotted and restored afterwards",
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
        """The Benchmark tab, (re)built for the report's benchmarks; ``select``: open it."""
        self._bodies.pop("bench", None)
        self._update_tabs()
        if select and self._bench_tab is not None:
            self.tabs.selected_index = self._bench_tab

    # ---- fill-in ---------------------------------------------------------------------------

    def fill_compile(self, compile_id: str) -> None:
        """``compiler.fill`` for one compile (its runnable compiled cold in a fresh process), each
        progress line shown under the compile's buttons; then every view shows the filled report,
        on the same compile and stage."""

        def progress(line: str) -> None:
            self.fill_status.value = f"<i>{esc(line)}</i>"

        from compiler import fill

        stage = self.compiles.stage_tabs.selected_index or 0
        try:
            filled = fill(self.report, (compile_id,), progress=progress)
        except KeyboardInterrupt:
            self.fill_status.value = "<i>fill-in interrupted: the report is as it was</i>"
            return
        except Exception as e:  # shown, not lost in the widget's callback
            self.fill_status.value = _error_html(e)
            return
        self.report = filled
        self.subject = Subject(filled, self.title, compile=compile_id)
        self.view = self.subject.view
        self.header.value = _html.fragment_css() + frag("".join(v.html(self.subject) for v in headers()))
        self._bodies.clear()
        self._update_tabs()
        self.select(compile_id, STAGES[stage])

    # ---- diffs -----------------------------------------------------------------------------

    def show_diff(self, make, out: w.Output, what: str) -> None:
        """Show ``make()``'s diff in ``out`` (right under the buttons that asked for it),
        headed by what was asked; an error (stage missing…) is shown instead."""
        from IPython.display import HTML, display

        out.clear_output()
        with out:
            display(HTML(f'<div class="pt2x"><b>{esc(what)}</b> (here, under the buttons)</div>'))
            try:
                display(make())
            except (ValueError, TypeError, KeyError) as e:
                display(HTML(f'<div style="color:#cf222e">cannot diff: {esc(str(e))}</div>'))

    def diff_compiles(self, id_a: str, id_b: str, out: w.Output | None = None) -> None:
        from ..diffs._diff import diff_compiles

        self.show_diff(
            lambda: diff_compiles(self.report, id_a, id_b),
            out or self.compile_diff,
            f"diff [{id_a}] → [{id_b}]",
        )

    def compare_stages(self, stage_a: str, stage_b: str, compile_id: str | None = None) -> None:
        from ..diffs._diff import compare_stages

        cid = compile_id or self.compiles.selected().compile_id
        self.show_diff(
            lambda: compare_stages(self.report, cid, stage_a, stage_b),
            self.compile_diff,
            f"[{cid}] {stage_a} vs {stage_b}",
        )


def _error_html(e: Exception) -> str:
    """An exception of a button's work, shown on its status line (one line, escaped)."""
    return f'<span style="color:#cf222e">{esc(type(e).__name__)}: {esc(str(e))}</span>'

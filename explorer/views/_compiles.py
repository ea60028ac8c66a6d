"""The compiles view and its stages: one compile's own facts (how it ended, its stage times and
caches, torch's traceback and metrics) and each of its stages (``capture`` … ``codegen``: its
tables, graphs and code; codegen's: its kernel tables and each code block's size, or one
kernel's code, ``codegen_text``), as text (``--view compiles``, ``--view STAGE``, ``--compile ID``,
``--kernel NAME``),
as the static page's tab (a compile selector, each compile with its stages folded) and as the
notebook's tab (``CompilesTab``: the selector, "compare stages" and "diff with previous
compile" with their diff right under them, the compile's facts, one tab per stage built when
first shown). Its facts are the view model's ``CompileView`` (``model/_stages.py``)."""

from __future__ import annotations

import base64
import functools
import re

from compiler import Report
from compiler._viewer import fill_reason, fill_untrusted
from compiler.types import STAGES

from ..base._types import (
    CodeBlock,
    CompileView,
    ExplorerView,
    GraphBlock,
    LinesBlock,
    Repro,
    StageView,
    Table,
    opening_compile,
)
from ..diffs._diff import STAGE_NAMES
from ..graph._view import graph_widget
from ..lower._fit import table_lines
from ..lower._html import block_html, browser_highlighting, esc, frag
from ..lower._pagelines import LineTable
from ..lower._text import block_text
from ..repros._compile import file_name, repro_script


def stage_text(cv: CompileView, stage: str) -> str:
    """One compile's stage: its tables, its graphs' size and each code block in full."""
    sv = next(x for x in cv.stages if x.stage == stage)
    out = [f"{cv.label} · {stage}", ""]
    if not sv.blocks:
        return "\n".join(out + [f"{stage}: {sv.note or 'nothing recorded'}"]) + "\n"
    if sv.note:
        out += [sv.note, ""]
    out += [block_text(b) for b in sv.blocks]
    return "\n".join(out).rstrip() + "\n"


CODEGEN_HELP = (
    "one compile's kernel and extern-call tables, each code's size (--compile; --kernel NAME: its code)"
)


def stage_view_text(cv: CompileView, stage: str, kernel: str | None = None) -> str:
    """A stage's view: ``codegen_text`` for codegen (``kernel``: that kernel's code), else
    ``stage_text``."""
    if stage == "codegen":
        return codegen_text(cv, kernel)
    return stage_text(cv, stage)


def codegen_text(cv: CompileView, kernel: str | None = None) -> str:
    """The codegen stage: its tables, its short code blocks (a FlexAttention mod), and each
    other code block's title and size, a line each (a GPT-2 step's kernels and wrapper modules
    are ten thousand lines); with ``kernel``, the code
    of the kernel of that name (its blocks: body, metadata, IR), or of the code blocks whose
    title holds it ("forward wrapper"). A ValueError names what there is to print."""
    sv = next(x for x in cv.stages if x.stage == "codegen")
    if not sv.blocks and kernel is None:
        return stage_text(cv, "codegen")
    if kernel is None:
        out = [f"{cv.label} · codegen", ""]
        if sv.note:
            out += [sv.note, ""]
        tables = [b for b in sv.blocks if isinstance(b, Table)]
        listed = {r[1] for b in tables if b.title.startswith("kernels") for r in b.rows}
        code = [
            b
            for b in sv.blocks
            if isinstance(b, (CodeBlock, LinesBlock)) and not any(_names(b, k) for k in listed)
        ]
        out += [block_text(b) for b in tables]
        out += [block_text(b) for b in code if _short(b)]  # a FlexAttention mod's code
        if listed:
            out += ["each kernel's code: --kernel NAME (a name of the kernel table)", ""]
        if long := [b for b in code if not _short(b)]:
            out += ["more code (--kernel TITLE prints it):"]
            rows = [(_code_size(b), b.title) for b in long]
            out += [*table_lines(None, rows, keep=(0,), indent=2), ""]
        return "\n".join(out).rstrip() + "\n"
    chosen = [b for b in sv.blocks if isinstance(b, (CodeBlock, LinesBlock)) and _names(b, kernel)]
    if not chosen:
        names = [
            r[1] for b in sv.blocks if isinstance(b, Table) and b.title.startswith("kernels") for r in b.rows
        ]
        some = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        raise ValueError(
            f"no kernel or code block {kernel!r} in the codegen of [{cv.compile_id}]"
            + (f" (kernels: {some})" if names else " (it has no kernels)")
        )
    chosen_tables = [
        b for b in sv.blocks if isinstance(b, Table) and b.title.startswith(f"{kernel}:")
    ]  # a Triton kernel's metadata and binaries
    out = [f"{cv.label} · codegen · {kernel}", ""]
    out += [block_text(b) for b in chosen + chosen_tables]
    return "\n".join(out).rstrip() + "\n"


SHORT = 30  # lines of a code block the codegen view prints in full (the others: their size)


def _short(b: CodeBlock | LinesBlock) -> bool:
    return len(b.code.rstrip("\n").splitlines()) <= SHORT


def _code_size(b: CodeBlock | LinesBlock) -> str:
    return f"{len(b.code.rstrip(chr(10)).splitlines()):,} lines"


def _names(b: CodeBlock | LinesBlock, name: str) -> bool:
    """The block is kernel ``name``'s code (its title names it as a word), or its title holds
    ``name`` (a wrapper module, fx_graph_runnable)."""
    return re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", b.title) is not None


def compile_text(cv: CompileView) -> str:
    """One compile's own facts: how it ended, its stage times and caches, torch's traceback
    and metrics (its stages: ``stage_text``)."""
    out = [cv.label, ""]
    if cv.error:
        out += [cv.error, ""]
    out += [block_text(b) for b in cv.blocks]
    return "\n".join(out).rstrip() + "\n"


def compile_of(view: ExplorerView, compile_id: str | None) -> CompileView:
    """``compile_id``'s view (None: the opening compile), or a ValueError naming the ids."""
    if compile_id is None:
        cv = opening_compile(view)
        if cv is None:
            raise ValueError("no compiles recorded: no stage to show")
        return cv
    for cv in view.compiles:
        if cv.compile_id == compile_id.strip("[]"):
            return cv
    ids = ", ".join(c.compile_id for c in view.compiles) or "none"
    raise ValueError(f"no compile {compile_id!r} in this report (compiles: {ids})")


def stage_html(sv: StageView, *, static: bool = False, shared: LineTable | None = None) -> str:
    if not sv.blocks:
        return f'<div class="note">{esc(sv.stage)}: {esc(sv.note or "nothing recorded")}</div>'
    note = f'<div class="note">{esc(sv.note)}</div>' if sv.note else ""
    return note + "".join(block_html(b, static=static, shared=shared) for b in sv.blocks)


def compile_facts_html(
    cv: CompileView, report: Report, *, static: bool = False, shared: LineTable | None = None
) -> str:
    """How the compile ended, its repros' save buttons, then its own facts (stage times,
    caches, traceback, metrics). ``report``: the report ``cv`` was built from (its repros'
    text)."""
    err = f'<div class="error">{esc(cv.error)}</div>' if cv.error else ""
    blocks = "".join(block_html(b, static=static, shared=shared) for b in cv.blocks)
    return err + repro_buttons_html(report, cv.repros) + blocks


def repro_buttons_html(report: Report, repros: tuple[Repro, ...]) -> str:
    """Buttons that save each repro (a download link: no script, no server), or ""."""
    links = []
    for r in repros:
        data = base64.b64encode(repro_script(report, r.compile_id, backward=r.backward).encode()).decode()
        name = file_name(r.compile_id, r.backward)
        label = "Save the backward repro" if r.backward else "Save repro"
        links.append(
            f'<a class="button repro" download="{esc(name)}" href="data:text/x-python;base64,{data}" '
            f'title="torch\'s fx_graph_runnable of this compile: run it with python">{esc(label)} ({esc(name)})</a>'
        )
    return f'<div class="repro">{" ".join(links)}</div>' if links else ""


def compile_html(
    cv: CompileView, report: Report, *, static: bool = False, shared: LineTable | None = None
) -> str:
    stages = "".join(
        f"<details{' open' if sv.stage == 'capture' else ''}><summary>{esc(sv.stage)}</summary>{stage_html(sv, static=static, shared=shared)}</details>"
        for sv in cv.stages
    )
    return f"<h3>{esc(cv.label)}</h3>{compile_facts_html(cv, report, static=static, shared=shared)}{stages}"


def compiles_html(view: ExplorerView, selected: str | None = None) -> str:
    """The static page's compiles tab: a compile selector (the page's script shows the one
    selected; ``selected``: the compile selected first, None: the first), then each compile."""
    options = "".join(
        f'<option value="{esc(c.compile_id)}"{" selected" if c.compile_id == selected else ""}>{esc(c.label)}</option>'
        for c in view.compiles
    )
    shared = LineTable(browser_highlighting())  # the texts compiles share, each line once
    compiles = "".join(
        f'<div class="pt2x-compile" data-id="{esc(c.compile_id)}">{compile_html(c, view.report, static=True, shared=shared)}</div>'
        for c in view.compiles
    )
    return f'<label>compile <select id="pt2x-compile">{options}</select></label>{compiles}{shared.script()}'


def stage_widget(sv: StageView):
    """A stage's tab: its blocks, each graph the graph component."""
    import ipywidgets as w

    if not sv.blocks:
        return w.HTML(frag(stage_html(sv)))
    children = [
        graph_widget(b) if isinstance(b, GraphBlock) else w.HTML(frag(block_html(b))) for b in sv.blocks
    ]
    return w.VBox(children)


def compiles_widget(app):
    """The notebook's compiles tab, on the compile the app's subject names (None: the first)."""
    return compiles_tab()(app, app.subject.compile)


@functools.cache
def compiles_tab() -> type:
    """The class of the notebook's compiles tab (an ``ipywidgets.VBox``), made when first asked
    for: the text and the page of this view import no ipywidgets."""
    import ipywidgets as w

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
            children = [
                self.selector,
                controls,
                app.fill_status,
                app.compile_diff,
                self.facts,
                self.stage_tabs,
            ]
            super().__init__(children)
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
            self.fill_button = w.Button(description="fill in this compile", layout=w.Layout(width="auto"))
            self.fill_button.on_click(lambda _b: self._fill())
            self.selector.observe(lambda ch: self._update_buttons(), names="value")
            self._update_buttons()
            return w.HBox(
                [
                    self.stage_a,
                    w.HTML("&nbsp;vs&nbsp;"),
                    self.stage_b,
                    compare,
                    self.previous_button,
                    self.fill_button,
                ]
            )

        def selected(self):
            """The compile shown (its ``CompileView``)."""
            return self.app.view.compiles[self.selector.value or 0]

        def _update_buttons(self) -> None:
            prev = self.selected().previous if self.app.view.compiles else None
            self.previous_button.disabled = prev is None
            self.previous_button.tooltip = (
                f"compare [{prev}] with this compile"
                if prev
                else "the first compile of its frame: nothing before it"
            )
            why = self._fill_reason()
            # the fill runs the report's runnable code: offered only for this user's own recording
            untrusted = fill_untrusted(self.app.report) if why else None
            self.fill_button.disabled = why is None or untrusted is not None
            self.fill_button.tooltip = (
                "nothing to fill in: its kernels have their nodes (or it made no Inductor code)"
                if not why
                else f"not offered: the fill would run this report's runnable code, and {untrusted}; read "
                "it, then compiler.fill(report, (ID,), trust=True) runs it"
                if untrusted
                else f"{why}: compile its runnable again with the caches off (a fresh process) and merge "
                "the kernels' nodes, the IR before and after fusion and the fusion decisions"
            )

        def _fill_reason(self) -> str | None:
            if not self.app.view.compiles:
                return None
            cid = self.selected().compile_id
            c = next((c for c in self.app.report.compiles if c.id == cid), None)
            return fill_reason(c) if c is not None else None

        def _fill(self) -> None:
            if self._fill_reason() is not None and fill_untrusted(self.app.report) is None:
                self.fill_button.disabled = True
                self.app.fill_compile(self.selected().compile_id)

        def _diff_previous(self) -> None:
            cv = self.selected()
            if cv.previous is not None:
                self.app.diff_compiles(cv.previous, cv.compile_id)

        def show(self) -> None:
            """The selected compile's facts and its selected stage (each stage built once)."""
            ci = self.selector.value or 0
            si = self.stage_tabs.selected_index or 0
            self.facts.value = frag(compile_facts_html(self.selected(), self.app.report))
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

    return CompilesTab

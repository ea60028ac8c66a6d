"""The view model's types: what every lowering (rich text, static HTML, widgets) draws, as
plain frozen data. Built from a report by ``_view.build_view`` (and ``_summary``,
``model._stages``, ``model._recompiles``); lowered by each view's module (``views/``) and the
generic lowerings of ``lower/``.
Nothing here imports another module of the explorer: every other module may import it."""

from __future__ import annotations

from dataclasses import dataclass, field

from compiler import Report
from compiler.types import Benchmark, Graph


@dataclass(frozen=True)
class BreakLine:
    site: str  # where(): "model.py:12" or "Cell In[2], line 9"
    type: str
    count: int
    compile_ids: tuple[str, ...]  # every compile torch logged it in
    code: str | None = None  # the site's line of code
    hint: str | None = None  # torch's first hint
    # a break torch asked for in its own files: "torch's own break (inside …, reached from your …)"
    torch_own: str | None = None

    def text(self) -> str:
        own = f": {self.torch_own}" if self.torch_own else ""
        return f"{self.site}  {self.type}  ({hits(self.count, self.compile_ids)}){own}"


def hits(count: int, compile_ids: tuple[str, ...]) -> str:
    """``hit 2×; logged in [0/0], [1/0], [2/0]``: a break's hits, said one way everywhere."""
    return f"hit {count}×; logged in " + ", ".join(f"[{c}]" for c in compile_ids)


@dataclass(frozen=True)
class CompileRow:
    compile_id: str
    frame: str
    status: str  # "ok" or "FAILED in fuse"
    stages: str  # "CADFG" with "·" for a stage that did not run
    kernels: str  # "3 cpp"
    time: str
    stage_times: str  # "0.12/-/0.30/-/0.50"
    error: str | None = None
    note: str | None = None  # why an Inductor compile generated no kernel


@dataclass(frozen=True)
class Summary:
    """The summary view: what every lowering (terminal, text, widget header, static page)
    shows at the top, in one wording."""

    title: str
    meta: str  # torch version, device
    headline: str
    error: str | None = None
    breaks: tuple[BreakLine, ...] = ()
    recompile_lines: tuple[str, ...] = ()  # "[0/1] fn: reason", then frames at the limit
    frame_lines: tuple[str, ...] = ()
    compiles: tuple[CompileRow, ...] = ()
    unknown: str | None = None  # the events kept raw
    damaged: str | None = None  # a log's events whose payload is not what torch wrote
    sections: tuple[tuple[str, tuple[str, ...]], ...] = ()  # ("Compiled Autograd", lines), …
    # detail the page and the widget fold under the sections (each compile's caches); the
    # text says where to read it instead
    folded: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def break_lines(self) -> tuple[str, ...]:
        return tuple(b.text() for b in self.breaks)


@dataclass(frozen=True)
class SourceLine:
    number: int
    text: str
    highlight: bool = False


@dataclass(frozen=True)
class Span:
    """A piece of a line that is more than words (a stack, a list of links), built once as
    data and drawn by each lowering its own way (``lower/_text.py: inline_text``,
    ``lower/_html.py: inline_html``); a line is a tuple of them (``Inline``). Its ``kind``:

    - ``""``: words, as they are;
    - ``"lib"``: a stack frame in a library (text: ``[lib]`` after it; HTML: dimmed);
    - ``"yours"``: the program's own innermost frame (HTML: bold);
    - ``"compile"``: a compile id (text: ``[0/1]``; HTML: a link that opens that compile);
    - ``"calls"``: between a caller and what it called (text `` -> ``; HTML `` → ``);
    - ``"next"``: between the items of a list (text ``, ``; HTML ``; ``);
    - ``"prose"``: a paragraph (text: on one line, its runs of blanks one space; HTML: as it is).
    """

    kind: str
    text: str = ""


Inline = tuple[Span, ...]


@dataclass(frozen=True)
class Labelled:
    """A fact of a record, one line under its head (``why: …``, ``stack: …``), drawn by each
    lowering its own way (``lower/_text.py: fact_lines``, ``lower/_html.py: fact_html``): text
    ``label: value``; HTML a ``<div>`` of class ``cls``, the label bold where ``strong``."""

    label: str  # "" for none
    value: Inline
    cls: str = ""
    strong: bool = True


@dataclass(frozen=True)
class Excerpt:
    """The source lines around a line, that line marked (text ``> 15 | code``; HTML a ``<pre>``)."""

    lines: tuple[SourceLine, ...]


Fact = Labelled | Excerpt


@dataclass(frozen=True)
class BreakView:
    site: str  # "file.py:12"
    type: str
    reason: str
    count: int
    compile_ids: tuple[str, ...]
    graph_before: str | None  # compile whose graph ends at the break
    graph_after: str | None  # compile of the code after it (torch's resume function)
    # under its head line, in order: the program's own line that led to a site in a library
    # ("your code"), the source around the site (or why it was not read), why it broke, torch's
    # hints, its stack (outermost first; torch's and this package's frames left out) and the
    # graphs before and after it, each a link to its compile
    facts: tuple[Fact, ...] = ()
    gb_id: str | None = None


@dataclass(frozen=True)
class GuardLine:
    text: str
    failing: bool = False


@dataclass(frozen=True)
class OtherFailure:
    """A further cache entry whose guards also failed (torch tries every entry, newest first)."""

    entry: str | None
    reason: str  # first line, without torch's "0/0: " prefix
    guard: str | None


@dataclass(frozen=True)
class RecompileView:
    compile_id: str
    frame: str
    reasons: tuple[str, ...]
    failed_entry: str | None
    failing_guard: str | None
    guards: tuple[GuardLine, ...]
    guard_from: str | None = None  # "file.py:12 in fn": the user code the failing guard came from
    also_failed: tuple[OtherFailure, ...] = ()
    dynamic: tuple[tuple[str, str], ...] = ()  # (dimension, symbol) this recompile made dynamic
    failed_later_in: str | None = None  # the later recompile whose failure names this compile
    dynamic_note: str | None = None  # "compiled with dynamic … (s27); later calls reuse it"
    diff_from: str | None = None  # the compile its "diff" button compares it with


@dataclass(frozen=True)
class DynamicDim:
    """A row of the "Dynamic dimensions" section: a symbol a compile created for a size (or
    stride), or a dimension it specialized to a constant."""

    compile_id: str
    symbol: str | None  # "s27" (for a specialization: the symbol it replaced)
    dim: str  # "kwargs['input_ids'].size()[1]" (a specialization's sources joined by ", ")
    range: str | None = None  # torch's value range, "[2, int_oo]"
    seen: str | None = None  # the value seen when the symbol was created
    specialized: str | None = None  # the constant it was fixed to (a specialization)
    reason: str | None = None  # torch's reason for the specialization
    at: str | None = None  # "file.py:4": the user line that specialized it


@dataclass(frozen=True)
class TimelineEntry:
    compile_id: str
    status: str
    label: str  # "first compile", the recompile reason, or the failure


@dataclass(frozen=True)
class FrameTimeline:
    frame: str
    where: str
    entries: tuple[TimelineEntry, ...]
    limit_hit: bool = False


@dataclass(frozen=True)
class Table:
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    # what each column holds, for the HTML lowering (text shows the cell as it is): "" plain,
    # "colour" a swatch, "nodes" graph nodes ("a, b") that select themselves in the fuse graph,
    # "kernel" a kernel that selects its nodes there, "code" a kernel that shows its row in codegen,
    # "lines" source lines ("a.py:3, b.py:9") that select the nodes each made
    kinds: tuple[str, ...] = ()


@dataclass(frozen=True)
class CodeBlock:
    title: str
    language: str  # python | cpp | triton | text
    code: str


@dataclass(frozen=True)
class GraphBlock:
    title: str
    graph: Graph
    colors: dict[str, str] = field(default_factory=dict)  # node -> kernel colour (fuse view)
    # a source line ("file.py:12") -> the ops Dynamo's graph made there ("layer_norm"): what a
    # later graph's nodes of that line were before decomposition (the search's op:)
    origins: dict[str, str] = field(default_factory=dict)
    kernels: dict[str, str] = field(default_factory=dict)  # node -> the kernel it was fused into
    # where the view opens: the nodes of the compile's most expensive kernel, and why
    focus: tuple[str, ...] = ()
    focus_why: str = ""
    backward: bool = False  # a backward graph: its module runs are the backward of each module


@dataclass(frozen=True)
class LinesBlock:
    """A text block kept as its lines, for texts that share most lines with others (a log's
    cache keys, its compiles' metrics): the static page holds each distinct line once
    (``lower/_pagelines.py``); every other lowering shows it as the text ``code``."""

    title: str
    lines: tuple[str, ...]
    language = "text"

    @property
    def code(self) -> str:
        return "\n".join(self.lines)


Block = Table | CodeBlock | GraphBlock | LinesBlock


@dataclass(frozen=True)
class StageView:
    stage: str
    blocks: tuple[Block, ...]
    note: str | None = None  # why a stage is empty (or, beside its blocks, what it lacks and why)


@dataclass(frozen=True)
class Repro:
    """A runnable repro of a compile that its view offers to save: torch's ``fx_graph_runnable``
    of its graph (``backward``: of its backward graph), written by ``explorer/repros/_compile.py``
    and drawn as a download button by ``views/_compiles.py``."""

    compile_id: str
    backward: bool = False


@dataclass(frozen=True)
class CompileView:
    compile_id: str
    label: str  # "[0/1] forward — ok"
    status: str
    error: str | None
    stages: tuple[StageView, ...]
    blocks: tuple[
        Block, ...
    ] = ()  # the compile's own facts: stage times, caches, torch's traceback and metrics
    kernels: int = 0  # how many kernels it generated
    nodes: int = 0  # the nodes of its biggest graph (Dynamo's or the joint graph)
    previous: str | None = None  # the compile before it of the same frame ("diff with previous")
    repros: tuple[Repro, ...] = ()  # its runnable repros, forward first (the views' save buttons)


@dataclass(frozen=True)
class ExplorerView:
    summary: Summary
    breaks: tuple[BreakView, ...]
    timelines: tuple[FrameTimeline, ...]
    recompiles: tuple[RecompileView, ...]
    compiles: tuple[CompileView, ...]
    benchmarks: tuple[Benchmark, ...] = ()  # report.benchmarks (explorer/views/_bench.py)
    dynamic_dims: tuple[DynamicDim, ...] = ()  # every compile's symbols and specializations
    report: Report | None = field(default=None, repr=False, compare=False)  # for the time charts


def opening_compile(view: ExplorerView) -> CompileView | None:
    """The compile with the most work, where the compiles tab and a stage view start: the most
    kernels, then the biggest graph (the first of equals), never a frame that captured nothing
    when another did."""
    if not view.compiles:
        return None
    return max(enumerate(view.compiles), key=lambda ic: (ic[1].kernels, ic[1].nodes, -ic[0]))[1]

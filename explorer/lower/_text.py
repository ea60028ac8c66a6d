"""The view model lowered to plain text: the terminal's and the tests' form of its generic
parts (tables, code and graph blocks, inline lines); each view's own text is in its module
(``views/``)."""

from __future__ import annotations

from ..base._types import CodeBlock, Excerpt, Fact, GraphBlock, Inline, LinesBlock, Span, Table
from ._fit import MARK, continued, table_lines, width

_SPAN_TEXT = {
    "": "{}",
    "lib": "{} [lib]",
    "yours": "{}",
    "compile": "[{}]",
    "calls": " -> ",
    "next": ", ",
}


def inline_text(line: Inline) -> str:
    """An inline line (``base/_types.py: Span``) as text: ``a.py:3 in f -> b.py:9 in g [lib]``."""
    return "".join(_span_text(s) for s in line)


def _span_text(s: Span) -> str:
    if s.kind == "prose":
        return " ".join(s.text.split())
    return _SPAN_TEXT[s.kind].format(s.text)


def fact_lines(f: Fact) -> list[str]:
    """A record's fact (``base/_types.py: Labelled``, ``Excerpt``) as lines of text."""
    if isinstance(f, Excerpt):
        width = len(str(f.lines[-1].number)) if f.lines else 0
        return [f"{'>' if ln.highlight else ' '} {ln.number:>{width}} | {ln.text}" for ln in f.lines]
    return [f"{f.label}: {inline_text(f.value)}" if f.label else inline_text(f.value)]


def table_text(t: Table) -> str:
    """The table under its title, fitting the text's width (``_fit``): its text wrapped
    inside the cells, never a row across lines."""
    return "\n".join([t.title, *table_lines(t.columns, t.rows)]) + "\n"


def block_text(b) -> str:
    if isinstance(b, Table):
        return table_text(b)
    if isinstance(b, GraphBlock):
        nodes = [n for n in b.graph.nodes if n.op != "output"]
        edges = sum(len(n.args) for n in b.graph.nodes)
        return f"{b.title}: {len(nodes)} nodes, {edges} edges\n"
    assert isinstance(b, (CodeBlock, LinesBlock))
    lines = b.code.rstrip("\n").splitlines()
    shown = [f"    {ln}".rstrip() for ln in lines]
    room = width()
    if room is not None:  # a terminal: a line wider than it goes on after a mark (``continued``)
        shown = [part for ln in shown for part in continued(ln, room)]
    note = f"; a line wider than the terminal goes on after {MARK.strip()}" if len(shown) > len(lines) else ""
    return f"{b.title} ({len(lines)} lines{note})\n" + "".join(ln + "\n" for ln in shown)

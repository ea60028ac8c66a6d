"""Views of torch.export runs (compiler/assemble/_draft.py): what each export assumed about the inputs
and the failures draft_export found, each with its user line. Text lines for the summary's
"export → AOTInductor" section and a block for the AOTInductor compile's capture stage; text,
HTML and the widget all show these through the view model."""

from __future__ import annotations

from compiler import Report
from compiler.types import Compile, ExportFact, ExportRun

from ..base._types import Block, Table


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def _label(run: ExportRun) -> str:
    return f"export #{run.number} ({'draft_export' if run.draft else 'torch.export.export'})"


def _fact_text(f: ExportFact) -> str:
    text = f"{f.kind} {f.expr}"
    if f.kind == "dim" and f.detail:
        text += f": {f.detail}"
    if f.where:
        text += f" at {f.where}" + (f" `{f.code}`" if f.code else "")
    if f.kind != "dim" and f.detail:
        text += f" ({f.detail})"
    if f.count > 1:
        text += f", {f.count} times"
    return text


def export_run_lines(report: Report) -> tuple[str, ...]:
    """One line per export, then its failures and assumptions, one a line."""
    out: list[str] = []
    for run in report.exports:
        head = f"{_label(run)}" + (f" → [{run.compile_id}]" if run.compile_id else "")
        head += f": {_plural(len(run.assumptions), 'assumption')}"
        if run.draft:
            head += f", {_plural(len(run.failures), 'failure')} draft_export found"
        elif run.failures:
            head += "; failed"
        out.append(head)
        out += [f"    failure: {_fact_text(f)}" for f in run.failures]
        out += [f"    assumed: {_fact_text(f)}" for f in run.assumptions]
    return tuple(out)


def _rows(facts: tuple[ExportFact, ...]) -> tuple[tuple[str, ...], ...]:
    return tuple((f.kind, f.expr, f.where or "?", f.code or "", f.detail or "", str(f.count)) for f in facts)


def export_run_blocks(report: Report, c: Compile) -> list[Block]:
    """The capture stage of an AOTInductor compile: the export it compiled, what that export
    assumed and what draft_export found."""
    blocks: list[Block] = []
    cols = ("kind", "expression", "where", "code", "detail", "times")
    for run in report.exports:
        if run.compile_id != c.id:
            continue
        if run.draft or run.failures:
            title = f"{_label(run)}: {_plural(len(run.failures), 'failure')}"
            blocks.append(Table(title, cols, _rows(run.failures)))
        blocks.append(Table(f"{_label(run)}: what it assumed about the inputs", cols, _rows(run.assumptions)))
    return blocks

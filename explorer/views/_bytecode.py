"""The code Dynamo ran instead of the user's, frame by frame: what it does (calls the compiled
graph, runs the instruction it could not trace itself, continues in a resume function), the
guards checked before it runs, both codes as Python where depyf decompiled them, and the
original and transformed bytecode (``dis``) side by side. Resume functions are tied to the
function and line they continue."""

from __future__ import annotations

from dataclasses import dataclass

from compiler import Report
from compiler.analysis import bytecode_steps, resume_of
from compiler.types import BytecodeStep, Compile, GraphBreak, StackFrame

from ..lower._html import code_html, esc
from ..model._summary import where

GUARD_LINES = 8  # lines of a compile's guard tree shown in the text (all of it in the capture view)
STEP_ROWS = 200  # steps of a frame's code shown, in the text and the page; its bytecode has them all


@dataclass(frozen=True)
class FrameCode:
    compile_id: str
    title: str  # "f (model.py:2)"
    resumes: str | None  # "continues f after line 4 (model.py:4)" for a resume function
    steps: tuple[tuple[str, str], ...]  # ("line 4", what it does), the first STEP_ROWS
    step_count: int  # all of them
    guards: tuple[str, int]  # (the guard tree, its count), ("", 0) where none was recorded
    python: tuple[tuple[str, str], ...]  # (title, decompiled source)
    note: str | None  # why one of the two has no Python
    original: str | None
    modified: str | None


def _resume_names(report: Report, c: Compile, line: int | None) -> str:
    """The resume functions compiled for ``c``'s function at ``line``, with their compiles."""
    fn = (resume_of(c.name) or (c.name,))[0]  # a resume function's breaks resume its function
    hits = [
        f"{r.name} (compile {r.id})"
        for r in report.compiles
        if (of := resume_of(r.name)) is not None and of == (fn, line)
    ]
    return (
        ", ".join(dict.fromkeys(hits))
        if hits
        else "(no compile of it recorded: not called, or nothing to capture)"
    )


def _break_sites(report: Report, c: Compile) -> dict[int, tuple[StackFrame, GraphBreak]]:
    """line of ``c``'s frame -> (that frame's entry in a graph break's stack, the break), for
    the breaks torch logged while compiling ``c``: the line whose code then runs in Python."""
    names = {c.name, *(resume_of(c.name) or ())[:1]}
    out: dict[int, tuple[StackFrame, GraphBreak]] = {}
    for g in report.graph_breaks:
        if c.id not in (g.compile_ids or (g.compile_id,)):
            continue
        own = [f for f in g.user_stack if f.filename == c.filename and f.name in names]
        if own:
            out.setdefault(own[-1].line, (own[-1], g))
    return out


def _with_break_sites(steps: tuple[BytecodeStep, ...], sites: dict) -> tuple[BytecodeStep, ...]:
    """The steps, with a ``python`` step for each break line the ``dis`` listing shows none for
    (the code after the graph call runs the frame's own instructions from there, no resume
    function): after the graph call, in line order."""
    shown = {s.line for s in steps if s.kind == "python"}
    extra = [BytecodeStep("python", "", line) for line in sorted(sites) if line not in shown]
    if not extra:
        return steps
    at = next((i + 1 for i, s in enumerate(steps) if s.kind == "graph"), len(steps))
    return (*steps[:at], *extra, *steps[at:])


def _side_effects_step(effects) -> str:
    n = sum(len(e.sites) for e in effects)
    kinds = ", ".join(dict.fromkeys(e.type for e in effects))
    return (
        f"replays {n} mutation{'s' if n != 1 else ''} of {len(effects)} object{'s' if len(effects) != 1 else ''}"
        f" ({kinds}) in Python: Dynamo's side effects (their lines: --view capture)"
    )


_CLOSE = {"(": ")", "[": "]", "{": "}"}


def _statement(code: str) -> str:
    """The source line a traceback shows, its call's arguments on later lines shown as "…":
    ``loss = self.loss_function(…)``."""
    return f"{code}…{_CLOSE[code[-1]]}" if code[-1] in _CLOSE else code


def _step_text(report: Report, c: Compile, s: BytecodeStep, sites: dict | None = None) -> str:
    if s.kind == "graph":
        return f"calls the compiled graph {s.name}"
    if s.kind == "python":
        site = (sites or {}).get(s.line)
        if site is None:
            return f"runs {s.name} itself, in Python: the graph break"
        frame, g = site
        what = f"`{_statement(frame.code)}`" if frame.code else s.name or "its instruction"
        inner = (g.filename, g.line) != (frame.filename, frame.line)
        where_break = f" inside it, at {where(g.filename, g.line)}" if inner else ""
        rest = "" if s.name else ", and the frame's code after it"
        return (
            f"runs {what} ({where(frame.filename, frame.line)}) itself, in Python{rest}: "
            f"the graph break{where_break} ({g.type})"
        )
    return f"continues in {s.name}: resume function {_resume_names(report, c, s.line)}"


def frame_code(report: Report, c: Compile) -> FrameCode | None:
    cap = c.stages.capture
    if cap is None or not (cap.bytecode_original or cap.bytecode_modified):
        return None
    of = resume_of(c.name)
    resumes = f"continues {of[0]} after line {of[1]} ({where(c.filename, of[1])})" if of else None
    sites = _break_sites(report, c)
    all_steps = _with_break_sites(bytecode_steps(cap.bytecode_modified), sites)
    steps = tuple(
        (f"line {s.line}" if s.line is not None else "", _step_text(report, c, s, sites))
        for s in all_steps[:STEP_ROWS]
    )
    if cap.side_effects:  # torch's dynamo_side_effects: after the graph, before what follows it
        at = next((i + 1 for i, s in enumerate(steps) if s[1].startswith("calls the compiled graph")), 0)
        steps = (*steps[:at], ("", _side_effects_step(cap.side_effects)), *steps[at:])
    python = tuple(
        (title, code)
        for title, code in (
            ("the frame's code, as Python", cap.bytecode_original_source),
            (
                "what Dynamo runs instead, as Python (depyf's reading: the dis listing is what runs)",
                cap.bytecode_modified_source,
            ),
        )
        if code
    )
    note = cap.bytecode_source_note
    if not python and note is None:
        note = "no Python: torch's log holds the listings only (record in-process with depyf installed)"
    return FrameCode(
        compile_id=c.id,
        title=f"{c.name or '?'} ({where(c.filename, c.line)})",
        resumes=resumes,
        steps=steps,
        step_count=len(all_steps),
        guards=((cap.guards or "").strip("\n"), cap.guard_count or 0),
        python=python,
        note=note,
        original=cap.bytecode_original,
        modified=cap.bytecode_modified,
    )


def frame_codes(report: Report, compile_id: str | None = None) -> tuple[FrameCode, ...]:
    """Every compile's code (``compile_id``: that one's; a ValueError naming the ids if none)."""
    if compile_id is not None:
        compile_id = compile_id.strip("[]")
        if all(c.id != compile_id for c in report.compiles):
            ids = ", ".join(c.id for c in report.compiles) or "none"
            raise ValueError(f"no compile {compile_id!r} in this report (compiles: {ids})")
    out = (frame_code(report, c) for c in report.compiles if compile_id in (None, c.id))
    return tuple(f for f in out if f is not None)


def has_bytecode(report: Report) -> bool:
    return any(c.stages.capture and c.stages.capture.bytecode_modified for c in report.compiles)


def _indent(text: str) -> list[str]:
    return [f"    {ln}".rstrip() for ln in text.rstrip("\n").splitlines()]


def _steps_head(f: FrameCode) -> str:
    """``what runs instead``, and how many steps were left out where the steps were capped."""
    if f.step_count <= len(f.steps):
        return "what runs instead"
    left = f.step_count - len(f.steps)
    return f"what runs instead (first {len(f.steps):,} of {f.step_count:,} steps, {left:,} left out: the transformed bytecode has them all)"


def _guard_head(f: FrameCode) -> str:
    count = f" ({f.guards[1]} guards torch counted)" if f.guards[1] else ""
    return f"guards checked before it runs{count}"


def bytecode_text(report: Report, compile_id: str | None = None) -> str:
    codes = frame_codes(report, compile_id)
    if not codes:
        return _EMPTY + "\n"
    out: list[str] = []
    for f in codes:
        out.append(f"[{f.compile_id}] {f.title}")
        if f.resumes:
            out.append(f"  resume function: {f.resumes}")
        out.append(
            f"  {_steps_head(f)}:" if f.steps else "  what runs instead: no graph call (see the bytecode)"
        )
        out += [f"    {line:<8} {what}".rstrip() for line, what in f.steps]
        if f.guards[0]:
            lines = f.guards[0].strip("\n").splitlines()
            more = (
                f" (first {GUARD_LINES} of {len(lines)} lines: --view capture)"
                if len(lines) > GUARD_LINES
                else ""
            )
            out.append(f"  {_guard_head(f)}{more}")
            out += _indent("\n".join(lines[:GUARD_LINES]))
        for title, code in f.python:
            out.append(f"  {title}")
            out += _indent(code)
        if f.note:
            out.append(f"  {f.note}")
        for title, listing in (
            ("original bytecode (dis)", f.original),
            ("transformed bytecode (dis)", f.modified),
        ):
            if listing:
                out.append(f"  {title}, {listing.count(chr(10)) + 1} lines")
                out += _indent(listing)
        out.append("")
    return "\n".join(out).rstrip() + "\n"


_EMPTY = (
    "No bytecode recorded: Dynamo's bytecode comes from a recording (every frame) or, in a "
    "TORCH_TRACE log of torch 2.12 or later, from resume functions only."
)


def _details(title: str, body: str, *, open_: bool = False) -> str:
    return f"<details{' open' if open_ else ''}><summary>{esc(title)}</summary>{body}</details>"


def _side_by_side(
    left: tuple[str, str | None], right: tuple[str, str | None], language: str = "text", lazy: bool = False
) -> str:
    cols = "".join(
        f'<div style="flex:1;min-width:0;overflow:auto"><h4>{esc(t)}</h4>{code_html(code, language, lazy=lazy)}</div>'
        for t, code in (left, right)
        if code
    )
    return f'<div class="side-by-side" style="display:flex;gap:1em">{cols}</div>'


def bytecode_html(report: Report, compile_id: str | None = None, *, lazy: bool = False) -> str:
    """The bytecode tab; ``lazy``: code highlighted in the browser (``_html.code_html``)."""
    codes = frame_codes(report, compile_id)
    if not codes:
        return f'<div class="note">{esc(_EMPTY)}</div>'
    parts = []
    for f in codes:
        parts.append(f'<h3 data-compile="{esc(f.compile_id)}">[{esc(f.compile_id)}] {esc(f.title)}</h3>')
        if f.resumes:
            parts.append(f'<div class="meta">resume function: {esc(f.resumes)}</div>')
        if f.steps:
            rows = "".join(f"<tr><td>{esc(line)}</td><td>{esc(what)}</td></tr>" for line, what in f.steps)
            parts.append(
                f"<table><thead><tr><th></th><th>{esc(_steps_head(f))}</th></tr></thead><tbody>{rows}</tbody></table>"
            )
        if f.guards[0]:
            parts.append(_details(_guard_head(f), code_html(f.guards[0], "text", lazy=lazy)))
        if len(f.python) == 2:
            parts.append(_side_by_side(*f.python, language="python", lazy=lazy))
        else:
            parts += [_details(t, code_html(code, "python", lazy=lazy), open_=True) for t, code in f.python]
        if f.note:
            parts.append(f'<div class="note">{esc(f.note)}</div>')
        parts.append(
            _details(
                "bytecode (dis), original beside transformed",
                _side_by_side(("original", f.original), ("transformed", f.modified), lazy=lazy),
            )
        )
    return "".join(parts)

"""What the code Dynamo runs in place of a frame does, read from its ``dis`` listing (the text
of ``dis.Bytecode(code).dis()``, which torch logs as ``<name>_MODIFIED_BYTECODE`` and the
recording's bytecode hook keeps for every frame): where it calls the compiled graph, the
instructions it runs itself because Dynamo could not trace them (the graph break), and the
resume functions it continues in. Pure: a string in, steps out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# one instruction row: [line] [>>|Lnn:] [offset] OPNAME [arg] [(argrepr)]; Python 3.11 prints
# offsets, 3.13 labels and, where asked, offsets; "--" is an instruction without a line. The
# leading blanks are matched once, whether a line number follows them or not (``\s*`` then
# ``\s+`` with an optional part between them split a run of blanks every way: quadratic)
_ROW = re.compile(
    r"^(?:\s*(?P<line>\d+|--))?\s+(?:>>\s*)?(?:L\d+:\s*)?(?:(?P<offset>\d+)\s+)?"
    r"(?P<op>[A-Z][A-Z0-9_]*[A-Z0-9])(?:\s+(?P<arg>-?\d+))?(?:\s+\((?P<repr>.*)\))?\s*$"
)
_GRAPH = "__compiled_fn_"
_RESUME = "__resume_at_"
# instructions Dynamo's generated code uses to rebuild the stack and the frame's locals around a
# break (not the user's own instruction that it runs in Python)
_GLUE = frozenset(
    {
        "BINARY_SUBSCR",
        "BUILD_LIST",
        "BUILD_SLICE",
        "BUILD_TUPLE",
        "BUILD_MAP",
        "CACHE",
        "COPY",
        "DELETE_FAST",
        "DELETE_SUBSCR",
        "EXTENDED_ARG",
        "LIST_EXTEND",
        "LOAD_CONST",
        "LOAD_FAST",
        "LOAD_FAST_BORROW",
        "LOAD_FAST_LOAD_FAST",
        "LOAD_SMALL_INT",
        "NOP",
        "POP_TOP",
        "PUSH_NULL",
        "RESUME",
        "STORE_FAST",
        "STORE_SUBSCR",
        "SWAP",
        "UNPACK_SEQUENCE",
    }
)


@dataclass(frozen=True)
class Instruction:
    line: int | None  # the source line (propagated from the row that names it)
    op: str
    arg: str | None  # dis's argrepr where it prints one, else the raw argument


@dataclass(frozen=True)
class BytecodeStep:
    """One thing the code Dynamo made does, in order: ``graph`` (calls the compiled graph
    ``name``), ``python`` (runs the user's instruction ``name`` itself, outside any graph: the
    graph break) or ``resume`` (continues in the resume function ``name``)."""

    kind: str
    name: str
    line: int | None


def instructions(listing: str) -> tuple[Instruction, ...]:
    """The instruction rows of a ``dis`` listing, each with its source line."""
    out: list[Instruction] = []
    rows = [m for m in map(_ROW.match, listing.splitlines()) if m]
    offsets = any(m["offset"] for m in rows)
    line: int | None = None
    for m in rows:
        number = m["line"]
        if number == "--":
            line = None
        elif number is not None and not (offsets and m["offset"] is None):
            line = int(number)  # else the only number of a listing with offsets is the offset
        arg = m["repr"] if m["repr"] is not None else m["arg"]
        out.append(Instruction(line, m["op"], arg))
    return tuple(out)


def _global(ins: Instruction) -> str | None:
    if ins.op not in ("LOAD_GLOBAL", "LOAD_NAME") or not ins.arg:
        return None
    return ins.arg.removeprefix("NULL + ").removesuffix(" + NULL").strip()


def bytecode_steps(listing: str | None) -> tuple[BytecodeStep, ...]:
    """The steps of the code Dynamo runs in a frame's place (``BytecodeStep``), from the
    ``dis`` listing of that code; () for none. Around a break, the user's instructions it
    runs itself are those of the break's line before the first resume function is loaded,
    less the instructions that rebuild the stack."""
    ins = instructions(listing or "")
    steps: list[BytecodeStep] = []
    resume_lines = {i.line for i in ins if (_global(i) or "").startswith(_RESUME)}
    seen_python: set[tuple[int | None, str, str | None]] = set()
    for i in ins:
        name = _global(i)
        if name is not None and name.startswith(_GRAPH):
            steps.append(BytecodeStep("graph", name, i.line))
        elif name is not None and name.startswith(_RESUME):
            steps.append(BytecodeStep("resume", name, i.line))
        elif i.line in resume_lines and i.op not in _GLUE and name is None:
            key = (i.line, i.op, i.arg)
            if _before_resume(steps, i.line) and key not in seen_python:
                seen_python.add(key)
                _python_step(steps, BytecodeStep("python", f"{i.op} {i.arg}" if i.arg else i.op, i.line))
    return tuple(steps)


def _python_step(steps: list[BytecodeStep], step: BytecodeStep) -> None:
    """One step per break: the line's call where Python runs several of its instructions
    (Python 3.12 lists the call's operands apart from it)."""
    last = steps[-1] if steps else None
    if last is not None and last.kind == "python" and last.line == step.line:
        if step.name.startswith("CALL") and not last.name.startswith("CALL"):
            steps[-1] = step
        return
    steps.append(step)


def _before_resume(steps: list[BytecodeStep], line: int | None) -> bool:
    """No resume function of ``line`` loaded yet since its last user instruction."""
    for s in reversed(steps):
        if s.line != line:
            return True
        if s.kind == "resume":
            return False
    return True

"""The mutations Dynamo's code replays after the graph (torch's ``dynamo_side_effects``
artifact, torch/_dynamo/side_effects.py: ``_emit_side_effect_messages``): one message per
mutated object, "Mutating object of type T (source …)" and the stacks of its mutations
(``traceback.format_list``, the frames above the compiled one included). Pure: the payload
in, one ``SideEffect`` per object out, each mutation named by its innermost frame."""

from __future__ import annotations

import re

from ..model._stagetypes import SideEffect, StackFrame

_OBJECTS = "\n\n========================================\n\n"  # torch's separator between objects
_STACKS = re.compile(r"^\s*\*{8}\s*$", re.M)  # and between one object's mutation stacks (indented)
_HEAD = re.compile(r"^Mutating object of type (?P<type>\S+)(?: \((?P<source>.*)\))?$")
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<name>\S+)$')
_NO_STACKS = " (unable to find user stacks for mutations)"


def side_effects(payload: str | None) -> tuple[SideEffect, ...]:
    """One ``SideEffect`` per object torch's message names, in its order; a message that does
    not start as torch writes it is skipped (a damaged payload keeps what can be read)."""
    out: list[SideEffect] = []
    for message in (payload or "").split(_OBJECTS):
        head, _, body = message.strip("\n").partition("\n")
        m = _HEAD.match(head.removesuffix(_NO_STACKS))
        if m is None:
            continue
        source = m["source"]
        if source is not None:
            source = source.removeprefix("source name: ").removeprefix("source: ")
            source = None if source == "no source" else source
        sites = (_innermost(s) for s in _STACKS.split(body))
        out.append(SideEffect(m["type"], source, tuple(s for s in sites if s is not None)))
    return tuple(out)


def _innermost(stack: str) -> StackFrame | None:
    """The last frame of one formatted stack, with its code line where torch printed one."""
    lines = stack.splitlines()
    found = [(j, m) for j, ln in enumerate(lines) if (m := _FRAME.match(ln))]
    if not found:
        return None
    i, m = found[-1]
    code = lines[i + 1].strip() if i + 1 < len(lines) else ""
    return StackFrame(m["file"], int(m["line"]), m["name"], code if code and not _FRAME.match(code) else None)

"""What the names of torch's timed phases say (``dynamo_timed``'s names): the attempt of
Dynamo's analysis, a bytecode hook, an Inductor pass. Read once, when a report is built
(``Compile.phase_names``), and when a report written before it held them loads
(``with_phase_names``, one of ``UPGRADES``): in the file form's layer, so that the loader
reaches it, and nothing above reads the names again."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ._pipelinetypes import PhaseName
from ._refill import refilled

_ATTEMPT = re.compile(r"compile_attempt_(\d+)")
_HOOK = re.compile(r"bytecode_hooks_(\d+)")
_PASS = re.compile(r"pass\.(pre_grad|post_grad|joint_graph)_passes\.(\w+)")


def phase_name(name: str) -> PhaseName | None:
    """``compile_attempt_1`` -> attempt 1 (Dynamo's analysis of a frame, restarted that many
    times); ``bytecode_hooks_0`` -> hook 0 (torch.compile's bytecode hook of that index, timed
    on its own: torch._dynamo.convert_frame.register_bytecode_hook, a tool reading Dynamo's
    new code); ``pass.post_grad_passes.reinplace`` -> the post-grad pass ``reinplace``. None
    for a name that says none of these."""
    if m := _ATTEMPT.fullmatch(name):
        return PhaseName(name, attempt=int(m[1]))
    if m := _HOOK.fullmatch(name):
        return PhaseName(name, hook=int(m[1]))
    if m := _PASS.fullmatch(name):
        return PhaseName(name, pass_group=m[1], pass_name=m[2])
    return None


def phase_names(names: Iterable[str]) -> tuple[PhaseName, ...]:
    """What each of ``names`` says, where it says something, in the order of the names."""
    return tuple(p for n in sorted(set(names)) if (p := phase_name(n)) is not None)


def with_phase_names(report: Any) -> Any:
    """A report's JSON form with each compile's ``phase_names`` (reports written before the
    build read them), from its phases' names and torch's totals. ``report`` itself is left as
    it was; a part not of the schema's shape is kept for the schema check to name."""
    return refilled(report, "compiles", _missing, _named)


def _names_of(c: dict) -> list[str]:
    spans = c.get("phases") if isinstance(c.get("phases"), list) else []
    totals = c.get("phase_times_s") if isinstance(c.get("phase_times_s"), dict) else {}
    named = [s.get("name") for s in spans if isinstance(s, dict)]
    return [n for n in [*named, *totals] if isinstance(n, str)]


def _missing(c: Any) -> bool:
    # the file form leaves an empty tuple out: a compile without the key whose names say nothing
    # is as the build made it
    return isinstance(c, dict) and "phase_names" not in c and any(phase_name(n) for n in _names_of(c))


def _named(c: dict) -> dict:
    return {**c, "phase_names": [_plain(p) for p in phase_names(_names_of(c))]}


def _plain(p: PhaseName) -> dict:
    return {k: v for k, v in vars(p).items() if v is not None}

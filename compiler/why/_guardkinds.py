"""The guards Dynamo checks on each call, by kind, from torch's guard tree
(``dynamo_cpp_guards_str``, ``Capture.guards``): the C++ guard tree's own leaf guards
(``TENSOR_MATCH``, ``ID_MATCH``, …) against the Python lambda guards it calls back into
(``LAMBDA_GUARD``: a Python expression evaluated on every call, the slow kind;
pytorch/pytorch#185886). Torch-free."""

from __future__ import annotations

from collections import Counter

from ..model._guards import parse_guards
from ..model._report import Compile, Report

PYTHON_KINDS = ("LAMBDA_GUARD",)  # evaluated by calling back into Python


def guard_kinds(tree: str | None) -> tuple[Counter, list[str]]:
    """The leaf guards of one guard tree by kind, and the code of its Python lambda guards
    (without torch's ``# file:line`` comment). The managers (``GuardManager: source=…``) are
    not guards: they name what the guards under them read."""
    guards = parse_guards(tree)
    python = [g.line.split(":", 1)[-1].split("  #", 1)[0].strip() for g in guards if g.kind in PYTHON_KINDS]
    return Counter(g.kind for g in guards), python


def checked_entries(report: Report, ids: tuple[str, ...] = ()) -> list[Compile]:
    """The entries a call checks first: each frame's newest compile that installed code and
    whose guard tree torch logged (of ``ids`` where given: a benchmark's own compiles)."""
    newest: dict[int, Compile] = {}
    for c in report.compiles:
        if ids and c.id not in ids:
            continue
        if c.status == "ok" and c.cache_entry and c.stages.capture and c.stages.capture.guards:
            newest[c.frame] = c
    return list(newest.values())


def guard_evidence(report: Report, ids: tuple[str, ...] = ()) -> str | None:
    """One line: the guards checked on a call that hits each frame's newest entry, the C++
    tree's by kind against the Python lambda guards, with the first of those."""
    entries = checked_entries(report, ids)
    if not entries:
        return None
    kinds: Counter = Counter()
    python: list[str] = []
    for c in entries:
        k, p = guard_kinds(c.stages.capture.guards)
        kinds += k
        python += p
    cpp = {k: n for k, n in kinds.items() if k not in PYTHON_KINDS}
    top = ", ".join(f"{k} {n}" for k, n in sorted(cpp.items(), key=lambda x: (-x[1], x[0]))[:4])
    where = ", ".join(f"[{c.id}]" for c in entries[:4]) + (" …" if len(entries) > 4 else "")
    line = (
        f"guards checked a call ({where}): {sum(cpp.values())} in torch's C++ guard tree ({top}), "
        f"{len(python)} Python lambda guard{'s' * (len(python) != 1)}"
    )
    if python:
        line += f" (each a call into Python on every call: {python[0][:120]})"
    return line

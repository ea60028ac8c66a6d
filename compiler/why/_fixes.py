"""What to change: the frames that ran eagerly and why, and the fix of each known graph break
and recompile. A fix is code to paste (torch's registry names the fix of a break by its GB
id); what is not code (the registry's other hints, a change to the program's own logic) is
advice, in words, and never dressed as code. Torch-free."""

from __future__ import annotations

import re
from typing import NamedTuple

from ..model._report import GraphBreak, Report
from ..parse._registry import debug_context, logging_call
from ._text import first_line, where

# each fix's text, once: the verdict's causes say them, and ``advise`` (compiler/why/_advice.py)
# knows each by its text
CAPTURE_SCALAR = "torch._dynamo.config.capture_scalar_outputs = True"
CAPTURE_DYNAMIC = "torch._dynamo.config.capture_dynamic_output_shape_ops = True"
DYNAMIC = "torch.compile(..., dynamic=True)  # or torch._dynamo.mark_dynamic(x, 0) on the changing dimension"
RECOMPILE_LIMIT = "torch._dynamo.config.recompile_limit = 64  # a frame may hold more compiled entries"
INDUCTOR = 'torch.compile(model)  # backend="inductor", the default: fused, generated kernels'
REDUCE_OVERHEAD = 'torch.compile(model, mode="reduce-overhead")  # CUDA graphs'
TF32 = 'torch.set_float32_matmul_precision("high")  # TF32 tensor cores for fp32 matmuls'
# a logging call Dynamo would not trace (GB0291), made a no-op in compiled code: torch's hint
# ("Add the logging method to ignore_logging_functions") as code, with the method named
LOGGING = (
    "torch._dynamo.config.ignore_logging_functions.add(logging.Logger.{method})"
    "  # after import logging; compiled code skips {logger}'s {method} calls"
)
LOGGING_CODE = re.compile(
    r"ignore_logging_functions\.add\(logging\.Logger\.(\w+)\)  # after import logging; compiled code skips (\S+)'s"
)


class Fallen(NamedTuple):
    """Frames that ran eagerly the same way: ``label`` says why in torch's terms (the break's
    type or the backend's exception, with its GB id), ``why`` the frames with their compile
    ids and that reason (the evidence), ``every``: every call of them runs eagerly (a failed
    or skipped compile), else only calls whose guards fail (the recompile limit)."""

    names: tuple[str, ...]
    label: str
    why: str
    fix: str | None
    advice: str | None
    every: bool
    count: int  # frames in the group


def fallen_frames(report: Report) -> list[Fallen]:
    """The frames that run eagerly: no compile of it installed code (it failed, or Dynamo
    skipped it), or its recompile limit was hit. Frames that fell back the same way (the
    same stage and reason, or the limit at the same count: a library's wrappers around the
    model's forward) are one group. The groups whose every call runs eagerly come first, the
    one with the most frames leading: the fix and advice of a group are its own."""
    found = []  # (frame, how it fell back, where it is, fix, advice, label, every call)
    for f in report.frames:
        mine = [c for c in report.compiles if c.frame == f.id]
        name = f"{f.name} ({where(f.filename, f.line)})"
        if f.compiles == 0 and mine:
            bad = next((c for c in mine if c.status != "ok"), mine[0])
            brks = [b for b in report.graph_breaks if bad.id in (b.compile_ids or (b.compile_id,))]
            brk = next((b for b in brks if b.gb_id), brks[0] if brks else None)
            label = fell_because(bad.error, brk)
            how = f"failed in {bad.failed_stage or 'compile'}: {label}"
            fix = break_fix(brk.type, brk.gb_id, brk.reason) if brk else None
            advice = None if fix or not brk else break_advice(brk.type, brk.gb_id, brk.hints)
            found.append((f.name or "?", how, (name, f"[{bad.id}]"), fix, advice, label, True))
        elif f.recompile_limit_hit:
            how = f"the recompile limit was hit ({f.compiles} entries)"
            found.append((f.name or "?", how, (name, ""), recompile_fix(report), None, how, False))
    groups: dict[str, list] = {}
    for x in found:
        groups.setdefault(x[1], []).append(x)
    out = [
        Fallen(
            tuple(dict.fromkeys(x[0] for x in xs)),
            xs[0][5],
            _fell(how, [x[2] for x in xs]),
            next((x[3] for x in xs if x[3]), None),
            next((x[4] for x in xs if x[4]), None),
            xs[0][6],
            len(xs),
        )
        for how, xs in groups.items()
    ]
    return sorted(out, key=lambda g: (not g.every, -len(g.names)))


def fell_because(error: str | None, brk: GraphBreak | None) -> str:
    """Why a compile installed no code, in torch's terms: where a backend failed (torch's
    debug context names the backend and its exception), "the backend failed (EXC, GB0219)";
    else the break's registered type with its GB id; else the error's first line."""
    if brk is None:
        return first_line((error,)) if error else "no code installed"
    context = debug_context(brk.reason) or debug_context(error)
    if "Backend" in context:
        said = ", ".join(x for x in (context.get("Exception"), brk.gb_id) if x)
        return f"the backend failed ({said})" if said else "the backend failed"
    return f"{brk.type} ({brk.gb_id})" if brk.gb_id else brk.type


def _fell(how: str, places: list[tuple[str, str]]) -> str:
    """One frame: "forward (a.py:55): [0/0] failed in capture: ERR: every call of it runs
    eagerly"; several that fell back alike: each with its compile id, then the failure once."""
    limit = how.startswith("the recompile limit")
    if len(places) == 1:
        (name, cid), tail = (
            places[0],
            "a call whose guards fail on every entry" if limit else "every call of it",
        )
        return f"{name}: {cid + ' ' if cid else ''}{how}: {tail} runs eagerly"
    names = ", ".join(f"{name} {cid}".rstrip() for name, cid in places)
    tail = "a call whose guards fail on every entry" if limit else "every call of them"
    return f"{names}: {how.replace(' entries)', ' entries each)')}: {tail} runs eagerly"


def shape_recompiles(report: Report) -> bool:
    """Whether a recompile's reason is a size or stride that changed."""
    return any("size mismatch" in x or "stride mismatch" in x for rc in report.recompiles for x in rc.reasons)


def recompile_fix(report: Report) -> str | None:
    """Shapes that change from call to call: compile for any size; else, where a frame hit
    the recompile limit, a higher limit."""
    if shape_recompiles(report):
        return DYNAMIC
    if any(f.recompile_limit_hit for f in report.frames):
        return RECOMPILE_LIMIT
    return None


# graph-break fixes as code, by GB id or by the words of the break's type
_BREAK_FIXES = (
    (("GB0124", "Tensor.item()"), CAPTURE_SCALAR),
    (("Dynamic shape operator", "GB0036"), CAPTURE_DYNAMIC),
    (
        ("Data-dependent branching", "GB0170"),
        "torch.cond(pred, true_fn, false_fn, (x,))  # the branch in the graph",
    ),
)
# graph-break advice that no setting or line of code carries: a change to the program
_BREAK_ADVICE = (
    (
        ("Skip calling `torch.compiler.disable()`d function", "torch._dynamo.disable"),
        "remove @torch._dynamo.disable, or mark the function @torch._dynamo.nonstrict_trace",
    ),
)


def _known(table, type_: str, gb_id: str | None) -> str | None:
    for keys, text in table:
        if gb_id in keys or any(k in (type_ or "") for k in keys):
            return text
    return None


def break_fix(type_: str, gb_id: str | None, reason: str = "") -> str | None:
    """The fix of a graph break as code, where torch's known ones name one; a logging call
    (GB0291) with its method, as torch's debug context in ``reason`` names it."""
    call = logging_call(reason) if gb_id == "GB0291" or "logging.Logger method" in (type_ or "") else None
    if call is not None:
        return LOGGING.format(logger=call[0], method=call[1])
    return _known(_BREAK_FIXES, type_, gb_id)


def break_advice(type_: str, gb_id: str | None, hints: tuple[str, ...] = ()) -> str | None:
    """What to change where no code is the fix: the known advice, else the registry's first
    hint, in torch's words."""
    return _known(_BREAK_ADVICE, type_, gb_id) or (hints[0] if hints else None)


def break_line(b) -> str:
    """A break site as evidence: the user's line, or torch's own line for a break torch asks for."""
    kind = f"{b.type}{f' ({b.gb_id})' if b.gb_id else ''}"
    site = b.torch_site
    if site is None:
        return f"{where(b.filename, b.line)}: {kind}"
    path = site.filename.replace("\\", "/")
    inside = path[path.rfind("/torch/") + 1 :] if "/torch/" in path else path.rsplit("/", 1)[-1]
    return f"{inside}:{site.line}: torch's own break, reached from {where(b.filename, b.line)}: {kind}"

"""Report-wide facts derived from the per-compile records: frames, recompiles, graph-break
sites (deduplicated), kernels, device."""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING

from ..model._callsites import callers_in_stacks, function_of, is_tool_frame, torch_inserted
from ..model._reasons import failure_reason, short_reasons
from ..model._report import Compile, Frame, GraphBreak, GuardFailure, Kernel, Recompile, StackFrame
from ..model._skipwarn import fold_frame_warnings
from ..parse import _text

if TYPE_CHECKING:
    from ._acc import Acc


def _frame_name(c: Compile) -> str | None:
    return function_of(c.name) if c.name else None


def derive_frames(
    accs: dict[str, Acc],
    compiles: list[Compile],
    strings: dict[int, str],
    breaks: tuple[GraphBreak, ...] = (),
) -> tuple[Frame, ...]:
    """Each frame torch compiled (or tried to), with the line that called it: where one of
    torch's break stacks holds the frame's function, its caller there (torch's stack at the
    frame's start names a frame Dynamo ran at its break, not at its call); else the innermost
    line of that start stack that is not the frame's own function."""
    callers = callers_in_stacks([(f.filename, f.line, f.name) for f in b.user_stack] for b in breaks)
    # each frame's compiles and accumulators grouped once (a long log: thousands of frames)
    compiles_of: dict[int, list[Compile]] = {}
    for c in compiles:
        compiles_of.setdefault(c.frame, []).append(c)
    accs_of: dict[int, list[Acc]] = {}
    for a in accs.values():
        accs_of.setdefault(a.frame, []).append(a)
    out = []
    for fid in sorted(accs_of):
        mine = compiles_of.get(fid, [])
        first = min(accs_of[fid], key=lambda a: a.order)
        name = filename = line = None
        if mine and mine[0].name:
            name, filename, line = mine[0].name, mine[0].filename, mine[0].line
        else:
            top = (first.start_stack or [None])[-1]
            if isinstance(top, dict):
                name, line = top.get("name"), top.get("line")
                fn = top.get("filename")
                filename = strings.get(fn, str(fn)) if isinstance(fn, int) else fn
        # a guard failure that found no room to recompile: torch logs reasons, compiles nothing
        limit_hit = any(a.recompile_reasons and not a.compiled_something for a in accs_of[fid])
        if not mine and not limit_hit:
            continue
        called_from = callers.get((filename or "", function_of(name) or "")) or call_site(
            first.start_stack, strings, (filename, name)
        )
        out.append(Frame(fid, name, filename, line, sum(c.cache_entry for c in mine), limit_hit, called_from))
    return tuple(out)


def call_site(
    stack: list[dict] | None, strings: dict[int, str], own: tuple[str | None, str | None] | None = None
) -> str | None:
    """The innermost user-code line of the stack that led to the frame (its call site): not
    this package's (compiled_calls' wrapper), nor the function ``own`` = (file, name) of the
    frame itself (a resumed frame's stack holds the code it continues)."""
    own_file, own_fn = own if own else (None, None)
    own_fn = function_of(own_fn)
    for entry in reversed((stack or [])[:-1]):
        if not isinstance(entry, dict):
            continue
        fn = entry.get("filename")
        fname = strings.get(fn) if isinstance(fn, int) else fn
        name = entry.get("name") if isinstance(entry.get("name"), str) else None
        if not isinstance(fname, str) or not _text.is_user_file(fname) or is_tool_frame(fname, name):
            continue
        if own_fn is not None and fname == own_file and function_of(name) == own_fn:
            continue
        return f"{fname}:{entry.get('line')}"
    return None


def derive_recompiles(
    accs: dict[str, Acc], by_id: dict[str, Compile], strings: dict[int, str] | None = None
) -> tuple[Recompile, ...]:
    known = sorted(set((strings or {}).values()), key=len)
    out = []
    for cid, c in by_id.items():
        a = accs[cid]
        if a.frame_compile_id < 1 or not c.cache_entry:
            continue
        reasons = a.recompile_reasons or (
            (str(c.metrics["recompile_reason"]),) if c.metrics.get("recompile_reason") else ()
        )
        failures = []
        for reason in reasons:
            entry = _text.failed_entry(reason)
            if entry is not None and a.generation:  # torch's numbering restarted at the reset
                entry = f"{a.generation}:{entry}"
            cap = by_id[entry].stages.capture if entry in by_id else None
            match = _text.match_guard(reason, cap.guards if cap else None)
            failures.append(
                GuardFailure(
                    entry=entry,
                    reason=reason,
                    guard=match.line if match else None,
                    short_reason=failure_reason(reason),
                    user_stack=_full_paths(match.user_stack, known)
                    if match
                    else _text.reason_user_stack(reason),
                )
            )
        first = failures[0] if failures else None
        entry_cap = by_id[first.entry].stages.capture if first and first.entry in by_id else None
        cap = c.stages.capture
        out.append(
            Recompile(
                compile_id=cid,
                reasons=reasons,
                failed_entry=first.entry if first else None,
                failing_guard=first.guard if first else None,
                entry_guards=entry_cap.guards if entry_cap else None,
                failures=tuple(failures),
                dynamic=tuple(sym.symbol for sym in cap.symbols) if cap else (),
                short_reasons=short_reasons(reasons),
            )
        )
    return tuple(out)


def _full_paths(stack: tuple[StackFrame, ...], known: list[str]) -> tuple[StackFrame, ...]:
    """torch shortens the file names in guard comments (``transformers/cache_utils.py``):
    the full name is the shortest file torch named elsewhere that ends with it."""
    out = []
    for f in stack:
        if not os.path.isabs(f.filename):
            full = next((k for k in known if k.endswith(f.filename)), None)
            if full is not None:
                f = dataclasses.replace(f, filename=full)
        out.append(f)
    return tuple(out)


def dedupe_breaks(
    breaks: list[tuple[str, _text.BreakEvent]], by_id: dict[str, Compile]
) -> tuple[GraphBreak, ...]:
    """One entry per user site. A break inside an inlined helper is reported twice by
    torch (at the caller's frame while inlining, then in the helper's own frame): the
    second report of that same hit is folded into the first."""
    # torch's warning on a frame it will not convert, told again by its compile's break
    breaks = fold_frame_warnings(breaks, lambda cb: cb[1].type, lambda cb: (cb[0],))
    kept: list[tuple[str, _text.BreakEvent]] = []
    echoes: dict[int, list[str]] = {}  # index in kept -> compile ids of its folded echoes
    skip_next_echo: tuple | None = None
    for cid, b in breaks:
        key = (b.filename, b.line, tuple((f.filename, f.line) for f in b.user_stack))
        if skip_next_echo is not None and key == skip_next_echo and not _inlined(cid, b, by_id):
            skip_next_echo = None
            echoes.setdefault(len(kept) - 1, []).append(cid)
            continue
        skip_next_echo = key if _inlined(cid, b, by_id) else None
        kept.append((cid, b))
    logged_in = {i: [kept[i][0], *echoes.get(i, [])] for i in range(len(kept))}
    lines: dict[tuple, list[tuple[int, str, _text.BreakEvent]]] = {}
    for i, (cid, b) in enumerate(kept):
        lines.setdefault((b.filename, b.line), []).append((i, cid, b))
    # one site per line and type (a `.item()` and a `print` on one line are two sites); a hit
    # whose type torch left "Unknown" joins the line's first known type
    sites: dict[tuple, list[tuple[int, str, _text.BreakEvent]]] = {}
    for (filename, line), hits in lines.items():
        known = next((b.type for _i, _c, b in hits if b.type != "Unknown"), "Unknown")
        for i, cid, b in hits:
            sites.setdefault((filename, line, known if b.type == "Unknown" else b.type), []).append(
                (i, cid, b)
            )
    out = []
    for (filename, line, _type), hits in sites.items():
        _i0, cid0, b0 = hits[0]
        best = next((b for _i, _c, b in hits if b.type != "Unknown"), b0)
        out.append(
            GraphBreak(
                compile_id=cid0,
                type=best.type,
                reason=best.reason,
                filename=filename,
                line=line,
                explanation=best.explanation,
                hints=best.hints,
                user_stack=best.user_stack,
                count=len(hits),
                compile_ids=tuple(dict.fromkeys(c for i, _c, _b in hits for c in logged_in[i])),
                gb_id=best.gb_id,
                torch_own=torch_inserted(
                    best.gb_id, best.type, best.user_stack[-1].filename if best.user_stack else None
                ),
            )
        )
    return tuple(out)


def _inlined(cid: str, b: _text.BreakEvent, by_id: dict[str, Compile]) -> bool:
    """Did the break happen in a function Dynamo was inlining (not the compiled frame)?"""
    c = by_id.get(cid)
    user = [f for f in b.user_stack if _text.is_user_file(f.filename)]
    if c is None or not user:
        return False
    return user[-1].name != _frame_name(c)


def report_kernels(accs: dict[str, Acc], by_id: dict[str, Compile]) -> tuple[Kernel, ...]:
    return tuple(k for cid in by_id for k in accs[cid].kernels)


def report_device(compiles: list[Compile], kernels: tuple[Kernel, ...]) -> str:
    devs = set()
    for c in compiles:
        g = c.stages.capture.graph if c.stages.capture else None
        for n in g.nodes if g else ():
            if n.device:
                devs.add(n.device.split(":")[0])
    if any(k.language == "triton" for k in kernels):
        devs.add("cuda")
    return "+".join(sorted(devs)) or "cpu"


def stack_frames(stack, strings: dict[int, str]) -> tuple[StackFrame, ...]:
    """torch's structured stacks ([{filename (interned id or str), line, name, loc}])."""
    out = []
    for f in stack if isinstance(stack, list) else ():
        if not isinstance(f, dict):
            continue
        fn = f.get("filename")
        fname = strings.get(fn, str(fn)) if isinstance(fn, int) else str(fn)
        try:
            line = int(f.get("line") or 0)
        except (TypeError, ValueError):
            line = 0
        loc = f.get("loc")
        out.append(StackFrame(fname, line, str(f.get("name") or "?"), str(loc) if loc else None))
    return tuple(out)

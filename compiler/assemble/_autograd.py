"""Compiled Autograd: its captures (events with torch's ``compiled_autograd_id`` and no
frame) and the Dynamo compiles of their graphs (compile ids ``!0/3/0``, torch's spelling).

torch numbers captures from 0 (``compiled_autograd.COMPILE_COUNTER``) and restarts at
torch._dynamo.reset(); our keys carry the recording's generation like every compile id
("1:!0"). A capture whose graph Dynamo compiled becomes that compile's
``Compile.compiled_autograd``; the compile and its frame are named by its label."""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING

from ..model._pipelinetypes import CompiledAutograd
from ..parse import _graphs
from ..parse._autograd import autograd_hooks, autograd_nodes
from ..parse._names import CompileId
from ._events import Event

if TYPE_CHECKING:
    from ..model._report import Compile
    from ._acc import Acc, Context

# "# File: .../compiled_autograd.py:1582 in set_node_origin, code: SumBackward0 (NodeCall 1)"


def is_capture_event(ev: Event) -> bool:
    """An event of Compiled Autograd's own tracing (no Dynamo frame yet)."""
    return ev.metadata.get("compiled_autograd_id") is not None and ev.metadata.get("frame_id") is None


def on_capture_event(ctx: Context, ev: Event) -> None:
    """The captured graph (before and after reordering) and compile reasons are kept; the
    sizes Compiled Autograd makes symbolic while tracing (create_symbol, guards) are its
    own bookkeeping and are not a compile's."""
    name = ev.name
    slot = {
        "compiled_autograd_graph": "graph",
        "artifact:compiled_autograd_graph_pre_reordering": "pre",
        "artifact:compiled_autograd_compile_reasons": "reasons",
    }.get(name)
    if slot is None:
        return
    ca = ev.metadata.get("compiled_autograd_id")
    if ca is None:  # torch < 2.7 names no capture: each logs its graph once, in order
        ca = ctx.unnumbered_captures
        cap = ctx.autograd.get(ctx.key(f"!{ca}"))
        if cap is not None and slot in cap and slot != "reasons":
            ca = ctx.unnumbered_captures = ca + 1
            cap = None
        if cap is None:  # its compile is the next one of a graph Compiled Autograd made
            cap = {"number": len(ctx.autograd) + 1, "after": len(ctx.accs)}
            ctx.autograd[ctx.key(f"!{ca}")] = cap
    else:
        ca = int(ca)
        cap = ctx.autograd.get(ctx.key(f"!{ca}"))
        if cap is not None and slot in cap and slot != "reasons":
            # the same id captured twice: torch._dynamo.reset() restarted the numbering
            ctx.new_generation()
            cap = None
        if cap is None:
            cap = ctx.autograd.setdefault(ctx.key(f"!{ca}"), {"number": len(ctx.autograd) + 1})
    if slot == "reasons":
        try:
            reasons = json.loads(ev.payload or "[]")
        except json.JSONDecodeError:
            reasons = [ev.payload]
        cap["reasons"] = tuple(str(r) for r in (reasons if isinstance(reasons, list) else [reasons]))
    else:
        cap[slot] = ev.payload


def capture_key(compile_key: str) -> str | None:
    """ "!0/3/0" -> "!0"; "1:!0/3/0" -> "1:!0"; None for a compile that is not Compiled Autograd's."""
    cid = CompileId.parse(compile_key)
    return cid.capture if cid is not None else None


def attach(ctx: Context, compiles: list[Compile], called_from) -> list[Compile]:
    """Each compile of a captured graph gets its record and its label as name.
    ``called_from(acc)`` is the user line that led to the compile."""
    out = []
    last_at: dict[str | None, str] = {}  # call site -> the latest capture from it
    unnumbered = [(k, cap) for k, cap in ctx.autograd.items() if "after" in cap]
    for c in compiles:
        key = capture_key(c.id)
        if key is None and unnumbered and _of_captured_graph(ctx.accs[c.id], unnumbered[0][1]):
            key = unnumbered.pop(0)[0]
        cap = ctx.autograd.get(key) if key else None
        if cap is None:
            out.append(c)
            continue
        a: Acc = ctx.accs[c.id]
        site = called_from(a)
        graph = _graphs.parse_graph(cap.get("graph"))
        code = cap.get("graph") or ""
        rec = CompiledAutograd(
            id=key,
            number=cap["number"],
            graph=graph,
            graph_pre_reordering=_graphs.parse_graph(cap.get("pre")),
            autograd_nodes=autograd_nodes(code),
            hooks=autograd_hooks(code),
            compiled_backwards=sum(
                1 for n in autograd_nodes(code) if n.startswith("CompiledFunctionBackward")
            ),
            called_from=site,
            recaptured_from=last_at.get(site) if a.frame_compile_id == 0 else None,
            reasons=cap.get("reasons", ()),
        )
        last_at[site] = key
        out.append(dataclasses.replace(c, name=rec.label, compiled_autograd=rec))
    return out


def _of_captured_graph(a: Acc, cap: dict) -> bool:
    """Is this compile (torch < 2.7: a plain id) Dynamo compiling the captured graph? It
    starts after the capture, on the graph module Compiled Autograd made (``<eval_with_key>.N``)."""
    filename = (a.metrics or {}).get("co_filename")
    return a.order >= cap["after"] and isinstance(filename, str) and filename.startswith("<eval_with_key>")

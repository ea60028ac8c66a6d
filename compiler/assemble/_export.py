"""torch.export + AOTInductor as a pipeline of its own.

``torch._inductor.aoti_compile_and_package`` compiles an exported program outside any
Dynamo frame: its events (the AOT inference graph, pre-/post-grad graphs, the generated C++
wrapper and kernels as ``graph_dump``, ``compilation_metrics``) carry no compile id, and the
dynamic dims that ``torch.export.export`` created from ``Dim`` ranges (``create_symbol``)
come before them, also without one. Each AOTInductor compile becomes the compile ``aoti/N``
(N from 0 in the recording), named ``export → AOTInductor``; its kernels are the ``extern "C"``
functions of the kernel file."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from ..parse._outputcode import extern_c_functions
from ._events import Event

if TYPE_CHECKING:
    from ..model._report import Compile, Kernel
    from ._acc import Acc, Context

NAME = "export → AOTInductor"


def route(ctx: Context, ev: Event, stage: str | None, compiled: bool) -> Acc | None:
    """The AOTInductor compile a frameless event belongs to, or None (kept as before). Dims
    created before the compile (by torch.export) wait for it; a compile starts at its first
    stage event and ends with its compilation_metrics."""
    state = ctx.aoti
    a = state["open"]
    if a is None:
        if ev.name == "create_symbol":
            state["pending"].append(ev)
            return None
        if stage is None or not compiled:
            return None
        from ._acc import Acc
        from ._collect import on_symbol

        key = f"aoti/{state['n']}"
        a = Acc(-1, 0, len(ctx.accs), key, ctx.next_frame, ctx.generation)
        ctx.accs[key] = a
        ctx.next_frame += 1
        state["n"] += 1
        state["open"] = a
        from ._draft import link

        link(ctx, key)
        for sym in state["pending"]:
            on_symbol(a, sym, ctx)
        state["pending"] = []
    if ev.name == "compilation_metrics":
        state["open"] = None
    return a


def on_graph_dump(a: Acc, ev: Event, ctx: Context) -> None:
    """AOTInductor's generated C++: the wrapper (``inductor_aot_wrapper_code``) and the
    kernels (``inductor_aot_kernel_code``) as output modules of the compile."""
    body = ev.body if isinstance(ev.body, dict) else {}
    role = {"inductor_aot_wrapper_code": "aoti wrapper", "inductor_aot_kernel_code": "aoti kernels"}.get(
        str(body.get("name"))
    )
    if role is None:  # another dump: kept raw, as unknown events are
        from ..model._report import RawEvent
        from ._acc import jsonable

        ctx.unknown.append(RawEvent(a.key, ev.name, jsonable(ev.metadata), ev.payload))
        return
    a.outputs.append((role, body.get("filename"), ev.payload or ""))


def cpp_kernels(compile_id: str, code: str, role: str) -> list[Kernel]:
    """The ``extern "C"`` functions of a C++ kernel file, each with its body."""
    from ..model._report import Kernel

    return [Kernel(compile_id, name, "cpp", body, role=role) for name, body in extern_c_functions(code)]


def attach(compiles: list[Compile]) -> list[Compile]:
    """AOTInductor compiles get their name; one that finished installed its code (in the
    package: torch logs no has_guarded_code for it)."""
    return [
        dataclasses.replace(c, name=NAME, cache_entry=c.status == "ok")
        if c.id.split(":")[-1].startswith("aoti/")
        else c
        for c in compiles
    ]

"""What torch.export assumed about the inputs, and what draft_export found, from torch's
structured trace.

A (non-strict) ``torch.export.export`` runs outside any Dynamo frame: the dims it creates
from ``Dim`` ranges (``create_symbol``), the guards it adds (``guard_added_fast``), the
specializations (``symbolic_shape_specialization``) and the ``.item()`` values it cannot know
(``create_unbacked_symbol``) come without a frame id. ``torch.export.draft_export`` turns on
torch's dtrace events for its run and builds its report from them: each
``propagate_real_tensors_provenance`` is a data-dependent guard it resolved with the real
value, ``missing_fake_kernel`` / ``mismatched_fake_kernel`` a custom op's fake kernel problem;
its ``export`` event (payload ``start!``) opens the run. These become ``Report.exports``: one
``ExportRun`` per export, linked to the AOTInductor compile that followed. Events of an open
AOTInductor compile stay with that compile."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model._pipelinetypes import ExportFact, ExportRun
from ._derive import stack_frames
from ._events import Event, is_frameless

if TYPE_CHECKING:
    from ._acc import Context

_ASSUMED = {
    "create_symbol": "dim",
    "guard_added": "guard",
    "guard_added_fast": "guard",
    "symbolic_shape_specialization": "specialization",
    "create_unbacked_symbol": "unbacked",
}
_FAILED = {
    "propagate_real_tensors_provenance": "data-dependent",
    "missing_fake_kernel": "missing fake kernel",
    "mismatched_fake_kernel": "mismatched fake kernel",
}
# dtrace-only events: seen only while draft_export turns dtrace on
_DRAFT_ONLY = frozenset({"export", "guard_added", "propagate_real_tensors_provenance", "expression_created"})
_OTHER = frozenset({"propagate_real_tensors"})  # the trace's copy of the provenance event
# events read here and nowhere else (create_symbol also feeds the AOTInductor compile's dims)
_CONSUMED = frozenset(_FAILED) | {"guard_added", "guard_added_fast", "symbolic_shape_specialization",
                                 "create_unbacked_symbol", "propagate_real_tensors", "expression_created"}  # fmt: skip


def _state(ctx: Context) -> dict:
    st = ctx.exports.get("state")  # asked for each event: made once
    if st is None:
        st = ctx.exports["state"] = {"runs": [], "open": None}
    return st


def take(ctx: Context, ev: Event) -> bool:
    """Read a frameless export event; True where nothing else should see it."""
    if not is_frameless(ev):  # a Dynamo frame: the export is over
        st = ctx.exports.get("state")
        if st is not None:
            st["open"] = None
        return False
    st = _state(ctx)
    if ctx.aoti["open"] is not None:
        return False  # AOTInductor's own lowering: its compile's events
    name = ev.name
    if name == "exported_program":  # draft_export's last event (dtrace): the run is over
        st["open"] = None
        return False
    if name not in _ASSUMED and name not in _FAILED and name not in _DRAFT_ONLY and name not in _OTHER:
        return False
    run = st["open"]
    if run is None or (name == "export" and (run["assumptions"] or run["failures"])):
        run = {"draft": False, "assumptions": {}, "failures": {}, "compile_id": None}
        st["runs"].append(run)
        st["open"] = run
    if name in _DRAFT_ONLY:
        run["draft"] = True
    body = ev.body if isinstance(ev.body, dict) else {}
    if name in _ASSUMED:
        _add(run["assumptions"], _fact(ctx, _ASSUMED[name], name, body), count=False)
    elif name in _FAILED:
        _add(run["failures"], _fact(ctx, _FAILED[name], name, body), count=True)
    return name in _CONSUMED


def link(ctx: Context, compile_key: str) -> None:
    """The AOTInductor compile ``compile_key`` opened: it compiles the export before it."""
    st = _state(ctx)
    if st["open"] is not None:
        st["open"]["compile_id"] = compile_key
        st["open"] = None


def runs(ctx: Context) -> tuple[ExportRun, ...]:
    return tuple(
        ExportRun(
            number=i + 1,
            draft=r["draft"],
            assumptions=tuple(r["assumptions"].values()),
            failures=tuple(r["failures"].values()),
            compile_id=r["compile_id"],
        )
        for i, r in enumerate(_state(ctx)["runs"])
        if r["assumptions"] or r["failures"]
    )


def _add(into: dict, fact: ExportFact, count: bool) -> None:
    """One fact per kind, expression and line (guard_added and guard_added_fast log the same
    guard); failures count their repeats, as draft_export does."""
    key = (fact.kind, fact.expr, fact.where)
    old = into.get(key)
    if old is None:
        into[key] = fact
    elif count:
        import dataclasses

        into[key] = dataclasses.replace(old, count=old.count + 1)


def _fact(ctx: Context, kind: str, name: str, body: dict) -> ExportFact:
    if name in ("create_symbol", "create_unbacked_symbol"):
        expr = str(body.get("symbol"))
        src = body.get("source")
        detail = f"{src} in {body.get('vr')}" if src else f"in {body.get('vr')}"
    elif name == "symbolic_shape_specialization":
        expr = f"{body.get('symbol')} = {body.get('value')}"
        detail = str(body.get("reason")) if body.get("reason") else None
    elif kind.endswith("fake kernel"):
        expr = str(body.get("op"))
        detail = str(body.get("reason")) if body.get("reason") else None
    else:
        expr = str(body.get("expr"))
        result = body.get("result")
        detail = f"assumed {result} from the real inputs" if result is not None else None
    user = [f for f in stack_frames(body.get("user_stack"), ctx.strings) if f.kind == "user"]
    if not user:  # non-strict export logs no user stack for its guards: the whole stack has it
        user = [f for f in stack_frames(body.get("stack"), ctx.strings) if f.kind == "user"]
    user = [f for f in user if not f.filename.startswith("<")]
    top = user[-1] if user else None
    where = f"{top.filename.rsplit('/', 1)[-1]}:{top.line}" if top else None
    return ExportFact(kind, expr, where, top.code if top else None, detail)


def with_error(exports: tuple[ExportRun, ...], fact: ExportFact) -> tuple[ExportRun, ...]:
    """The exports with the failed one's error added: the last export, still open (no
    AOTInductor compile followed), or a new one."""
    import dataclasses

    if exports and exports[-1].compile_id is None:
        last = exports[-1]
        return (*exports[:-1], dataclasses.replace(last, failures=(*last.failures, fact)))
    return (*exports, ExportRun(number=len(exports) + 1, failures=(fact,)))

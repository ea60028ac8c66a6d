"""A compile's guards grouped: by kind, each kind said in one line, and by the source they
protect (``self.transformer.h.0.attn``, ``input_ids``), the failing guard's kind and source
first. The guards are the compile's own record's (``Capture.guard_list``: compiler reads them from
the guard tree torch prints)."""

from __future__ import annotations

from collections import Counter, defaultdict

from compiler import Report
from compiler.types import Compile, Guard

from ..base._types import Table

# what each kind of guard checks on every call, in one line
KINDS = {
    "TENSOR_MATCH": "a tensor's dtype, device, requires_grad and static sizes and strides are as traced",
    "TYPE_MATCH": "the object's exact type is the one traced",
    "ID_MATCH": "the very object traced (by id): a module, a function, a global",
    "EQUALS_MATCH": "a Python value (int, float, str, tuple) equals the one traced",
    "CONSTANT_MATCH": "a constant equals the one traced",
    "NONE_MATCH": "the value is None, as traced",
    "NOT_NONE_MATCH": "the value is not None, as traced",
    "TRUE_MATCH": "the value is True, as traced",
    "FALSE_MATCH": "the value is False, as traced",
    "BOOL_MATCH": "a bool equals the one traced",
    "DICT_CONTAINS": "a key is in (or not in) a dict, as traced",
    "DICT_LENGTH": "a dict has as many keys as traced",
    "DICT_VERSION": "a dict was not changed since tracing",
    "DICT_KEYS_MATCH": "a dict's keys are the ones traced, in order",
    "LENGTH_CHECK": "a list, tuple or dict has as many items as traced",
    "SEQUENCE_LENGTH": "a sequence has as many items as traced",
    "TUPLE_ITERATOR_LEN": "a tuple iterator has as many items left as traced",
    "NO_HASATTR": "the object still lacks an attribute the code tested for",
    "HASATTR": "the object still has an attribute the code read",
    "DIMENSION_DYNAMIC_MARKING_GUARD": "the tensor was not marked dynamic (mark_dynamic) since tracing",
    "LAMBDA_GUARD": "a Python expression checked on each call (objects that must be the same, ...)",
    "GLOBAL_STATE": "torch's global state: grad mode, default dtype, deterministic algorithms, autocast",
    "GRAD_MODE": "grad mode (torch.no_grad) is as traced",
    "TORCH_FUNCTION_MODE_STACK": "the active torch-function modes are the ones traced",
    "DEFAULT_DEVICE": "the default device (torch.set_default_device) is as traced",
    "NO_TENSOR_ALIASING": "the input tensors named are distinct objects",
    "TENSOR_ALIASING": "the input tensors named are one object, as traced",
    "OBJECT_ALIASING": "the objects named are one object, as traced",
    "SHAPE_ENV": "the relations between dynamic sizes that the graph assumes hold",
    "WEAKREF_ALIVE": "an object referred to weakly is still alive",
    "CLOSURE_MATCH": "a closure's captured function is the one traced",
    "FUNCTION_MATCH": "a function is the one traced",
    "BUILTIN_MATCH": "a builtin is the one traced",
    "DUAL_LEVEL": "forward-mode AD's dual level is as traced",
    "FUNCTORCH_STACK_MATCH": "the functorch transforms (vmap, grad) active are as traced",
    "DATA_PTR_MATCH": "a tensor's storage is the one traced",
}
TOP_SOURCES = 25  # rows of the sources table; the rest counted in its title


def failing(report: Report, c: Compile, guards: tuple[Guard, ...] | None = None) -> Guard | None:
    """The guard of ``c`` whose failure made a later compile of its frame (a recompile);
    ``guards``: ``c``'s, where they are parsed already."""
    lines = [r.failing_guard for r in report.recompiles if r.failed_entry == c.id and r.failing_guard]
    if not lines:
        return None
    want = lines[0].split("  #")[0].strip()
    if guards is None:
        cap = c.stages.capture
        guards = cap.guard_list if cap else ()
    return next((g for g in guards if g.line.startswith(want)), None)


def guard_tables(report: Report, c: Compile) -> list[Table]:
    """Two tables: by kind (what each checks) and by source, the failing guard's first."""
    cap = c.stages.capture
    guards = cap.guard_list if cap else ()
    if not guards:
        return []
    bad = failing(report, c, guards)
    kinds = Counter(g.kind for g in guards)
    order = sorted(kinds, key=lambda k: (bad is None or k != bad.kind, -kinds[k], k))
    by_kind = tuple(
        (k + (" (failed)" if bad and k == bad.kind else ""), str(kinds[k]), KINDS.get(k, "")) for k in order
    )
    per_source: dict[str, Counter] = defaultdict(Counter)
    for g in guards:
        per_source[g.source][g.kind] += 1
    sources = sorted(
        per_source, key=lambda s: (bad is None or s != bad.source, -sum(per_source[s].values()), s)
    )
    rows = tuple(
        (
            s + (" (failed)" if bad and s == bad.source else ""),
            str(sum(per_source[s].values())),
            ", ".join(f"{k} {n}" for k, n in per_source[s].most_common()),
        )
        for s in sources[:TOP_SOURCES]
    )
    more = len(sources) - TOP_SOURCES
    return [
        Table(
            "guards by kind ("
            + (f"{cap.guard_count} guards torch counted, " if cap.guard_count else "")
            + f"checked by {len(guards)} nodes of the guard tree)",
            ("kind", "checks", "what it checks on each call"),
            by_kind,
        ),
        Table(
            f"guards by source ({len(sources)} sources"
            + (f", the first {TOP_SOURCES} shown)" if more > 0 else ")"),
            ("source", "checks", "kinds"),
            rows,
        ),
    ]

"""A compile's guards grouped: by kind, each kind said in one line, and by the source they
protect (``self.transformer.h.0.attn``, ``input_ids``), the failing guard's kind and source
first. Read from the guard tree torch prints (``Capture.guards``): its managers name the
source (``GuardManager: source=L['x'], ...``), each guard line under them its kind
(``+- TENSOR_MATCH: check_tensor(...)  # code  # file:line``)."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass

from compiler import Report
from compiler.types import Compile

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
_LINE = re.compile(r"^(?P<indent>[| ]*)\+- (?P<kind>\w+)(?::\s?(?P<rest>.*))?$")
_SOURCE_END = re.compile(r", (?:accessed_by|type)=")
_MANAGER = re.compile(r"(?:Root|Dict)?GuardManager$|KeyManager$|ValueManager$")
TOP_SOURCES = 25  # rows of the sources table; the rest counted in its title


@dataclass(frozen=True)
class Guard:
    kind: str  # TENSOR_MATCH
    source: str  # what it protects, as the user spells it ("self.transformer.h.0.attn")
    line: str  # as torch prints it, without the tree drawing


def parse_guards(tree: str | None) -> list[Guard]:
    """The guards of a guard tree, each with the source of the manager it sits under."""
    out: list[Guard] = []
    sources: dict[int, str] = {}  # depth -> the source of the manager there
    for raw in (tree or "").splitlines():
        m = _LINE.match(raw)
        if not m:
            continue
        depth = len(m["indent"]) // 2
        rest = m["rest"] or ""
        if _MANAGER.match(m["kind"]):
            src = _source(rest)
            sources = {d: s for d, s in sources.items() if d < depth}
            if src is not None:
                sources[depth] = user_source(src)
            continue
        owner = max((d for d in sources if d < depth), default=None)
        source = sources[owner] if owner is not None else "(torch's global state and aliasing)"
        out.append(Guard(m["kind"], source, f"{m['kind']}: {rest}".strip()))
    return out


def _source(rest: str) -> str | None:
    """A manager's source: from its first ``source=`` to the first ``, accessed_by=`` or
    ``, type=`` after it (one lazy regex from every ``source=`` of a line was quadratic)."""
    at = rest.find("source=")
    end = _SOURCE_END.search(rest, at + 7) if at >= 0 else None
    return rest[at + 7 : end.start()] if end else None


def user_source(source: str) -> str:
    """torch's spelling of a source as the code spells it: ``L['self']._modules['h']._modules['0']``
    -> ``self.h.0``; ``G['torch']`` -> ``torch``; a parameter or buffer: its module."""
    s = re.sub(r"\._modules\['([^']*)'\]", r".\1", source)
    s = re.sub(r"\._(?:parameters|buffers)\['[^']*'\]$", "", s)  # a module's tensors: the module
    s = re.sub(r"\b[LG]\['([^']*)'\]", r"\1", s)
    return s


def failing(report: Report, c: Compile, guards: list[Guard] | None = None) -> Guard | None:
    """The guard of ``c`` whose failure made a later compile of its frame (a recompile);
    ``guards``: ``c``'s, where they are parsed already."""
    lines = [r.failing_guard for r in report.recompiles if r.failed_entry == c.id and r.failing_guard]
    if not lines:
        return None
    want = lines[0].split("  #")[0].strip()
    if guards is None:
        cap = c.stages.capture
        guards = parse_guards(cap.guards if cap else None)
    return next((g for g in guards if g.line.startswith(want)), None)


def guard_tables(report: Report, c: Compile) -> list[Table]:
    """Two tables: by kind (what each checks) and by source, the failing guard's first."""
    cap = c.stages.capture
    guards = parse_guards(cap.guards if cap else None)
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
            f"guards by kind ({len(guards)} checks in the guard tree"
            + (f"; torch counts {cap.guard_count} guards)" if cap.guard_count else ")"),
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

"""The pieces ``explorer.diff`` builds from: sections (decoded, normalised, capped), op-count
deltas, kernels matched across two compiles, and the sections of two compiles."""

from __future__ import annotations

from collections import Counter
from typing import Any, NamedTuple

from compiler import Report
from compiler._viewer import kernel_base, split_kernels
from compiler.analysis import normalize
from compiler.types import Codegen, Compile, Graph, Kernel, RoleGraph

from ._normalize import to_text
from ._view import LANGUAGES, PAYLOAD_LIMIT, Diff, Section, fit_payload, line_changes, line_counts

ROLES = ("forward", "backward", "inference")
MINUS = "\u2212"


# ---- sections ------------------------------------------------------------------------------


CUT_CONTEXT = 20  # unchanged lines kept before the first change when a long text is cut


class Builder:
    """Collects sections: decodes, normalises and caps each pair of texts."""

    def __init__(self, a_label: str, b_label: str, max_lines: int):
        for label in (a_label, b_label):
            if not isinstance(label, str):
                raise TypeError(f"labels must be two strings, got {label!r} ({type(label).__name__})")
        self.labels = (a_label, b_label)
        self.max_lines = max_lines
        self.sections: list[Section] = []

    def add(
        self,
        id: str,
        title: str,
        language: str,
        a: str | bytes | None,
        b: str | bytes | None,
        a_marks: list[int] = (),
        b_marks: list[int] = (),
        note: str | None = None,
        keep: tuple[str, ...] = (),
    ) -> Section | None:
        """A section for texts a and b (None: not there); none when neither is. ``keep``:
        normalisation rules not to apply (object ids of two compiles of one process mean
        something: an ID_MATCH guard fails on a new object)."""
        if a is None and b is None:
            return None
        notes: list[str] = []
        texts, applied = [], []
        for label, x in zip(self.labels, (a, b)):
            if x is None:
                notes.append(f"not in {label}")
                x = ""
            text, why = to_text(x)
            if why:
                notes.append(f"{label}: {why}")
            text, rules = normalize(text, skip=keep)
            applied += [r for r in rules if r not in applied]
            texts.append(text)
        la, lb = texts[0].splitlines(), texts[1].splitlines()
        changed = la != lb
        if applied:
            notes.append(f"normalised ({', '.join(applied)}): the text shown is normalised")
        marks = [sorted(set(a_marks)), sorted(set(b_marks))]
        counts, how = line_counts(texts[0], texts[1]) if changed else ((0, 0, 0), None)  # once, whole texts
        if how:
            notes.append(how)
        if max(len(la), len(lb)) > self.max_lines:
            texts, marks, cut = self._window(la, lb, marks)
            notes.append(cut)
        if note:
            notes.append(note)
        s = Section(
            id=id,
            title=title,
            language=language if language in LANGUAGES else "text",
            a=texts[0],
            b=texts[1],
            a_marks=marks[0],
            b_marks=marks[1],
            changed=changed,
            note="; ".join(notes) or None,
            counts=counts,
        )
        self.sections.append(s)
        return s

    def _window(self, la: list[str], lb: list[str], marks: list[list[int]]):
        """The same stretch of both sides, ``max_lines`` long, starting CUT_CONTEXT lines before
        the first line that differs (or the first marked line), after a line saying how many
        lines were left out above; marks renumbered to it."""
        first = next((i for i, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
        if la == lb:
            first = min([m - 1 for m in marks[0] + marks[1]] or [0])
        start = max(0, first - CUT_CONTEXT)
        end = start + self.max_lines
        head = [f"… {start:,} lines before, the same on both sides …"] if start else []
        texts = ["\n".join(head + x[start:end]) for x in (la, lb)]
        shift = len(head) - start
        marks = [[m + shift for m in mk if start < m <= end] for mk in marks]
        n = max(len(la), len(lb))
        where = f"from line {start + 1:,}, {CUT_CONTEXT} before the first change" if start else "from the top"
        return (
            texts,
            marks,
            f"cut to {self.max_lines:,} lines of {n:,} ({where}); counts are of the whole texts",
        )

    def finish(self, title: str, summary: list[str], context: int, limit: int = PAYLOAD_LIMIT) -> Diff:
        if not summary:
            changed = [s.title for s in self.sections if s.changed]
            summary = (
                [f"changed: {', '.join(changed)}"] if changed else ["no differences after normalisation"]
            )
        a_label, b_label = self.labels
        head = {"schema": 1, "title": title, "a_label": a_label, "b_label": b_label, "summary": summary}
        return Diff(title, a_label, b_label, list(summary), fit_payload(self.sections, head, limit), context)


def changes(s: Section, name: str | None = None, unit: str = "line") -> str:
    """``Dynamo graph: 3 lines changed, 1 added`` (``Section.changes``, the count every view
    shows); ``guards: 1 changed`` with unit ""."""
    if unit:
        return f"{name or s.title}: {s.changes if s.changed else 'changed'}"
    c, a, r = s.counts or line_changes(s.a, s.b)
    parts = [f"{n} {what}" for n, what in ((c, "changed"), (a, "added"), (r, "removed")) if n]
    return f"{name or s.title}: {', '.join(parts) or 'changed'}"


# ---- op counts -----------------------------------------------------------------------------


def op_delta(a: dict[str, int], b: dict[str, int]) -> str | None:
    """``aten.relu.default −1, aten.erf.default +1``: ops with fewer calls first, then more,
    each by name; ``torch.ops.`` left out."""
    items = []
    for op in set(a) | set(b):
        d = b.get(op, 0) - a.get(op, 0)
        if d:
            items.append((d > 0, op.removeprefix("torch.ops."), d))
    items.sort()
    return ", ".join(f"{op} {'+' if d > 0 else MINUS}{abs(d)}" for _, op, d in items) or None


def op_counts(*graphs: Graph | RoleGraph | None) -> Counter:
    c: Counter = Counter()
    for g in graphs:
        g = g.graph if isinstance(g, RoleGraph) else g
        if g is not None:
            c.update(g.op_counts())
    return c


def dynamo_ops(c: Compile) -> Counter:
    """Calls in Dynamo's graph (torch level)."""
    d, cap = c.stages.decompose, c.stages.capture
    if d is not None and d.ops_before:
        return Counter(d.ops_before)
    return op_counts(cap.graph if cap else None)


def aten_ops(c: Compile) -> Counter:
    """ATen calls: the post-grad op counts, or the AOT graphs' where Inductor did not run."""
    d, ag = c.stages.decompose, c.stages.autograd
    if d is not None and d.ops_after:
        return Counter(d.ops_after)
    return op_counts(ag.forward, ag.backward, ag.inference) if ag is not None else Counter()


# ---- kernels -------------------------------------------------------------------------------


class K(NamedTuple):
    role: str
    name: str
    language: str
    source: str


def compile_kernels(c: Compile, report: Report | None) -> list[K]:
    """The kernels of a compile: the report's (with Triton's metadata on top) where ``c`` is
    one of its compiles, else split from the output code."""
    if report is not None and any(x is c for x in report.compiles):
        return [K(k.role, k.name, k.language, _kernel_text(k)) for k in report.kernels_of(c.id)]
    return codegen_kernels(c.stages.codegen)


def codegen_kernels(cg: Codegen | None) -> list[K]:
    """The kernels defined in a codegen stage's output code."""
    if cg is None:
        return []
    return [K(oc.role, k.name, k.language, k.source) for oc in cg.output_code for k in split_kernels(oc.code)]


def _kernel_text(k: Kernel) -> str:
    meta = {key: v for key, v in k.metadata.items() if "time" not in key}  # timings are noise
    if not meta:
        return k.source
    c = "//" if k.language == "cpp" else "#"
    return "".join(f"{c} {key}: {meta[key]}\n" for key in sorted(meta)) + k.source


def match(a: list, b: list, keys) -> list[tuple[Any, Any]]:
    """Pair items of a and b: by each key function in turn over what is still unpaired, in
    order; then a's unpaired ``(x, None)`` and b's ``(None, y)``."""
    pa: list[int | None] = [None] * len(a)
    used: set[int] = set()
    for key in keys:
        free: dict[Any, list[int]] = {}
        for j, y in enumerate(b):
            if j not in used:
                free.setdefault(key(y), []).append(j)
        for i, x in enumerate(a):
            if pa[i] is None and free.get(key(x)):
                pa[i] = j = free[key(x)].pop(0)
                used.add(j)
    out = [(x, b[j] if j is not None else None) for x, j in zip(a, pa)]
    return out + [(None, y) for j, y in enumerate(b) if j not in used]


def names(items: list[str], limit: int = 5) -> str:
    return ", ".join(items[:limit]) + (f", … {len(items) - limit} more" if len(items) > limit else "")


class KernelChanges(NamedTuple):
    added: list[str]
    removed: list[str]
    changed: list[str]

    def phrases(self) -> list[str]:
        """``["1 added (triton_poi_fused_add_0)", "1 changed (…)"]``"""
        return [f"{len(v)} {what} ({names(v)})" for what, v in zip(self._fields, self) if v]


def kernel_sections(bld: Builder, ka: list[K], kb: list[K], prefix: str = "", tag: str = "") -> KernelChanges:
    """A section per kernel pair (matched by role and name without Inductor's counter, then
    what is left by role, in order: a renamed kernel); what was added, removed, changed."""
    out = KernelChanges([], [], [])
    roles = {k.role for k in ka + kb}
    pairs = match(ka, kb, [lambda k: (k.role, kernel_base(k.name)), lambda k: k.role])
    for n, (x, y) in enumerate(pairs):
        k = x or y
        name = k.name if not (x and y) or x.name == y.name else f"{x.name} → {y.name}"
        role = f" ({k.role})" if len(roles) > 1 else ""
        language = k.language if not (x and y) or x.language == y.language else "text"
        s = bld.add(
            f"{prefix}kernel:{k.role}:{n}",
            f"{title_prefix(prefix)}Kernel {name}{role}",
            language,
            x.source if x else None,
            y.source if y else None,
        )
        if x is None:
            out.added.append(tag + y.name)
        elif y is None:
            out.removed.append(tag + x.name)
        elif s.changed:
            out.changed.append(tag + name)
    return out


def title_prefix(prefix: str) -> str:
    return f"{prefix.rstrip(':')} · " if prefix else ""

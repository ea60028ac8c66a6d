"""The result of ``explorer.diff``: ``Diff`` and its ``Section``s, lowered three ways — the
JSON payload the JupyterLab extension renders (MIME ``application/vnd.pt2-explorer.diff+json``),
a self-contained side-by-side HTML fallback (no scripts, no external URLs; every string
escaped), and a unified diff for terminals.
"""

from __future__ import annotations

import dataclasses
import functools
import html
import json
import re
from dataclasses import dataclass, field
from typing import Any

from ._linediff import Matcher, unified_diff

MIME = "application/vnd.pt2-explorer.diff+json"
SCHEMA = 1
PAYLOAD_LIMIT = 2_000_000  # bytes of JSON a browser is handed; texts are cut to fit
LANGUAGES = ("python", "cpp", "triton", "text")

esc = functools.partial(html.escape, quote=True)


@dataclass(frozen=True)
class Section:
    """One pair of texts, shown side by side (already normalised and capped)."""

    id: str  # unique in its Diff, e.g. "guards", "0/0:kernel:forward:cpp_fused_add_N"
    title: str  # "Guards", "Dynamo graph", "Kernel cpp_fused_add_0"
    language: str  # python | cpp | triton | text
    a: str
    b: str
    a_marks: list[int] = field(default_factory=list)  # 1-based lines of a to highlight
    b_marks: list[int] = field(default_factory=list)
    changed: bool = False  # do the (normalised, uncut) texts differ
    note: str | None = None  # normalisation, cuts, replaced bytes, a missing side
    # (changed, added, removed) lines of the whole (normalised, uncut) texts: counted once,
    # here; the payload sends them as ``changes`` text, which the extension shows as it is
    counts: tuple[int, int, int] | None = None

    @property
    def changes(self) -> str:
        """``3 lines changed, 1 added`` (``no differing lines``): what every lowering shows."""
        return changes_text(self.counts or line_changes(self.a, self.b))

    def to_payload(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        del out["counts"]
        out["changes"] = self.changes
        return out


@dataclass(frozen=True)
class Diff:
    """Two comparable things side by side: a summary of what changed and the sections."""

    title: str
    a_label: str
    b_label: str
    summary: list[str]
    sections: list[Section]
    context: int = 3  # unchanged lines kept around a change (HTML and text)

    @property
    def changed(self) -> bool:
        return any(s.changed for s in self.sections)

    def to_payload(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "title": self.title,
            "a_label": self.a_label,
            "b_label": self.b_label,
            "summary": list(self.summary),
            "sections": [s.to_payload() for s in self.sections],
        }

    def html(self) -> str:
        """The side-by-side HTML alone (what notebooks without the extension show)."""
        return diff_html(self)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, Any]:
        bundle = {MIME: self.to_payload(), "text/html": self.html(), "text/plain": str(self)}
        if include:
            bundle = {k: v for k, v in bundle.items() if k in include}
        if exclude:
            bundle = {k: v for k, v in bundle.items() if k not in exclude}
        return bundle

    def __str__(self) -> str:
        return diff_text(self)


# ---- fitting the payload -------------------------------------------------------------------


def _jlen(s: str) -> int:
    return len(json.dumps(s))


def fit_payload(sections: list[Section], head: dict[str, Any], limit: int = PAYLOAD_LIMIT) -> list[Section]:
    """Cut the longest texts (at line ends) until the whole payload is at most ``limit``
    bytes of JSON; each cut section says so in its note."""
    payload = dict(head, sections=[s.to_payload() for s in sections])
    total = len(json.dumps(payload))
    if total <= limit:
        return sections
    texts = [_jlen(s.a) for s in sections] + [_jlen(s.b) for s in sections]
    budget = limit - (total - sum(texts)) - 200 * len(sections)  # room for the notes
    cap = _water_level(texts, max(budget, 0))
    out = []
    for s in sections:
        a, a_cut = _cut_json(s.a, cap)
        b, b_cut = _cut_json(s.b, cap)
        if not (a_cut or b_cut):
            out.append(s)
            continue
        parts = [p for p in (s.note,) if p]
        for side, text, new, cut in ((head["a_label"], s.a, a, a_cut), (head["b_label"], s.b, b, b_cut)):
            if cut:
                shown, of = len(new.splitlines()), len(text.splitlines())
                what = f"{shown} of {of} lines" if shown < of else f"{len(new)} of {len(text)} characters"
                parts.append(f"{side}: cut to {what} to keep the payload under {limit / 1e6:g} MB")
        out.append(
            dataclasses.replace(
                s,
                a=a,
                b=b,
                a_marks=[m for m in s.a_marks if m <= len(a.splitlines())],
                b_marks=[m for m in s.b_marks if m <= len(b.splitlines())],
                note="; ".join(parts),
            )
        )
    return out


def _water_level(sizes: list[int], budget: int) -> int:
    """The largest cap c with sum(min(size, c)) <= budget."""
    lo, hi = 0, max(sizes, default=0)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if sum(min(s, mid) for s in sizes) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _cut_json(text: str, cap: int) -> tuple[str, bool]:
    if _jlen(text) <= cap:
        return text, False
    kept, size = [], 2
    for line in text.splitlines(keepends=True):
        size += _jlen(line) - 2
        if size > cap:
            break
        kept.append(line)
    if not kept:  # one line longer than the cap: keep its head
        lo, hi = 0, len(text)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if _jlen(text[:mid]) <= cap else (lo, mid - 1)
        return text[:lo], True
    return "".join(kept), True


# ---- side-by-side rows ---------------------------------------------------------------------


def rows(a: str, b: str, a_marks: list[int], b_marks: list[int], context: int):
    """Aligned rows ``(kind, a_no, a_line, b_no, b_line)`` with kind equal / delete / insert /
    replace, and ``("skip", n, None, None, None)`` for a run of n unchanged lines left out.
    Marked lines are never left out. Also how the lines were aligned where difflib's matching
    cost too much (``Matcher.note``), else None."""
    al, bl = a.splitlines(), b.splitlines()
    am, bm = set(a_marks), set(b_marks)
    matcher = Matcher(al, bl)
    ops = matcher.get_opcodes()
    out = []
    for k, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag == "equal":
            keep = set()
            if k > 0:
                keep.update(range(i1, min(i2, i1 + context)))
            if k < len(ops) - 1:
                keep.update(range(max(i1, i2 - context), i2))
            keep.update(i for i in range(i1, i2) if i + 1 in am or (j1 + i - i1) + 1 in bm)
            skipped = 0
            for i in range(i1, i2):
                if i in keep:
                    if skipped:
                        out.append(("skip", skipped, None, None, None))
                        skipped = 0
                    j = j1 + i - i1
                    out.append(("equal", i + 1, al[i], j + 1, bl[j]))
                else:
                    skipped += 1
            if skipped:
                out.append(("skip", skipped, None, None, None))
            continue
        n = max(i2 - i1, j2 - j1)
        for d in range(n):
            i, j = i1 + d, j1 + d
            ai = (i + 1, al[i]) if i < i2 else (None, None)
            bj = (j + 1, bl[j]) if j < j2 else (None, None)
            out.append((tag, *ai, *bj))
    return out, matcher.note


def changes_text(counts: tuple[int, int, int]) -> str:
    c, a, r = counts
    parts = [f"{n} {what}" for n, what in ((c, "changed"), (a, "added"), (r, "removed")) if n]
    if not parts:
        return "no differing lines"
    n, what = parts[0].split(" ", 1)
    parts[0] = f"{n} line{'s' if int(n) != 1 else ''} {what}"
    return ", ".join(parts)


POSITIONAL_LINES = 20_000  # longer differing middles of equal length are counted line by line


def line_changes(a: str, b: str) -> tuple[int, int, int]:
    """(changed, added, removed) lines from a to b (``line_counts``)."""
    return line_counts(a, b)[0]


def line_counts(a: str, b: str) -> tuple[tuple[int, int, int], str | None]:
    """(changed, added, removed) lines from a to b, and how they were aligned where difflib's
    matching cost too much (``Matcher.note``), else None. The common head and tail are
    skipped; what differs between them is matched by difflib (``Matcher``), or, when it is over
    POSITIONAL_LINES lines on both sides and as long on both, compared line by line (difflib
    takes seconds there; a line that moved then counts as changed twice)."""
    la, lb = a.splitlines(), b.splitlines()
    head = 0
    while head < min(len(la), len(lb)) and la[head] == lb[head]:
        head += 1
    tail = 0
    while tail < min(len(la), len(lb)) - head and la[-1 - tail] == lb[-1 - tail]:
        tail += 1
    la, lb = la[head : len(la) - tail], lb[head : len(lb) - tail]
    if len(la) == len(lb) > POSITIONAL_LINES:
        return (sum(x != y for x, y in zip(la, lb)), 0, 0), None
    changed = added = removed = 0
    sm = Matcher(la, lb)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "replace":
            common = min(i2 - i1, j2 - j1)
            changed += common
            added += (j2 - j1) - common
            removed += (i2 - i1) - common
        elif tag == "insert":
            added += j2 - j1
        elif tag == "delete":
            removed += i2 - i1
    return (changed, added, removed), sm.note


# ---- HTML ----------------------------------------------------------------------------------

CSS = """
.pt2x-diff{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;font-size:13px;color:#1f2328;background:#fff;line-height:1.4;padding:4px}
.pt2x-diff td,.pt2x-diff th{text-align:left}
.pt2x-diff h2{font-size:15px;margin:4px 0}
.pt2x-diff .labels{color:#57606a;margin:2px 0 6px}
.pt2x-diff .labels b.a{color:#cf222e}.pt2x-diff .labels b.b{color:#1a7f37}
.pt2x-diff ul.summary{margin:4px 0 8px 18px;padding:0}
.pt2x-diff ul.summary li{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
.pt2x-diff details{margin:6px 0;border:1px solid #d0d7de;border-radius:4px}
.pt2x-diff summary{cursor:pointer;font-weight:600;padding:3px 6px;background:#f6f8fa}
.pt2x-diff summary .tag{font-weight:400;color:#57606a;margin-left:6px}
.pt2x-diff summary .tag.chg{color:#9a6700}
.pt2x-diff .note{color:#57606a;font-style:italic;padding:2px 6px}
.pt2x-diff table{border-collapse:collapse;width:100%;table-layout:fixed;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
.pt2x-diff col.n{width:3.5em}
.pt2x-diff td{padding:0 4px;vertical-align:top;white-space:pre-wrap;word-break:break-all}
.pt2x-diff td.n{color:#8c959f;text-align:right;user-select:none}
.pt2x-diff td.del{background:#ffebe9}.pt2x-diff td.ins{background:#dafbe1}
.pt2x-diff td.del .x{background:#ffcecb}.pt2x-diff td.ins .x{background:#aceebb}
.pt2x-diff td.empty{background:#f6f8fa}
.pt2x-diff td.mark{outline:2px solid #d4a72c;outline-offset:-2px;font-weight:600}
.pt2x-diff td.mark:not(.del):not(.ins){background:#fff8c5}
.pt2x-diff tr.skip td{color:#57606a;background:#f6f8fa;text-align:center;font-style:italic}
.pt2x-diff .same{color:#57606a;padding:2px 6px}
"""


_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")
INLINE_LIMIT = 2000  # characters: longer changed lines are not compared word by word
INLINE_WORK = 4_000_000  # steps of word-by-word matching per section (``Matcher``); past them, none


def inline(a: str, b: str, budget: int = INLINE_WORK) -> tuple[str, str, int]:
    """Escaped a and b with the words that differ wrapped in ``<span class="x">``, and the
    steps that took; no words marked where difflib would take more than ``budget`` steps."""
    if len(a) > INLINE_LIMIT or len(b) > INLINE_LIMIT or budget <= 0:
        return esc(a), esc(b), 0
    ta, tb = _TOKEN.findall(a), _TOKEN.findall(b)
    m = Matcher(ta, tb, budget=budget)
    ops = m.get_opcodes()
    if m.note:
        return esc(a), esc(b), m.work
    outa, outb = [], []
    for tag, i1, i2, j1, j2 in ops:
        x, y = esc("".join(ta[i1:i2])), esc("".join(tb[j1:j2]))
        if tag == "equal":
            outa.append(x)
            outb.append(y)
        else:
            outa.append(f'<span class="x">{x}</span>' if x else "")
            outb.append(f'<span class="x">{y}</span>' if y else "")
    return "".join(outa), "".join(outb), m.work


def _cell(no: int | None, body: str, cls: str, marks: set[int]) -> str:
    if no is None:
        return '<td class="n"></td><td class="empty"></td>'
    if no in marks:
        cls = f"{cls} mark".strip()
    return f'<td class="n">{no}</td><td class="{cls}">{body}</td>'


def section_html(s: Section, a_label: str, b_label: str, context: int) -> str:
    tag = (
        f'<span class="tag chg">{esc(s.changes)}</span>'
        if s.changed
        else '<span class="tag">unchanged</span>'
    )
    note = f'<div class="note">{esc(s.note)}</div>' if s.note else ""
    am, bm = set(s.a_marks), set(s.b_marks)
    body = []
    if s.changed or am or bm:
        aligned, how = rows(s.a, s.b, s.a_marks, s.b_marks, context)
        words_left = INLINE_WORK
        if how and how not in (s.note or ""):
            note += f'<div class="note">{esc(how)}</div>'
        for kind, ano, atext, bno, btext in aligned:
            if kind == "skip":
                n = ano
                body.append(
                    f'<tr class="skip"><td colspan="4">… {n} unchanged line{"s" if n != 1 else ""} …</td></tr>'
                )
                continue
            left = "del" if kind in ("delete", "replace") else ""
            right = "ins" if kind in ("insert", "replace") else ""
            if kind == "replace" and ano is not None and bno is not None:
                ahtml, bhtml, spent = inline(atext, btext, words_left)
                words_left -= spent
            else:
                ahtml, bhtml = esc(atext or ""), esc(btext or "")
            body.append(f"<tr>{_cell(ano, ahtml, left, am)}{_cell(bno, bhtml, right, bm)}</tr>")
        table = (
            '<table><colgroup><col class="n"><col><col class="n"><col></colgroup>'
            f"<thead><tr><th></th><th>{esc(a_label)}</th><th></th><th>{esc(b_label)}</th></tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>"
        )
    else:
        n = len(s.a.splitlines())
        table = f'<div class="same">{n} line{"s" if n != 1 else ""}, the same on both sides</div>'
    opened = " open" if s.changed or am or bm else ""
    return f"<details{opened}><summary>{esc(s.title)}{tag}</summary>{note}{table}</details>"


def diff_html(d: Diff) -> str:
    summary = "".join(f"<li>{esc(x)}</li>" for x in d.summary)
    sections = "".join(section_html(s, d.a_label, d.b_label, d.context) for s in d.sections)
    return (
        f'<div class="pt2x-diff"><style>{CSS}</style><h2>{esc(d.title)}</h2>'
        f'<div class="labels"><b class="a">A</b> {esc(d.a_label)} &nbsp; <b class="b">B</b> {esc(d.b_label)}</div>'
        f'<ul class="summary">{summary}</ul>{sections}</div>'
    )


# ---- text ----------------------------------------------------------------------------------


def diff_text(d: Diff) -> str:
    out = [d.title, f"--- A: {d.a_label}", f"+++ B: {d.b_label}"]
    out += [f"  {x}" for x in d.summary]
    for s in d.sections:
        if not (s.changed or s.a_marks or s.b_marks):
            out.append(f"= {s.title}: unchanged")
            continue
        out.append(f"== {s.title}" + (f" ({s.changes})" if s.changed else ""))
        if s.note:
            out.append(f"   note: {s.note}")
        for side, text, marks in (("A", s.a, s.a_marks), ("B", s.b, s.b_marks)):
            lines = text.splitlines()
            for m in marks:
                out.append(f"   ! {side} line {m}: {lines[m - 1].strip() if m <= len(lines) else ''}")
        m = Matcher(s.a.splitlines(), s.b.splitlines(), autojunk=True)  # difflib.unified_diff's
        hunks = list(unified_diff(m, f"A: {d.a_label}", f"B: {d.b_label}", n=d.context))
        if m.note and m.note not in (s.note or ""):
            out.append(f"   note: {m.note}")
        out += hunks
    return "\n".join(out) + "\n"

"""A census's speed, summed up: the headline (pass rate and geomean speedup per zoo, precision
and mode, the seeds' census beside it), the rows where compiled is slower or barely faster
grouped by the verdict's first cause, and the error rows by their first cause. Torch-free."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from ._table import BARELY, CensusRow

# the seeds' census: 163 open-source models on an A100, torch.compile worked on 93% of them,
# and ran 21% faster in float32 and 51% faster with automatic mixed precision (their geomeans)
SEEDS = "the seeds' census (163 models, A100): 93% pass, fp32 ×1.21, amp ×1.51"


# a slower rows' group's words by its cause's key, where the cause's title is one frame's or
# one count of sites (explorer/census/_speed.py ``group_of`` names the others)
GROUPS = {
    "fallback": "eager fallback",
    "breaks": "graph breaks",
    "sync": "host↔device copies",
    "guards": "guard evaluation",
    "generated": "generated kernels slower than eager's",
    "generated-ok": "generated kernels, already faster than eager's",
    "library": "library kernels",
    "cudagraphs": "CUDA graphs skipped",
}


@dataclass(frozen=True)
class SpeedGroup:
    zoo: str
    precision: str
    mode: str
    rows: int
    passed: int  # rows that compiled and ran (not "error")
    timed: int  # rows with a speedup
    geomean: float | None  # of the timed rows' speedups
    compile_s: float | None = None  # the median compile time of the rows that compiled
    memory: float | None = (
        None  # geomean of eager's peak memory over compiled's (PyTorch's dashboard's ratio)
    )

    @property
    def pass_rate(self) -> float:
        return self.passed / self.rows if self.rows else 0.0


def geomean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def speed_groups(rows: list[CensusRow]) -> list[SpeedGroup]:
    """One group per zoo (the row's source), precision and mode, in the rows' order."""
    groups: dict[tuple[str, str, str], list[CensusRow]] = defaultdict(list)
    for r in rows:
        groups[(r.source or "?", r.precision, r.mode)].append(r)
    out = []
    for (zoo, prec, mode), rs in groups.items():
        speeds = [r.speedup for r in rs if r.speedup]
        times = sorted(r.compile_time_s for r in rs if r.compile_time_s is not None)
        ratios = [r.peak_mb_eager / r.peak_mb_compiled for r in rs if r.peak_mb_eager and r.peak_mb_compiled]
        out.append(
            SpeedGroup(
                zoo,
                prec,
                mode,
                len(rs),
                sum(r.status != "error" for r in rs),
                len(speeds),
                geomean(speeds),
                times[len(times) // 2] if times else None,
                geomean(ratios),
            )  # fmt: skip
        )
    return out


def slower_groups(rows: list[CensusRow]) -> list[tuple[str, str, list[CensusRow]]]:
    """(cause key, the group's words, the rows) of the rows compiled slower or barely faster,
    grouped by the words of their first cause's group (``CensusRow.cause_group``; a census
    written before it: the key), the largest group first; a breaks group names its break ids,
    each counted once a row (``graph breaks (GB0124 ×3, GB0170 ×1)``)."""
    groups: dict[tuple[str, str], list[CensusRow]] = defaultdict(list)
    for r in rows:
        if r.slower:
            key = r.cause_key or "none"
            groups[(key, group_words(r))].append(r)
    out = []
    for (key, words), rs in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        if key == "breaks":
            ids: dict[str, int] = defaultdict(int)
            for r in rs:
                for gb in dict.fromkeys(b.gb_id or "?" for b in r.breaks):
                    ids[gb] += 1
            words += " (" + ", ".join(f"{g} ×{n}" for g, n in sorted(ids.items(), key=lambda x: -x[1])) + ")"
        out.append((key, words, rs))
    return out


def group_words(r: CensusRow) -> str:
    """A slower row's group: its ``cause_group``; in a census written before it, the words of
    its cause's key, else its cause's title."""
    key = r.cause_key or "none"
    if r.cause_group:
        return r.cause_group
    return "no verdict" if key == "none" else GROUPS.get(key) or r.cause or key


def error_groups(rows: list[CensusRow]) -> list[tuple[str, list[CensusRow]]]:
    """(first cause, the error rows) by the error's first sentence (``error_kind``), the
    largest group first; each row keeps its whole error."""
    groups: dict[str, list[CensusRow]] = defaultdict(list)
    for r in rows:
        if r.status == "error":
            groups[error_kind(r.error)].append(r)
    return sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))


def error_kind(error: str | None) -> str:
    """An error's first sentence: what two rows' errors share where their figures differ
    ("OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB ...": the part before
    "Tried")."""
    if not error:
        return "no reason recorded"
    head, dot, _rest = error.partition(". ")
    return head + "." if dot and ": " in head else error


def fmt_speedup(x: float | None) -> str:
    return f"×{x:.2f}" if x else "—"


def speed_text(rows: list[CensusRow], width: int = 100) -> list[str]:
    """The headline table beside the seeds', the slower rows by cause, the errors by cause."""
    out: list[str] = []
    groups = speed_groups(rows)
    if any(g.timed for g in groups) or len(groups) > 1 or any(r.precision != "fp32" for r in rows):
        out += ["", "by zoo, precision and mode (speedup: geomean of eager / compiled medians):"]
        head = ("zoo", "precision", "mode", "models", "pass", "speedup", "timed")
        cells = [
            (
                g.zoo,
                g.precision,
                g.mode,
                str(g.rows),
                f"{g.passed} ({g.pass_rate:.0%})",
                fmt_speedup(g.geomean),
                str(g.timed),
            )
            for g in groups
        ]
        widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(head)]
        out += ["  " + "  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in [head, *cells]]
        out.append(f"  beside: {SEEDS}")
    slow = slower_groups(rows)
    if slow:
        n = sum(len(rs) for _k, _w, rs in slow)
        parts = [f"{len(rs)} {words}" for _key, words, rs in slow]
        out += ["", *wrap(f"compiled slower or barely faster (under ×{BARELY:.2f}) on {n}: ", parts, width)]
        for _key, words, rs in slow:  # every row of a group shown: wrapped, never cut
            keys = [f"{r.key} {fmt_speedup(r.speedup)}" for r in rs]
            out += wrap(f"  {words} ({len(rs)}): ", keys, width, "    ")
    errors = error_groups(rows)
    if errors:
        out += ["", f"errors ({sum(len(rs) for _e, rs in errors)}), by their first cause:"]
        for error, rs in errors:
            out.append(clip(f"  {error}", width))
            out += wrap("    ", [r.key for r in rs], width, "    ")
    return out


def wrap(head: str, items: list[str], width: int, indent: str = "  ") -> list[str]:
    """``head`` and the ``items`` joined by ", " in lines of at most ``width`` columns, broken
    between items (an item is never cut, nor left out), the lines after the first indented."""
    lines = [head]
    for i, item in enumerate(items):
        text = item + ("," if i < len(items) - 1 else "")
        sep = "" if lines[-1] in (head, indent) else " "
        if len(lines[-1]) + len(sep) + len(text) > width and lines[-1] not in (head, indent):
            lines.append(indent)
            sep = ""
        lines[-1] += sep + text
    return [x.rstrip() for x in lines]


def clip(line: str, width: int) -> str:
    return line if len(line) <= width else line[: width - 1] + "…"


def row_id(r: CensusRow) -> str:
    """The row's anchor on the census page."""
    return "row-" + "".join(c if c.isalnum() or c in "-_" else "_" for c in r.key)


def speed_html(rows: list[CensusRow], esc) -> str:
    """The headline table beside the seeds', the slower rows by cause (each row a link to its
    line of the table), the errors by cause: the page's and the widget's."""
    out = []
    groups = speed_groups(rows)
    if any(g.timed for g in groups) or len(groups) > 1:
        head = "".join(
            f"<th>{h}</th>"
            for h in (
                "zoo",
                "precision",
                "mode",
                "models",
                "pass",
                "speedup",
                "timed",
                "compile",
                "peak memory",
            )
        )
        body = "".join(
            f"<tr><td>{esc(g.zoo)}</td><td>{esc(g.precision)}</td><td>{esc(g.mode)}</td><td>{g.rows}</td>"
            f"<td>{g.passed} ({g.pass_rate:.0%})</td><td>{fmt_speedup(g.geomean)}</td><td>{g.timed}</td>"
            f"<td>{'—' if g.compile_s is None else f'{g.compile_s:.1f} s'}</td>"
            f"<td>{'—' if g.memory is None else f'{g.memory:.2f}×'}</td></tr>"
            for g in groups
        )
        out.append(
            "<h3>by zoo, precision and mode</h3><p>speedup: geomean of eager / compiled medians; compile: "
            "the median row's compile time; peak memory: geomean of eager's peak over compiled's "
            "(above 1×: compiled uses less)</p>"
            f'<table class="headline"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
            f"<p>beside: {esc(SEEDS)}</p>"
        )

    def links(rs):
        return ", ".join(f'<a href="#{row_id(r)}">{esc(r.key)}</a> {fmt_speedup(r.speedup)}' for r in rs)

    slow = slower_groups(rows)
    if slow:
        n = sum(len(rs) for _k, _w, rs in slow)
        items = "".join(f"<li>{esc(words)} ({len(rs)}): {links(rs)}</li>" for _k, words, rs in slow)
        out.append(f"<h3>compiled slower or barely faster (under ×{BARELY:.2f}) on {n}</h3><ul>{items}</ul>")
    errors = error_groups(rows)
    if errors:
        items = "".join(
            f"<li>{esc(e)} ({len(rs)}): "
            + ", ".join(f'<a href="#{row_id(r)}">{esc(r.key)}</a>' for r in rs)
            + "</li>"
            for e, rs in errors
        )
        out.append(f"<h3>errors, by their first cause</h3><ul>{items}</ul>")
    return "".join(out)

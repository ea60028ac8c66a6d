"""The ranks view: every rank of a distributed job in a row, where the ranks diverge named in
words first, DDP's split graphs and Inductor's collective schedules where torch logs them.
One view model (RanksView), lowered to text, HTML and a widget (docs/distributed.md)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from compiler import Report
from compiler._viewer import without_device_index
from compiler.types import CompileId

from ..base._types import Table


@dataclass(frozen=True)
class DDPSplit:
    rank: int
    compile_id: str
    children: tuple[str, ...]  # submod_0, submod_1, ...: one graph per DDP bucket
    graph: str | None  # torch's split graph module (print_readable)


@dataclass(frozen=True)
class RanksView:
    title: str
    world_size: int
    divergence: tuple[str, ...]  # sentences, most telling first; empty when the ranks agree
    ranks: Table  # one row per rank
    graphs: Table  # per compile id: the graph's hash on each rank
    ddp_splits: tuple[DDPSplit, ...]
    collectives: Table  # per rank and compile: the collectives Inductor scheduled, in order
    damaged: tuple[str, ...] = ()  # the ranks that did not load, one line each (Report.damaged_ranks)


def ranks_of(report: Report) -> tuple[Report, ...]:
    """The per-rank reports of a multi-rank report (one report: itself)."""
    return report.ranks or (report,)


def graph_hash(code: str | None) -> str:
    """A short hash of a graph's code, the rank's own device index left out (cuda:1)."""
    if not code:
        return "-"
    return hashlib.sha1(without_device_index(code).encode()).hexdigest()[:8]


def _graph_code(c) -> str | None:
    cap = c.stages.capture
    return cap.graph.code if cap is not None and cap.graph is not None else None


def _cache(r: Report) -> tuple[int, int]:
    states = [s for c in r.compiles for s in c.cache.values()]
    return states.count("hit"), states.count("miss")


def _names(ranks: list[int]) -> str:
    """[1] -> "rank 1"; [1, 3] -> "ranks 1 and 3"; [0, 2, 5] -> "ranks 0, 2 and 5"."""
    if len(ranks) == 1:
        return f"rank {ranks[0]}"
    return "ranks " + ", ".join(map(str, ranks[:-1])) + f" and {ranks[-1]}"


def _groups(values: dict[int, object]) -> list[tuple[object, list[int]]]:
    """Ranks grouped by value, the largest group first."""
    out: dict[object, list[int]] = {}
    for rank, v in values.items():
        out.setdefault(v, []).append(rank)
    return sorted(out.items(), key=lambda kv: (-len(kv[1]), kv[1]))


def _did(ranks: list[int]) -> str:
    return f"{_names(ranks)} did not"


def divergence(reports: tuple[Report, ...]) -> list[str]:
    """Where the ranks differ, in words: recompiles, graph breaks, compile counts, graphs,
    DDP splits, cache use, collectives."""
    by = {r.rank if r.rank is not None else i: r for i, r in enumerate(reports)}
    everyone = sorted(by)
    out: list[str] = []
    if len(by) < 2:
        return out
    # recompiles one rank made and another did not
    recs: dict[str, dict[int, object]] = {}
    for rank, r in by.items():
        for rc in r.recompiles:
            recs.setdefault(rc.compile_id, {})[rank] = rc
    for cid, at in recs.items():
        if len(at) < len(by):
            first = at[min(at)]
            why = f" — {first.reasons[0]} —" if first.reasons else ""
            out.append(
                f"{_names(sorted(at))} recompiled [{cid}]{why} {_did([k for k in everyone if k not in at])}"
            )
    # graph breaks hit on some ranks only
    brks: dict[tuple, list[int]] = {}
    for rank, r in by.items():
        for b in r.graph_breaks:
            brks.setdefault((b.filename, b.line, b.type), []).append(rank)
    for (fn, line, typ), at in brks.items():
        if len(at) < len(by):
            where = f"{fn.rsplit('/', 1)[-1]}:{line}" if fn else "?"
            out.append(
                f"{_names(at)} broke the graph at {where} ({typ}); {_did([k for k in everyone if k not in at])}"
            )
    # how many graphs each rank compiled
    counts = _groups({k: len(r.compiles) for k, r in by.items()})
    if len(counts) > 1:
        parts = [f"{_names(ks)} compiled {n} graph{'s' if n != 1 else ''}" for n, ks in counts]
        out.append(", ".join(parts))
    # the same compile id, a different graph
    ids = {c.id for r in by.values() for c in r.compiles}
    for cid in sorted(ids, key=_id_key):
        hashes = {k: graph_hash(_graph_code(c)) for k, r in by.items() for c in r.compiles if c.id == cid}
        groups = _groups(hashes)
        if len(hashes) > 1 and len(groups) > 1:
            (h0, ks0), *rest = groups
            others = "; ".join(f"{_names(ks)} {h}" for h, ks in rest)
            out.append(f"[{cid}] captured a different graph: {_names(ks0)} {h0}, {others}")
    # DDP splits
    splits = _groups(
        {k: sum(1 for e in r.distributed if e.name == "optimize_ddp_split_graph") for k, r in by.items()}
    )
    if len(splits) > 1:
        out.append(
            "DDP's optimizer split "
            + ", ".join(f"{n} compile{'s' if n != 1 else ''} on {_names(ks)}" for n, ks in splits)
        )
    # cache hits and misses
    caches = _groups({k: _cache(r) for k, r in by.items()})
    if len(caches) > 1:
        out.append(
            "cache use differs: "
            + ", ".join(
                f"{_names(ks)} {h} hit{'s' if h != 1 else ''} / {m} miss{'es' if m != 1 else ''}"
                for (h, m), ks in caches
            )
        )
    # collective schedules
    sched = _groups(
        {
            k: tuple((e.compile_id, e.payload) for e in r.distributed if "collective" in e.name)
            for k, r in by.items()
        }
    )
    if len(sched) > 1:
        out.append(f"the collective schedules differ: {' vs '.join(_names(ks) for _, ks in sched)}")
    return out


def _id_key(cid: str) -> tuple:
    parsed = CompileId.parse(cid)
    return parsed.sort_key() if parsed is not None else (1 << 30,)


def build_ranks_view(report: Report, title: str = "ranks") -> RanksView:
    reports = ranks_of(report)
    world = max([len(reports)] + [r.world_size or 0 for r in reports])
    rows = []
    for i, r in enumerate(reports):
        hits, misses = _cache(r)
        codes = "".join(graph_hash(_graph_code(c)) for c in r.compiles)
        rows.append(
            (
                str(r.rank if r.rank is not None else i),
                str(len(r.compiles)),
                str(sum(b.count for b in r.graph_breaks)),
                str(len(r.recompiles)),
                f"{hits}/{misses}",
                f"{r.compile_time_s:.1f}",
                str(sum(1 for e in r.distributed if e.name == "optimize_ddp_split_graph")),
                graph_hash(codes),
                r.device,
            )
        )
    ranks = Table(
        "Ranks",
        (
            "rank",
            "compiles",
            "breaks",
            "recompiles",
            "cache hit/miss",
            "compile s",
            "DDP splits",
            "graphs",
            "device",
        ),
        tuple(rows),
    )
    ids = sorted({c.id for r in reports for c in r.compiles}, key=_id_key)
    per = [{c.id: c for c in r.compiles} for r in reports]
    grows = []
    for cid in ids:
        name = next(p[cid].name for p in per if cid in p)
        hashes = [graph_hash(_graph_code(p[cid])) if cid in p else "not compiled" for p in per]
        same = "" if len(set(hashes)) == 1 else "differs"
        grows.append((f"[{cid}]", str(name), *hashes, same))
    rank_cols = tuple(f"rank {row[0]}" for row in rows)
    graphs = Table(
        "Graphs per compile (hash of Dynamo's graph)", ("compile", "frame", *rank_cols, ""), tuple(grows)
    )
    splits = []
    for i, r in enumerate(reports):
        rank = r.rank if r.rank is not None else i
        cur: DDPSplit | None = None
        for e in r.distributed:
            if e.name == "optimize_ddp_split_graph":
                cur = DDPSplit(rank, e.compile_id or "?", (), e.payload)
                splits.append(cur)
            elif e.name == "optimize_ddp_split_child" and cur is not None:
                child = (e.metadata.get("optimize_ddp_split_child") or {}).get("name", "?")
                splits[-1] = cur = DDPSplit(rank, cur.compile_id, (*cur.children, str(child)), cur.graph)
    crows = []
    for i, r in enumerate(reports):
        for e in r.distributed:
            if "collective" in e.name:
                try:
                    ops = json.loads(e.payload or "[]")
                except json.JSONDecodeError:
                    ops = [e.payload]
                crows.append(
                    (str(r.rank if r.rank is not None else i), f"[{e.compile_id}]", " → ".join(map(str, ops)))
                )
    collectives = Table(
        "Collective schedule (inductor_collective_schedule)", ("rank", "compile", "collectives"), tuple(crows)
    )
    return RanksView(
        title,
        world,
        tuple(divergence(reports)),
        ranks,
        graphs,
        tuple(splits),
        collectives,
        report.damaged_ranks,
    )


def _split_lines(v: RanksView) -> list[str]:
    out = []
    seen: dict[tuple, list[int]] = {}
    for s in v.ddp_splits:
        seen.setdefault((s.compile_id, s.children), []).append(s.rank)
    for (cid, children), ranks in seen.items():
        out.append(
            f"[{cid}] split into {len(children)} graphs at DDP's bucket borders "
            f"({', '.join(children)}) on {_names(ranks)}"
        )
    return out


def _agreement(v: RanksView) -> str:
    """The divergence's heading, or what stands for it."""
    n = len(v.ranks.rows)
    if v.divergence:
        return "Where the ranks diverge:"
    if n == 1:
        return "One rank loaded: no other to compare it with."
    which = "The ranks that loaded agree" if v.damaged else "The ranks agree"
    return f"{which}: the same compiles, graphs, breaks and recompiles on all {n}."


def ranks_text(v: RanksView) -> str:
    from ..lower._text import table_text

    n = len(v.ranks.rows)
    lines = [f"{v.title}: {n} rank{'s' if n != 1 else ''} (world size {v.world_size})", ""]
    if v.damaged:
        lines.append(f"Damaged, not loaded ({len(v.damaged)}):")
        lines += [f"  - {d}" for d in v.damaged] + [""]
    lines.append(_agreement(v))
    lines += [f"  - {d}" for d in v.divergence]
    lines += ["", table_text(v.ranks).rstrip(), "", table_text(v.graphs).rstrip()]
    splits = _split_lines(v)
    lines += ["", "DDP's graph splits (optimize_ddp_split_graph):"]
    lines += [f"  {s}" for s in splits] or ["  none logged (no DDPOptimizer split: one bucket, or not DDP)"]
    lines += [""]
    if v.collectives.rows:
        lines += [table_text(v.collectives).rstrip()]
    else:
        lines += ["Collective schedule: none logged (torch logs it when a compiled graph holds collectives)"]
    return "\n".join(lines) + "\n"


def ranks_html(v: RanksView) -> str:
    from ..lower._html import esc, table_html

    n = len(v.ranks.rows)
    parts = [f"<h2>{esc(v.title)}: {n} rank{'s' if n != 1 else ''} (world size {v.world_size})</h2>"]
    if v.damaged:
        items = "".join(f"<li>{esc(d)}</li>" for d in v.damaged)
        parts.append(
            f'<div class="damaged"><h3>Damaged, not loaded ({len(v.damaged)})</h3><ul>{items}</ul></div>'
        )
    if v.divergence:
        items = "".join(f"<li>{esc(d)}</li>" for d in v.divergence)
        parts.append(f'<div class="divergence"><h3>Where the ranks diverge</h3><ul>{items}</ul></div>')
    else:
        parts.append(f"<p>{esc(_agreement(v))}</p>")
    parts += [table_html(v.ranks), table_html(v.graphs), "<h3>DDP's graph splits</h3>"]
    splits = _split_lines(v)
    parts.append(
        "<ul>" + "".join(f"<li>{esc(s)}</li>" for s in splits) + "</ul>" if splits else "<p>none logged</p>"
    )
    shown = set()
    for s in v.ddp_splits:
        if s.graph and (s.compile_id, s.children) not in shown:
            shown.add((s.compile_id, s.children))
            parts.append(
                f"<details><summary>[{esc(s.compile_id)}] split graph (rank {s.rank})</summary>"
                f"<pre>{esc(s.graph)}</pre></details>"
            )
    parts.append(
        table_html(v.collectives) if v.collectives.rows else "<p>Collective schedule: none logged</p>"
    )
    return "\n".join(parts)


def ranks_page(report: Report, title: str = "ranks") -> str:
    """A self-contained HTML page of the ranks view."""
    from ..lower._html import esc

    body = ranks_html(build_ranks_view(report, title))
    style = (
        "body{font-family:system-ui,sans-serif;margin:1.5em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 8px;font-family:monospace}"
        ".divergence{background:#fff4e5;border-left:4px solid #e67e22;padding:4px 12px}"
        ".damaged{background:#fdecea;border-left:4px solid #c0392b;padding:4px 12px}"
    )
    return f"<!doctype html><html><head><meta charset='utf-8'><title>{esc(title)}</title><style>{style}</style></head><body>{body}</body></html>"


def ranks_widget(report: Report, title: str = "ranks"):
    """The ranks view as a widget: the HTML view, with a diff of two ranks' reports below."""
    import ipywidgets as w

    reports = ranks_of(report)
    names = [r.rank if r.rank is not None else i for i, r in enumerate(reports)]
    view = w.HTML(ranks_html(build_ranks_view(report, title)))
    a = w.Dropdown(options=names, value=names[0], description="rank")
    b = w.Dropdown(options=names, value=names[-1], description="vs rank")
    out = w.HTML()

    def redraw(_=None):
        out.value = diff_ranks(report, a.value, b.value).html() if a.value != b.value else ""

    a.observe(redraw, "value")
    b.observe(redraw, "value")
    redraw()
    return w.VBox([view, w.HBox([a, b]), out])


def diff_ranks(report: Report, a: int, b: int, compile_id: str | None = None):
    """explorer.diff of two ranks' reports, or of one compile id on the two ranks."""
    from ..diffs._diff import diff

    by = {r.rank if r.rank is not None else i: r for i, r in enumerate(ranks_of(report))}
    if a not in by or b not in by:
        raise KeyError(f"no rank {a if a not in by else b}; ranks present: {sorted(by)}")
    ra, rb = by[a], by[b]
    if compile_id is None:
        return diff(ra, rb, labels=(f"rank {a}", f"rank {b}"))
    return diff(
        ra.compile(compile_id),
        rb.compile(compile_id),
        labels=(f"rank {a} [{compile_id}]", f"rank {b} [{compile_id}]"),
    )

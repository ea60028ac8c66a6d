"""Mode, CUDA graphs and caches: one line per compiled function in the summary, the details
in the compile's own facts, and why a warm start missed (the cache key's components that
differ between two compiles of the same function)."""

from __future__ import annotations

import os

from compiler import Report
from compiler.analysis import cache_key_changes, cudagraph_reason
from compiler.types import CacheLookup, Compile

from ..base._types import LinesBlock
from ..base._words import display_name, secs

_STATE = {
    "used": "used",
    "skipped": "skipped",
    "unknown": "asked for, no record of a graph",
    "not asked": "not asked",
}


_CACHE = {"fx_graph": "FX graph", "aotautograd": "AOTAutograd"}
_WHEN = {"compile": "at compile time", "run": "while running"}


def config_phrase(c: Compile) -> str | None:
    cfg = c.config
    if cfg is None:
        return None
    parts = [f"mode {cfg.mode}" if cfg.mode else f"backend {cfg.backend or 'not Inductor'}"]
    if cfg.dynamic is not None:
        parts.append(f"dynamic={cfg.dynamic}")
    return ", ".join(parts)


def cudagraph_phrase(c: Compile) -> str | None:
    """ "CUDA graphs: skipped — mutated inputs (1 instances), model.py:5" """
    cg = c.cudagraphs
    if cg is None:
        return None
    text = f"CUDA graphs: {_STATE.get(cg.state, cg.state)}"
    if cg.reason:
        text += f" — {cudagraph_reason(cg.reason)}" + (f", {_short_where(cg.where)}" if cg.where else "")
    counts = []
    if cg.recordings:
        counts.append(f"{cg.recordings} recording{'s' * (cg.recordings != 1)}")
    if cg.rerecordings:
        counts.append(f"{cg.rerecordings} re-recording{'s' * (cg.rerecordings != 1)}")
    sizes = sum(1 for r in cg.runs if r.kind == "new size")
    if sizes > 1:
        counts.append(f"{sizes} sizes")
    if counts:
        text += " (" + ", ".join(counts) + ")"
    return text


def _short_where(where: str) -> str:
    """``/abs/path/model.py:5`` -> ``model.py:5`` (the full path is in the compile's view)."""
    file, _, line = where.rpartition(":")
    return f"{os.path.basename(file)}:{line}"


def cache_phrase(lookups: tuple[CacheLookup, ...]) -> str | None:
    """ "FX graph hit (saved 1.20 s), AOTAutograd bypass: <torch's reason>" """
    if not lookups:
        return None
    out = []
    for lk in lookups:
        text = f"{_CACHE.get(lk.kind, lk.kind)} {lk.state}"
        if lk.time_saved_s:
            text += f" (saved {secs(lk.time_saved_s)})"
        if lk.reason:
            text += f": {lk.reason}"
        out.append(text)
    return ", ".join(out)


def speed_lines(report: Report) -> tuple[str, ...]:
    """One line per compile that has a mode, CUDA-graph or cache fact worth a line: a mode
    other than the default, CUDA graphs asked for or skipped, a cache lookup."""
    lines = []
    for c in report.compiles:
        parts = [
            p
            for p in (
                config_phrase(c) if c.config and c.config.mode not in (None, "default") else None,
                cudagraph_phrase(c),
                ("caches: " + cache_phrase(c.caches)) if c.caches else None,
            )
            if p
        ]
        if parts:
            lines.append(f"[{c.id}] {display_name(c.name)}: " + " · ".join(parts))
    return tuple(lines)


def compile_rows(c: Compile) -> list[tuple[str, str]]:
    """The compile's own facts about its mode, CUDA graphs and caches (the compile view)."""
    rows: list[tuple[str, str]] = []
    cfg = c.config
    if cfg is not None:
        rows.append(("mode", (config_phrase(c) or "-").removeprefix("mode ")))
        rows.append(("backend", cfg.backend or "not Inductor (its records name no backend)"))
        rows.append(("options", ", ".join(f"{k}={v}" for k, v in cfg.options.items()) or "torch's defaults"))
        if cfg.set_by_recording:
            rows.append(
                ("set by the recording", ", ".join(f"{k}={v}" for k, v in cfg.set_by_recording.items()))
            )
        rows.append(("config read from", cfg.source or "-"))
    cg = c.cudagraphs
    if cg is not None:
        when = f" (found {_WHEN.get(cg.when, cg.when)})" if cg.when else ""
        rows.append(("CUDA graphs", (cudagraph_phrase(c) or "-").removeprefix("CUDA graphs: ") + when))
        if cg.where:
            rows.append(("  at", cg.where))
        if cg.reason and cg.reason != cudagraph_reason(cg.reason):
            rows.append(("torch's skip reason", cg.reason.strip()))
        for r in cg.runs:
            rows.append((f"  {r.kind}", " ".join(x for x in (r.detail, r.reason) if x) or "-"))
        rows += [("  warning", w) for w in cg.warnings]
        if cg.cudagraphify_s is not None:
            rows.append(("  wrapping time", secs(cg.cudagraphify_s)))
    for lk in c.caches:
        state = lk.state + (f" (saved {secs(lk.time_saved_s)})" if lk.time_saved_s else "")
        rows.append((f"{lk.kind} cache", state + (f": {lk.reason}" if lk.reason else "")))
        if lk.key:
            rows.append((f"  {lk.kind} key", lk.key))
    return rows


def key_blocks(c: Compile) -> list[LinesBlock]:
    """Each cache key's components, as torch logged them (a line each: lookups share lines)."""
    return [
        LinesBlock(f"{lk.kind} cache key components", lk.component_lines)
        for lk in c.caches
        if lk.component_lines not in ((), ("",))  # a text that holds something
    ]


def key_change_lines(a: Compile, b: Compile) -> list[str]:
    """For each cache both compiles looked up with different keys: the components that
    differ, ``name: value in a → value in b``."""
    out = []
    for kind, changes in cache_key_changes(a, b):
        for name, va, vb in changes:
            out.append(f"{kind} key: {name}: {_short(va)} → {_short(vb)}")
    return out


def _short(v: str | None, n: int = 80) -> str:
    if v is None:
        return "(absent)"
    return v if len(v) <= n else v[: n - 1] + "…"

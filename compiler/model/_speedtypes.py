"""What decides whether a compile's code runs fast, per compile: the mode and config torch
compiled it with, its compile caches (hit, miss, bypass and the key's components) and its
CUDA graphs (used or skipped, and why; recordings). Built by compiler/assemble/_speed.py."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


@dataclass(frozen=True)
class CompileConfig:
    """The mode and options a compile ran with, as torch's own records show them."""

    mode: str | None = None  # one of MODES; None where the records do not tell
    backend: str | None = None  # "inductor" where Inductor compiled it; None where unknown
    dynamic: bool | None = None  # torch.compile(dynamic=): True, False, None (automatic)
    # non-default Inductor / Dynamo options in force ("triton.cudagraphs": "True"), torch's own
    # list of them (the runnable repro's config lines) less what the recording itself set
    options: dict[str, str] = field(default_factory=dict)
    set_by_recording: dict[str, str] = field(default_factory=dict)  # options the recording set
    source: str = ""  # where it was read: "runnable repro", "cache key", ...


@dataclass(frozen=True)
class CacheLookup:
    """One compile cache's answer for a compile (torch's ``<kind>_cache_<state>`` artifact)."""

    kind: str  # "fx_graph" | "aotautograd" | "autotune"
    state: str  # "hit" | "miss" | "bypass"
    key: str | None = None
    reason: str | None = None  # torch's bypass reason
    time_saved_s: float | None = None  # on a hit: the compile time torch says it saved
    # the key's components as torch logged them, a line each: "[hash] name: value" (a
    # multi-line value is cut to its first line and a "…"); lookups share equal lines (the
    # keys of a log's compiles repeat most of their ~600 lines: a whole text each was ~116 KB)
    component_lines: tuple[str, ...] = ()

    @property
    def components(self) -> str | None:
        """The key's components as one text, a line each; None where torch logged none."""
        return "\n".join(self.component_lines) if self.component_lines else None


CACHE_NAMES = {"fx_graph": "FX graph", "aotautograd": "AOTAutograd", "autotune": "autotune"}


@dataclass(frozen=True)
class Saving:
    """What a compile's cache hits saved, as torch figures it: one number per compile.

    torch writes each entry's compile time into it and logs that time as ``time_saved_ns`` on
    a hit. An AOTAutograd entry's time runs from its start through the forward's and the
    backward's Inductor compiles, so on an AOTAutograd hit the FX-graph hits it loaded are
    inside its figure: that one figure is the saving, never the sum (which would count the
    Inductor compiles twice)."""

    saved_s: float  # torch's figure: the compile time of the compile that wrote the entries
    counted: str  # which lookups the figure is: "AOTAutograd" | "FX graph" (×n: their sum)
    hits: tuple[str, ...]  # every hit, in torch's order: ("FX graph", "FX graph", "AOTAutograd")


def cache_saving(lookups: tuple[CacheLookup, ...]) -> Saving | None:
    """The compile's saving (see ``Saving``); None where no hit carries torch's figure."""
    hits = [lk for lk in lookups if lk.state == "hit"]
    aot = [lk.time_saved_s for lk in hits if lk.kind == "aotautograd" and lk.time_saved_s]
    fx = [lk.time_saved_s for lk in hits if lk.kind == "fx_graph" and lk.time_saved_s]
    if not (aot or fx):
        return None
    names = tuple(CACHE_NAMES.get(lk.kind, lk.kind) for lk in hits)
    if aot:
        return Saving(sum(aot), "AOTAutograd", names)
    return Saving(sum(fx), "FX graph" + (f" ×{len(fx)}" if len(fx) > 1 else ""), names)


def fill_reason(c: Any) -> str | None:
    """Why ``compiler.fill(report)`` has something to fill in for compile ``c`` (one line), or None:
    Inductor made its kernels but the report holds no kernel-to-node map for them, because a
    cache hit skipped Inductor's lowering and fusion, or because the caches were on (torch
    keeps Inductor's provenance level in the FX-graph key, so the recording leaves it as it
    is). None once filled in, or where there is no Inductor output to fill in for."""
    cg, fuse = c.stages.codegen, c.stages.fuse
    if c.regenerated is not None or cg is None or not cg.output_code or not cg.fx_graph_runnable:
        return None
    if fuse is not None and fuse.kernel_nodes and "CodeToPost" in (fuse.provenance or ""):
        return None
    if any(lk.kind == "fx_graph" and lk.state == "hit" for lk in c.caches):
        return "its FX graph came from the cache: Inductor's lowering and fusion did not run"
    return "no kernel-to-node map: the caches were on (Inductor's provenance level is in their key)"


@dataclass(frozen=True)
class Regenerated:
    """What ``compiler.fill(report)`` rebuilt for a compile whose stages a cache hit skipped (or whose
    kernel-to-node map the cache key kept out): its runnable repro(s) compiled again with the
    caches off, in a fresh process, recorded; the facts merged in are marked as regenerated."""

    state: str  # "filled" | "differs" (kernels not the cached ones: nothing merged) | "failed"
    facts: tuple[str, ...] = ()  # what was merged: "kernel nodes", "provenance", "IR before fusion", ...
    cold_time_s: float | None = None  # Inductor's compile of the runnable(s) there, caches off
    same_code: bool | None = None  # its kernels' code equals the cached output code's
    note: str | None = None  # one line: what differs, why it failed, what could not be rebuilt


@dataclass(frozen=True)
class CudaGraphRun:
    """One recording (or re-recording) of a CUDA graph, as torch's cudagraphs logger tells."""

    kind: str  # "record" | "re-record" | "warmup" | "new size" (a new tree: a size not seen before)
    reason: str | None = None  # a re-recording's cause, in torch's words
    detail: str | None = None  # torch's "symint key" / function name


@dataclass(frozen=True)
class CudaGraphs:
    """CUDA graphs for one compile: asked for (the mode), used or skipped and why."""

    state: str  # "used" | "skipped" | "not asked" | "unknown"
    reason: str | None = None  # torch's skip reason, verbatim
    when: str | None = None  # "compile" (compile's metrics) | "run" (torch's cudagraphs log)
    where: str | None = None  # the user's line torch names in the reason ("model.py:5")
    runs: tuple[CudaGraphRun, ...] = ()  # recordings, re-recordings, warmups
    warnings: tuple[str, ...] = ()  # torch's other cudagraphs warnings ("... distinct sizes")
    cudagraphify_s: float | None = None  # run-time time torch spent wrapping (its metrics)
    short_reason: str | None = None  # the reason's first line without torch's "skipping cudagraphs due to"
    warned_sizes: tuple[
        int | None, ...
    ] = ()  # per warning: the count of sizes it gives ("observed 5 distinct sizes")

    @property
    def recordings(self) -> int:
        return sum(1 for r in self.runs if r.kind == "record")

    @property
    def rerecordings(self) -> int:
        return sum(1 for r in self.runs if r.kind == "re-record")


def with_component_lines(report: Any) -> Any:
    """A report's JSON form with the cache keys' components as lines (``component_lines``),
    where it has them as one text (``components``: the file form, and reports written before
    they were lines).
    ``report`` itself is left as it was; a part of it that is not of the schema's shape is
    kept for the schema check to name."""
    if not isinstance(report, dict):
        return report
    out = report
    compiles = report.get("compiles")
    if isinstance(compiles, list) and any(_old_caches(c) for c in compiles):
        out = {**report, "compiles": [_with_lines(c) if _old_caches(c) else c for c in compiles]}
    return out


def _old_caches(c: Any) -> bool:
    caches = c.get("caches") if isinstance(c, dict) else None
    return isinstance(caches, list) and any(_old_lookup(lk) for lk in caches)


def _old_lookup(lk: Any) -> bool:
    return isinstance(lk, dict) and "components" in lk and "component_lines" not in lk


def _with_lines(c: dict) -> dict:
    caches = [
        {k: v for k, v in lk.items() if k != "components"} | _lines(lk["components"])
        if _old_lookup(lk)
        else lk
        for lk in c["caches"]
    ]
    return {**c, "caches": caches}


def _lines(text: Any) -> dict[str, Any]:
    if text is None:
        return {}
    if not isinstance(text, str):
        return {"component_lines": text}  # for the schema check to name
    return {"component_lines": [sys.intern(line) for line in text.split("\n")]}  # shared, as built

"""What decides whether a compile's code runs fast, per compile: the mode and config torch
compiled it with, its compile caches (hit, miss, bypass and the key's components) and its
CUDA graphs (used or skipped, and why; recordings). Built by compiler/build/_speed.py."""

from __future__ import annotations

from dataclasses import dataclass, field

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
    # the key's components as torch logged them, one per line: "[hash] name: value" (a
    # multi-line value is cut to its first line and a "…")
    components: str | None = None


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

    @property
    def recordings(self) -> int:
        return sum(1 for r in self.runs if r.kind == "record")

    @property
    def rerecordings(self) -> int:
        return sum(1 for r in self.runs if r.kind == "re-record")

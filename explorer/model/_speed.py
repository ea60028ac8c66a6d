"""Mode, CUDA graphs and caches: one line per compiled function whose mode or CUDA graphs are
worth one and a line for the run's caches in the summary, the details in the compile's own facts, and why a warm start missed (the cache key's components that
differ between two compiles of the same function)."""

from __future__ import annotations

import os

from compiler import Report
from compiler._viewer import cache_key_changes, cache_saving, fill_reason, fill_untrusted
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
    parts = [f"mode {cfg.mode}" if cfg.mode else f"backend {cfg.backend or _no_backend(c, short=True)}"]
    if cfg.dynamic is not None:
        parts.append(f"dynamic={cfg.dynamic}")
    return ", ".join(parts)


def _no_backend(c: Compile, short: bool = False) -> str:
    """What a compile whose records name no backend ran: none where no stage past capture ran
    (Dynamo's graph had nothing to compile: the backend is never called), else not Inductor."""
    s = c.stages
    if all(getattr(s, x) is None for x in ("autograd", "decompose", "fuse", "codegen")):
        return (
            "none (no graph compiled)"
            if short
            else "none ran: no graph to compile (the backend is called only with one)"
        )
    return "not Inductor" if short else "not Inductor (its records name no backend)"


def cudagraph_phrase(c: Compile) -> str | None:
    """ "CUDA graphs: skipped — mutated inputs (1 instances), model.py:5" """
    cg = c.cudagraphs
    if cg is None:
        return None
    text = f"CUDA graphs: {_STATE.get(cg.state, cg.state)}"
    if cg.reason:
        text += f" — {cg.short_reason}" + (f", {_short_where(cg.where)}" if cg.where else "")
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


def _sizes_said(warning: str, said: int | None, cg) -> str:
    """torch's warning on CUDA graphs' sizes, with what its count (``said``) counts beside the
    count of the sizes recorded: torch warns once, when it has seen as many sizes as its limit."""
    sizes = sum(1 for r in cg.runs if r.kind == "new size")
    if said is None or said == sizes:
        return warning
    return f"{warning} [torch said this at its {said}th size; {sizes} sizes were recorded in all]"


def _hit(lookups, kind: str) -> CacheLookup | None:
    return next((x for x in lookups if x.kind == kind and x.state == "hit" and x.time_saved_s), None)


def saved_phrase(lk: CacheLookup, lookups) -> str:
    """`` (saved 0.29 s)``: the compile time torch says a hit saved. AOTAutograd's entry holds
    Inductor's output, so its saving includes the FX graph's: each says so, never two
    savings to add up."""
    if not lk.time_saved_s:
        return ""
    aot, fx = _hit(lookups, "aotautograd"), _hit(lookups, "fx_graph")
    if aot is not None and fx is not None:
        if lk is fx:
            return f" (saved {secs(lk.time_saved_s)}, part of AOTAutograd's)"
        if lk is aot:
            return f" (saved {secs(lk.time_saved_s)}, the FX graph's included)"
    return f" (saved {secs(lk.time_saved_s)})"


def cache_phrase(lookups: tuple[CacheLookup, ...]) -> str | None:
    """ "FX graph hit ×2, AOTAutograd bypass: <torch's reason>": each cache's answers, counted
    (torch's saved figures are the compile's, in ``saving_phrase``)."""
    if not lookups:
        return None
    counts: dict[tuple[str, str, str | None], int] = {}
    for lk in lookups:
        key = (lk.kind, lk.state, lk.reason)
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(
        f"{_CACHE.get(kind, kind)} {state}" + (f" ×{n}" if n > 1 else "") + (f": {reason}" if reason else "")
        for (kind, state, reason), n in counts.items()
    )


def saving_phrase(c: Compile) -> str | None:
    """torch's saved figure for the compile's hits, counted once, beside the compile's own time
    and the cold compile measured by the fill-in where there was one:
    "torch: saved 27.9 s (AOTAutograd's figure, which holds its FX graphs' 25.6 s); this
    compile took 5.1 s"."""
    saving = cache_saving(c.caches)
    if saving is None:
        return None
    text = f"torch: saved {secs(saving.saved_s)} ({saving.counted}'s figure: the compile that wrote the entry"
    fx = sum(lk.time_saved_s or 0.0 for lk in c.caches if lk.kind == "fx_graph" and lk.state == "hit")
    if saving.counted == "AOTAutograd" and fx:
        text += f", with its FX graphs' {secs(fx)} inside it"
    text += ")"
    if c.compile_time_s is not None:
        text += f"; this compile took {secs(c.compile_time_s)}"
    cold = c.regenerated.cold_time_s if c.regenerated is not None else None
    if cold is not None and fx:
        text += f"; Inductor's cold compile of the same graphs, measured by the fill-in: {secs(cold)}"
        if fx > cold:
            text += (
                f" (torch's {secs(fx)} for it is larger: it timed the first compile, which also built "
                "the kernels' binaries that later compiles find built)"
            )
    return text


def speed_lines(report: Report) -> tuple[str, ...]:
    """One line per compile whose mode or CUDA graphs are worth a line (a mode other than the
    default, CUDA graphs asked for or skipped), then the run's caches in one line
    (``cache_line``); each compile's cache facts are ``cache_detail_lines``."""
    lines = []
    for c in report.compiles:
        parts = [
            p
            for p in (
                config_phrase(c) if c.config and c.config.mode not in (None, "default") else None,
                cudagraph_phrase(c),
            )
            if p
        ]
        if parts:
            lines.append(f"[{c.id}] {display_name(c.name)}: " + " · ".join(parts))
    run = cache_line(report)
    return tuple(lines) + ((run,) if run else ())


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def cache_line(report: Report) -> str | None:
    """The run's caches in one line: "caches: 3 of 4 compiles from the cache (torch: saved
    27.9 s); filled in ✓", or what is left to fill in (the command that fills it in is said by
    whoever knows where the report lives: ``fill_command``). None where no compile looked one up."""
    looked = [c for c in report.compiles if c.caches]
    if not looked:
        return None
    hit = [c for c in looked if any(lk.state == "hit" for lk in c.caches)]
    bypass = sum(1 for c in looked if any(lk.state == "bypass" for lk in c.caches))
    text = "caches: " + (
        f"{len(hit)} of {_plural(len(looked), 'compile')} from the cache"
        if hit
        else f"no hit ({_plural(len(looked), 'compile')} compiled cold)"
    )
    extra = []
    saved = [x.saved_s for c in hit if (x := cache_saving(c.caches)) is not None]
    if saved:
        extra.append(f"torch: saved {secs(sum(saved))}")
    if bypass:
        extra.append(f"{bypass} bypassed")
    if extra:
        text += f" ({', '.join(extra)})"
    states = [c.regenerated.state for c in report.compiles if c.regenerated is not None]
    left = sum(1 for c in report.compiles if fill_reason(c) is not None)
    if states:
        bad = {s: states.count(s) for s in ("differs", "failed") if s in states}
        text += (
            "; filled in ✓"
            if not bad
            else "; fill-in: "
            + ", ".join(f"{n} {'not merged (other code)' if s == 'differs' else s}" for s, n in bad.items())
        )
    if left:
        text += f"; not filled in yet: {_plural(left, 'compile')} (the kernels' nodes, the IR around fusion)"
    return text + " · per compile: --view compiles"


def cache_detail_lines(report: Report) -> tuple[str, ...]:
    """Each compile's cache lookups, torch's saving and its fill-in, a line per compile (the
    page and the widget fold them under the run's line)."""
    lines = []
    for c in report.compiles:
        parts = [
            p
            for p in (
                ("caches: " + cache_phrase(c.caches)) if c.caches else None,
                saving_phrase(c),
                fill_phrase(c, report),
            )
            if p
        ]
        if parts:
            lines.append(f"[{c.id}] {display_name(c.name)}: " + " · ".join(parts))
    return tuple(lines)


def fill_command(report: Report, path: str | None) -> str | None:
    """What fills in the report's cache hits, with the report's own path, or None where
    nothing is left to fill in. A fill runs the report's runnable code: for a report this
    user's own recording did not make (compiler/model/_trust.py), the code to read first and
    ``--fill --trust``."""
    ids = [c.id for c in report.compiles if fill_reason(c) is not None]
    if not ids:
        return None
    head = f"to fill in {_plural(len(ids), 'compile')} ({', '.join(ids)})"
    why = fill_untrusted(report)
    if why is not None:
        where = path or "REPORT.json"
        return (
            f"{head}: the fill would run this report's runnable code, and {why}: read it "
            f"(pt2-explorer repro {where} --compile {ids[0]}) before pt2-explorer report {where} --fill --trust"
        )
    how = f"pt2-explorer report {path} --fill" if path else "compiler.fill(report)"
    return f"{head}: {how}"


def compile_rows(c: Compile, report: Report | None = None) -> list[tuple[str, str]]:
    """The compile's own facts about its mode, CUDA graphs and caches (the compile view)."""
    rows: list[tuple[str, str]] = []
    cfg = c.config
    if cfg is not None:
        rows.append(("mode", (config_phrase(c) or "-").removeprefix("mode ")))
        rows.append(("backend", cfg.backend or _no_backend(c)))
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
        if cg.reason and cg.reason != cg.short_reason:
            rows.append(("torch's skip reason", cg.reason.strip()))
        for r in cg.runs:
            rows.append((f"  {r.kind}", " ".join(x for x in (r.detail, r.reason) if x) or "-"))
        rows += [
            ("  warning", _sizes_said(w, n, cg)) for w, n in zip(cg.warnings, cg.warned_sizes, strict=True)
        ]
        if cg.cudagraphify_s is not None:
            rows.append(("  wrapping time", secs(cg.cudagraphify_s)))
    for lk in c.caches:
        state = lk.state + saved_phrase(lk, c.caches)
        rows.append((f"{lk.kind} cache", state + (f": {lk.reason}" if lk.reason else "")))
        if lk.key:
            rows.append((f"  {lk.kind} key", lk.key))
    if (saved := saving_phrase(c)) is not None:
        rows.append(("saved by the caches", saved))
    if (filled := fill_phrase(c, report)) is not None:
        rows.append(("fill-in", filled))
    return rows


def fill_phrase(c: Compile, report: Report | None = None) -> str | None:
    """What a cache hit left out and how to fill it in, or what the fill-in did. A fill runs
    the report's runnable code: the plain command is offered only for a report (``report``,
    ``c``'s) that this user's own recording made (compiler/model/_trust.py)."""
    r = c.regenerated
    if r is not None:
        facts = f": {', '.join(r.facts)}" if r.facts else ""
        state = {"filled": "regenerated", "differs": "not merged", "failed": "failed"}.get(r.state, r.state)
        how = []
        if r.cold_time_s is not None:
            how.append(f"its runnable compiled cold in {secs(r.cold_time_s)}")
        if r.same_code is not None:
            how.append("the same code as the cached one" if r.same_code else "code not the cached one")
        return (
            f"{state}{facts}" + (f" ({'; '.join(how)})" if how else "") + (f" — {r.note}" if r.note else "")
        )
    reason = fill_reason(c)
    if reason is None:
        return None
    why = fill_untrusted(report) if report is not None else "its report is not known to be your own recording"
    if why is not None:
        return f"to fill in: {reason} (the fill would run this report's runnable code, and {why})"
    return f"to fill in: {reason}"


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

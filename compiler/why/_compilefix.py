"""Which fixes ``advise --compile-time`` tries for a program's compile time (docs/advise.md,
"Compile time"), from its baseline run's report. Torch-free.

- ``regional``: regional compilation of a repeated block, where the compiled graphs hold
  numbered siblings of one module (``transformer.h.0`` … ``transformer.h.11``): the class of
  those blocks has its ``forward`` wrapped in ``torch.compiler.nested_compile_region``, so that
  Dynamo traces one block and Inductor compiles it once for all of them; the user's own
  ``torch.compile`` call stays as it is.
- ``dynamic``: ``dynamic=True`` where the baseline recompiled.
- ``max_autotune`` / ``max_autotune_off``: whichever the baseline's compiles did not use.
- ``compile_threads``: Inductor's compile workers off (one thread), where the machine has more
  than one CPU (torch's default then starts a pool of them).
- ``warm_caches``: the program as it is, again, its cache directory kept from its first run.
- ``cache_artifacts``: torch's portable cache artifacts (``torch.compiler.save_cache_artifacts``
  after the first run, ``load_cache_artifacts`` before the program, in a fresh process with an
  empty cache directory): the warm start on another machine.
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict

from ..model._advicetypes import REGIONAL_SETTING, Fix
from ..model._report import Report
from ._advice import FIXES, INDUCTOR

REGIONAL, WARM, ARTIFACTS = "regional", "warm_caches", "cache_artifacts"
# the fixes that are runs, not settings: the baseline's program run again under other caches
CACHE_RUNS = (WARM, ARTIFACTS)

COMPILE_FIXES: dict[str, Fix] = {
    f.name: f
    for f in (
        Fix(
            REGIONAL,
            "BlockClass.forward = torch.compiler.nested_compile_region(BlockClass.forward)  "
            "# one compile for every block",
            (),
        ),
        FIXES["dynamic"],
        FIXES["max_autotune"],
        Fix(
            "max_autotune_off",
            "torch._inductor.config.max_autotune = False  # no kernel choices benchmarked while compiling",
            ((INDUCTOR, "max_autotune", False),),
        ),
        Fix(
            "compile_threads",
            "torch._inductor.config.compile_threads = 1  # kernels compiled in this process, no worker pool",
            ((INDUCTOR, "compile_threads", 1),),
        ),
        Fix(
            WARM,
            "keep TORCHINDUCTOR_CACHE_DIR (and TRITON_CACHE_DIR) between runs: torch's caches are on by default",
            (),
        ),
        Fix(
            ARTIFACTS,
            "data = torch.compiler.save_cache_artifacts()[0] after compiling; "
            "torch.compiler.load_cache_artifacts(data) before compiling, on the other machine",
            (),
        ),
    )
}

# a module path's first numbered part: transformer.h.3.attn -> ("transformer.h", "3"); the
# path is ours (compiler/parse/_modules.py's module_path), not torch's text
_NUMBERED = re.compile(r"^(.*?)\.(\d+)(?:\.|$)")


def repeated_blocks(report: Report) -> tuple[str, int] | None:
    """The path of the module whose numbered children the compiled graphs run most often
    (``("transformer.h", 12)``), relative to the compiled module; None where no module has two
    numbered children in a graph."""
    seen: dict[str, set[str]] = defaultdict(set)
    for c in report.compiles:
        graph = c.stages.capture.graph if c.stages.capture else None
        for n in graph.nodes if graph is not None else ():
            m = _NUMBERED.match(n.module or "")
            if m and m.group(1):
                seen[m.group(1)].add(m.group(2))
    best = max(seen.items(), key=lambda kv: (len(kv[1]), -len(kv[0])), default=None)
    return (best[0], len(best[1])) if best is not None and len(best[1]) >= 2 else None


def regional_fix(path: str) -> Fix:
    """Regional compilation of the blocks at ``path`` (``transformer.h``)."""
    block = f"type(model.{path}[0])"
    return dataclasses.replace(
        COMPILE_FIXES[REGIONAL],
        name=f"{REGIONAL}:{path}",
        code=f"{block}.forward = torch.compiler.nested_compile_region({block}.forward)  "
        "# before the first call: one compile for every block",
        settings=((REGIONAL_SETTING, path, None),),
    )


def compile_fix_named(name: str) -> Fix:
    """The compile-time fix called ``name`` (``regional:PATH`` for the blocks at PATH); a
    ValueError naming the ones there are."""
    head, _, path = name.partition(":")
    if head == REGIONAL and path:
        return regional_fix(path)
    try:
        return COMPILE_FIXES[name]
    except KeyError:
        raise ValueError(
            f"no fix named {name!r} with --compile-time: the fixes are {', '.join(COMPILE_FIXES)}"
        ) from None


def _autotuned(report: Report) -> bool:
    return any(c.config is not None and "max-autotune" in (c.config.mode or "") for c in report.compiles)


def compile_fixes_for(report: Report, tries: tuple[str, ...] = (), cpus: int = 1) -> tuple[Fix, ...]:
    """The compile-time fixes for the baseline's ``report``, each with why (``Fix.why``), in
    the catalogue's order; then those of ``tries`` not among them (``regional`` forced where
    no repeated block was found is a row saying so). ``cpus``: the CPUs the runs may use."""
    why: dict[str, str] = {}
    found: dict[str, Fix] = {}
    blocks = repeated_blocks(report)
    if blocks is not None:
        found[REGIONAL] = regional_fix(blocks[0])  # named regional:PATH
        why[REGIONAL] = f"{blocks[1]} blocks of {blocks[0]} compiled one by one in the graph"
    if report.recompiles:
        n = len(report.recompiles)
        why["dynamic"] = f"{n} recompile{'s' * (n != 1)}"
    autotuned = _autotuned(report)
    off_on = "max_autotune_off" if autotuned else "max_autotune"
    why[off_on] = "the baseline " + ("autotuned (max-autotune)" if autotuned else "did not autotune")
    if cpus > 1:
        why["compile_threads"] = f"torch's default compiles in a pool of workers ({cpus} CPUs here)"
    why[WARM] = "the same program again, its compile caches kept"
    why[ARTIFACTS] = "the baseline's portable cache artifacts, loaded into an empty cache"
    out = [
        dataclasses.replace(found.get(name, fix), why=why[name])
        for name, fix in COMPILE_FIXES.items()
        if name in why
    ]
    out += [dataclasses.replace(compile_fix_named(n), why="asked for (--try)") for n in tries if n not in why]
    return tuple(out)

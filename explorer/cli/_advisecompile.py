"""``pt2-explorer advise --compile-time``: the program run as it is with empty compile caches,
then once per compile-time fix (compiler/why/_compilefix.py), each a fresh process with its
own empty cache directory (``TORCHINDUCTOR_CACHE_DIR``, ``TRITON_CACHE_DIR``; torch's FX-graph
and AOTAutograd caches switched on, as torch has them by default) and run again with that
directory kept (its warm start); the baseline's portable cache artifacts loaded into an
empty directory (the warm start on another machine). The runs are ``advise``'s
(explorer/cli/_adviserunner.py), one at a time; one table, most compile time saved first
(``compiler._viewer.compile_advice_from_runs``, explorer/views/_compileadvice.py)."""

from __future__ import annotations

import dataclasses
import os

from explorer.cli._adviserunner import Runner
from explorer.cli._out import say

ARTIFACTS_FILE = "cache_artifacts.bin"  # the baseline's save_cache_artifacts(), in its directory
# the steady state timed, no kernel profile (on a CPU the profile compiles the program again)
NO_PROFILE = "--no-profile"


def cold_env(runner: Runner, label: str) -> dict[str, str]:
    """advise's environment with a new, empty cache directory of the run ``label``'s own."""
    root = os.path.join(runner.out, label, "cache")
    return {
        **os.environ,
        "TORCHINDUCTOR_CACHE_DIR": os.path.join(root, "inductor"),
        "TRITON_CACHE_DIR": os.path.join(root, "triton"),
        "TORCHINDUCTOR_FX_GRAPH_CACHE": "1",
        "TORCHINDUCTOR_AUTOGRAD_CACHE": "1",
    }


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def advise_compile(compiler, runner: Runner, name: str, tries: tuple[str, ...], only, out: str) -> int:
    from compiler._viewer import (
        CACHE_RUNS,
        AdviceRun,
        compile_advice_from_runs,
        compile_fixes_for,
    )  # imports torch

    runner.counted = "runs"
    if runner.jobs > 1:
        say(
            f"pt2-explorer: advise: --jobs {runner.jobs} unused with --compile-time: its runs go one at a time"
        )
    artifacts = os.path.join(runner.out, "baseline", ARTIFACTS_FILE)
    base_env = cold_env(runner, "baseline")
    base = runner.run(None, env=base_env, extra=[NO_PROFILE, "--save-artifacts", artifacts])
    if base.error or base.report is None:
        say(
            f"pt2-explorer: advise: the program as it is {base.error or 'left no report'}; nothing to compare "
            f"(its output: {os.path.join(out, 'baseline', 'stderr.txt')})"
        )
        rc = runner.codes.get("baseline") or 1
        return 128 - rc if rc < 0 else rc
    report = compiler.load(base.report)
    if not report.compiles:
        say(
            f"pt2-explorer: advise: the program compiled nothing; no compile time to save (its report: {base.report})"
        )
        return 1
    fixes = compile_fixes_for(report, tries, _cpus())
    if only:
        fixes = tuple(f for f in fixes if f.name.split(":")[0] in only or f.name in only)
    # runs: the cache runs one each, a fix two (cold, then warm), regional without blocks none
    runner.total = sum(1 if f.name in CACHE_RUNS else 2 if f.settings else 0 for f in fixes)
    if not runner.tty:
        say(f"pt2-explorer: advise: fixes to try: {', '.join(f.name for f in fixes) or 'none'}")
    runs: list[tuple] = []
    base_warm = None
    for fix in fixes:
        if fix.name == "warm_caches":  # the baseline again, its cache directory kept
            warm = dataclasses.replace(
                runner.run(None, label=fix.name, env=base_env, extra=[NO_PROFILE]), fix=fix
            )
            base_warm = warm
            runs.append((warm, None))
        elif fix.name == "cache_artifacts":  # another machine: an empty cache, the artifacts loaded
            if not os.path.isfile(artifacts):
                runs.append(
                    (AdviceRun(fix, None, error="skipped: the baseline saved no cache artifacts"), None)
                )
                continue
            run = runner.run(
                None,
                label=fix.name,
                env=cold_env(runner, fix.name),
                extra=[NO_PROFILE, "--load-artifacts", artifacts],
            )
            runs.append((dataclasses.replace(run, fix=fix), None))
        elif not fix.settings:  # regional forced where the graphs hold no repeated block
            why = "skipped: no module with numbered blocks (a ModuleList's) in the baseline's graphs"
            runs.append((AdviceRun(fix, None, error=why), None))
        else:
            label = fix.name.replace(":", "_")
            env = cold_env(runner, label)
            cold = runner.run(fix, label=label, env=env, extra=[NO_PROFILE])
            warm = (
                runner.run(fix, label=f"{label}-warm", env=env, extra=[NO_PROFILE])
                if not cold.error
                else None
            )
            runs.append((cold, warm))
    advice = compile_advice_from_runs(name, [(base, base_warm), *runs], out=out)
    from explorer.lower._terminal import UNWRAPPED, echo, terminal
    from explorer.views._compileadvice import compile_advice_text

    text = compile_advice_text(advice)
    width = terminal().width
    echo(compile_advice_text(advice, width) if width < UNWRAPPED else text)
    with open(os.path.join(out, "advice.txt"), "w", encoding="utf-8") as f:
        f.write(text)
    print(f"advice: {os.path.join(out, 'advice.txt')}")
    return 0

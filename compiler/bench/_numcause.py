"""Why compiled diverges from eager (``compiler.numerics``): the call compiled again with one
thing changed, each against eager, in this order, stopping at the first that tells:

1. ``torch._inductor.config.fallback_random = True`` agrees: random numbers drawn differently
   (Inductor draws its own; with it, it draws as eager does);
2. ``emulate_precision_casts = True`` agrees: rounding inside a fusion (a fused kernel keeps
   fp32 where eager rounds each op's output to its 16-bit dtype);
3. ``backend="aot_eager"`` differs: the traced graph already differs, before any decomposition;
4. ``backend="aot_eager_decomp_partition"`` differs: a decomposition;
5. else an Inductor pass or lowering.

For 3-5, torch's own bisector (``torch._inductor.compiler_bisector.CompilerBisector.do_bisect``)
names the backend, the subsystem and the number of its application that breaks the check;
each of its runs is one run against ``max_runs`` (one progress line each, with the range it
is bisecting), and where the bound stops it, what it had narrowed down is said. The
bisector's own prints are kept off the program's stdout.
"""

from __future__ import annotations

import contextlib
import io

from ..model._numericstypes import (
    DECOMPOSITION,
    INDUCTOR,
    NOT_REPRODUCED,
    RANDOM,
    ROUNDING,
    TRACED,
    NumericsCause,
    NumericsTrial,
)
from ._numrun import OutOfRuns, Runner, agree

CONFIG = "torch._inductor.config"
# (trial name, its code, Inductor config changes, backend)
TRIALS = (
    ("fallback_random", f"{CONFIG}.fallback_random = True", {"fallback_random": True}, None),
    (
        "emulate_precision_casts",
        f"{CONFIG}.emulate_precision_casts = True",
        {"emulate_precision_casts": True},
        None,
    ),
    ("aot_eager", 'torch.compile(..., backend="aot_eager")', {}, "aot_eager"),
    (
        "aot_eager_decomp_partition",
        'torch.compile(..., backend="aot_eager_decomp_partition")',
        {},
        "aot_eager_decomp_partition",
    ),
)


def find_cause(
    runner: Runner, eager: list
) -> tuple[NumericsCause | None, tuple[NumericsTrial, ...], list[str]]:
    """The cause, the trials run, what the bound on runs left open."""
    trials: list[NumericsTrial] = []
    for name, code, config, backend in TRIALS:
        if name == "fallback_random" and not runner.drew:  # nothing drawn: nothing to draw alike
            continue
        try:
            out = runner.compiled(f"compiled with {code}", config=config, backend=backend)
        except OutOfRuns:
            return (
                None,
                tuple(trials),
                [f"the cause was not found: the bound on runs was reached before the {name} run"],
            )
        except Exception as e:
            trials.append(NumericsTrial(name, code, False, float("inf"), f"{type(e).__name__}: {_line(e)}"))
            continue
        ok, max_abs = agree(eager, out)
        trials.append(NumericsTrial(name, code, ok, max_abs))
        if name == "fallback_random" and ok:
            return (
                NumericsCause(
                    RANDOM,
                    "compiled agrees with eager when Inductor draws random numbers as eager does",
                    code,
                ),
                tuple(trials),
                [],
            )
        if name == "emulate_precision_casts" and ok:
            words = "compiled agrees with eager when fused kernels round each op's output to its dtype as eager does"
            return NumericsCause(ROUNDING, words, code), tuple(trials), []
        if name == "aot_eager" and not ok:
            break
        if name == "aot_eager_decomp_partition" and not ok:
            break
    cause, notes = bisect(runner, eager, trials)
    return cause, tuple(trials), notes


def bisect(runner: Runner, eager: list, trials: list[NumericsTrial]) -> tuple[NumericsCause, list[str]]:
    """torch's bisector on the call (module docstring)."""
    from torch._inductor.compiler_bisector import CompilerBisector

    by = {t.name: t for t in trials}
    aot = by.get("aot_eager")
    decomp = by.get("aot_eager_decomp_partition")
    kind = (
        TRACED
        if aot is not None and not aot.ok
        else DECOMPOSITION
        if decomp is not None and not decomp.ok
        else INDUCTOR
    )

    def check() -> bool:
        backend = CompilerBisector.get_backend() or "inductor"
        out = runner.compiled(f"bisecting: {_where(CompilerBisector, backend)}", backend=backend)
        return agree(eager, out)[0]

    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            result = CompilerBisector.do_bisect(check)
    except OutOfRuns:
        last = printed.getvalue().strip().splitlines()
        seen = f" (the bisector's last word: {last[-1].strip()})" if last else ""
        words = f"the bisector was stopped by the bound on runs (max_runs={runner.max_runs}){seen}"
        return NumericsCause(kind, words), [f"the cause was not narrowed down to a pass or lowering: {words}"]
    except Exception as e:  # a run that raised: the check cannot say
        return NumericsCause(kind, f"the bisector stopped: {type(e).__name__}: {_line(e)}"), [
            "the cause was not narrowed down: a bisection run raised"
        ]
    if result is None:
        return NumericsCause(NOT_REPRODUCED, "the bisector found every backend agreeing with eager"), []
    if result.subsystem is None:
        words = f"the bisector finds the difference in backend {result.backend!r}, in none of its subsystems"
        return NumericsCause(_kind(result.backend, kind), words, backend=result.backend), [
            f"not narrowed below the backend {result.backend!r}: it has no subsystem the bisector can turn off"
        ]
    fix, what = _fix(result)
    words = f"torch's bisector: {result.backend} - {result.subsystem}, application {result.bisect_number}"
    if what:
        words += f" ({what})"
    return NumericsCause(
        _kind(result.backend, kind),
        words,
        fix,
        result.backend,
        result.subsystem,
        result.bisect_number,
        (result.debug_info or None) if isinstance(result.debug_info, str) else None,
    ), []


def _kind(backend: str, guess: str) -> str:
    if backend in ("eager", "aot_eager"):
        return TRACED
    if backend.startswith("aot_eager_decomp_partition"):
        return DECOMPOSITION
    return INDUCTOR


def _fix(result) -> tuple[str | None, str | None]:
    """The fix as code for the bisector's finding, and what the application was."""
    from torch._inductor.compiler_bisector import BACKENDS, ConfigChange

    sub = next((s for s in BACKENDS.get(result.backend, []) if s.name == result.subsystem), None)
    info = (
        result.debug_info.strip()
        if isinstance(result.debug_info, str) and result.debug_info.strip()
        else None
    )
    if isinstance(sub, ConfigChange):
        module = CONFIG if sub.config_name == "inductor" else None
        if module is None:
            return None, f"setting {sub.config_field} = {sub.config_value!r} made it agree"
        return f"{module}.{sub.config_field} = {sub.config_value!r}", None
    if result.subsystem in ("pre_grad_passes", "joint_graph_passes", "post_grad_passes") and info:
        return f'{CONFIG}.disabled_passes = "{info}"', f"the pass {info}"
    if result.subsystem == "lowerings" and info:
        return None, f"Inductor's lowering of {info}"
    if result.subsystem == "decomposition" and info:
        return None, f"the decomposition {info}"
    return None, info


def _where(bisector, backend: str) -> str:
    """The bisector's position: the backend, the subsystem and the range it bisects."""
    sub = bisector.get_subsystem()
    if not sub:
        return f"backend {backend}"
    try:
        low, high = bisector.get_bisect_range(backend, sub)
        rng = f", range [{low}, {high}]"
    except Exception:  # no range yet: the subsystem is being turned off whole
        rng = ""
    return f"backend {backend}, subsystem {sub}{rng}"


def _line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:200] if text else ""

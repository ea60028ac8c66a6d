"""``pt2-explorer numerics``: the program run as ``record --bench`` runs it (recorded, each
compiled function's last call kept with the state it ran under), then each compiled function
compared against eager on that call (``compiler.numerics``): where it diverges and why. The
report, with its ``numerics``, is written with ``--json`` / ``--html``; the Numerics view is
printed."""

from __future__ import annotations

import argparse
import os
import sys

from explorer.cli._advise import at_least_one
from explorer.cli._out import say, write_all

NUMERICS_USAGE = "pt2-explorer numerics [--max-runs N] [--steps N] [--json OUT] [--html OUT] [-q] (SCRIPT | -m MODULE) [ARGS...]"
NUMERICS_VALUED = ("--max-runs", "--steps", "--json", "--html")


def numerics_options(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Run the program as `record --bench` does, then compare each compiled function against eager "
        "on its last call, under the state it ran under: each output's error, the first module that "
        "diverges, the cause (rounding inside a fusion, random numbers, a decomposition, an Inductor "
        "pass or lowering) and the fix (docs/numerics.md)."
    )
    p.add_argument(
        "--max-runs",
        type=at_least_one,
        default=40,
        metavar="N",
        help="at most N compiled runs per function (each compiles afresh; default 40)",
    )
    p.add_argument(
        "--steps",
        type=at_least_one,
        metavar="N",
        help="a training step: run it N times each way and name the first step that crosses the tolerance",
    )
    p.add_argument("--json", metavar="OUT", help="write the report JSON here (its numerics included)")
    p.add_argument("--html", metavar="OUT", help="write the static HTML report here")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines and no view: the files only")


def numerics(ns) -> int:
    """``ns``: ``numerics_options``' options, with the program: ``script`` or ``module``, ``args``."""
    import compiler
    from explorer.run import _program

    if ns.script is not None and not os.path.isfile(ns.script):
        say(f"pt2-explorer: can't open file {ns.script!r}: no such file")
        return 2
    try:
        rec = compiler.recording()
    except Exception as e:  # UnsupportedTorchVersion, no or broken torch install
        say(f"pt2-explorer: {e}")
        return 2
    title = ns.script or ns.module
    with compiler.compiled_calls() as calls:
        exit_code, interrupted, terminated, _ = _program.run(rec, ns.script, ns.module, ns.args)
    if exit_code or interrupted or terminated:
        say("pt2-explorer: numerics: the program did not finish: nothing compared")
        _program.die_as_the_program_would(interrupted, terminated)
        return exit_code or 1
    report = rec.report
    if not calls.called:
        say("pt2-explorer: numerics: no compiled function was called: nothing to compare")
        return 1
    for note in compiler.numerics_calls(
        report, calls.called, max_runs=ns.max_runs, steps=ns.steps, progress=not ns.quiet
    ):
        say(f"pt2-explorer: numerics: {note}")
    written, ok = write_all(ns, report, title)
    if not ns.quiet:
        from explorer.views._numerics import numerics_text

        print(numerics_text(report))
        for out in written:
            print(f"report: {out}")
    sys.stdout.flush()
    return 0 if ok else 1

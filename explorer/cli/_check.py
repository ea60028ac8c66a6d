"""``pt2-explorer check``: ``record`` with rules. The program runs under the recording exactly
as ``record`` runs it (explorer/cli/_record.py: its options, its output, its report), then the
report is checked (explorer/check/_rules.py) and each offending site is one line on stderr.

Exit status: 0 every rule holds; 1 a rule is broken (or a report file could not be written);
2 a usage error (no rule, a package not found, no such script), before the program runs; the
program's own status where it failed (an exception, ``sys.exit(3)``, a signal), rules or not."""

from __future__ import annotations

import argparse
import os

from explorer.cli._record import RECORD_VALUED, record, record_options

CHECK_USAGE = (
    "pt2-explorer check [--no-breaks-in PKG]... [--count-torch-breaks] [--max-breaks N] [--max-recompiles N] [--min-speedup X --bench] "
    "[record's options] (SCRIPT | -m MODULE) [ARGS...]"
)
CHECK_VALUED = (*RECORD_VALUED, "--no-breaks-in", "--max-breaks", "--max-recompiles", "--min-speedup")

RULES_HELP = (
    "A break is in PKG when, walking its stack from the break outwards, the first frame that is "
    "in PKG or in the program's own files is in PKG: a break inside torch or another library "
    "counts for PKG when PKG's code called it, one in your own code that PKG called back does "
    "not. A break is a site (file:line), as the summary counts them. A break torch asks for "
    "in its own files (the optimizer's `opt.step()` calls torch._dynamo.graph_break() on "
    "purpose) is torch's own: it counts for no PKG unless --count-torch-breaks."
)


EXIT_HELP = (
    "Exit status: 0 every rule holds; 1 a rule is broken (each offending site and the verdict "
    "are lines on stderr, starting `check:`); 2 a usage error, before the program runs; the "
    "program's own status where it failed."
)


def check_options(p: argparse.ArgumentParser) -> None:
    p.description = RULES_HELP
    p.epilog = EXIT_HELP
    g = p.add_argument_group("rules (at least one)")
    g.add_argument(
        "--no-breaks-in",
        action="append",
        default=[],
        metavar="PKG",
        help="fail on a graph break in this package: an importable name (mypkg, mypkg.models; "
        "found as the program would import it, without importing it) or a path with a / "
        "(src/mypkg, ./tools/gen.py); repeatable",
    )
    g.add_argument(
        "--count-torch-breaks",
        action="store_true",
        help="count the breaks torch asks for in its own files (a compiled `opt.step()`: "
        "torch/optim/optimizer.py's `_use_grad`) for the PKG whose code called into torch; by "
        "default they are torch's own and count for no PKG",
    )
    g.add_argument("--max-breaks", type=_count, metavar="N", help="fail on more than N graph-break sites")
    g.add_argument("--max-recompiles", type=_count, metavar="N", help="fail on more than N recompiles")
    g.add_argument(
        "--min-speedup",
        type=_speedup,
        metavar="X",
        help="fail where a compiled function is less than X times as fast as eager (eager median / "
        "compiled median; needs --bench, which benchmarks each one after the program)",
    )
    record_options(p)


def check(ns) -> int:
    """Resolve the rules (before anything runs), then ``record`` with the check."""
    from explorer.check._rules import Rules, check_report, resolve_package
    from explorer.cli._out import say

    if not (ns.no_breaks_in or ns.max_breaks is not None or ns.max_recompiles is not None or ns.min_speedup):
        say(
            "pt2-explorer check: error: no rule given (--no-breaks-in PKG, --max-breaks N, --max-recompiles N, "
            "--min-speedup X)"
        )
        return 2
    if ns.min_speedup is not None and not ns.bench:
        say("pt2-explorer check: error: --min-speedup needs --bench (the benchmarks it reads)")
        return 2
    if ns.script is not None and not os.path.isfile(ns.script):
        return record(ns)  # its error line and status 2
    first = os.path.dirname(os.path.abspath(ns.script)) if ns.script else os.getcwd()
    try:
        packages = tuple(resolve_package(spec, first) for spec in ns.no_breaks_in)
    except LookupError as e:
        say(f"pt2-explorer check: error: --no-breaks-in {e}")
        return 2
    rules = Rules(packages, ns.max_breaks, ns.max_recompiles, ns.min_speedup, ns.count_torch_breaks)

    def verdict(report) -> bool:
        result = check_report(report, rules)
        failed = program_failed(report)
        text = result.text
        if failed is not None and result.passed:  # a program that failed passes no check
            text = text.replace("check: passed (", f"check: not passed: the program ended with {failed} (", 1)
        for line in text.splitlines():
            say(line)
        return result.passed and failed is None

    return record(ns, check=verdict)


def program_failed(report) -> str | None:
    """The exception that ended the program, where it did not end well (``sys.exit(0)`` and
    ``sys.exit()`` did); None where it did."""
    error = report.error
    if error is None or error in ("SystemExit", "SystemExit: 0", "SystemExit: None"):
        return None
    return error


def _count(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number, 0 or more")
    return n


def _speedup(text: str) -> float:
    import math

    try:
        x = float(text)
    except ValueError:
        x = math.nan
    if not (math.isfinite(x) and x > 0):
        raise argparse.ArgumentTypeError(f"{text!r}: give a ratio above 0, e.g. 1.1")
    return x

"""pt2-explorer: record a script's compiles, convert TORCH_TRACE logs, print reports.

pt2-explorer record [--json OUT] [--html OUT] [--baseline R.json] [-q] [--bench] [--fresh] [--triton-ir] [--fusion-ir] [--fusion-log] SCRIPT [ARGS...]
pt2-explorer record [OPTIONS] -m MODULE [ARGS...]
        run SCRIPT (or MODULE) as __main__ as python would, and record every compile in it;
        the tool's options come before SCRIPT: everything after it is the script's own
pt2-explorer check [--no-breaks-in PKG]... [--max-breaks N] [--max-recompiles N] [OPTIONS] SCRIPT [ARGS...]
        record SCRIPT (or -m MODULE) as `record` does, then fail (exit 1) when a rule is broken:
        a graph break in package PKG, more break sites or recompiles than N; each offending
        site one line on stderr (`pt2-explorer check -h`; docs/check.md)
pt2-explorer advise [--compile-time] [--out DIR] [--try NAME,...] [--only NAME,...] [--jobs N] [--reps N] (SCRIPT | -m MODULE) [ARGS...]
        run the program as record --bench does, then again with each fix its verdict calls
        for, each in a fresh process; the measured fixes, best first (docs/advise.md);
        --compile-time: the fixes for compile time (regional compilation, dynamic=True,
        max-autotune, compile threads, warm caches, portable cache artifacts), each run with
        cold caches and again warm; most compile time saved first
pt2-explorer numerics [--max-runs N] [--steps N] [--json OUT] [--html OUT] [-q] SCRIPT [ARGS...]
        run the program as record --bench does, then compare each compiled function against
        eager on its last call: each output's error, the first module that diverges, the cause
        and the fix (docs/numerics.md)
pt2-explorer load TRACE --json OUT [--rank N] [--strict]
        read TORCH_TRACE logs (file or directory)
pt2-explorer report REPORT.json [--fill [--trust]] print the summary of a saved report
pt2-explorer report REPORT.json --view VIEW [--compile ID]
        one view as text (`pt2-explorer report -h` lists them); a compile's or a stage's view
        is of --compile ID (default: the compile with the most kernels); in a terminal, laid
        out to its width (table text wrapped inside the cells, a name too long for its column cut
        in its middle with "…", a place's file:line whole; a code or IR line goes on after ↪)
pt2-explorer report REPORT.json --view codegen [--kernel NAME]
        a compile's kernel and extern-call tables and each code block's size; --kernel: one
        kernel's code (or a wrapper module's: --kernel "forward wrapper")
pt2-explorer report DIR --view ranks              every rank of a torchrun job, side by side
pt2-explorer diff A.json B.json [--full]          what changed between two reports (and why a
        warm start missed its cache: the key components that differ)
pt2-explorer repro REPORT.json --compile ID [--backward] [-o repro.py]
        save torch's runnable repro of one compile (the graph Inductor got, its config, inputs);
pt2-explorer repro REPORT.json --break N [-o break.py]
        a starting point for reproducing graph break site N (as numbered in --view breaks)
pt2-explorer census --zoo hf-small [--jobs N [--gpus LIST] | --ray ADDRESS] [--shard i/n] [--out DIR]
        every model of a zoo (or your own: --models FILE) compiled in its own process, one
        table; `census show | merge | diff` (`pt2-explorer census -h`, docs/census.md)
"""

from __future__ import annotations

import argparse
import os
import sys

from explorer.cli._advise import ADVISE_USAGE, ADVISE_VALUED, advise, advise_options
from explorer.cli._check import CHECK_USAGE, CHECK_VALUED, check, check_options
from explorer.cli._numerics import NUMERICS_USAGE, NUMERICS_VALUED, numerics, numerics_options
from explorer.cli._out import error, output_is_input, save_html, saving, say, warned, write_all
from explorer.cli._record import RECORD_USAGE, RECORD_VALUED, record, record_options, split_record

USAGE = __doc__


# the commands that run a program: their options, then SCRIPT or -m MODULE, then the program's
# (``main`` splits them with ``split_record``; -h shows SCRIPT and -m as argparse would)
_RUNS_A_PROGRAM = {
    "record": (
        RECORD_USAGE,
        record_options,
        RECORD_VALUED,
        "run a script as __main__ and record every torch.compile in it",
    ),
    "check": (
        CHECK_USAGE,
        check_options,
        CHECK_VALUED,
        "record a script, then fail when a rule is broken (a graph break in your package, ...)",
    ),
    "advise": (
        ADVISE_USAGE,
        advise_options,
        ADVISE_VALUED,
        "run a script as record --bench does, then once per fix its verdict calls for: measured, best first",
    ),
    "numerics": (
        NUMERICS_USAGE,
        numerics_options,
        NUMERICS_VALUED,
        "run a script as record --bench does, then say where each compiled function diverges from eager, and why",
    ),
}


def _parser() -> argparse.ArgumentParser:
    from explorer.views._registry import help_lines, names  # the views: one registry

    p = argparse.ArgumentParser(
        prog="pt2-explorer",
        description="See what torch.compile did: graphs, graph breaks, recompiles, kernels.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=USAGE,
    )
    sub = p.add_subparsers(
        dest="command", required=True, metavar="{record,check,advise,numerics,load,report,diff,repro,census}"
    )
    for name, (usage, options, _, about) in _RUNS_A_PROGRAM.items():
        run = sub.add_parser(name, help=about, usage=usage)
        options(run)
        run.add_argument("script", nargs="?", help="the Python script to run (as `python SCRIPT ARGS...`)")
        run.add_argument(
            "-m", dest="module", metavar="MODULE", help="run a module (as `python -m MODULE ARGS...`)"
        )
        run.add_argument(
            "args", nargs=argparse.REMAINDER, help="the script's own arguments, passed untouched"
        )
    lo = sub.add_parser("load", help="read TORCH_TRACE logs into a report")
    lo.add_argument("trace", help="a TORCH_TRACE log file or directory")
    lo.add_argument("--json", metavar="OUT", help="write the report JSON here")
    lo.add_argument("--html", metavar="OUT", help="write the static HTML report here")
    lo.add_argument("--rank", type=int, help="which rank's log (default: the lowest)")
    lo.add_argument(
        "--strict",
        action="store_true",
        help="refuse a log that is cut off or has events not as torch wrote them (default: load, warn)",
    )
    lo.add_argument("-q", "--quiet", action="store_true")
    rep = sub.add_parser("report", help="print the summary of a saved report")
    rep.add_argument("report", help="a report JSON file (--view ranks: also a directory of rank reports)")
    rep.add_argument("--html", metavar="OUT", help="write the static HTML report here")
    rep.add_argument(
        "--fill",
        action="store_true",
        help="fill in what cache hits skipped (each such compile's runnable compiled cold in a fresh "
        "process, checked against the cached code) and write the report back; only a report your "
        "own recording made, else with --trust",
    )
    rep.add_argument(
        "--trust",
        action="store_true",
        help="with --fill: run the runnable code of a report your recording did not make (another "
        "user's, edited, crafted), after printing it",
    )
    rep.add_argument(
        "--relative-paths",
        metavar="ROOT",
        help="rewrite the report's paths relative to ROOT (your project), an installed package's as "
        "site-packages/..., and write the report back: a report to share without this machine's paths",
    )
    rep.add_argument(
        "--view",
        choices=names(),
        default="summary",
        help=f"what to print (default: the summary). {help_lines()}",
    )
    rep.add_argument(
        "--compile",
        metavar="ID",
        help="the compile of a compiles or stage view, e.g. 1/0 (default: most kernels)",
    )
    rep.add_argument(
        "--kernel",
        metavar="NAME",
        help="--view codegen: print this kernel's code (a name from its kernel table), or a "
        "wrapper module's ('forward wrapper'); default: the tables, each code block's size",
    )
    d = sub.add_parser("diff", help="what changed between two saved reports (and why a warm start missed)")
    d.add_argument("a", help="a report JSON file")
    d.add_argument("b", help="another report JSON file")
    d.add_argument(
        "--full", action="store_true", help="also print every changed section (default: the summary)"
    )
    from explorer.cli._repro import repro_parser

    repro_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "census":  # its own subcommands (explorer/cli/_census.py)
        from explorer.cli._census import main as census_main

        return census_main(argv[1:])
    if argv and argv[0] in _RUNS_A_PROGRAM:
        usage, options, valued, _ = _RUNS_A_PROGRAM[argv[0]]
        ours, script, module, script_args = split_record(argv[1:], valued)
        p = argparse.ArgumentParser(prog=f"pt2-explorer {argv[0]}", usage=usage)
        options(p)
        ns = p.parse_args(ours)
        if script is None and module is None:
            p.error("give the script to run (SCRIPT, or -m MODULE) after the options")
        ns.command, ns.script, ns.module, ns.args = argv[0], script, module, script_args
    else:
        ns = _parser().parse_args(argv)
    clobbered = output_is_input(ns)
    if clobbered:  # before anything runs: the user's script or report would be overwritten
        say(f"pt2-explorer: error: {clobbered}")
        return 2
    import compiler  # reading (load, report) imports no torch

    if ns.command == "record":
        return record(ns)
    if ns.command == "check":
        return check(ns)
    if ns.command == "advise":
        return advise(ns)
    if ns.command == "numerics":
        return numerics(ns)
    if ns.command == "load":
        return _load(ns, compiler)
    if ns.command == "diff":
        return _diff(ns, compiler)
    if ns.command == "repro":
        from explorer.cli._repro import repro_main

        return repro_main(ns, error)
    return _report(ns, compiler)


def _diff(ns, compiler) -> int:
    """The two reports' differences: the summary (frames, compiles, breaks, recompiles, cache
    answers and the key components that differ), and with --full every changed section."""
    from explorer.diffs._diff import diff
    from explorer.diffs._timediff import grown
    from explorer.lower._terminal import echo

    reports = []
    for path in (ns.a, ns.b):
        try:
            reports.append(warned(lambda path=path: compiler.load(path)))
        except (OSError, ValueError) as e:
            say(f"pt2-explorer: error: {e}")
            return 2
    d = diff(reports[0], reports[1], labels=(ns.a, ns.b))
    text = str(d) if ns.full else "\n".join([d.title, *(f"  {s}" for s in d.summary), *grown(d)]) + "\n"
    echo(text)
    return 0


def _print_summary(report, title: str) -> None:
    from explorer.views._registry import Subject, view

    view("summary").terminal(Subject(report, title))


def _load(ns, compiler) -> int:
    try:
        report = warned(lambda: compiler.load_trace(ns.trace, rank=ns.rank, strict=ns.strict))
    except (OSError, ValueError) as e:  # TraceFormatError, missing, unreadable, a directory
        return error(e)
    written, ok = write_all(ns, report, ns.trace)
    if not ns.quiet:
        _print_summary(report, ns.trace)
    for out in written:
        print(f"report: {out}")
    return 0 if ok else 1


def _report(ns, compiler) -> int:

    if ns.view == "ranks":  # a directory of per-rank reports (or TORCH_TRACE logs), or one report
        return _ranks_report(ns)
    from explorer.cli._fill import identity

    read = identity(ns.report)  # the file read: --fill writes it back only while it still is
    try:
        report = warned(lambda: compiler.load(ns.report))
    except (OSError, ValueError) as e:  # ReportFormatError, missing, unreadable, a directory
        # a compare_modes result (ModeComparison.save)? only a regular file is read again
        modes = _modes_file(ns.report, compiler) if os.path.isfile(ns.report) else None
        if modes is None:
            return error(e)
        from explorer.lower._terminal import echo
        from explorer.pages._modes import modes_text, save_modes_html

        echo(modes_text(modes))
        pages: list[str] = []
        if ns.html and not saving(ns.html, lambda: pages.extend(save_modes_html(modes, ns.html))):
            return 1
        if pages:
            print("report: " + ", ".join(pages))
        return 0
    if ns.fill:
        from explorer.cli._fill import fill_report

        report = fill_report(report, ns.report, read, trust=ns.trust)
        if report is None:
            return 1
    if ns.relative_paths is not None:
        if not ns.relative_paths:
            return error(ValueError("--relative-paths: an empty ROOT; give your project's directory"))
        report = compiler.relative_paths(report, ns.relative_paths)
        if not saving(ns.report, lambda: report.to_json(ns.report)):
            return 1
        print(f"report: {ns.report} (paths relative to {ns.relative_paths})")
    if ns.kernel and ns.view == "summary":  # --kernel NAME alone: that kernel's code
        ns.view = "codegen"
    if ns.kernel and ns.view != "codegen":
        return error(ValueError(f"--kernel is a kernel of --view codegen, not of --view {ns.view}"))
    from explorer.views._registry import Subject, view

    shown = view(ns.view)
    try:  # a text view made at the terminal's width (View.terminal, explorer.lower._fit)
        shown.terminal(Subject(report, ns.report, ns.compile, kernel=ns.kernel))
    except ValueError as e:  # no such compile, no such kernel
        return error(e)
    if ns.view == "summary":  # what cache hits left out, and the command, with this report's path
        from explorer.lower._terminal import echo
        from explorer.model._speed import fill_command

        if (fill := fill_command(report, ns.report)) is not None:
            echo(fill + "\n")  # in a terminal, wrapped at its width
    if ns.html:
        if not saving(ns.html, lambda: save_html(report, ns.html, ns.report)):
            return 1
        print(f"report: {ns.html}")
    return 0


def _ranks_report(ns) -> int:
    from compiler import load_ranks
    from compiler._viewer import write_file
    from explorer.lower._terminal import echo
    from explorer.views._ranks import build_ranks_view, ranks_page, ranks_text

    try:
        report = warned(lambda: load_ranks(ns.report))
    except (OSError, ValueError) as e:
        return error(e)
    echo(ranks_text(build_ranks_view(report, ns.report)))
    if ns.html:
        if not saving(ns.html, lambda: write_file(ns.html, ranks_page(report, ns.report))):
            return 1
        print(f"report: {ns.html}")
    return 0


def _modes_file(path: str, compiler):
    """The ModeComparison saved at ``path``, or None when it is not one (read without torch;
    an ImportError is a broken install, not a file that is no comparison: it is not caught)."""
    try:
        return compiler.load_modes(path)
    except (OSError, ValueError):  # ReportFormatError: no saved comparison either
        return None

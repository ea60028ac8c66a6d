"""pt2-explorer: record a script's compiles, convert TORCH_TRACE logs, print reports.

pt2-explorer record [--json OUT] [--html OUT] [-q] [--keep-caches] [--triton-ir] [--fusion-ir] [--fusion-log] SCRIPT [ARGS...]
pt2-explorer record [OPTIONS] -m MODULE [ARGS...]
        run SCRIPT (or MODULE) as __main__ as python would, and record every compile in it;
        the tool's options come before SCRIPT: everything after it is the script's own
pt2-explorer load TRACE --json OUT [--rank N] [--strict]
        read TORCH_TRACE logs (file or directory)
pt2-explorer report REPORT.json                   print the summary of a saved report
pt2-explorer report REPORT.json --view VIEW [--compile ID]
        one view as text (`pt2-explorer report -h` lists them); a compile's or a stage's view
        is of --compile ID (default: the compile with the most kernels)
pt2-explorer report DIR --view ranks              every rank of a torchrun job, side by side
pt2-explorer diff A.json B.json [--full]          what changed between two reports (and why a
        warm start missed its cache: the key components that differ)
pt2-explorer repro REPORT.json --compile ID [--backward] [-o repro.py]
        save torch's runnable repro of one compile (the graph Inductor got, its config, inputs);
pt2-explorer repro REPORT.json --break N [-o break.py]
        a starting point for reproducing graph break site N (as numbered in --view breaks)
pt2-explorer census --zoo hf-small [--jobs N | --ray ADDRESS] [--shard i/n] [--out DIR]
        every model of a zoo (or your own: --models FILE) compiled in its own process, one
        table; `census show | merge | diff` (`pt2-explorer census -h`, docs/census.md)
"""

from __future__ import annotations

import argparse
import os
import sys

from explorer import _program, _supervise

USAGE = __doc__
RECORD_USAGE = "pt2-explorer record [--json OUT] [--html OUT] [-q] [--keep-caches] [--triton-ir] [--fusion-ir] [--fusion-log] (SCRIPT | -m MODULE) [ARGS...]"


def _parser() -> argparse.ArgumentParser:
    from explorer._registry import NAMES, help_lines  # the views: one registry

    p = argparse.ArgumentParser(
        prog="pt2-explorer",
        description="See what torch.compile did: graphs, graph breaks, recompiles, kernels.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=USAGE,
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="{record,load,report,diff,repro,census}")
    r = sub.add_parser(
        "record",
        help="run a script as __main__ and record every torch.compile in it",
        usage=RECORD_USAGE,
    )
    _record_options(r)
    r.add_argument("script", nargs="?", help="the Python script to run (as `python SCRIPT ARGS...`)")
    r.add_argument("-m", dest="module", metavar="MODULE", help="run a module (as `python -m MODULE ARGS...`)")
    r.add_argument("args", nargs=argparse.REMAINDER, help="the script's own arguments, passed untouched")
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
        "--view",
        choices=NAMES,
        default="summary",
        help=f"what to print (default: the summary). {help_lines()}",
    )
    rep.add_argument(
        "--compile",
        metavar="ID",
        help="the compile of a compiles or stage view, e.g. 1/0 (default: most kernels)",
    )
    d = sub.add_parser("diff", help="what changed between two saved reports (and why a warm start missed)")
    d.add_argument("a", help="a report JSON file")
    d.add_argument("b", help="another report JSON file")
    d.add_argument(
        "--full", action="store_true", help="also print every changed section (default: the summary)"
    )
    from explorer._repro import repro_parser

    repro_parser(sub)
    return p


def _record_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", metavar="OUT", help="write the report JSON here")
    p.add_argument("--html", metavar="OUT", help="write the static HTML report here")
    p.add_argument(
        "--keep-caches",
        action="store_true",
        help="leave Inductor/AOTAutograd caches on (cache hits skip stages)",
    )
    p.add_argument(
        "--triton-ir",
        action="store_true",
        help="keep every Triton kernel's IR, registers and spills (GPU; kernels compile one at a time)",
    )
    p.add_argument(
        "--fusion-ir",
        action="store_true",
        help="keep Inductor's IR before and after fusion (rendered after the compile: 5-15%% of its time)",
    )
    p.add_argument(
        "--fusion-log",
        action="store_true",
        help="keep Inductor's fusion decisions (its fusion loggers at debug level: ~8%% of a compile)",
    )
    p.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no summary: one line on stderr naming the files written",
    )


def _split_record(argv: list[str]) -> tuple[list[str], str | None, str | None, list[str]]:
    """``record``'s own options, then SCRIPT or ``-m MODULE``; what follows is the script's,
    untouched (as with python, torchrun and py-spy)."""
    ours: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--json", "--html") and i + 1 < len(argv):
            ours += argv[i : i + 2]
            i += 2
        elif a == "-m" and i + 1 < len(argv):
            return ours, None, argv[i + 1], argv[i + 2 :]
        elif a.startswith("-m") and len(a) > 2:  # python's -mMODULE
            return ours, None, a[2:], argv[i + 1 :]
        elif a == "--" and i + 1 < len(argv):
            return ours, argv[i + 1], None, argv[i + 2 :]
        elif a.startswith("-"):
            ours.append(a)  # argparse names an unknown option
            i += 1
        else:
            return ours, a, None, argv[i + 1 :]
    return ours, None, None, []


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "census":  # its own subcommands (explorer/census/_cli.py)
        from explorer.census._cli import main as census_main

        return census_main(argv[1:])
    if argv and argv[0] == "record":
        ours, script, module, script_args = _split_record(argv[1:])
        p = argparse.ArgumentParser(prog="pt2-explorer record", usage=RECORD_USAGE)
        _record_options(p)
        ns = p.parse_args(ours)
        if script is None and module is None:
            p.error("give the script to run (SCRIPT, or -m MODULE) after the options")
        ns.command, ns.script, ns.module, ns.args = "record", script, module, script_args
    else:
        ns = _parser().parse_args(argv)
    clobbered = _output_is_input(ns)
    if clobbered:  # before anything runs: the user's script or report would be overwritten
        _say(f"pt2-explorer: error: {clobbered}")
        return 2
    import compiler  # reading (load, report) imports no torch

    if ns.command == "record":
        return _record(ns)
    if ns.command == "load":
        return _load(ns, compiler)
    if ns.command == "diff":
        return _diff(ns, compiler)
    if ns.command == "repro":
        from explorer._repro import repro_main

        return repro_main(ns, _error)
    return _report(ns, compiler)


def _diff(ns, compiler) -> int:
    """The two reports' differences: the summary (frames, compiles, breaks, recompiles, cache
    answers and the key components that differ), and with --full every changed section."""
    from explorer import diff
    from explorer._summary import echo

    reports = []
    for path in (ns.a, ns.b):
        try:
            reports.append(compiler.load(path))
        except (OSError, ValueError) as e:
            _say(f"pt2-explorer: error: {e}")
            return 2
    d = diff(reports[0], reports[1], labels=(ns.a, ns.b))
    text = str(d) if ns.full else "\n".join([d.title, *(f"  {s}" for s in d.summary)]) + "\n"
    echo(text)
    return 0


def _record(ns) -> int:
    import compiler

    if ns.script is not None and not os.path.isfile(ns.script):
        print(f"pt2-explorer: can't open file {ns.script!r}: no such file", file=sys.stderr)
        return 2
    title = ns.script or ns.module
    rank, world_size = _program.torchrun_rank()
    if rank is not None:  # under torchrun: one report per rank, its rank in the file name
        title = f"{title} (rank {rank} of {world_size})"
        ns.json = ns.json and compiler.rank_path(ns.json, rank)
        ns.html = ns.html and compiler.rank_path(ns.html, rank)

    def leave(report) -> bool:  # write and print the report; False where a write failed
        return _leave_report(report, ns, title, rank, world_size)

    # the program runs in a child: where it dies before writing its report, this process
    # builds the report from the recording's journal (explorer/_supervise.py)
    sup = _supervise.Supervisor.beside(ns.json or ns.html) if _supervise.available() else None
    try:
        if sup is not None and sup.fork():
            return sup.finish(leave)
    except OSError:  # no fork to be had: the program runs in this process
        sup = None
    try:
        compiler.recording  # noqa: B018 - imports torch and checks its version
    except Exception as e:  # UnsupportedTorchVersion, no or broken torch install
        print(f"pt2-explorer: {e}", file=sys.stderr)
        return 2
    _program.warn_shadowing(os.path.dirname(os.path.abspath(ns.script)) if ns.script else os.getcwd())
    rec = compiler.recording(
        caches=ns.keep_caches,
        journal=sup.journal if sup else None,
        triton_ir=ns.triton_ir,
        fusion_ir=ns.fusion_ir,
        fusion_logs=ns.fusion_log,
    )
    if sup is not None:
        sup.started(sys.modules["torch"].__version__)
    pid = os.getpid()
    exit_code, interrupted, terminated = _program.run(rec, ns.script, ns.module, ns.args, sup)
    if os.getpid() != pid:  # a forked copy of the program ended here: as python's would, no report
        _program.die_as_the_program_would(interrupted, terminated)
        return exit_code
    try:
        report = rec.report
        if report is None:  # pragma: no cover - recording always leaves a report
            print("pt2-explorer: no report was produced", file=sys.stderr)
            return exit_code or 1
        ok = leave(report)
    finally:
        if sup is not None:
            sup.done()
    _program.die_as_the_program_would(interrupted, terminated)
    # a report that could not be written fails a run that succeeded; a program that failed
    # keeps its own exit code
    return exit_code or (0 if ok else 1)


def _leave_report(report, ns, title: str, rank: int | None, world_size: int | None) -> bool:
    """Write and print the report (the program's process, or this one from the journal);
    False where a write failed (one error line each)."""
    from explorer._summary import print_summary

    report = _program.without_launcher(report)  # stacks start at the program, as under python
    if rank is not None:
        import dataclasses

        report = dataclasses.replace(report, rank=rank, world_size=world_size)
    written, ok = _write_all(ns, report, title)
    if not ns.quiet:
        print_summary(report, title=title)
        for out in written:
            print(f"report: {out}")
    elif written:  # -q: the program's own output, then one line on stderr of what we wrote
        _say(f"pt2-explorer: wrote {', '.join(written)}")
    return ok


def _write_all(ns, report, title: str) -> tuple[list[str], bool]:
    """Write --json and --html (each whole or not at all); a failure is one error line.
    Returns the paths written, and whether every one asked for was."""
    written = []
    if ns.json and _saving(ns.json, lambda: report.to_json(ns.json)):
        written.append(ns.json)
    if ns.html and _saving(ns.html, lambda: _save_html(report, ns.html, title)):
        written.append(ns.html)
    return written, len(written) == bool(ns.json) + bool(ns.html)


def _saving(path: str, write) -> bool:
    """Run ``write`` (which writes ``path``) after making its directory; an OSError is one line
    `pt2-explorer: error: cannot write PATH: REASON` on stderr and False."""
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        write()
        return True
    except OSError as e:
        reason = e.strerror or str(e)
        if e.filename and os.path.abspath(os.fspath(e.filename)) != os.path.abspath(path):
            reason += f": {os.fspath(e.filename)}"  # a directory of the path: the file in the way
        _say(f"pt2-explorer: error: cannot write {path}: {reason}")
        return False


def _save_html(report, path: str, title: str) -> None:
    from explorer import save_html

    save_html(report, path, title=title)


def _same_file(a: str, b: str) -> bool:
    """Both name one existing file (through links, relative paths, hard links)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):  # one does not exist (an output not written yet)
        return False


def _output_is_input(ns) -> str | None:
    """The usage error where --json / --html name the input (the script, the trace, the
    report): writing would destroy it. Under torchrun each rank writes its own name."""
    import compiler  # reading and names: no torch

    source = {"record": "script", "load": "trace", "report": "report", "repro": "report"}.get(ns.command)
    if source is None:  # writes nothing
        return None
    given = getattr(ns, source, None)
    rank = _program.torchrun_rank()[0] if ns.command == "record" else None
    for opt in ("json", "html", "out"):
        out = getattr(ns, opt, None)
        if out and rank is not None:
            out = compiler.rank_path(out, rank)
        if out and given and _same_file(out, given):
            return f"--{opt} {out} is the {source} itself: refusing to overwrite it"
    return None


def _print_summary(report, title: str) -> None:
    """The summary; for a distributed job, where the ranks diverge first."""
    if report.ranks:
        from explorer import text
        from explorer._summary import echo

        echo(text(report, title=title))
    else:
        from explorer._summary import print_summary

        print_summary(report, title=title)


def _load(ns, compiler) -> int:
    import warnings

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            report = compiler.load_trace(ns.trace, rank=ns.rank, strict=ns.strict)
        for w in caught:
            _say(f"pt2-explorer: warning: {w.message}")
    except (OSError, ValueError) as e:  # TraceFormatError, missing, unreadable, a directory
        return _error(e)
    written, ok = _write_all(ns, report, ns.trace)
    if not ns.quiet:
        _print_summary(report, ns.trace)
    for out in written:
        print(f"report: {out}")
    return 0 if ok else 1


def _report(ns, compiler) -> int:

    if ns.view == "ranks":  # a directory of per-rank reports (or TORCH_TRACE logs), or one report
        return _ranks_report(ns)
    try:
        report = compiler.load(ns.report)
    except (OSError, ValueError) as e:  # ReportFormatError, missing, unreadable, a directory
        # a compare_modes result (ModeComparison.save)? only a regular file is read again
        modes = _modes_file(ns.report, compiler) if os.path.isfile(ns.report) else None
        if modes is None:
            return _error(e)
        from explorer._modesview import modes_text, save_modes_html
        from explorer._summary import echo

        echo(modes_text(modes))
        pages: list[str] = []
        if ns.html and not _saving(ns.html, lambda: pages.extend(save_modes_html(modes, ns.html))):
            return 1
        if pages:
            print("report: " + ", ".join(pages))
        return 0
    if ns.view == "summary":
        _print_summary(report, ns.report)
    else:
        from explorer import text
        from explorer._summary import echo

        try:
            echo(text(report, ns.view, title=ns.report, compile=ns.compile))
        except ValueError as e:  # no such compile
            return _error(e)
    if ns.html:
        if not _saving(ns.html, lambda: _save_html(report, ns.html, ns.report)):
            return 1
        print(f"report: {ns.html}")
    return 0


def _ranks_report(ns) -> int:
    from compiler import load_ranks, write_file
    from explorer._ranksview import build_ranks_view, ranks_page, ranks_text
    from explorer._summary import echo

    try:
        report = load_ranks(ns.report)
    except (OSError, ValueError) as e:
        return _error(e)
    echo(ranks_text(build_ranks_view(report, ns.report)))
    if ns.html:
        if not _saving(ns.html, lambda: write_file(ns.html, ranks_page(report, ns.report))):
            return 1
        print(f"report: {ns.html}")
    return 0


def _error(e: Exception) -> int:
    """A file that cannot be read: one line on stderr, exit status 2, no traceback."""
    msg = f"{e.filename}: {e.strerror}" if isinstance(e, OSError) and e.filename and e.strerror else str(e)
    _say(f"pt2-explorer: error: {' '.join(msg.splitlines())}")
    return 2


def _say(line: str) -> None:
    """One line on stderr, its control characters escaped (it may quote a report or a trace)."""
    from explorer._summary import printable

    print(printable(line), file=sys.stderr)


def _modes_file(path: str, compiler):
    """The ModeComparison saved at ``path``, or None when it is not one (read without torch;
    an ImportError is a broken install, not a file that is no comparison: it is not caught)."""
    try:
        return compiler.load_modes(path)
    except (OSError, ValueError):  # ReportFormatError: no saved comparison either
        return None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

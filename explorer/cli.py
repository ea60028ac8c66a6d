"""pt2-explorer: record a script's compiles, convert TORCH_TRACE logs, print reports.

pt2-explorer record SCRIPT [ARGS...] --json OUT   run SCRIPT as __main__, record every compile
pt2-explorer load TRACE --json OUT [--rank N]     read TORCH_TRACE logs (file or directory)
pt2-explorer report REPORT.json                   print the summary of a saved report
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys
import traceback

USAGE = __doc__


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="pt2-explorer",
        description="See what torch.compile did: graphs, graph breaks, recompiles, kernels.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=USAGE,
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="{record,load,report}")
    r = sub.add_parser("record", help="run a script as __main__ and record every torch.compile in it")
    r.add_argument("--json", metavar="OUT", help="write the report JSON here")
    r.add_argument("--html", metavar="OUT", help="write the static HTML report here")
    r.add_argument(
        "--keep-caches",
        action="store_true",
        help="leave Inductor/AOTAutograd caches on (cache hits skip stages)",
    )
    r.add_argument("-q", "--quiet", action="store_true", help="do not print the summary")
    r.add_argument("script", help="the Python script to run")
    r.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the script")
    lo = sub.add_parser("load", help="read TORCH_TRACE logs into a report")
    lo.add_argument("trace", help="a TORCH_TRACE log file or directory")
    lo.add_argument("--json", metavar="OUT", help="write the report JSON here")
    lo.add_argument("--html", metavar="OUT", help="write the static HTML report here")
    lo.add_argument("--rank", type=int, help="which rank's log (default: the lowest)")
    lo.add_argument("-q", "--quiet", action="store_true")
    rep = sub.add_parser("report", help="print the summary of a saved report")
    rep.add_argument("report", help="a report JSON file")
    rep.add_argument("--html", metavar="OUT", help="write the static HTML report here")
    rep.add_argument(
        "--view",
        choices=("summary", "breaks", "recompiles", "bench"),
        default="summary",
        help="what to print (default: the summary)",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ns = _parser().parse_args(argv)
    try:
        import compiler
    except Exception as e:  # UnsupportedTorchVersion, broken torch install
        print(f"pt2-explorer: {e}", file=sys.stderr)
        return 2
    if ns.command == "record":
        return _record(ns)
    if ns.command == "load":
        return _load(ns, compiler)
    return _report(ns, compiler)


def _record(ns) -> int:
    import compiler
    from explorer._summary import print_summary

    script_args, trailing = _trailing(ns.args)
    json_out = trailing.get("json", ns.json)
    html_out = trailing.get("html", ns.html)
    quiet = ns.quiet or bool(trailing.get("quiet"))
    keep = ns.keep_caches or bool(trailing.get("keep_caches"))
    script = ns.script
    if not os.path.isfile(script):
        print(f"pt2-explorer: script not found: {script}", file=sys.stderr)
        return 2
    exit_code = 0
    rec = compiler.recording(caches=keep)
    old_argv, old_path0 = sys.argv, sys.path[0] if sys.path else None
    sys.argv = [script, *script_args]
    script_dir = os.path.dirname(os.path.abspath(script))
    sys.path.insert(0, script_dir)
    try:
        with rec:
            runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        exit_code = _exit_code(e.code)
    except KeyboardInterrupt:
        print("pt2-explorer: interrupted; writing the partial report", file=sys.stderr)
        exit_code = 130
    except BaseException:
        # the script's own traceback, as python would print it (without our frames)
        etype, value, tb = sys.exc_info()
        while tb is not None and tb.tb_frame.f_code.co_filename != os.path.abspath(script):
            tb = tb.tb_next
        traceback.print_exception(etype, value, tb or value.__traceback__)
        exit_code = 1
    finally:
        sys.argv = old_argv
        if sys.path and sys.path[0] == script_dir:
            sys.path.pop(0)
        elif old_path0 is not None and script_dir in sys.path:
            sys.path.remove(script_dir)
    report = rec.report
    if report is None:  # pragma: no cover - recording always leaves a report
        print("pt2-explorer: no report was produced", file=sys.stderr)
        return exit_code or 1
    if json_out:
        _write(report, json_out)
    if html_out:
        _write_html(report, html_out, script)
    if not quiet:
        print_summary(report, title=script)
    for out in (json_out, html_out):
        if out:
            print(f"report: {out}")
    return exit_code


def _trailing(args: list[str]) -> tuple[list[str], dict[str, str | bool]]:
    ours: dict[str, str | bool] = {}
    out = list(args)
    if out and out[0] == "--":
        out = out[1:]
    while out:
        if len(out) >= 2 and out[-2] in ("--json", "--html"):
            ours[out[-2][2:]] = out[-1]
            del out[-2:]
        elif out[-1].startswith(("--json=", "--html=")):
            key, _, value = out.pop()[2:].partition("=")
            ours[key] = value
        elif out[-1] == "--keep-caches":
            out.pop()
            ours["keep_caches"] = True
        elif out[-1] in ("-q", "--quiet"):
            out.pop()
            ours["quiet"] = True
        else:
            break
    return out, ours


def _exit_code(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _write(report, path: str) -> None:
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    report.to_json(path)


def _write_html(report, path: str, title: str) -> None:
    from explorer import save_html

    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    save_html(report, path, title=title)


def _load(ns, compiler) -> int:
    import warnings

    from explorer._summary import print_summary

    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            report = compiler.load_trace(ns.trace, rank=ns.rank)
        for w in caught:
            print(f"pt2-explorer: warning: {w.message}", file=sys.stderr)
    except (FileNotFoundError, ValueError) as e:
        print(f"pt2-explorer: {e}", file=sys.stderr)
        return 2
    if ns.json:
        _write(report, ns.json)
    if ns.html:
        _write_html(report, ns.html, ns.trace)
    if not ns.quiet:
        print_summary(report, title=ns.trace)
    for out in (ns.json, ns.html):
        if out:
            print(f"report: {out}")
    return 0


def _report(ns, compiler) -> int:
    from explorer._summary import print_summary

    try:
        report = compiler.load(ns.report)
    except (FileNotFoundError, ValueError) as e:
        modes = _modes_file(ns.report, compiler)  # a compare_modes result (ModeComparison.save)
        if modes is None:
            print(f"pt2-explorer: {e}", file=sys.stderr)
            return 2
        from explorer._modesview import modes_text, save_modes_html

        print(modes_text(modes), end="")
        if ns.html:
            print("report: " + ", ".join(save_modes_html(modes, ns.html)))
        return 0
    if ns.view == "summary":
        print_summary(report, title=ns.report)
    elif ns.view == "bench":
        from explorer._benchview import bench_text

        print(bench_text(report), end="")
    else:
        from explorer._textview import breaks_text, recompiles_text
        from explorer._view import build_view

        view = build_view(report, ns.report)
        print(breaks_text(view) if ns.view == "breaks" else recompiles_text(view), end="")
    if ns.html:
        _write_html(report, ns.html, ns.report)
        print(f"report: {ns.html}")
    return 0


def _modes_file(path: str, compiler):
    """The ModeComparison saved at ``path``, or None when it is not one."""
    try:
        return compiler.load_modes(path)
    except (OSError, ValueError, KeyError, TypeError):
        return None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""``pt2-explorer repro``: its options, and the file printed or saved: a compile's runnable
repro (explorer/repros/_compile.py) or a graph break's starting point (explorer/repros/_break.py)."""

from __future__ import annotations

import sys


def repro_parser(sub) -> None:
    """``pt2-explorer repro``'s options (explorer/cli/__init__.py)."""
    r = sub.add_parser("repro", help="save a compile's runnable repro, or a graph break's starting point")
    r.add_argument("report", help="a report JSON file")
    what = r.add_mutually_exclusive_group(required=True)
    what.add_argument("--compile", metavar="ID", help="the compile, e.g. 0/1: torch's runnable repro of it")
    what.add_argument(
        "--break", dest="break_site", metavar="FILE:LINE", help="a graph break's site, e.g. model.py:12"
    )
    r.add_argument("--backward", action="store_true", help="the compile's backward graph")
    r.add_argument("-o", "--out", metavar="OUT", help="write it here (default: print it)")


def repro_main(ns, error) -> int:
    """Print or save the repro; a report or a compile that has none: one line, status 2."""
    import compiler
    from compiler._viewer import write_file

    from ..repros._break import break_program
    from ..repros._compile import repro_script
    from ._out import warned

    try:
        report = warned(lambda: compiler.load(ns.report))
        if ns.break_site:
            script = break_program(report, ns.break_site, source=ns.report)
        else:
            script = repro_script(report, ns.compile, backward=ns.backward, source=ns.report)
        if ns.out:
            write_file(ns.out, script)
    except (OSError, ValueError) as e:
        return error(e)
    if ns.out:
        print(f"repro: {ns.out}")
    elif sys.stdout.isatty():  # to be read: its control characters shown, not obeyed
        from ..lower._terminal import printable

        sys.stdout.write(printable(script))
    else:  # to a pipe or a file: the runnable file itself, byte for byte
        sys.stdout.write(script)
    return 0

"""One run of ``pt2-explorer advise``, in its own process: the fix's settings made at start-up
(``compiler._viewer.apply_fix``: torch's config, before the program imports anything), then the program
as ``pt2-explorer record --bench -q --json DIR/report.json`` runs it, as ``__main__``; once it
ended, its compiled functions' last calls are saved (``DIR/outputs.pt``, before the benchmarks
call them again) with any setting the program made over the fix's (``DIR/notes.txt``).

    python -m explorer.cli._adviserun [--fix NAME] [--reps N] DIR (SCRIPT | -m MODULE) [ARGS...]
"""

from __future__ import annotations

import argparse
import os
import sys

REPORT, OUTPUTS, NOTES = "report.json", "outputs.pt", "notes.txt"


def main(argv: list[str]) -> int:
    from explorer.cli._record import record, record_options, split_record

    fix_name, reps = None, None
    while argv and argv[0] in ("--fix", "--reps"):
        if argv[0] == "--fix":
            fix_name = argv[1]
        else:
            reps = int(argv[1])
        argv = argv[2:]
    run_dir, rest = argv[0], argv[1:]
    _ours, script, module, args = split_record(rest)
    p = argparse.ArgumentParser(prog="pt2-explorer advise")
    record_options(p)
    ns = p.parse_args(["--bench", "-q", "--json", os.path.join(run_dir, REPORT)])
    # "advise": as record runs it, but no background fill-in (advise needs none; it would overlap the next run)
    ns.command, ns.script, ns.module, ns.args = "advise", script, module, args

    # torch is imported here in every run, the baseline's too, so that each runs the program
    # the same way (in this process: record forks a supervisor only before torch is imported)
    import torch  # noqa: F401

    import compiler
    from compiler._viewer import apply_fix, save_outputs, settings_overridden

    fix = compiler.analysis.fix_named(fix_name) if fix_name else None
    if fix is not None:
        apply_fix(fix)
        print(f"pt2-explorer: advise: at start-up: {'; '.join(fix.lines)}", file=sys.stderr)

    def after(called) -> None:
        notes = settings_overridden(fix, called) if fix is not None else []
        try:
            save_outputs(called, os.path.join(run_dir, OUTPUTS))
        except Exception as e:  # not the program's failure: the row says its outputs were not compared
            notes.append(f"the last calls' outputs were not saved: {type(e).__name__}: {e}")
        if notes:
            with open(os.path.join(run_dir, NOTES), "w", encoding="utf-8") as f:
                f.write("".join(n + "\n" for n in notes))

    return record(ns, after=after, reps=reps)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

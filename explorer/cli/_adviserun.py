"""One run of ``pt2-explorer advise``, in its own process: the fix's settings made at start-up
(``compiler._viewer.apply_fix``: torch's config, before the program imports anything), then the program
as ``pt2-explorer record --bench -q --json DIR/report.json`` runs it, as ``__main__``; once it
ended, its compiled functions' last calls are saved (``DIR/outputs.pt``, before the benchmarks
call them again) with any setting the program made over the fix's (``DIR/notes.txt``).

    python -m explorer.cli._adviserun [--fix NAME] [--reps N] [--save-artifacts FILE]
        [--load-artifacts FILE] [--no-profile] DIR (SCRIPT | -m MODULE) [ARGS...]

``advise --compile-time``'s runs: ``--load-artifacts`` loads torch's portable cache artifacts
(``torch.compiler.load_cache_artifacts``) at start-up, before the program; ``--save-artifacts``
saves them (``torch.compiler.save_cache_artifacts``) once the program ended, before the
benchmarks compile anything of their own; ``--no-profile``: the benchmarks time the calls and
profile no kernels (the profile compiles the program again: its time is no part of a run's figures).
"""

from __future__ import annotations

import argparse
import os
import sys

REPORT, OUTPUTS, NOTES = "report.json", "outputs.pt", "notes.txt"


def main(argv: list[str]) -> int:
    from explorer.cli._record import record, record_options, split_record

    opts: dict[str, str] = {}
    while argv and argv[0] in ("--fix", "--reps", "--save-artifacts", "--load-artifacts", "--no-profile"):
        if argv[0] == "--no-profile":  # the benchmarks time, and profile nothing
            opts[argv.pop(0)] = ""
            continue
        opts[argv[0]] = argv[1]
        argv = argv[2:]
    fix_name, reps = opts.get("--fix"), int(opts["--reps"]) if "--reps" in opts else None
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

    fix = _fix(compiler, fix_name) if fix_name else None
    if "--load-artifacts" in opts:
        with open(opts["--load-artifacts"], "rb") as f:
            torch.compiler.load_cache_artifacts(f.read())
        print(
            f"pt2-explorer: advise: at start-up: torch.compiler.load_cache_artifacts(<{opts['--load-artifacts']}>)",
            file=sys.stderr,
        )
    if fix is not None and fix.settings:
        apply_fix(fix)
        print(f"pt2-explorer: advise: at start-up: {'; '.join(fix.lines)}", file=sys.stderr)

    def after(called) -> None:
        notes = settings_overridden(fix, called) if fix is not None else []
        if "--save-artifacts" in opts:
            notes += _save_artifacts(torch, opts["--save-artifacts"])
        try:
            save_outputs(called, os.path.join(run_dir, OUTPUTS))
        except Exception as e:  # not the program's failure: the row says its outputs were not compared
            notes.append(f"the last calls' outputs were not saved: {type(e).__name__}: {e}")
        if notes:
            with open(os.path.join(run_dir, NOTES), "w", encoding="utf-8") as f:
                f.write("".join(n + "\n" for n in notes))

    return record(ns, after=after, reps=reps, profile="--no-profile" not in opts)


def _fix(compiler, name: str):
    try:
        return compiler.analysis.fix_named(name)
    except ValueError:
        from compiler._viewer import compile_fix_named

        return compile_fix_named(name)


def _save_artifacts(torch, path: str) -> list[str]:
    """The program's compiles as torch's portable cache artifacts, in ``path``; a note where
    torch saved none."""
    saved = torch.compiler.save_cache_artifacts()
    if saved is None:
        return ["torch.compiler.save_cache_artifacts() saved nothing: no cache artifacts to carry"]
    with open(path, "wb") as f:
        f.write(saved[0])
    return []


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

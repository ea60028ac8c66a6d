"""``pt2-explorer census``: run a census, show one, merge shards, compare two.

pt2-explorer census [--zoo NAME | --models FILE_OR_MODULE]... [--modes eval,train,...]
        [--precision fp32,amp] [--backend B] [--compile-mode M] [--device D] [--timeout S] [--memory GB] [--bench]
        [--jobs N [--gpus LIST] | --ray ADDRESS] [--shard i/n] [--out DIR] [--rerun | --retry] [--html OUT]
pt2-explorer census show CENSUS [--status S] [--family F] [--break-type T] [--sort COL] [--html OUT]
pt2-explorer census merge SHARD_DIR... --out DIR [--html OUT]
pt2-explorer census diff CENSUS_A CENSUS_B [--slower X] [--html OUT]
"""

from __future__ import annotations

import argparse
import math
import os
import sys

from ..census._cases import MODES, PRECISIONS, ZOOS
from ..census._files import MAX_NUMBER


def _run_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="pt2-explorer census",
        description="Compile every model of a list, each in its own process; one table (docs/census.md).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n")[1],
    )
    p.add_argument("--zoo", action="append", default=[], choices=sorted(ZOOS), help="a built-in zoo")
    p.add_argument(
        "--models", action="append", default=[], metavar="FILE_OR_MODULE", help="your models (docs/census.md)"
    )
    p.add_argument("--only", metavar="NAMES", help="these models alone (comma-separated)")
    p.add_argument("--modes", default="eval", help=f"comma-separated, of {', '.join(MODES)} (default: eval)")
    p.add_argument(
        "--precision",
        default="fp32",
        help=f"comma-separated, of {', '.join(PRECISIONS)} (amp: bf16 autocast; default: fp32)",
    )
    p.add_argument("--backend", default="inductor", help="torch.compile's backend (default: inductor)")
    p.add_argument("--compile-mode", help="torch.compile's mode: reduce-overhead, max-autotune, ...")
    p.add_argument("--device", default="cpu", help="where the models run (default: cpu)")
    p.add_argument("--timeout", type=_seconds, default=600, metavar="S", help="per case (default: 600 s)")
    p.add_argument(
        "--memory",
        type=_gigabytes,
        default=16,
        metavar="GB",
        help="address space per case (default: 16; 0: no limit)",
    )
    p.add_argument(
        "--bench", action="store_true", help="time eager against compiled (eval calls and training steps)"
    )
    p.add_argument("--keep-trace", action="store_true", help="also keep torch's TORCH_TRACE log of each case")
    p.add_argument(
        "--fresh",
        action="store_true",
        help="each case cold: an empty compile cache, the caches off (by default the cases keep yours)",
    )
    p.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="cases at a time on this machine (default: what its cores and memory allow; "
        "1 with --bench on the CPU; 1 per GPU on cuda, 2 with --bench)",
    )
    p.add_argument(
        "--gpus",
        metavar="LIST",
        help="with --device cuda: the GPUs the jobs share, as CUDA_VISIBLE_DEVICES names them (default: all seen)",
    )
    p.add_argument(
        "--ray", metavar="ADDRESS", help="run the cases as Ray tasks (`local`: a local Ray instance)"
    )
    p.add_argument("--shard", metavar="i/n", help="run shard i of n (0 <= i < n), e.g. a SLURM array's task")
    p.add_argument("--out", default="census", metavar="DIR", help="the census directory (default: ./census)")
    p.add_argument("--rerun", action="store_true", help="run finished cases again (default: skip them)")
    p.add_argument(
        "--retry",
        action="store_true",
        help="also run again the cases that failed: an error, or with --bench no speedup "
        "(a longer --timeout may go with it)",
    )
    p.add_argument("--title", help="the census's name (shown by its views and diffs)")
    p.add_argument("--html", metavar="OUT", help="also write the census page (and each model's report page)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar, no table")
    return p


def _number(text: str, what: str, least: float, *, equal: bool) -> float:
    """``text`` as a finite number > ``least`` (>= where ``equal``), at most 2**53 (what a
    census file holds); argparse's one-line error otherwise (`argument --timeout: expected a
    number of seconds > 0 (at most 2**53), got 'nan'`)."""
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not ((v >= least if equal else v > least) and v <= MAX_NUMBER):  # False for nan
        op = ">=" if equal else ">"
        raise argparse.ArgumentTypeError(f"expected {what} {op} {least:g} (at most 2**53), got {text!r}")
    return v


def _seconds(text: str) -> float:
    return _number(text, "a number of seconds", 0, equal=False)


def _gigabytes(text: str) -> float:
    return _number(text, "a number of GB", 0, equal=True)


def _show_parser(prog: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog)
    p.add_argument("census", help="a census.json or its directory")
    p.add_argument("--status", help="rows of this status")
    p.add_argument("--family", help="rows of this family")
    p.add_argument("--mode", help="rows of this mode")
    p.add_argument("--break-type", metavar="T", help="rows breaking on this GB id or type (words of it)")
    p.add_argument("--sort", choices=["model", "status", "compile", "breaks", "recompiles", "family"])
    p.add_argument("--html", metavar="OUT", help="write the census page here")
    p.add_argument(
        "--pages",
        action="store_true",
        help="with --html: also each row's report as its own page beside it, linked from its row "
        "(a report's page each, ~13 MB on a GPU census; without it, one line says how many and how large)",
    )
    return p


def main(argv: list[str]) -> int:
    sub = argv[0] if argv else None
    try:
        if sub == "show":
            return _show(_show_parser("pt2-explorer census show").parse_args(argv[1:]))
        if sub == "merge":
            p = argparse.ArgumentParser(prog="pt2-explorer census merge")
            p.add_argument("shards", nargs="+", help="the shards' census directories (or census.json files)")
            p.add_argument("--out", required=True, metavar="DIR")
            p.add_argument("--html", metavar="OUT")
            return _merge(p.parse_args(argv[1:]))
        if sub == "diff":
            p = argparse.ArgumentParser(prog="pt2-explorer census diff")
            p.add_argument("a")
            p.add_argument("b")
            p.add_argument(
                "--slower",
                type=float,
                default=1.25,
                metavar="X",
                help="a compile X times as slow is a regression",
            )
            p.add_argument("--html", metavar="OUT")
            return _diff(p.parse_args(argv[1:]))
        return _run(_run_parser().parse_args(argv))
    except (OSError, ValueError) as e:  # bad input: one line
        msg = f"{e.filename}: {e.strerror}" if isinstance(e, OSError) and e.filename else str(e)
        print(f"pt2-explorer census: error: {msg}", file=sys.stderr)
        return 2


def _refuse(outputs: list[tuple[str, str | None]], inputs: list[tuple[str, str]]) -> None:
    """Before any work: a ValueError (one line, status 2) where an output would replace an
    input (a census read, a models file) or another output."""
    from ._out import refused_output

    clobbered = refused_output([(opt, out) for opt, out in outputs if out], inputs)
    if clobbered:
        raise ValueError(clobbered)


def _refuse_inside(out: str | None, directory: str) -> None:
    """A ValueError (one line, status 2) where ``out`` is an existing file of the census's own
    directory (a model's report, a row): the page would replace it."""
    if not out or not os.path.lexists(out):
        return
    real, home = os.path.realpath(out), os.path.realpath(directory)
    if os.path.commonpath([real, home]) == home:
        raise ValueError(f"--html {out} is a file of the census in {directory}: refusing to overwrite it")


def _census_file(path: str) -> str:
    """The census.json that ``path`` names (itself, or the one in its directory)."""
    return os.path.join(path, "census.json") if os.path.isdir(path) else path


def _run(ns) -> int:
    from ..census import _cases
    from ..census._run import default_jobs, run_census
    from ..census._view import census_text, save_census_html

    models = [("models file", m) for m in ns.models if os.path.isfile(m)]
    _refuse([("--out", os.path.join(ns.out, "census.json")), ("--html", ns.html)], models)
    sources = ns.zoo + ns.models
    if not sources:
        raise ValueError("name the models: --zoo hf-small, or --models FILE_OR_MODULE")
    if ns.ray and ns.jobs is not None:
        raise ValueError("--jobs is for this machine; with --ray the cluster places the tasks")
    if ns.jobs is not None and ns.jobs < 1:
        raise ValueError(f"--jobs {ns.jobs}: expected a number of cases at a time >= 1")
    gpus = [g.strip() for g in ns.gpus.split(",") if g.strip()] if ns.gpus is not None else None
    if gpus is not None and (ns.device != "cuda" or ns.ray or not gpus):
        raise ValueError(f"--gpus {ns.gpus}: names GPUs for --device cuda on this machine (not with --ray)")
    modes = tuple(m.strip() for m in ns.modes.split(",") if m.strip())
    precisions = tuple(p.strip() for p in ns.precision.split(",") if p.strip())
    only = [m.strip() for m in ns.only.split(",")] if ns.only else None
    todo = _cases.cases(sources, modes, only, precisions)
    if ns.shard:
        todo = _cases.shard(todo, *_cases.parse_shard(ns.shard))
    settings = _cases.Settings(
        modes=modes,
        precisions=precisions,
        backend=ns.backend,
        compile_mode=ns.compile_mode,
        device=ns.device,
        timeout_s=ns.timeout,
        memory_gb=ns.memory or None,
        bench=ns.bench,
        keep_trace=ns.keep_trace,
        fresh=ns.fresh,
    )
    census = run_census(
        todo,
        settings,
        ns.out,
        jobs=ns.jobs or default_jobs(settings, gpus),
        gpus=gpus,
        ray_address=ns.ray,
        rerun=ns.rerun,
        retry=ns.retry,
        progress=not ns.quiet,
        title=ns.title,
    )
    if not ns.quiet:
        _echo(lambda: census_text(census))
    if ns.html:
        save_census_html(census, ns.html)
    print(f"census: {census.path}" + (f", {ns.html}" if ns.html else ""))
    return 0


def _show(ns) -> int:
    from ..census._view import census_text, select

    _refuse([("--html", ns.html)], [("census", _census_file(ns.census))])
    _refuse_inside(ns.html, os.path.dirname(os.path.abspath(_census_file(ns.census))))
    if ns.pages and not ns.html:
        print(
            "pt2-explorer census: error: --pages writes the row pages beside the census page: give --html OUT",
            file=sys.stderr,
        )
        return 2
    census = _load(ns.census)
    rows = select(
        census, status=ns.status, family=ns.family, mode=ns.mode, break_type=ns.break_type, sort=ns.sort
    )
    _echo(lambda: census_text(census, rows))
    if ns.html:
        _census_page(census, ns.html, ns.pages)
    return 0


def _census_page(census, path: str, pages: bool) -> None:
    """The census page at ``path`` with a progress line (n of N row pages, the time since the
    start) on stderr, then on stdout what was written, how large, in how long; without
    ``pages``, how many row pages ``--pages`` would write and about how large."""
    import time

    from ..census._rowpages import estimated_bytes, megabytes, row_reports
    from ..census._view import save_census_html

    t0 = time.perf_counter()
    from compiler._viewer import LineProgress

    line = LineProgress()
    found, _ = row_reports(census)
    if pages and found:
        line(
            f"census page: {len(found)} row pages to write, about {megabytes(estimated_bytes(found))} in all"
        )
    written = save_census_html(census, path, reports=pages, progress=line)
    line.clear()
    size = os.path.getsize(path)
    rows = sum(os.path.getsize(p) for p in written[1:])
    print(
        f"census page: {path} ({megabytes(size)}"
        + (f"; row pages beside it: {len(written) - 1}, {megabytes(rows)}" if pages else "")
        + f"; {time.perf_counter() - t0:.1f} s)"
    )
    if found and not pages:
        print(
            f"row pages not written: {len(found)} rows have a report; --pages writes each as its page beside "
            f"the census page (about {megabytes(estimated_bytes(found))} in all); "
            "pt2-explorer report REPORT --html OUT writes one"
        )


def _merge(ns) -> int:
    """Join the shards into ``--out``: their rows, with their reports and traces copied. A
    row's path that leads outside its shard, or through a link, is not followed (its row
    stays, without it): each such path is named on stderr."""
    import dataclasses

    from ..census._merge import merge, qualified
    from ..census._paths import copy_into, resolve
    from ..census._view import save_census_html
    from ..lower._terminal import printable

    shards_read = [("shard census", _census_file(s)) for s in ns.shards]
    _refuse([("--out", os.path.join(ns.out, "census.json")), ("--html", ns.html)], shards_read)
    shards = qualified([_load(s, warn=False) for s in ns.shards])
    merged = merge(shards)
    rows = []
    left_out = [p for c in shards for p in c.problems]
    for c in shards:
        for r in c.rows:
            if r.key in {x.key for x in rows}:
                continue
            for k in ("report", "trace"):
                rel = getattr(r, k)
                if rel is None:
                    continue
                if resolve(c.base, rel) is None:
                    left_out.append(f"{c.path}: {r.key}: {k} {rel}: missing, or reached through a link")
                    r = dataclasses.replace(r, **{k: None})
                    continue
                to = _renamed(rel, r)  # a row named with its source: its files under its new name
                left_out += [f"{c.path}: {r.key}: {m}" for m in copy_into(c.base, rel, ns.out, to)]
                r = dataclasses.replace(r, **{k: to})
            rows.append(r)
    for line in left_out:
        print(f"pt2-explorer census: warning: {printable(line)}", file=sys.stderr)
    merged = dataclasses.replace(merged, rows=tuple(rows), path=os.path.join(ns.out, "census.json"))
    os.makedirs(ns.out, exist_ok=True)  # shards with no report to copy have not made it
    merged.save(merged.path)
    if ns.html:
        save_census_html(merged, ns.html)
    print(f"census: {merged.path} ({len(rows)} rows from {len(shards)} shards)")
    return 0


def _renamed(rel: str, row) -> str:
    """Where the merge puts a row's file: where its shard had it, but for a row that
    ``qualified`` named with its source, under that name (two shards' ``resnet18.eval``)."""
    if not row.model.endswith(f" ({row.source})"):
        return rel
    head, name = os.path.split(rel)
    from ..census._cases import slug_of

    stem = slug_of(row.key)
    ext = name[name.index(".json") :] if ".json" in name else ""
    return f"{head}/{stem}{ext}" if head else f"{stem}{ext}"


def _diff(ns) -> int:
    from compiler._viewer import write_file

    from ..census._diff import diff_census
    from ..census._diffview import diff_page, diff_text

    _refuse([("--html", ns.html)], [("census", _census_file(ns.a)), ("census", _census_file(ns.b))])
    d = diff_census(_load(ns.a), _load(ns.b), slower=ns.slower)
    _echo(lambda: diff_text(d))
    if ns.html:
        write_file(ns.html, diff_page(d))
        print(f"diff page: {ns.html}")
    return 0


def _load(path: str, *, warn: bool = True):
    """The census at ``path``; each path of it that was not followed named on stderr."""
    from ..census._table import load_census
    from ..lower._terminal import printable

    census = load_census(path)
    for line in census.problems if warn else ():
        print(f"pt2-explorer census: warning: {printable(line)}", file=sys.stderr)
    return census


def _echo(make) -> None:
    """``make()``'s text, made to fit the terminal (``explorer.lower._fit``)."""
    from ..lower._terminal import echo_fitting

    echo_fitting(make)

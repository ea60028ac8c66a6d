"""The fuzz campaigns' one driver (benchmarks/fuzz_load.py for TORCH_TRACE logs,
benchmarks/fuzz_reports.py for report files, and their slices in the tests): seeded inputs
written to one path and read by ``check``, which returns the outcome's name or raises when the
reader broke its contract."""

from __future__ import annotations

import argparse
import itertools
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

Maker = Callable[[int], tuple[bytes, str]]  # seed -> (the input's bytes, what it is)


def campaign(make_input: Maker, check: Callable[[str], str], path: str, seeds: Iterable[int], seconds: float):
    """Run seeds until they or the seconds run out: (outcomes, failures [(seed, what, error,
    data)], seeds tried, seconds taken). A failure is any exception ``check`` let through."""
    outcomes: Counter[str] = Counter()
    failures: list[tuple[int, str, str, bytes]] = []
    tried, t0 = 0, time.perf_counter()
    for seed in seeds:
        if time.perf_counter() - t0 > seconds:  # a slow machine: fewer seeds, said by the caller
            break
        data, what = make_input(seed)
        Path(path).write_bytes(data)
        tried += 1
        try:
            outcomes[check(path)] += 1
        except Exception as e:  # the contract broken: record and go on
            outcomes[f"FAIL {type(e).__name__}"] += 1
            failures.append((seed, what, f"{type(e).__name__}: {str(e)[:300]}", data))
    return outcomes, failures, tried, time.perf_counter() - t0


def main(doc: str, make_input: Maker, check: Callable[[str], str], name: str, default_seconds: float) -> int:
    """The command line of a campaign: --seconds, --first-seed, --save DIR (failing inputs,
    named by seed); prints the outcomes and the failures, exit 1 on any failure."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=default_seconds)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--save", metavar="DIR", help=f"write failing inputs here (SEED{Path(name).suffix})")
    ns = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        outcomes, failures, tried, elapsed = campaign(
            make_input, check, str(Path(tmp) / name), itertools.count(ns.first_seed), ns.seconds
        )
    print(f"inputs tried: {tried} (seeds {ns.first_seed}..{ns.first_seed + tried - 1})")
    print(f"seconds: {elapsed:.1f} ({tried / elapsed:.1f} inputs/s)")
    print("outcomes:")
    for outcome, n in outcomes.most_common():
        print(f"  {n:7d}  {outcome}")
    if ns.save:
        Path(ns.save).mkdir(parents=True, exist_ok=True)
        for seed, _, _, data in failures:
            (Path(ns.save) / f"{seed}{Path(name).suffix}").write_bytes(data)
    for seed, what, err, _ in failures[:20]:
        print(f"FAIL seed {seed} ({what}): {err}")
    return 1 if failures else 0

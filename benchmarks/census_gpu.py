"""The census of the built-in zoos on a GPU, for notebook 13's comparison and docs/census.md.

    PYTHONUNBUFFERED=1 python benchmarks/census_gpu.py --jobs 6 --out $OUT

Runs ``pt2-explorer census --zoo hf-small`` (and ``timm-small`` where timm is installed) on
``cuda`` with Inductor, eval, each model in its own process, in the census directory
``--work`` (default ``out/census-gpu``: rows, reports, logs; a second run resumes there);
writes ``OUT/census-gpu.json`` (the table alone, report paths removed: what notebooks/data
ships) and ``OUT/census-gpu.html``; prints the table and the wall time. Compare with a CPU census: ``pt2-explorer census diff A.json B.json``.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--jobs", type=int, default=6)
    p.add_argument("--out", default=os.environ.get("OUT", "out"))
    p.add_argument("--work", default=os.path.join("out", "census-gpu"), help="the census directory")
    p.add_argument("--modes", default="eval")
    p.add_argument("--timeout", type=float, default=300)
    p.add_argument("--only", help="these models alone (comma-separated)")
    ns = p.parse_args()

    import torch

    from explorer.census import Settings, cases, census_text, run_census, save_census_html

    if not torch.cuda.is_available():
        print("census_gpu: no CUDA device", file=sys.stderr)
        return 2
    zoos = ["hf-small"] + (["timm-small"] if importlib.util.find_spec("timm") else [])
    modes = tuple(ns.modes.split(","))
    todo = cases(zoos, modes, ns.only.split(",") if ns.only else None)
    gpu = torch.cuda.get_device_name()
    settings = Settings(modes=modes, device="cuda", timeout_s=ns.timeout, memory_gb=None)
    title = f"{gpu}, torch {torch.__version__}"
    out = ns.work
    t0 = time.perf_counter()
    census = run_census(todo, settings, out, jobs=ns.jobs, progress=False, title=title)
    wall = time.perf_counter() - t0
    print(census_text(census))
    print(
        f"{len(census.rows)} rows in {wall:.0f} s wall (this run), --jobs {ns.jobs}, {gpu}, {os.cpu_count()} CPUs"
    )
    table = dataclasses.replace(census, rows=tuple(dataclasses.replace(r, report=None) for r in census.rows))
    os.makedirs(ns.out, exist_ok=True)
    table.save(os.path.join(ns.out, "census-gpu.json"))
    save_census_html(census, os.path.join(ns.out, "census-gpu.html"), reports=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())

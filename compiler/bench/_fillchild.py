"""The fresh process of ``compiler.fill(report)`` (compiler/bench/_fill.py): each runnable repro given
is run as ``python repro.py`` would run it, inside ``compiler.recording(caches=False)`` with
Inductor's IR before and after fusion and its fusion decisions, and the report of each is
written beside it (``repro.py.json``) with the compile's wall time (``repro.py.time``).

Inductor's provenance is taken at its "normal" level here (1: each kernel's stack traces): a
runnable compiles through Inductor's inner entry, where the kernel-to-node map of the "basic"
level is not logged (it needs the pre-grad graph Dynamo hands Inductor); the traces name the
runnable's lines, and each line is one node of the graph Inductor got.

A runnable whose inputs have size symbols is compiled with those sizes symbolic and the others
static, as its compile had them (compiler/bench/_fillsizes.py), not as ``run_repro`` traces it.
A backward's runnable (``*_backward.py``) is compiled there too, as a backward, with the donated
buffers of its forward's runnable (``*_forward.py`` beside it, where given): the saved tensors
AOTAutograd let Inductor write in place (compiler/bench/_filldonated.py).

    python -m compiler.bench._fillchild REPRO.py [REPRO.py ...]
"""

from __future__ import annotations

import runpy
import sys
import time

# how the fill names its runnables (compiler/bench/_fill.py): a backward's forward is beside it
FORWARD, BACKWARD = "_forward.py", "_backward.py"


def main(paths: list[str]) -> int:
    import torch

    from ..listen import _torch
    from ..listen._capture import recording
    from ..listen._version import check
    from ._fillsizes import compile_with_recorded_sizes, size_symbols

    check()  # as compiler.recording does on first use
    inductor = _torch.inductor_config()
    for path in paths:
        torch._dynamo.reset()
        sys.argv = [path]  # the runnable reads its command line (run_repro's argparse)
        with inductor.patch({_torch.INDUCTOR_PROVENANCE: 1}):
            with recording(caches=False, fusion_ir=True, fusion_logs=True) as rec:
                t0 = time.perf_counter()
                namespace = runpy.run_path(path, run_name="__pt2x_fill__")
                backward = path.endswith(BACKWARD)
                if backward or size_symbols(namespace):
                    forward = path[: -len(BACKWARD)] + FORWARD
                    fw = runpy.run_path(forward, run_name="__pt2x_fill__") if forward in paths else None
                    compile_with_recorded_sizes(namespace, fw, backward=backward)
                else:
                    runpy.run_path(path, run_name="__main__")
                wall = time.perf_counter() - t0
        assert rec.report is not None
        rec.report.to_json(path + ".json")
        with open(path + ".time", "w") as f:
            f.write(f"{wall}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

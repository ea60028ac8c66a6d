"""Python's cyclic garbage collector paused while a report is built or written.

Building and writing a report allocate hundreds of thousands of containers (nodes, dicts,
lists) that hold no cycles: reference counting frees the temporary ones. With the collector
running, those allocations trigger its passes, and in a process that has just compiled a big
model (millions of tracked objects) one of them is now and then a full collection: on the
H100, a Llama training step's report took 0.26-0.28 s to build in two pairs and 1.26-1.46 s
in the other two, its write 0.39-0.51 s or 1.25 s (benchmarks/overhead_inproc.py). Reading
a GB of TORCH_TRACE log (``load_trace``), each full pass walks every object made so far: 8 of
them, up to 0.4 s each. Paused, the build does only its own work; the collector runs again,
as it was, right after, and frees then what it would have freed."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """The block runs with ``gc`` disabled; on leaving, it is enabled again if it was."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()

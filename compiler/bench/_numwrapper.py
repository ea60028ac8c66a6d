"""Each kernel launch of a compiled run on the CPU, for ``compiler.numerics``'s first diverging
kernel: torch's ``DebugMode`` records Triton kernels only, and Inductor's debug printer
(``aot_inductor.debug_intermediate_value_printer``) only extern calls in a Python wrapper, so
the C++ kernels are read here from the wrapper module Inductor generated, as it runs.

Python's own tracing hook (``sys.settrace``) follows the wrapper's ``call`` (a frame of a
module Inductor generated: one that imports ``AsyncCompile`` and has a ``call``), line by line. A line
that calls a kernel (``cpp_fused_…(buf0, arg1_1, …)``, ``extern_kernels.mm(…, out=buf4)``) has
run when the next line or the return comes; then each tensor it was given is cloned: what
the kernel wrote, and what it read (equal on both sides until a kernel before it differs). The
compiled call is made once untraced first (the compile), so only the run is traced."""

from __future__ import annotations

import linecache
import sys
from typing import Any

import torch

from ..parse._wrappercode import kernel_call


class WrapperLaunches:
    """``with WrapperLaunches() as w: compiled(...)``; then ``w.launches``: (kernel, {arg: the
    tensor after the launch}) in the order the wrapper ran them."""

    def __init__(self) -> None:
        self.launches: list[tuple[str, dict[str, torch.Tensor]]] = []
        self._pending: dict[int, tuple[str, list[str]]] = {}

    def __enter__(self) -> WrapperLaunches:
        self._before = sys.gettrace()
        sys.settrace(self._frame)
        return self

    def __exit__(self, *exc: Any) -> None:
        sys.settrace(self._before)

    def _frame(self, frame, event: str, arg: Any):
        if event == "call" and frame.f_code.co_name == "call" and "AsyncCompile" in frame.f_globals:
            return self._line
        return None

    def _line(self, frame, event: str, arg: Any):
        if event not in ("line", "return"):
            return self._line
        key = id(frame)
        pending = self._pending.pop(key, None)
        if pending is not None:
            name, names = pending
            local = frame.f_locals
            self.launches.append(
                (
                    name,
                    {n: local[n].detach().clone() for n in names if isinstance(local.get(n), torch.Tensor)},
                )
            )
        if event == "line":
            call = kernel_call(linecache.getline(frame.f_code.co_filename, frame.f_lineno))
            if call is not None:
                self._pending[key] = call
        return self._line

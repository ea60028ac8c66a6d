"""A runnable repro compiled with the sizes its compile had: dynamic where they were symbolic.

torch writes a compile's runnable (``fx_graph_runnable``) with each size symbol of its inputs
at the top (``s77 = 12``) and the inputs' shapes in terms of them (``reader.tensor(buf2,
(s77, 16))``), and has it run with ``tracing_mode='symbolic'``: ``make_fx`` then makes every
size of every input a fresh symbol, the weights' too. A recompile that Dynamo's automatic
dynamic shapes made dynamic in one size (the batch) is so compiled dynamic in all, and
Inductor makes other kernel code (``ks0*ks1`` for ``32*ks0``, a tail loop).

Here the runnable's own ``load_args`` builds the inputs, with each of its size symbols bound
to a symbolic size of one ShapeEnv (its hint the recorded value) and the rest static, as fake
tensors; ``make_fx`` traces the runnable's graph module over them and Inductor's
``compile_fx_inner`` compiles it, as ``run_repro`` does (not run: the fill needs the compile).
A backward's runnable is compiled so too (static or not), as a backward, with the donated
buffers its forward's runnable gives (compiler/bench/_filldonated.py).
"""

from __future__ import annotations

import inspect
from typing import Any

from ..parse._names import is_size_symbol


def size_symbols(namespace: dict[str, Any]) -> dict[str, int]:
    """The size symbols a runnable binds at its top, with their recorded values."""
    return {k: v for k, v in namespace.items() if is_size_symbol(k) and type(v) is int}


def compile_with_recorded_sizes(
    namespace: dict[str, Any], forward: dict[str, Any] | None = None, *, backward: bool = False
) -> None:
    """Compile the runnable loaded into ``namespace`` (its ``mod`` and ``load_args``) with
    Inductor, its size symbols symbolic and every other size static. A backward's is compiled
    as one (``is_backward``), its donated buffers those of ``forward``, its forward's runnable
    (compiler/bench/_filldonated.py): the saved tensors Inductor may write in place."""
    from torch._inductor.compile_fx import compile_fx_inner

    from ._filldonated import donated_context

    gm, args = trace(namespace)
    names = list(inspect.signature(namespace["mod"].forward).parameters)
    with donated_context(gm, trace(forward)[0] if backward and forward is not None else None, names):
        compile_fx_inner(gm, args, is_backward=backward)


def trace(namespace: dict[str, Any]) -> tuple[Any, list[Any]]:
    """The runnable's graph module traced by ``make_fx`` over fake inputs of the recorded
    sizes (each size symbol symbolic), with the inputs its placeholders stand for."""
    import torch
    from torch._dynamo.debug_utils import _device_or_default, _dtype_or_default, _stride_or_default
    from torch._dynamo.source import ConstantSource
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv

    env = ShapeEnv()
    fake = FakeTensorMode(shape_env=env)
    symbols = {}
    for name, hint in size_symbols(namespace).items():
        source = ConstantSource(name)
        sym = env.create_symbol(hint, source, dynamic_dim=DimDynamic.DYNAMIC)
        symbols[name] = env.create_symintnode(sym, hint=hint, source=source)

    class Reader:
        """torch's InputReader's calls, making fake tensors of the symbolic shapes."""

        def __init__(self) -> None:
            self.args: list[Any] = []

        def storage(self, _hash, nbytes, *, device=None, dtype_hint=None):
            dtype = _dtype_or_default(dtype_hint)
            with fake:
                return torch.empty(nbytes // dtype.itemsize, dtype=dtype, device=_device_or_default(device))

        def tensor(self, base, shape, stride=None, *, storage_offset=None, dtype=None, **metadata):
            metadata.pop("requires_grad", None)
            metadata.pop("is_leaf", None)
            dtype = _dtype_or_default(dtype)
            with fake:
                base = base if base.dtype == dtype else base.view(dtype)
                t = base.as_strided(shape, _stride_or_default(stride, shape=shape), storage_offset or 0)
            torch._utils.set_tensor_metadata(t, metadata)
            self.args.append(t)
            return t

        def symint(self, val, *, expr=None):
            self.args.append(symbols.get(expr, val))
            return self.args[-1]

        def const(self, _name):
            self.args.append(None)

        unsupported = opaque = const

        def generator(self, device_type, device_index):
            self.args.append(torch.Generator(device=torch.device(device_type, device_index)))
            return self.args[-1]

    load_args = namespace["load_args"]
    load_args.__globals__.update(symbols)  # the shapes load_args writes read these names
    reader = Reader()
    load_args(reader)
    with torch.no_grad(), fake:
        gm = make_fx(namespace["mod"], tracing_mode="symbolic")(*reader.args)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    return gm, [n.meta.get("val", a) for n, a in zip(placeholders, reader.args)]

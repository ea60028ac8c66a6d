"""A lazily compiled backward's kernel stacks: torch keeps them in a table of the process keyed
by kernel name, and that table outlives the compile, so a second program whose backward kernel
has the same name gets the first one's lines too in torch's artifact. The report's lines are
those of its own compile's graph."""

from __future__ import annotations

import json

import torch
from torch._inductor.utils import fresh_cache

import compiler
from explorer.model._stages import _kernel_lines
from tests._torch_trace import RawTrace


def first(x, w):
    return torch.relu(x @ w)  # the first program's line


def second(x, w):
    return torch.relu(x @ w)  # the second program's line


def _run(fn):
    w = torch.randn(16, 4, requires_grad=True)
    torch.compile(fn)(torch.randn(8, 16), w).sum().backward()


def test_a_backward_kernel_has_its_own_compiles_lines_only(tmp_path):
    here = __file__
    line_of = {f.__name__: f.__code__.co_firstlineno + 1 for f in (first, second)}
    with fresh_cache(dir=str(tmp_path)):
        torch._dynamo.reset()
        with compiler.recording(caches=False):
            _run(first)
        torch._dynamo.reset()
        with RawTrace() as raw, compiler.recording(caches=False) as rec:
            _run(second)
    torch._dynamo.reset()
    # torch's own artifact for the second program's compile names the first program's line too
    stale = [
        st
        for meta, payload in raw.records
        if meta.get("artifact", {}).get("name") == "inductor_provenance_tracking_kernel_stack_traces"
        for stacks in json.loads(payload).values()
        for st in stacks
        if f"line {line_of['first']}" in st and here in st
    ]
    assert stale, "torch no longer carries another compile's stacks: this test can go"
    (c,) = rec.report.compiles
    lines = _kernel_lines(rec.report, c, most=99)
    backward = [k.name for k in rec.report.kernels_of(c.id) if k.role == "backward"]
    assert backward and all(k in lines for k in backward)
    for k in backward:
        assert f":{line_of['first']}" not in lines[k] and lines[k].endswith(
            f"test_stale_stacks.py:{line_of['second']}"
        )

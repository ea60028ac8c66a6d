"""Code compiled again with the same graph reads as N identical compiles of one thing
(issue 53, item 2): blocks of one class, each compiled on its own (``module.compile()``), are
grouped by their code and graph as torch's compilation_metrics state them."""

from __future__ import annotations

from collections import defaultdict

import torch
from _torch_trace import RawTrace

import compiler
from compiler.analysis import program_time


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.lin(x)) + x


def test_blocks_compiled_one_by_one_read_as_repeats():
    torch._dynamo.reset()
    blocks = [Block() for _ in range(3)]
    for b in blocks:
        b.compile(backend="aot_eager")
    with RawTrace() as raw, compiler.recording() as rec:
        x = torch.ones(2, 8)
        for b in blocks:
            x = b(x)
    # torch's own: each compile's code object and graph size
    groups = defaultdict(list)
    for meta, _ in raw.records:
        m = meta.get("compilation_metrics")
        if m and m.get("graph_node_count") is not None:
            key = (m["co_name"], m["co_filename"], m["co_firstlineno"], m["graph_node_count"])
            groups[key].append(f"{meta['frame_id']}/{meta['frame_compile_id']}")
    want = {(k[0], tuple(ids)) for k, ids in groups.items() if len(ids) > 1}
    assert want  # torch compiled the one forward more than once
    got = program_time(rec.report).repeats
    assert {(r.name, r.compile_ids) for r in got} == want
    (r,) = got
    assert r.where == f"test_compile_heads_repeats.py:{Block.forward.__code__.co_firstlineno}"

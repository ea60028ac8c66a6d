"""The numerics recordings made on an H200 (notebooks/data/make_numerics_data.py): each case's
answer as the GPU gave it, and the Numerics view's graph opened on the first diverging
kernel's nodes, the kernel's nodes as the report's own provenance names them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import compiler
import explorer
from explorer.views._numerics import FIRST_COLOUR, numerics_graph

DATA = Path(__file__).resolve().parent.parent / "notebooks" / "data"


def _load(case: str):
    return compiler.load(DATA / f"h200-numerics-{case}.json.gz")


def test_bf16_names_the_triton_kernel_and_the_graph_opens_on_its_nodes():
    r = _load("bf16")
    (n,) = r.numerics
    assert (n.first_module, n.cause.kind) == ("blocks.0", "rounding inside a fusion")
    assert n.first_kernel == "triton_per_fused_add_native_layer_norm_view_1" and not n.kernel_error.ok
    (kernel,) = [k for k in r.kernels_of("0/0") if k.name == n.first_kernel]
    block = numerics_graph(r, n)
    assert block.focus == kernel.nodes and block.focus_why.startswith(n.first_kernel)
    assert {name for name, colour in block.colors.items() if colour == FIRST_COLOUR} == set(kernel.nodes)
    assert all(block.kernels[name] == n.first_kernel for name in kernel.nodes)
    page = explorer.html(r)
    payloads = [json.loads(p) for p in re.findall(r'class="pt2x-graph-data">(.*?)</script>', page, re.S)]
    assert any(p.get("focusWhy", "").startswith(n.first_kernel) for p in payloads)
    assert f'data-compile="0/0" data-kernel="{n.first_kernel}"' in page  # its code, one click away


def test_dropout_relu_bug_and_adamw_as_the_gpu_gave_them():
    (drop,) = _load("dropout").numerics
    assert drop.cause.kind == "random numbers drawn differently"
    assert drop.cause.fix == "torch._inductor.config.fallback_random = True"
    (bug,) = _load("relu-bug").numerics
    assert (bug.cause.kind, bug.cause.subsystem, bug.cause.bisect_number) == (
        "an Inductor pass or lowering",
        "lowerings",
        0,
    )
    assert bug.cause.debug_info == "relu"
    (adamw,) = _load("adamw").numerics
    assert adamw.first_step == 1 and adamw.steps[0].worst.name == "model.2.bias"

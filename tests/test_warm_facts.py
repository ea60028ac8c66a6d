"""A warm start's facts in one process: a compile whose FX graph and AOTAutograd entries a
plain compile stored is recorded with the caches kept (the default) as the hit torch's own
structured trace logs; torch's saved figure is counted once per compile; ``compiler.fill(report)``
gives its kernels the nodes a recording with the caches off gives them, and checks the code
is the cached one. (The GPT-2 training step through the CLI: tests/test_warm.py.)"""

from __future__ import annotations

import json
import re

import pytest
import torch
import torch._functorch.config
import torch._inductor.config
from torch._inductor.utils import fresh_cache

import compiler
import compiler._viewer
from compiler.types import CacheLookup
from explorer.model._speed import cache_detail_lines, speed_lines
from explorer.model._stages import _kernel_lines
from tests._torch_trace import RawTrace

_CACHE_ARTIFACT = re.compile(r"^(fx_graph|aotautograd)_cache_(hit|miss|bypass)$")


def f(x, w):
    return torch.relu(torch.sin(x) @ w).sum(dim=1) * 2


def test_an_aotautograd_hit_is_the_saving_its_fx_graphs_are_inside_it():
    fx1 = CacheLookup("fx_graph", "hit", time_saved_s=18.5)
    fx2 = CacheLookup("fx_graph", "hit", time_saved_s=7.1)
    aot = CacheLookup("aotautograd", "hit", time_saved_s=27.9)
    s = compiler._viewer.cache_saving((fx1, fx2, aot))
    assert (s.saved_s, s.counted, s.hits) == (27.9, "AOTAutograd", ("FX graph", "FX graph", "AOTAutograd"))
    s = compiler._viewer.cache_saving((fx1, fx2, CacheLookup("aotautograd", "bypass", reason="x")))
    assert (s.saved_s, s.counted) == (18.5 + 7.1, "FX graph ×2")
    assert compiler._viewer.cache_saving((CacheLookup("fx_graph", "miss"),)) is None


@pytest.mark.child
def test_warm_compile_is_the_hit_torch_logs_and_fill_gives_the_cold_nodes(tmp_path):
    x, w = torch.randn(8, 16), torch.randn(16, 4)
    caches = {"fx_graph_cache": True}
    with (
        fresh_cache(dir=str(tmp_path)),
        torch._inductor.config.patch(caches),
        torch._functorch.config.patch({"enable_autograd_cache": True}),
    ):
        torch.compile(f)(x, w)  # the user's first run: stores the entries
        torch._dynamo.reset()
        with RawTrace() as raw, compiler.recording() as warm:
            torch.compile(f)(x, w)
        torch._dynamo.reset()
        with compiler.recording(caches=False) as cold:
            torch.compile(f)(x, w)
    torch_says = [
        m.groups()
        for meta, _p in raw.records
        if (m := _CACHE_ARTIFACT.match(meta.get("artifact", {}).get("name", "")))
    ]
    (c,) = warm.report.compiles
    assert [(lk.kind, lk.state) for lk in c.caches] == torch_says
    assert ("fx_graph", "hit") in torch_says
    assert c.config.set_by_recording == {}  # the key as torch computes it without us
    assert (
        compiler._viewer.fill_reason(c)
        == "its FX graph came from the cache: Inductor's lowering and fusion did not run"
    )
    assert all(k.nodes == () for k in warm.report.kernels_of(c.id))
    assert speed_lines(warm.report) == (
        "caches: 1 of 1 compile from the cache (torch: saved "
        f"{compiler._viewer.cache_saving(c.caches).saved_s:.2f} s); not filled in yet: 1 compile "
        "(the kernels' nodes, the IR around fusion) · per compile: --view compiles",
    )
    (line,) = cache_detail_lines(warm.report)
    names = {"fx_graph": "FX graph", "aotautograd": "AOTAutograd"}
    counted = {a: torch_says.count(a) for a in torch_says}  # torch's order, each answer once
    said = ", ".join(f"{names[k]} {s}" + (f" ×{n}" if n > 1 else "") for (k, s), n in counted.items())
    assert line.startswith(f"[0/0] f: caches: {said} · ")

    filled = compiler.fill(warm.report, progress=False)
    (fc,) = filled.compiles
    assert fc.regenerated.state == "filled" and fc.regenerated.same_code is True, fc.regenerated
    assert "kernel nodes" in fc.regenerated.facts and fc.regenerated.cold_time_s > 0
    assert compiler._viewer.fill_reason(fc) is None
    theirs = {k.name: set(k.nodes) for k in cold.report.kernels}
    assert theirs and all(theirs.values())
    assert {k.name: set(k.nodes) for k in filled.kernels} == theirs
    assert fc.stages.fuse.ir_pre_fusion and fc.stages.fuse.ir_post_fusion  # regenerated too
    filled.to_json(tmp_path / "r.json")
    assert compiler.load(tmp_path / "r.json").compiles[0].regenerated == fc.regenerated


def test_fill_sets_its_own_caches_and_provenance_over_the_runnables_config():
    # torch writes the compile's config at the top of its runnable repro; run as written inside
    # the fill's recording, the program's caches (on) and provenance level (0) would come back
    from compiler.bench._fill import without_cache_config

    code = (
        "import torch._inductor.config\n"
        "torch._inductor.config.fx_graph_cache = True\n"
        "torch._inductor.config.deterministic = False\n"
        "torch._inductor.config.trace.provenance_tracking_level = 0\n"
        "torch._functorch.config.enable_autograd_cache = True\n"
        "torch._functorch.config.unlift_effect_tokens = True\n"
    )
    assert without_cache_config(code) == (
        "import torch._inductor.config\n"
        "torch._inductor.config.deterministic = False\n"
        "torch._functorch.config.unlift_effect_tokens = True\n"
    )


def step(x, w):
    return (torch.relu(x @ w) * 2).sum(dim=1)


@pytest.mark.child
def test_fill_of_a_dynamic_recompile_gives_the_nodes_torch_maps_in_a_fresh_recording(tmp_path):
    # a new batch size recompiles with the batch dynamic (Dynamo's automatic dynamic shapes):
    # the recompile's runnable has one size symbol, which the fill keeps symbolic (the weight's
    # sizes static), so its kernels are the cached ones and get their nodes
    def program():
        w = torch.randn(16, 4, requires_grad=True)
        compiled = torch.compile(step)
        for batch in (8, 12):
            compiled(torch.randn(batch, 16), w).sum().backward()

    with (
        fresh_cache(dir=str(tmp_path)),
        torch._inductor.config.patch({"fx_graph_cache": True}),
        torch._functorch.config.patch({"enable_autograd_cache": True}),
    ):
        with compiler.recording() as warm:
            program()
        torch._dynamo.reset()
        with RawTrace() as raw, compiler.recording(caches=False) as fresh:
            program()
    torch._dynamo.reset()
    # torch's own facts of the fresh compiles: which sizes were symbolic, which nodes each
    # kernel fused (Inductor's provenance map, per compile, forward and backward)
    symbols: dict[str, set[str]] = {}
    torch_nodes: dict[str, dict[str, set[str]]] = {}
    for meta, payload in raw.records:
        cid = f"{meta.get('frame_id')}/{meta.get('frame_compile_id')}"
        if "create_symbol" in meta:
            symbols.setdefault(cid, set()).add(meta["create_symbol"]["symbol"])
        if meta.get("artifact", {}).get("name") == "inductor_provenance_tracking_node_mappings":
            for key, mapping in json.loads(payload).items():
                if key.endswith("CodeToPost"):
                    for kernel, nodes in mapping.items():
                        torch_nodes.setdefault(cid, {})[kernel.rsplit(":", 1)[0]] = set(nodes)
    assert sorted(c.id for c in warm.report.compiles) == ["0/0", "0/1"]
    assert "0/0" not in symbols and len(symbols["0/1"]) == 1  # the recompile: the batch dynamic
    assert all(k.nodes == () for k in warm.report.kernels)  # caches on: no kernel-to-node map

    filled = compiler.fill(warm.report, progress=False)
    for c in filled.compiles:
        assert c.regenerated.state == "filled" and c.regenerated.same_code is True, (c.id, c.regenerated)
        generated = [k for k in filled.kernels_of(c.id) if k.language == "cpp"]
        assert {k.role for k in generated} == {"forward", "backward"}
        ours = {k.name: set(k.nodes) for k in generated}
        assert all(ours.values())  # forward and backward kernels
        # torch's map of the fresh compile names the forward kernels (its backward's, where it
        # logs one): each with the nodes the fill gives it
        theirs = torch_nodes[c.id]
        assert {k.name for k in generated if k.role == "forward"} <= theirs.keys()
        assert {n: ours[n] for n in theirs if n in ours} == {n: v for n, v in theirs.items() if n in ours}
        # and the kernels the fresh recording maps have the same nodes and source lines
        fresh_c = next(f for f in fresh.report.compiles if f.id == c.id)
        mapped = {k.name: set(k.nodes) for k in fresh.report.kernels_of(c.id) if k.nodes}
        assert mapped and {n: ours[n] for n in mapped} == mapped
        fresh_lines = _kernel_lines(fresh.report, fresh_c, most=99)
        assert {n: v for n, v in _kernel_lines(filled, c, most=99).items() if n in fresh_lines} == fresh_lines

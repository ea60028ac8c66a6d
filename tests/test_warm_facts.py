"""A warm start's facts in one process: a compile whose FX graph and AOTAutograd entries a
plain compile stored is recorded with the caches kept (the default) as the hit torch's own
structured trace logs; torch's saved figure is counted once per compile; ``compiler.fill(report)``
gives its kernels the nodes a recording with the caches off gives them, and checks the code
is the cached one. (The GPT-2 training step through the CLI: tests/test_warm.py.)"""

from __future__ import annotations

import re

import pytest
import torch
import torch._functorch.config
import torch._inductor.config
from torch._inductor.utils import fresh_cache

import compiler
from compiler.types import CacheLookup
from explorer.model._speed import speed_lines
from tests._torch_trace import RawTrace

_CACHE_ARTIFACT = re.compile(r"^(fx_graph|aotautograd)_cache_(hit|miss|bypass)$")


def f(x, w):
    return torch.relu(torch.sin(x) @ w).sum(dim=1) * 2


def test_an_aotautograd_hit_is_the_saving_its_fx_graphs_are_inside_it():
    fx1 = CacheLookup("fx_graph", "hit", time_saved_s=18.5)
    fx2 = CacheLookup("fx_graph", "hit", time_saved_s=7.1)
    aot = CacheLookup("aotautograd", "hit", time_saved_s=27.9)
    s = compiler.analysis.cache_saving((fx1, fx2, aot))
    assert (s.saved_s, s.counted, s.hits) == (27.9, "AOTAutograd", ("FX graph", "FX graph", "AOTAutograd"))
    s = compiler.analysis.cache_saving((fx1, fx2, CacheLookup("aotautograd", "bypass", reason="x")))
    assert (s.saved_s, s.counted) == (18.5 + 7.1, "FX graph ×2")
    assert compiler.analysis.cache_saving((CacheLookup("fx_graph", "miss"),)) is None


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
        compiler.analysis.fill_reason(c)
        == "its FX graph came from the cache: Inductor's lowering and fusion did not run"
    )
    assert all(k.nodes == () for k in warm.report.kernels_of(c.id))
    (line,) = speed_lines(warm.report)
    names = {"fx_graph": "FX graph", "aotautograd": "AOTAutograd"}
    counted = {a: torch_says.count(a) for a in torch_says}  # torch's order, each answer once
    said = ", ".join(f"{names[k]} {s}" + (f" ×{n}" if n > 1 else "") for (k, s), n in counted.items())
    assert line.startswith(f"[0/0] f: caches: {said} · ")

    filled = compiler.fill(warm.report, progress=False)
    (fc,) = filled.compiles
    assert fc.regenerated.state == "filled" and fc.regenerated.same_code is True, fc.regenerated
    assert "kernel nodes" in fc.regenerated.facts and fc.regenerated.cold_time_s > 0
    assert compiler.analysis.fill_reason(fc) is None
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

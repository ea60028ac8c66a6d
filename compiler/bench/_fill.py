"""``compiler.fill(report)``: what a cache hit skipped, filled in on demand.

A warm start's compile loads its code from Inductor's FX-graph cache: the report has the
capture, the AOT graphs, the post-grad graph and the output code, but Inductor's lowering and
fusion did not run, so there is no kernel-to-node map (nor IR before and after fusion, nor
fusion decisions). With the caches on, a cold compile has no map either: torch keeps
Inductor's provenance level in the FX-graph key, so the recording leaves it as it is.

For each such compile, its runnable repro (torch's ``fx_graph_runnable``: the graph Inductor
got, the non-default config, inputs of the recorded shapes), forward and backward, is compiled
again with the caches off in one fresh process (compiler/bench/_fillchild.py) and recorded;
the backward as AOTAutograd compiles one, with the donated buffers its forward gives (a saved
activation GELU's backward writes over: compiler/bench/_filldonated.py).
Its kernels are checked against the cached output code (the same kernels, the same code, by
role and order: Inductor may name a kernel of the runnable after decomposed ops), and only
then are its facts merged: each kernel's nodes (the runnable's lines Inductor's provenance
names, one node each), each kernel call's nodes as a provenance map (``regeneratedCodeToPost``,
extern calls too: ``extern_kernels.addmm``), the IR before and after fusion, the fusion
decisions. A merge only adds: every fact the recording had (its provenance text, a kernel's
nodes, its IR) is kept as it was, and a regenerated one fills only what it lacks. The
compile's ``regenerated`` says what was added, the cold compile's time there, and what could
not be rebuilt.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

from ..model._progress import LineProgress
from ..model._report import Compile, Kernel, Report
from ..model._speedtypes import Regenerated, fill_reason
from ..model._stagetypes import Fuse, KernelNodes
from ..model._trust import check
from ..parse._provenance import read_provenance, stack_trace_calls, stack_trace_nodes

# The key of the kernel-call-to-node map a fill regenerates, in the form of torch's own
# ``inductor_provenance_tracking_node_mappings`` (``cppCodeToPost``): read as torch's map is,
# and told from a recorded one by its name
REGENERATED_MAP = "regeneratedCodeToPost"

# Inductor names a kernel after the ATen ops its nodes came from (node meta), which the repro's
# make_fx keeps only under preserve_node_meta: kept, the kernels get the recorded names where no
# op was decomposed on the way to Inductor (else the decomposed ops name them: the same code)
KEEP_NAMES = """\
import torch.fx.traceback

# Inductor names a kernel after the ATen ops its nodes came from (node meta), which the repro's
# make_fx keeps only under preserve_node_meta: kept, the kernels get the recorded names where no
# op was decomposed on the way to Inductor (else the decomposed ops name them: the same code)
_keep_node_meta = torch.fx.traceback.preserve_node_meta()
_keep_node_meta.__enter__()
"""
_ROLES = (("forward", False), ("backward", True))


def fill(
    report: Report,
    compile_ids: tuple[str, ...] | None = None,
    *,
    progress: bool | Callable[[str], None] = True,
    timeout_s: float = 1800,
    trust: bool = False,
) -> Report:
    """The report with what its cache hits skipped filled in (see the module); the compiles
    to fill are ``compile_ids``, else every one ``fill_reason`` names. ``progress``: a line per
    compile on stderr (``LineProgress``: on a terminal rewritten with its elapsed time while the
    compile runs), or to the callable given. The runnables run only where this user's own
    recording wrote them (compiler/model/_trust.py), else UntrustedReport is raised and nothing
    runs; ``trust=True`` runs them whoever wrote them."""
    if callable(progress):
        say = lambda msg, final=False: progress(msg)  # noqa: E731
    else:
        say = LineProgress() if progress else (lambda msg, final=False: None)
    wanted = [
        c
        for c in report.compiles
        if (c.id in compile_ids if compile_ids is not None else fill_reason(c) is not None)
    ]
    if not wanted:
        return report
    check(report, trust)
    by_id: dict[str, Compile] = {}
    kernels = {id(k): k for k in report.kernels}
    for n, c in enumerate(wanted, 1):
        say(
            f"pt2-explorer: fill-in {n}/{len(wanted)}: compile [{c.id}] {c.name or '?'}, cold, in a fresh process…"
        )
        t0 = time.perf_counter()
        new_c, new_kernels = _fill_one(report, c, timeout_s)
        by_id[c.id] = new_c
        kernels.update({id(old): k for old, k in new_kernels})
        r = new_c.regenerated
        say(
            f"pt2-explorer: fill-in {n}/{len(wanted)}: compile [{c.id}] {r.state if r else '?'}"
            + (f" — {r.note}" if r and r.note else "")
            + f", in {time.perf_counter() - t0:.1f} s",
            final=True,
        )
    return dataclasses.replace(
        report,
        compiles=tuple(by_id.get(c.id, c) for c in report.compiles),
        kernels=tuple(kernels[id(k)] for k in report.kernels),
    )


def _fill_one(report: Report, c: Compile, timeout_s: float) -> tuple[Compile, list[tuple[Kernel, Kernel]]]:
    cg = c.stages.codegen
    scripts = [
        (role, code)
        for role, backward in _ROLES
        if cg is not None and (code := cg.fx_graph_runnable_backward if backward else cg.fx_graph_runnable)
    ]
    if not scripts:
        note = "no runnable repro of this compile (torch logs fx_graph_runnable from 2.5, Inductor only)"
        return dataclasses.replace(c, regenerated=Regenerated("failed", note=note)), []
    work = tempfile.mkdtemp(prefix="pt2x-fill-")
    try:
        paths = []
        for role, code in scripts:
            path = os.path.join(work, f"runnable_{role}.py")
            with open(path, "w") as f:
                f.write(KEEP_NAMES + without_cache_config(code.lstrip("\n")))
            paths.append((role, path))
        err = _run_child([p for _r, p in paths], work, timeout_s)
        if err is not None:
            return dataclasses.replace(c, regenerated=Regenerated("failed", note=err)), []
        return _merge(report, c, [(role, path) for role, path in paths])
    finally:
        shutil.rmtree(work, ignore_errors=True)


# The config lines of a runnable (torch writes the compile's non-default config at its top) that
# are the fill's to set: its caches off and Inductor's provenance on (_fillchild.py). Run as
# written, they would set the recorded program's values again inside the child's recording: its
# caches on (a hit in the program's cache directory rebuilds nothing) or its provenance level 0.
FILL_OWNS = (
    "torch._inductor.config.fx_graph_cache =",
    "torch._inductor.config.force_disable_caches =",
    "torch._inductor.config.trace.provenance_tracking_level =",
    "torch._functorch.config.enable_autograd_cache =",
)


def without_cache_config(code: str) -> str:
    """The runnable without the config lines the fill sets itself (``FILL_OWNS``)."""
    return "".join(ln for ln in code.splitlines(keepends=True) if not ln.startswith(FILL_OWNS))


def _run_child(paths: list[str], work: str, timeout_s: float) -> str | None:
    """Run the child; None where it ended well, else one line saying why not."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    for name in ("TORCH_TRACE", "TORCH_LOGS", "TORCH_COMPILE_DEBUG"):
        env.pop(name, None)  # the fill's compile is not the program's: nothing of it in their logs
    cmd = [sys.executable, "-m", "compiler.bench._fillchild", *paths]
    try:
        proc = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return f"the runnable's compile did not end within {timeout_s:.0f} s"
    except OSError as e:
        return f"could not start python for the runnable: {e}"
    if proc.returncode != 0:
        last = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()][-1:] or ["no output"]
        return f"the runnable failed (exit {proc.returncode}): {last[0][:300]}"
    return None


def code_key(k: Kernel) -> str:
    """A kernel's code without its name and comments (a Triton kernel's: its ``@triton.jit``
    function, not the metadata above it): what a recompile must make again."""
    source = k.source
    if "@triton.jit" in source:
        source = source[source.index("@triton.jit") :]
    lines = source.replace(k.name, "KERNEL").splitlines()
    return "\n".join(ln for ln in lines if not ln.lstrip().startswith("#"))


def _merge(
    report: Report, c: Compile, paths: list[tuple[str, str]]
) -> tuple[Compile, list[tuple[Kernel, Kernel]]]:
    from ..model._report import load

    ours = report.kernels_of(c.id)
    pairs: list[tuple[Kernel, Kernel]] = []
    cold = 0.0
    ir_pre: list[str] = []
    ir_post: list[str] = []
    fusion_log: list[str] = []
    missing: list[str] = []
    calls: dict[str, list[str]] = {}  # the regenerated provenance: each kernel call -> its nodes
    for role, path in paths:
        got = load(path + ".json")
        with open(path + ".time") as f:
            cold += float(f.read())
        if not got.compiles:
            missing.append(f"the {role} runnable compiled nothing")
            continue
        fc = got.compiles[0]
        theirs = [k for k in got.kernels if k.compile_id == fc.id]
        # the first graph Inductor got is the forward's, or the inference graph's (no grad)
        mine = [k for k in ours if k.role == role or (role == "forward" and k.role == "inference")]
        if [code_key(k) for k in theirs] != [code_key(k) for k in mine]:
            note = f"the {role} runnable made {len(theirs)} kernels, the cached code has {len(mine)}"
            if len(theirs) == len(mine):
                first = next(m.name for m, t in zip(mine, theirs) if code_key(m) != code_key(t))
                note = f"the {role} runnable's code of {first} is not the cached one"
            return dataclasses.replace(
                c, regenerated=Regenerated("differs", cold_time_s=cold, same_code=False, note=note)
            ), []
        nodes = _nodes_by_kernel(fc, path)
        # the recording's nodes stay where it had them: the fill adds, it never replaces
        pairs += [
            (m, dataclasses.replace(m, nodes=m.nodes or nodes.get(t.name, ()))) for m, t in zip(mine, theirs)
        ]
        calls.update(_calls(fc, path, {t.name: m.name for m, t in zip(mine, theirs)}))
        fuse = fc.stages.fuse
        if fuse is not None:
            ir_pre += fuse.ir_pre_fusion
            ir_post += fuse.ir_post_fusion
            fusion_log += fuse.fusion_log
    old = c.stages.fuse or Fuse()
    # every fact the recording had is kept as it was; a regenerated one fills only what it lacks
    had = {kn.kernel for kn in old.kernel_nodes}
    added_nodes = tuple(KernelNodes(k.name, k.nodes, k.aten_ops) for m, k in pairs if k.nodes and not m.nodes)
    added_nodes = tuple(kn for kn in added_nodes if kn.kernel not in had)
    # the calls whose nodes the recording's own map (if any) does not name
    mapped = {n for call in read_provenance(old.provenance).calls for n in call.nodes}
    new_calls = {k: v for k, v in calls.items() if not mapped.intersection(v)}
    payload = json.dumps({REGENERATED_MAP: new_calls}) if new_calls else None
    added = {
        "kernel nodes": added_nodes,
        "provenance": payload,
        "IR before fusion": not old.ir_pre_fusion and ir_pre,
        "IR after fusion": not old.ir_post_fusion and ir_post,
        "fusion decisions": not old.fusion_log and fusion_log,
    }
    fuse = dataclasses.replace(
        old,
        ir_pre_fusion=old.ir_pre_fusion or tuple(ir_pre),
        ir_post_fusion=old.ir_post_fusion or tuple(ir_post),
        fusion_log=old.fusion_log or tuple(fusion_log),
        kernel_nodes=old.kernel_nodes + added_nodes,
        provenance="\n".join(p for p in (old.provenance, payload) if p is not None) or old.provenance,
    )
    facts = [name for name, have in added.items() if have]
    unnamed = [k.name for _m, k in pairs if not k.nodes and k.language in ("cpp", "triton")]
    if unnamed:
        missing.append(
            f"no nodes for {len(unnamed)} kernel(s) (Inductor's provenance named none): {unnamed[0]}"
        )
    regen = Regenerated(
        "filled", tuple(facts), cold_time_s=cold, same_code=True, note="; ".join(missing) or None
    )
    stages = dataclasses.replace(c.stages, fuse=fuse)
    return dataclasses.replace(c, stages=stages, regenerated=regen), pairs


def _calls(fc: Compile, path: str, names: dict[str, str]) -> dict[str, list[str]]:
    """Each kernel call of the runnable's compile (its wrapper's key: ``extern_kernels.addmm:1``,
    a generated kernel under the recorded kernel's name) -> the runnable's nodes it computes."""
    text = fc.stages.fuse.provenance if fc.stages.fuse else None
    out: dict[str, list[str]] = {}
    for key, nodes in stack_trace_calls(text, os.path.basename(path)).items():
        name, _, place = key.rpartition(":")
        out[f"{names.get(name, name)}:{place}" if name else key] = list(nodes)
    return out


def _nodes_by_kernel(fc: Compile, path: str) -> dict[str, tuple[str, ...]]:
    """Each kernel of the runnable's compile -> the runnable's nodes its provenance names."""
    text = fc.stages.fuse.provenance if fc.stages.fuse else None
    return stack_trace_nodes(text, os.path.basename(path))

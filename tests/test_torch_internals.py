"""The torch internals the recorder reads (compiler/listen/_torch.py, and the scheduler pass
of compiler/listen/_torchfusion.py), checked against the installed torch: run this file on
every supported torch version (2.11 on the GPU machine, 2.13 in CI, 2.14.1). And the layering:
compiler/ imports no viewer code."""

from __future__ import annotations

import ast
import json
import logging
import os
import subprocess
import sys

import pytest
import torch

import compiler
from compiler.listen import _torch, _torchfusion
from compiler.model._paths import torch_dir
from compiler.parse._registry import graph_break_registry

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_trace_logger_is_torchs():
    from torch._logging._internal import trace_log

    assert _torch.trace_logger() is trace_log
    assert trace_log.level == logging.DEBUG  # records are built only while it has handlers


def test_fusion_artifact_loggers_exist():
    for module, artifact in _torch.FUSION_LOGGERS:
        log = _torch.artifact_logger(module, artifact)
        assert isinstance(log, logging.Logger), (module, artifact)
    assert _torch.artifact_logger("torch._inductor.debug", "no_such_artifact_xyz") is None


def test_cudagraph_loggers_and_the_messages_we_read_exist():
    """Inductor's cudagraphs loggers, and the texts compiler/parse/_speed.py reads from them and
    from torch's other records, as this torch writes them."""
    import inspect

    from torch._inductor import cudagraph_trees, cudagraph_utils

    for module, artifact in _torch.CUDAGRAPH_LOGGERS:
        assert _torch.artifact_logger(module, artifact) is not None
    trees = inspect.getsource(cudagraph_trees)
    for text in ("Recording function=%s", "Running warmup function=%s", "Re-recording function=%s"):
        assert text in trees
    assert "Recording cudagraph tree for symint key %s" in trees
    utils = inspect.getsource(cudagraph_utils)
    assert "distinct sizes" in utils and 'metrics_context.set("cudagraph_skip_reason"' in utils
    assert "skipping cudagraphs due to" in utils
    # the cache artifacts' JSON fields
    from torch._inductor import codecache

    source = inspect.getsource(codecache)
    for field in ('"components"', '"cache_state"', '"cache_bypass_reason"', '"time_saved_ns"'):
        assert field in source


def test_fusion_ir_hook_and_formatter_exist():
    """What the IR before and after fusion is made from (the rendered text is checked against
    Inductor's loggers in tests/test_fusion_ir.py)."""
    from torch._inductor.debug import DebugFormatter
    from torch._inductor.graph import GraphLowering
    from torch._inductor.scheduler import BaseSchedulerNode, ForeachKernelSchedulerNode

    inductor = _torch.inductor_config()
    assert hasattr(inductor, _torch.FUSION_PASS) and getattr(inductor, _torch.FUSION_PASS) is None
    hook = _torchfusion.snapshot_pass(None, None)
    assert isinstance(hook, _torchfusion.scheduler_pass_base()) and hook.uuid() is None
    assert hook([1, 2]) == [1, 2]
    assert callable(DebugFormatter._write_ir) and callable(BaseSchedulerNode.debug_str)
    assert "snodes" in ForeachKernelSchedulerNode.__init__.__code__.co_varnames
    assert "scheduler" in GraphLowering.__annotations__ or hasattr(GraphLowering, "_update_scheduler")
    for artifact in _torch.FUSION_ARTIFACTS:  # the loggers whose text the IR reproduces
        assert _torch.artifact_logger("torch._inductor.debug", artifact) is not None


def test_config_names_exist():
    inductor, functorch = _torch.inductor_config(), _torch.functorch_config()
    with inductor.patch({_torch.INDUCTOR_FX_GRAPH_CACHE: False, _torch.INDUCTOR_PROVENANCE: 1}):
        assert inductor.fx_graph_cache is False
        assert inductor.trace.provenance_tracking_level == 1
    with functorch.patch({_torch.FUNCTORCH_AUTOGRAD_CACHE: False}):
        assert functorch.enable_autograd_cache is False
    with inductor.patch({_torch.INDUCTOR_COMPILE_THREADS: 1}):
        assert inductor.compile_threads == 1


def test_compile_id_and_interned_strings():
    seen = []

    def backend(gm, example_inputs):
        seen.append(_torch.current_compile_id())
        return gm.forward

    assert _torch.current_compile_id() is None
    torch.compile(lambda x: x.sin() + 1, backend=backend)(torch.randn(3))
    assert seen == [(0, 0)]
    assert __file__ in _torch.interned_strings().values()


def test_graph_break_registry():
    reg = graph_break_registry()
    assert reg is not None
    # the ids of the corpus' breaks (logger.warning_once, nonzero, data-dependent branching)
    assert reg["GB0291"][-1]["Gb_type"] == "logging.Logger method not supported for non-export cases"
    assert {e["Gb_type"] for e in reg["GB0036"]} == {"Dynamic shape operator"}
    assert all(isinstance(e.get("Hints"), list) for entries in reg.values() for e in entries)


def test_torch_dir():
    assert torch_dir() == os.path.join(os.path.dirname(torch.__file__), "")


_VIEWER_MODULES = {
    "explorer",
    "IPython",
    "ipywidgets",
    "plotly",
    "anywidget",
    "pygraphviz",
    "graphviz",
    "rich",
    "pygments",
}


def test_compiler_imports_no_viewer_code():
    """compiler/ never imports explorer/ or a UI library, statically or at run time."""
    pkg = os.path.join(ROOT, "compiler")
    for name in sorted(os.listdir(pkg)):
        if not name.endswith(".py"):
            continue
        tree = ast.parse(open(os.path.join(pkg, name), encoding="utf-8").read())
        for node in ast.walk(tree):
            mods = []
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                mods = [node.module]
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module":
                mods = [a.value for a in node.args if isinstance(a, ast.Constant)]
            for m in mods:
                assert m.split(".")[0] not in _VIEWER_MODULES, (name, m)
    code = (
        "import sys, compiler, torch\n"
        "with compiler.recording() as rec:\n"
        "    torch.compile(lambda x: x + 1, backend='eager')(torch.randn(2))\n"
        "rec.report.to_json()\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {sorted(_VIEWER_MODULES)!r}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_public_surface():
    assert {"record", "recording", "load", "load_trace", "Report"} <= set(compiler.__all__)
    assert not hasattr(compiler.Report, "save_html")  # explorer.save_html(report, path)


def test_guard_evaluation_internals():
    """What would_recompile reads (compiler/bench/_recheck.py): the compiled callable's original,
    its frame's cache entries, a guard check that compiles nothing, the stance API."""
    torch._dynamo.reset()

    def f(x):
        return x.cos()

    cf = torch.compile(f, backend="eager")
    assert _torch.compiled_original(cf) is f and _torch.compiled_original(f) is None
    cf(torch.ones(3))
    (entry,) = _torch.cache_entries(f.__code__)
    assert _torch.entry_compile_id(entry) == "0/0"
    assert _torch.check_entry(entry, {"x": torch.ones(3)}) is None
    assert _torch.check_entry(entry, {"x": torch.ones(5)}).startswith("0/0: tensor 'x' size mismatch")
    assert len(_torch.cache_entries(f.__code__)) == 1
    assert _torch.recompile_limit() >= 1
    with _torch.fail_on_recompile():
        assert cf(torch.ones(3)).shape == (3,)
    assert _torch.current_compiled_autograd_id() is None


def test_compile_context_key():
    """The key the seq_nr handler files lines under: torch's CompileId of the compile running
    in this thread, the same object throughout one compile, another for the next, None
    outside; current_compile_id reads the same."""
    torch._dynamo.reset()
    seen: list[tuple[object, object, tuple[int, int] | None]] = []

    def backend(gm, example_inputs):
        seen.append((_torch.compile_context_key(), _torch.compile_context_key(), _torch.current_compile_id()))
        return gm

    def f(x):
        return x.sin()

    cf = torch.compile(f, backend=backend)
    cf(torch.ones(3))
    cf(torch.ones(3, dtype=torch.float64))  # a recompile: frame 0, compile 1
    assert _torch.compile_context_key() is None
    assert [(a is b, ids) for a, b, ids in seen] == [(True, (0, 0)), (True, (0, 1))]
    assert seen[0][0] != seen[1][0] and hash(seen[0][0]) is not None


def test_autotune_feedback_hook():
    """select_algorithm's feedback savers: ours is added through torch's function and taken
    out of the selector cache's list again, leaving any other saver in place."""
    from torch._inductor import select_algorithm

    def other(*args):
        pass

    def ours(*args):
        pass

    savers = select_algorithm.get_algorithm_selector_cache().feedback_saver_fns
    before = list(savers)
    select_algorithm.add_feedback_saver(other)
    assert _torch.add_autotune_feedback(ours)
    assert savers[-2:] == [other, ours]
    _torch.remove_autotune_feedback(ours)
    assert savers[-1] is other
    savers.remove(other)
    assert savers == before

    class Node:
        def __init__(self, *size):
            self.size = size

        def get_size(self):
            return self.size

    class Choice:
        def __init__(self, name, description=""):
            self.name, self.description = name, description

    a, b = Choice("a", "BLOCK_M=64, num_warps=4"), Choice("b")
    got = _torch.autotune_choices(
        {a: 1.5, b: float("inf")}, "mm", [Node(4, 8), Node(8, 2)], {a: 0.25, b: 0.5}
    )
    assert got == {
        "op": "mm",
        "inputs": ["4x8", "8x2"],
        "choices": [["a", 1.5, "BLOCK_M=64, num_warps=4"], ["b", None, ""]],
        "precompile_s": 0.75,
    }


@pytest.mark.slow
def test_basic_provenance_maps_kernels_to_the_same_nodes_as_normal():
    """The recording asks for Inductor's basic provenance level: its kernel -> post-grad node
    mapping must be the one the normal level gives (read from torch's own trace)."""
    from _torch_trace import RawTrace

    inductor = _torch.inductor_config()
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.LayerNorm(16))
    x = torch.randn(4, 8)
    mappings = []
    for level in (1, _torch.PROVENANCE_BASIC):
        torch._dynamo.reset()
        with inductor.patch({_torch.INDUCTOR_PROVENANCE: level, _torch.INDUCTOR_FX_GRAPH_CACHE: False}):
            with RawTrace() as trace:
                torch.compile(model)(x)
        (payload,) = [
            p
            for meta, p in trace.records
            if meta.get("artifact", {}).get("name") == "inductor_provenance_tracking_node_mappings"
        ]
        mappings.append(json.loads(payload)["cppCodeToPost"])
    assert mappings[0] == mappings[1]
    assert any(k.startswith("cpp_fused_") for k in mappings[0])


def test_data_dependent_condition_reads_the_exceptions_cond():
    """torch's GuardOnDataDependentSymNode keeps the undecidable expression as ``cond``; a
    wrapping exception is followed to it; any other exception gives None."""
    from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

    class M(torch.nn.Module):
        def forward(self, y):
            if y.sum().item() > 0:
                return y
            return -y

    with pytest.raises(GuardOnDataDependentSymNode) as failed:
        torch.export.export(M(), (torch.ones(2),))
    assert _torch.data_dependent_condition(failed.value) == str(failed.value.cond) == "zuf0 > 0.0"
    try:
        raise ValueError("wrapped") from failed.value
    except ValueError as wrapped:
        assert _torch.data_dependent_condition(wrapped) == "zuf0 > 0.0"
    assert _torch.data_dependent_condition(RuntimeError("x")) is None


def test_bytecode_hook():
    """Dynamo's bytecode hook: called inside the compile (its id is current) with the frame's
    code and the code Dynamo made; the handle's remove() takes it off."""
    import types

    seen = []

    def hook(code, new_code):
        seen.append((code, new_code, _torch.current_compile_id()))

    def fn(x):
        return x + 1

    handle = _torch.add_bytecode_hook(hook)
    try:
        torch._dynamo.reset()
        torch.compile(fn, backend="eager")(torch.ones(2))
    finally:
        handle.remove()
    ((code, new_code, cid),) = seen
    assert code is fn.__code__ and isinstance(new_code, types.CodeType) and new_code is not code
    assert cid is not None and cid[1] == 0  # the first compile of its frame
    torch._dynamo.reset()
    torch.compile(fn, backend="eager")(torch.ones(2))
    assert len(seen) == 1  # removed


def test_seq_nr_lines_give_each_joint_node_torchs_seq_nr_and_side():
    """The "annotation" loggers' lines (compiler/listen/_seqnr.py) give the recorded joint graph
    torch's own node.meta, read here in AOTAutograd's partition function: ``seq_nr``, the
    backward nodes (``partitioner_tag``), the forward node each differentiates."""
    from functools import partial

    from torch._dynamo.backends.common import aot_autograd
    from torch._functorch.aot_autograd import make_boxed_func
    from torch._functorch.partitioners import default_partition

    for module, artifact in _torch.SEQ_NR_LOGGERS:
        assert isinstance(_torch.artifact_logger(module, artifact), logging.Logger), module
    meta: dict[str, tuple] = {}

    def partition(gm, joint_inputs, **kw):
        for n in gm.graph.nodes:
            meta[n.name] = (n.meta.get("seq_nr"), n.meta.get("partitioner_tag") == "is_backward")
        return default_partition(gm, joint_inputs, **kw)

    backend = aot_autograd(fw_compiler=lambda gm, _: make_boxed_func(gm), partition_fn=partial(partition))
    torch._dynamo.reset()
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    with compiler.recording() as rec:
        torch.compile(model, backend=backend)(torch.randn(3, 4)).sum().backward()
    joint = rec.report.compile("0/0").stages.autograd.joint
    assert {n.name: (n.seq_nr, n.backward) for n in joint.nodes} == {
        name: m for name, m in meta.items() if name in {n.name for n in joint.nodes}
    }
    backward = [n for n in joint.nodes if n.backward]
    assert len(backward) == 17 and all(meta[n.name][1] for n in backward)
    first = {}  # torch's rule: the first forward node of each seq_nr
    for name, (seq, back) in meta.items():
        if seq is not None and not back:
            first.setdefault(seq, name)
    assert [(n.name, n.grad_of) for n in backward] == [(n.name, first.get(meta[n.name][0])) for n in backward]


def test_graph_code_record_holds_the_graph_module_with_its_module_stacks():
    """Dynamo's ``graph_code`` artifact logger: its record's argument closes over the graph
    module handed to the backend (read without formatting it), whose nodes carry
    ``nn_module_stack``; the logger's former state comes back when we stop listening."""
    from compiler.listen._loggers import listen_on, unlisten

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(2, 2)

        def forward(self, x):
            return self.fc(x).relu()

    records, given = [], []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record)

    def backend(gm, inputs):
        given.append(gm)
        return gm.forward

    log = _torch.artifact_logger(*_torch.GRAPH_CODE_LOGGER)
    level, propagate, h = log.level, log.propagate, Keep()
    listen_on(log, h)
    try:
        torch._dynamo.reset()
        torch.compile(Net(), backend=backend)(torch.ones(2))
    finally:
        unlisten(log, h)
    assert (log.level, log.propagate) == (level, propagate)
    (gm,) = given
    assert [_torch.logged_graph_module(r) for r in records] == [gm]
    stacks = _torch.module_stacks(gm)
    assert stacks == {"linear": ["L['self'].fc"], "relu": []}


@pytest.mark.slow
def test_kernel_code_records_one_per_kernel_of_the_output_code_in_its_order():
    """``async_compile``'s ``kernel_code`` logger (the live line's kernel n of N): one record
    per kernel the wrapper module defines, each as its compile begins, inside the compile
    (its id set), after torch logged the output code, in the order the module defines them;
    and the graph's FX nodes (``_torch.graph_nodes``) are those of the graph Dynamo hands over."""
    from compiler.listen._loggers import listen_on, unlisten
    from compiler.parse._outputcode import split_kernels

    order, given = [], []

    class Keep(logging.Handler):
        def emit(self, record):
            if "inductor_output_code" in (getattr(record, "metadata", None) or {}):
                order.append(("output code", record.payload))
            elif record.name.endswith("kernel_code"):
                order.append(("kernel", record.args[0], _torch.current_compile_id()))

    def f(x):
        return ((x.sin() + 1) @ x).softmax(-1).cos()

    log = _torch.artifact_logger(*_torch.KERNEL_CODE_LOGGER)
    assert isinstance(log, logging.Logger)
    trace, keep = _torch.trace_logger(), Keep()
    listen_on(log, keep)
    trace.addHandler(keep)
    try:
        torch._dynamo.reset()
        with compiler.recording(caches=False):  # cold: Inductor writes and loads its module
            torch.compile(f)(torch.randn(8, 8))
    finally:
        trace.removeHandler(keep)
        unlisten(log, keep)
    (first, code), *kernels = order
    assert first == "output code"
    defined = split_kernels(code)
    assert len(defined) >= 2 and len(kernels) == len(defined)
    assert [k[1].strip("\n") for k in kernels] == [k.source for k in defined]
    assert {k[2] for k in kernels} == {(0, 0)}

    def backend(gm, example_inputs):
        given.append(gm)
        return gm.forward

    torch._dynamo.reset()
    torch.compile(f, backend=backend)(torch.randn(8, 8))
    (gm,) = given
    assert (
        _torch.graph_nodes(gm) == len(list(gm.graph.nodes)) == 7
    )  # x, sin, add, matmul, softmax, cos, output

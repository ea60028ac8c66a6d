"""End to end with Inductor on CPU (C++ kernels): a training step, and compiles that fail
inside Inductor or inside a custom backend. Tiny models: each Inductor compile takes seconds."""

from __future__ import annotations

import contextlib
import copy
import re

import pytest
import torch

import compiler

HERE = __file__


@torch.library.custom_op("pt2_explorer_tests::twice", mutates_args=())
def twice(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@twice.register_fake
def _(x):
    return torch.empty_like(x)


def uses_custom_op(x):
    return twice(x.sin()) + 1


def uses_relu(x):
    return torch.relu(x * 2) + 1


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


@pytest.mark.slow
def test_training_step_on_inductor_cpu(tmp_path):
    torch.manual_seed(0)
    model = MLP()
    reference = copy.deepcopy(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1)
    compiled = torch.compile(model)
    x = torch.randn(2, 8)

    with compiler.recording(fusion_ir=True, fusion_logs=True) as rec:
        loss = compiled(x).sum()
        loss.backward()
    ref_loss = reference(x).sum()
    ref_loss.backward()
    torch.testing.assert_close(loss, ref_loss)
    for p, q in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(p.grad, q.grad)
    opt.step()
    ref_opt.step()
    for p, q in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(p, q)

    report = rec.report
    assert report.error is None
    assert report.device == "cpu"
    assert [c.id for c in report.compiles] == ["0/0"]
    c = report.compile("0/0")
    assert c.status == "ok" and c.error is None and c.failed_stage is None
    assert (c.name, c.filename) == ("forward", HERE)
    assert [(f.name, f.compiles) for f in report.frames] == [("forward", 1)]

    st = c.stages
    # capture: the Dynamo graph at torch level
    assert st.capture.graph is not None
    assert st.capture.guards and st.capture.guard_count > 0
    # autograd: joint graph partitioned into forward and backward (no inference graph)
    ag = st.autograd
    assert ag.joint is not None and ag.forward is not None and ag.backward is not None
    assert ag.inference is None
    assert [(s.name, s.dtype, s.shape, s.bytes) for s in ag.saved_tensors] == [
        ("primals_3", "f32", "[2, 8]", 2 * 8 * 4),  # x
        ("primals_4", "f32", "[4, 16]", 4 * 16 * 4),  # fc2.weight
        ("relu", "f32", "[2, 16]", 2 * 16 * 4),
    ]
    backward_inputs = [n.name for n in ag.backward.nodes if n.op == "placeholder"]
    assert backward_inputs == ["primals_3", "primals_4", "relu", "tangents_1"]
    # decompose: torch-level ops before, core ATen after
    dec = st.decompose
    assert dec.ops_before == {"torch._C._nn.linear": 2, "torch.relu": 1}
    assert dec.ops_after["torch.ops.aten.mm.default"] == 3
    assert dec.ops_after["torch.ops.aten.addmm.default"] == 2
    assert "torch.ops.aten.threshold_backward.default" not in dec.ops_after  # decomposed
    assert [g.role for g in dec.post_grad] == ["forward", "backward"]
    # fuse: Inductor's IR before and after fusion, one per graph
    assert len(st.fuse.ir_pre_fusion) == 2
    assert len(st.fuse.ir_post_fusion) == 2
    assert all(text.strip() for text in st.fuse.ir_post_fusion)
    assert st.fuse.fusion_log
    # codegen: one output module per role, C++ kernels in them
    cg = st.codegen
    assert [o.role for o in cg.output_code] == ["forward", "backward"]
    assert all("async_compile.cpp_pybinding(" in o.code for o in cg.output_code)
    assert cg.kernel_names == ("cpp_fused_relu_0", "cpp_fused_sum_threshold_backward_0", "cpp_fused_sum_1")
    assert [(k.compile_id, k.name, k.language, k.role) for k in report.kernels] == [
        ("0/0", "cpp_fused_relu_0", "cpp", "forward"),
        ("0/0", "cpp_fused_sum_threshold_backward_0", "cpp", "backward"),
        ("0/0", "cpp_fused_sum_1", "cpp", "backward"),
    ]
    for k in report.kernels:
        assert k.source.startswith("#include <torch/csrc/inductor/cpp_prefix.h>\n"), k.source[:300]
        assert re.search(r'^extern "C"\s+void\s+kernel\(', k.source, re.M), k.source[:300]
    relu = report.kernels[0]
    assert relu.nodes == ("relu",)
    assert c.metrics["inductor_compile_time_s"] > 0
    assert c.compile_time_s > c.metrics["entire_frame_compile_time_s"]  # + the lazy backward compile
    assert report.unknown_events == ()

    path = tmp_path / "report.json"
    report.to_json(path)
    assert compiler.load(path) == report


def _exception_without_recording(fn, x, ctx_factory, **compile_kwargs):
    """The exception a plain torch.compile raises (no recording), for comparison."""
    torch._dynamo.reset()
    with ctx_factory(), pytest.raises(Exception) as info:
        torch.compile(fn, **compile_kwargs)(x)
    torch._dynamo.reset()
    return info.value


def _failed_compile(fn, x, ctx_factory, **compile_kwargs):
    """Record a compile that fails; return (exception the user got, its Compile, report)."""
    with ctx_factory(), pytest.raises(Exception) as info, compiler.recording(fusion_ir=True) as rec:
        torch.compile(fn, **compile_kwargs)(x)
    report = rec.report
    assert report.error == f"{type(info.value).__name__}: {info.value}"
    assert [c.id for c in report.compiles] == ["0/0"]
    c = report.compiles[0]
    assert c.status == "failed"
    assert c.cache_entry is False
    assert report.frames[0].compiles == 0
    assert report.recompiles == ()
    # the partial report keeps what ran before the failure
    assert c.stages.capture is not None and c.stages.capture.graph is not None
    return info.value, c, report


@pytest.mark.slow
def test_inductor_lowering_fails():
    """No lowering for a custom op and implicit fallbacks off: Inductor fails while lowering
    the graph to its IR (our stage "fuse")."""

    def no_fallbacks():
        return torch._inductor.config.patch(implicit_fallbacks=False)

    x = torch.randn(8)
    plain = _exception_without_recording(uses_custom_op, x, no_fallbacks)
    err, c, _report = _failed_compile(uses_custom_op, x, no_fallbacks)
    assert type(err) is type(plain) is torch._inductor.exc.InductorError
    assert c.failed_stage == "fuse"
    assert c.error.startswith(
        "InductorError: MissingOperatorWithoutDecomp: missing lowering\n  target: pt2_explorer_tests.twice.default\n"
    )
    assert "MissingOperatorWithoutDecomp: missing lowering" in str(err)
    # stages before lowering ran and are kept
    assert c.stages.autograd.inference is not None
    assert "torch.ops.pt2_explorer_tests.twice.default" in c.stages.decompose.ops_after
    assert c.stages.fuse is None
    assert c.stages.codegen is None or c.stages.codegen.output_code == ()


@pytest.mark.slow
def test_inductor_cpp_compile_fails():
    """A C++ kernel that does not compile (Inductor's own test knob injects bad C++ for relu):
    Inductor fails in codegen, after fusion."""

    def bad_cpp():
        return torch._inductor.config.patch({"cpp.inject_relu_bug_TESTING_ONLY": "compile_error"})

    x = torch.randn(8)
    plain = _exception_without_recording(uses_relu, x, bad_cpp)
    err, c, report = _failed_compile(uses_relu, x, bad_cpp)
    assert type(err) is type(plain) is torch._inductor.exc.InductorError
    assert c.failed_stage == "codegen"
    assert c.error.startswith("InductorError: CppCompileError: C++ compile error\n")
    assert c.stages.autograd.inference is not None
    assert c.stages.decompose.post_grad
    assert c.stages.fuse.ir_post_fusion
    # torch logs the output module before compiling it: the bad kernel is in the report
    assert [o.role for o in c.stages.codegen.output_code] == ["inference"]
    (kernel,) = report.kernels
    assert (kernel.compile_id, kernel.language, kernel.role) == ("0/0", "cpp", "inference")
    assert "compile error!" in kernel.source


def test_custom_backend_raises():
    """A plain Python backend that raises: Dynamo wraps the error (BackendCompilerFailed) and
    the compile fails after capture, inside the backend Dynamo handed its graph to: the
    failed stage is "backend", none of Inductor's five."""

    def bad_backend(gm, example_inputs):
        raise ValueError("backend says no")

    x = torch.randn(8)
    plain = _exception_without_recording(uses_relu, x, contextlib.nullcontext, backend=bad_backend)
    err, c, _report = _failed_compile(uses_relu, x, contextlib.nullcontext, backend=bad_backend)
    assert type(err) is type(plain) is torch._dynamo.exc.BackendCompilerFailed
    assert c.failed_stage == "backend"
    assert "ValueError: backend says no" in c.traceback
    assert c.error == "BackendCompilerFailed: backend='bad_backend' raised:\nValueError: backend says no"
    assert [n.target for n in c.stages.capture.graph.nodes if n.op == "call_function"] == [
        "operator.mul",
        "torch.relu",
        "operator.add",
    ]
    assert c.stages.autograd is None and c.stages.fuse is None and c.stages.codegen is None

"""Frames: where torch's compiled frame is not the user's code, the call site tells."""

from __future__ import annotations

import inspect

import torch

import compiler
import explorer
from tests._torch_trace import RawTrace


def test_compiled_torch_module_frame_names_the_users_call_site():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    x = torch.ones(2, 4)
    with compiler.recording() as rec:
        out = torch.compile(model, backend="eager")(x)  # CALL-SITE
    torch.testing.assert_close(out, model(x))
    (frame,) = rec.report.frames
    # torch compiles a wrapper of its own for nn.Module.__call__, named by the module it calls ...
    assert frame.name == "Sequential.forward"
    # ... so the frame also records which user line led to it
    lines, start = inspect.getsourcelines(test_compiled_torch_module_frame_names_the_users_call_site)
    line = start + next(i for i, ln in enumerate(lines) if "# CALL-SITE" in ln)
    assert frame.called_from == f"{__file__}:{line}"
    # the summary's frame line says it too
    from explorer.model._summary import where

    (shown,) = [
        ln for ln in explorer.text(rec.report).splitlines() if ln.startswith("  0: Sequential.forward")
    ]
    assert shown.endswith(f"  1 compile  called from {where(__file__, line)}")


def test_a_torch_nn_module_is_named_by_its_class_and_its_fast_path_says_why_no_kernel():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(16, 2, 32, batch_first=True).eval()
    x = torch.randn(2, 5, 16)
    with torch.no_grad(), RawTrace() as raw, compiler.recording() as rec:
        out = torch.compile(layer)(x)
        expected = layer(x)
    torch.testing.assert_close(out, expected)
    # torch's own trace: the compiled frame is its wrapper `inner`, calling the module L['fn']
    (metrics,) = [m["compilation_metrics"] for m, _ in raw.records if "compilation_metrics" in m]
    assert metrics["co_name"] == "inner"
    assert metrics["co_filename"].endswith("torch/_dynamo/external_utils.py")
    (guards,) = [p for m, p in raw.records if "dynamo_cpp_guards_str" in m]
    assert (
        "source=L['fn']" in guards
        and "type=<class 'torch.nn.modules.transformer.TransformerEncoderLayer'>" in guards
    )
    # in eval, the layer takes its fused fast path: one ATen op that Inductor calls as it is
    (post,) = [p for m, p in raw.records if _artifact(m) == "inductor_post_grad_graph"]
    calls = {ln.split("= ", 1)[1].split("(")[0] for ln in post.splitlines() if "= torch.ops." in ln}
    assert calls == {"torch.ops.aten._transformer_encoder_layer_fwd.default"}
    r = rec.report
    (frame,) = r.frames
    assert (frame.name, r.compiles[0].name, len(r.kernels)) == ("TransformerEncoderLayer.forward",) * 2 + (0,)
    why = (
        "no kernel generated: the graph runs only ATen ops that Inductor calls as they are "
        "(aten._transformer_encoder_layer_fwd)"
    )
    assert f"  [0/0] {why}" in explorer.text(r).splitlines()
    assert why in explorer.text(r, "codegen", compile="0/0").splitlines()
    assert why in explorer.html(r)


def _artifact(meta: dict) -> str | None:
    art = meta.get("artifact")
    return art.get("name") if isinstance(art, dict) else None

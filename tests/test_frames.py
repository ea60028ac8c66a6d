"""Frames: where torch's compiled frame is not the user's code, the call site tells."""

from __future__ import annotations

import inspect

import torch

import compiler


def test_compiled_torch_module_frame_names_the_users_call_site():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    x = torch.ones(2, 4)
    with compiler.recording() as rec:
        out = torch.compile(model, backend="eager")(x)  # CALL-SITE
    torch.testing.assert_close(out, model(x))
    (frame,) = rec.report.frames
    # torch compiles a wrapper of its own for nn.Module.__call__ ...
    assert frame.name == "inner" and "torch" in frame.filename
    # ... so the frame also records which user line led to it
    lines, start = inspect.getsourcelines(test_compiled_torch_module_frame_names_the_users_call_site)
    line = start + next(i for i, ln in enumerate(lines) if "# CALL-SITE" in ln)
    assert frame.called_from == f"{__file__}:{line}"

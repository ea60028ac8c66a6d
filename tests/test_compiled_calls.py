"""compiler.compiled_calls: torch.compile wrapped inside the block only, each compiled
callable with its last call."""

import pytest
import torch

import compiler


def double(x):
    return x * 2


def test_torch_compile_is_torchs_again_after_the_block():
    before = torch.compile
    with compiler.compiled_calls() as calls:
        assert torch.compile is not before
        fn = torch.compile(double, backend="eager")
        fn(torch.ones(2))
        fn(torch.full((3,), 5.0))
    assert torch.compile is before
    (c,) = calls.called
    assert (c.name, c.calls, c.compile_kwargs) == ("double", 2, {"backend": "eager"})
    assert torch.equal(c.args[0], torch.full((3,), 5.0)) and torch.equal(c.output, torch.full((3,), 10.0))


def test_torch_compile_is_restored_when_the_block_raises():
    before = torch.compile
    with pytest.raises(ZeroDivisionError), compiler.compiled_calls():
        torch.compile(double, backend="eager")
        raise ZeroDivisionError("in the block")
    assert torch.compile is before


def test_after_the_block_calls_run_as_without_us():
    """The hooks on a compiled module are removed and a wrapped function only calls torch's:
    a call after the block (a benchmark's) is neither kept nor slowed by reading its state."""
    model = torch.nn.Linear(3, 2)
    with compiler.compiled_calls() as calls:
        compiled_model = torch.compile(model, backend="eager")
        fn = torch.compile(double, backend="eager")
        assert len(compiled_model._forward_pre_hooks) == len(compiled_model._forward_hooks) == 1
        compiled_model(torch.ones(1, 3))
        fn(torch.ones(2))
    assert (len(compiled_model._forward_pre_hooks), len(compiled_model._forward_hooks)) == (0, 0)
    first = {c.name: (c.calls, c.args, c.state) for c in calls.called}
    assert {k: v[0] for k, v in first.items()} == {"Linear": 1, "double": 1}
    assert torch.equal(fn(torch.full((2,), 4.0)), torch.full((2,), 8.0))
    compiled_model(torch.zeros(5, 3))
    after = {c.name: (c.calls, c.args, c.state) for c in calls.called}
    assert {k: v[0] for k, v in after.items()} == {"Linear": 1, "double": 1}
    for name, (_, args, state) in after.items():
        assert args is first[name][1] and state is first[name][2], name

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

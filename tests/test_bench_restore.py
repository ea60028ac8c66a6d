"""A training step's state restored between benchmark calls keeps its objects: the
optimizer's state tensors (Adam's exp_avg, exp_avg_sq, step) get their values back in place,
so a compiled optimizer step, whose guards hold those tensors' identities, is not compiled
again after every restore."""

from __future__ import annotations

import torch
from torch import nn

from compiler.bench._reach import roots
from compiler.bench._state import Snapshot


def test_optimizer_state_restored_in_place():
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    opt = torch.optim.Adam(model.parameters(), lr=0.1)

    def step(x):
        model(x).sum().backward()
        opt.step()
        opt.zero_grad(set_to_none=False)

    x = torch.randn(3, 4)
    step(x)  # the state exists, as after the program's own steps
    ids = {(id(p), k): id(v) for p, s in opt.state.items() for k, v in s.items()}
    before = {(id(p), k): v.clone() for p, s in opt.state.items() for k, v in s.items()}
    weight = model.weight.detach().clone()
    snap = Snapshot(roots(step, (x,), {}))
    step(x)
    assert snap.changed()  # the step moved the weights and Adam's moments
    snap.restore()
    assert {(id(p), k): id(v) for p, s in opt.state.items() for k, v in s.items()} == ids
    for key, v in before.items():
        (now,) = [t for p, s in opt.state.items() for k, t in s.items() if (id(p), k) == key]
        assert torch.equal(now, v), key
    assert torch.equal(model.weight, weight)


def test_a_logger_the_function_names_leaves_loggers_made_meanwhile_registered():
    """A function that logs reaches logging's registry through its logger (``logger.manager``).
    A logger first made between the snapshot and the restore (as Inductor makes its loggers
    when its modules are first imported, during a compile) stays the one registered under its
    name, so a handler added to it later hears what its module logs."""
    import logging

    logger = logging.getLogger("pt2x_restore_user")

    def scaled(x):
        logger.debug("scaling")
        return x * 2

    x = torch.randn(3)
    snap = Snapshot(roots(scaled, (x,), {}))
    made = logging.getLogger("pt2x_restore_made.during.the_run")
    scaled(x)
    assert snap.changed() == []
    snap.restore()
    assert logging.getLogger("pt2x_restore_made.during.the_run") is made
    assert logging.root.manager.loggerDict["pt2x_restore_made.during.the_run"] is made

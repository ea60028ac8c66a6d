"""Your own models for ``pt2-explorer census --models examples/census_models.py``
(docs/census.md): ``CENSUS_MODELS`` maps a name to a factory returning ``(model, inputs)``,
where ``inputs(batch)`` gives the call's arguments (a tuple, or a dict of keyword arguments).
These four show each status of a census row: one graph, a graph break, recompiles, an error.
"""

import torch
from torch import nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.lin(x))


class Branchy(MLP):
    """Branches on a tensor's value: Dynamo cannot trace that (a data-dependent break)."""

    def forward(self, x):
        h = self.lin(x)
        if h.sum() > 0:
            h = h * 2
        return torch.relu(h)


class StepCounter(MLP):
    """Counts its calls in a Python attribute it reads: every call recompiles."""

    def __init__(self):
        super().__init__()
        self.steps = 0

    def forward(self, x):
        self.steps += 1
        return self.lin(x) * self.steps


class WrongShape(MLP):
    """A weight of the wrong shape: the compile fails (and eager would too)."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 8))

    def forward(self, x):
        return x @ self.w


def _inputs(batch):
    return (torch.randn(batch, 8, generator=torch.Generator().manual_seed(batch)),)


def _factory(cls):
    def make():
        torch.manual_seed(0)
        return cls(), _inputs

    return make


CENSUS_MODELS = {
    "mlp": _factory(MLP),
    "branchy": _factory(Branchy),
    "step_counter": _factory(StepCounter),
    "wrong_shape": _factory(WrongShape),
}
CENSUS_FAMILIES = {name: "example" for name in CENSUS_MODELS}

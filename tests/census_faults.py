"""Models that end badly, for tests/test_census.py: a census must turn each into a row with
its status and carry on. ``hang`` never returns, ``abort`` kills its own process, ``hog``
maps 12 GiB (past the test's 8 GiB limit: refused at once; without a limit the pages are
never touched, and the call succeeds)."""

import os
import time

import torch
from torch import nn


class Hang(nn.Module):
    def forward(self, x):
        time.sleep(3600)
        return x


class Abort(nn.Module):
    def forward(self, x):
        os.abort()


class Hog(nn.Module):
    def forward(self, x):
        return torch.empty(3 * 2**30, dtype=torch.float32)[:4] + x


def _inputs(batch):
    return (torch.ones(batch, 4),)


CENSUS_MODELS = {
    name: (lambda cls=cls: (cls(), _inputs)) for name, cls in (("hang", Hang), ("abort", Abort), ("hog", Hog))
}

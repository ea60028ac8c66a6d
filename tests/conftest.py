"""Shared pytest set-up. Tests that compile start and end with a clean Dynamo cache, so
compile ids ("0/0", "0/1", ...) and frame ids are those of the test alone.

Inductor's FX-graph cache and AOTAutograd's cache are off for the whole session, as a user's
are where they turned them off: a recording keeps the user's caches (the default), and tests
compile the same small functions again and again, so with the caches on each would be a hit
with the stages it skipped empty. The tests of a warm start (tests/test_warm.py) turn them on
inside a ``config.patch`` with their own cache directory. (Not ``force_disable_caches``: that
also gives every compile a fresh C++ build directory.)"""

from __future__ import annotations

import pytest
import torch
import torch._functorch.config
import torch._inductor.config

torch._inductor.config.fx_graph_cache = False
torch._functorch.config.enable_autograd_cache = False


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()

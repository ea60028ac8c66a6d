"""Shared pytest set-up. Tests that compile start and end with a clean Dynamo cache, so
compile ids ("0/0", "0/1", ...) and frame ids are those of the test alone.

Inductor's FX-graph cache and AOTAutograd's cache are off for the whole session, as a user's
are where they turned them off: a recording keeps the user's caches (the default), and tests
compile the same small functions again and again, so with the caches on each would be a hit
with the stages it skipped empty. The tests of a warm start turn them on inside a ``config.patch`` with
their own cache directory (tests/test_warm_facts.py), or give their processes the caches back
(tests/test_warm.py). (Not ``force_disable_caches``: that also gives every compile a fresh C++
build directory.)"""

from __future__ import annotations

import os
import tempfile

import pytest
import torch
import torch._functorch.config
import torch._inductor.config

from tests._caches import CACHE_ENV

torch._inductor.config.fx_graph_cache = False
torch._functorch.config.enable_autograd_cache = False
# and in the programs tests run in fresh processes (record's CLI, the census, notebooks), which
# would otherwise also start record's background fill-in after each one: torch reads these when
# it loads its config (here it has, so this process's own config is the lines above)
os.environ.update(dict.fromkeys(CACHE_ENV, "0"))
# the key that marks a recording's runnables as this user's (compiler/model/_trust.py): the
# session's own, in this process and the programs it starts, never the user's
os.environ["PT2X_CONFIG_DIR"] = tempfile.mkdtemp(prefix="pt2x-test-config-")


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()

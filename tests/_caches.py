"""The environment switches by which torch turns its FX-graph and AOTAutograd caches off in a
process it starts: conftest.py sets them for the session (the tests' programs in fresh
processes compile cold); a test of a warm start gives its processes the caches back, or turns
them on in its own process."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

CACHE_ENV = ("TORCHINDUCTOR_FX_GRAPH_CACHE", "TORCHINDUCTOR_AUTOGRAD_CACHE")


def with_user_caches(env: dict[str, str]) -> dict[str, str]:
    """``env`` without the session's switches: the caches as a user has them."""
    return {k: v for k, v in env.items() if k not in CACHE_ENV}


@contextlib.contextmanager
def user_caches_in(path: str) -> Iterator[None]:
    """In this process: the FX-graph and AOTAutograd caches on, as a user has them, their
    entries in a fresh directory under ``path``."""
    import torch._functorch.config
    import torch._inductor.config
    from torch._inductor.utils import fresh_cache

    with (
        fresh_cache(dir=path),
        torch._inductor.config.patch({"fx_graph_cache": True}),
        torch._functorch.config.patch({"enable_autograd_cache": True}),
    ):
        yield

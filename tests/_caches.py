"""The environment switches by which torch turns its FX-graph and AOTAutograd caches off in a
process it starts: conftest.py sets them for the session (the tests' programs in fresh
processes compile cold); a test of a warm start gives its processes the caches back."""

from __future__ import annotations

CACHE_ENV = ("TORCHINDUCTOR_FX_GRAPH_CACHE", "TORCHINDUCTOR_AUTOGRAD_CACHE")


def with_user_caches(env: dict[str, str]) -> dict[str, str]:
    """``env`` without the session's switches: the caches as a user has them."""
    return {k: v for k, v in env.items() if k not in CACHE_ENV}

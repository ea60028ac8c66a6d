"""Shared pytest set-up. Tests that compile start and end with a clean Dynamo cache, so
compile ids ("0/0", "0/1", ...) and frame ids are those of the test alone."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()

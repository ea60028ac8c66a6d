"""The image zoos' inputs: a batch of random images, the same for the same batch size."""

from __future__ import annotations


def image_batch(shape: tuple[int, int, int], batch: int):
    """``(images,)``: ``batch`` random images of ``shape`` (channels, height, width)."""
    import torch

    return (torch.randn(batch, *shape, generator=torch.Generator().manual_seed(batch)),)

"""The built-in zoo ``timm-small``: timm's image models at their smallest widths, built with
random weights (``pretrained=False``: no network) for 64×64 images and 10 classes. Needs timm
(``pip install timm``); ``--zoo timm-small`` says so where it is missing."""

from __future__ import annotations

import functools

from ._images import image_batch

# name -> family
ARCHS = {
    "resnet18": "vision",
    "resnet50": "vision",
    "efficientnet_b0": "vision",
    "mobilenetv3_small_100": "vision",
    "convnext_atto": "vision",
    "regnetx_002": "vision",
    "densenet121": "vision",
    "vit_tiny_patch16_224": "vision",
    "deit_tiny_patch16_224": "vision",
    "swin_tiny_patch4_window7_224": "vision",
    "mixer_b16_224": "vision",
    "levit_128s": "vision",
}
_SIZE = {"vit_tiny_patch16_224": 224, "deit_tiny_patch16_224": 224, "swin_tiny_patch4_window7_224": 224,
         "mixer_b16_224": 224, "levit_128s": 224}  # fmt: skip


def build(name: str):
    import timm
    import torch

    torch.manual_seed(0)
    model = timm.create_model(name, pretrained=False, num_classes=10)
    size = _SIZE.get(name, 64)
    return model, functools.partial(image_batch, (3, size, size))


try:  # the zoo exists where timm does
    import timm  # noqa: F401
except ImportError as e:  # pragma: no cover - timm installed
    raise ImportError("the timm-small zoo needs timm (pip install timm)") from e

CENSUS_MODELS = {name: functools.partial(build, name) for name in ARCHS}
CENSUS_FAMILIES = dict(ARCHS)
